// Schema validation of rendered manifests against published models: kubernetes-models (Kubernetes' OpenAPI:
// the plain platform's Deployments and Services too),
// @kubernetes-models/knative (Knative's CRD openAPIV3Schema: Service, DomainMapping, ClusterDomainClaim) and
// @kubernetes-models/cert-manager (cert-manager's CRDs: Certificate, ClusterIssuer) and
// @kubernetes-models/prometheus-operator (the Prometheus Operator's CRDs: PodMonitor, ServiceMonitor).
// validate() throws on a violation.

import assert from "node:assert/strict";
import { Certificate } from "@kubernetes-models/cert-manager/cert-manager.io/v1/Certificate";
import { ClusterIssuer } from "@kubernetes-models/cert-manager/cert-manager.io/v1/ClusterIssuer";
import { ClusterDomainClaim } from "@kubernetes-models/knative/networking.internal.knative.dev/v1alpha1/ClusterDomainClaim";
import { Service as KnativeService } from "@kubernetes-models/knative/serving.knative.dev/v1/Service";
import { DomainMapping } from "@kubernetes-models/knative/serving.knative.dev/v1beta1/DomainMapping";
import { PodMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor";
import { ServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor";
import { MutatingWebhookConfiguration } from "kubernetes-models/admissionregistration.k8s.io/v1/MutatingWebhookConfiguration";
import { ValidatingAdmissionPolicy } from "kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy";
import { ValidatingAdmissionPolicyBinding } from "kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { ClusterRole } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole";
import { ClusterRoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding";
import { Role } from "kubernetes-models/rbac.authorization.k8s.io/v1/Role";
import { RoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Secret } from "kubernetes-models/v1/Secret";
import { Service } from "kubernetes-models/v1/Service";
import { ServiceAccount } from "kubernetes-models/v1/ServiceAccount";

type Validator = (object: unknown) => void;
// Each model's constructor takes its own data type; the schema, not the type, is the check here.
type Model = new (data: never) => { validate(): void };
const model =
  (M: Model): Validator =>
  (o) =>
    new M(o as never).validate();

const VALIDATORS: Record<string, Validator> = {
  "v1/ServiceAccount": model(ServiceAccount),
  "v1/Secret": model(Secret),
  "v1/Service": model(Service),
  "apps/v1/Deployment": model(Deployment),
  "rbac.authorization.k8s.io/v1/ClusterRole": model(ClusterRole),
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding": model(ClusterRoleBinding),
  "rbac.authorization.k8s.io/v1/Role": model(Role),
  "rbac.authorization.k8s.io/v1/RoleBinding": model(RoleBinding),
  "admissionregistration.k8s.io/v1/MutatingWebhookConfiguration": model(MutatingWebhookConfiguration),
  "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy": model(ValidatingAdmissionPolicy),
  "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding": model(ValidatingAdmissionPolicyBinding),
  "serving.knative.dev/v1/Service": model(KnativeService),
  "serving.knative.dev/v1beta1/DomainMapping": model(DomainMapping),
  "networking.internal.knative.dev/v1alpha1/ClusterDomainClaim": model(ClusterDomainClaim),
  "cert-manager.io/v1/Certificate": model(Certificate),
  "cert-manager.io/v1/ClusterIssuer": model(ClusterIssuer),
  "v1/ConfigMap": model(ConfigMap),
  "monitoring.coreos.com/v1/PodMonitor": model(PodMonitor),
  "monitoring.coreos.com/v1/ServiceMonitor": model(ServiceMonitor),
};

export function validateAgainstSchema(object: { apiVersion: string; kind: string }): void {
  const validator = VALIDATORS[`${object.apiVersion}/${object.kind}`];
  assert.ok(validator, `no schema for ${object.apiVersion}/${object.kind}`);
  validator(object);
}
