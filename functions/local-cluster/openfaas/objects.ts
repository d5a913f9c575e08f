// OpenFaaS CE's objects on the real node (`cluster up --openfaas`), written here from what the gateway and
// faas-netes read (their environment, the basic-auth files, the RBAC faas-netes' classic provider needs):
// - namespaces `openfaas` (the gateway) and `openfaas-fn` (the functions), both placed on the real node;
// - the Secret basic-auth (basic-auth-user admin, a random basic-auth-password), mounted into both programs;
// - faas-netes' account: a Role in openfaas-fn over the Deployments, Services, Pods, Endpoints, Secrets and
//   Events of the functions it creates, and a ClusterRole to list namespaces;
// - one Deployment `gateway` whose pod runs the gateway on 8080, forwarding the system API and
//   /function/<name> to faas-netes on 127.0.0.1:8085 (its own port; of-watchdog's metrics port 8081 is taken
//   below), which deploys functions as Deployments and Services in openfaas-fn and proxies calls to their
//   pods' endpoints (no cluster DNS needed);
// - the Service `gateway` (8080) in front of it.
// No NATS or queue-worker (only /async-function needs them). No Prometheus either, but a stand-in for its
// query API: the gateway asks Prometheus for invocation counts on every non-empty GET /system/functions, and
// when that query fails it dereferences the missing result (gateway/metrics/add_metrics.go, mixIn) and drops
// the connection. So a third container, of-watchdog in static mode on 127.0.0.1:9090, serves one file at
// /api/v1/query from the ConfigMap `prometheus-stand-in`: an empty vector, i.e. no invocation counts. Without
// Prometheus and AlertManager, CE's autoscaling (alerts posted to /system/alert) does not run. Pure builders.

import type { ManifestObject } from "../knative/apply-yaml.js";
import { placedOnRealNode } from "../real-node/placement.js";

export const OPENFAAS_NAMESPACE = "openfaas";
export const OPENFAAS_FUNCTION_NAMESPACE = "openfaas-fn";
export const GATEWAY_NAME = "gateway";
export const GATEWAY_PORT = 8080;
const PROVIDER_PORT = 8085;
const PROMETHEUS_PORT = 9090;
const PROMETHEUS_STAND_IN = "prometheus-stand-in";
/** Prometheus' answer to an instant query that matched nothing. */
export const EMPTY_VECTOR = '{"status":"success","data":{"resultType":"vector","result":[]}}';
const BASIC_AUTH_SECRET = "basic-auth";
export const BASIC_AUTH_USER = "admin";
const SECRET_MOUNT = "/var/secrets";
const ACCOUNT = "openfaas-controller";
/** The Deployment's pods carry it; the function pods carry faas_function=<name> (faas-netes' own label). */
export const GATEWAY_LABELS = { app: "openfaas-gateway" };

export interface OpenfaasImages {
  gateway: string;
  faasNetes: string;
  /** of-watchdog alone (the Prometheus stand-in). */
  watchdog: string;
}

export interface OpenfaasSettings {
  images: OpenfaasImages;
  password: string;
  /** The gateway's read/write and upstream timeouts, and faas-netes' write timeout. */
  timeout: string;
}

/**
 * The gateway keeps an idle connection to faas-netes for 90 s (hard-coded in its proxy client), while faas-netes'
 * server closes one after its read_timeout (it sets no idle timeout, and Go's server then uses the read
 * timeout). With faas-netes closing first, a request the gateway writes on a connection just being closed fails
 * ("broken pipe") and the gateway answers 502 with an empty body: a refused CREATE. So faas-netes' read timeout
 * stays above the gateway's 90 s and the gateway always closes first.
 */
export const PROVIDER_READ_TIMEOUT = "95s";

const rbac = "rbac.authorization.k8s.io";

function accountObjects(): ManifestObject[] {
  const functionsRole: ManifestObject = {
    apiVersion: `${rbac}/v1`,
    kind: "Role",
    metadata: { name: ACCOUNT, namespace: OPENFAAS_FUNCTION_NAMESPACE },
    rules: [
      {
        apiGroups: ["apps"],
        resources: ["deployments"],
        verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
      },
      {
        apiGroups: [""],
        resources: ["services", "secrets"],
        verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
      },
      {
        apiGroups: [""],
        resources: ["pods", "pods/log", "endpoints", "events"],
        verbs: ["get", "list", "watch"],
      },
    ],
  };
  const namespaces: ManifestObject = {
    apiVersion: `${rbac}/v1`,
    kind: "ClusterRole",
    metadata: { name: `${OPENFAAS_NAMESPACE}-${ACCOUNT}` },
    rules: [{ apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list"] }],
  };
  const subjects = [{ kind: "ServiceAccount", name: ACCOUNT, namespace: OPENFAAS_NAMESPACE }];
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: ACCOUNT, namespace: OPENFAAS_NAMESPACE } },
    functionsRole,
    {
      apiVersion: `${rbac}/v1`,
      kind: "RoleBinding",
      metadata: { name: ACCOUNT, namespace: OPENFAAS_FUNCTION_NAMESPACE },
      roleRef: { apiGroup: rbac, kind: "Role", name: ACCOUNT },
      subjects,
    },
    namespaces,
    {
      apiVersion: `${rbac}/v1`,
      kind: "ClusterRoleBinding",
      metadata: { name: namespaces.metadata.name },
      roleRef: { apiGroup: rbac, kind: "ClusterRole", name: namespaces.metadata.name },
      subjects,
    },
  ];
}

const env = (values: Record<string, string>) =>
  Object.entries(values).map(([name, value]) => ({ name, value }));
const secretMount = { name: BASIC_AUTH_SECRET, mountPath: SECRET_MOUNT, readOnly: true };

function gatewayContainer(s: OpenfaasSettings): Record<string, unknown> {
  return {
    name: "gateway",
    image: s.images.gateway,
    imagePullPolicy: "Never",
    env: env({
      read_timeout: s.timeout,
      write_timeout: s.timeout,
      upstream_timeout: s.timeout,
      functions_provider_url: `http://127.0.0.1:${PROVIDER_PORT}/`,
      function_namespace: OPENFAAS_FUNCTION_NAMESPACE,
      basic_auth: "true",
      secret_mount_path: SECRET_MOUNT,
      faas_prometheus_host: "127.0.0.1",
      faas_prometheus_port: String(PROMETHEUS_PORT),
    }),
    ports: [{ name: "http", containerPort: GATEWAY_PORT }],
    readinessProbe: { httpGet: { path: "/healthz", port: GATEWAY_PORT }, periodSeconds: 2 },
    volumeMounts: [secretMount],
  };
}

function providerContainer(s: OpenfaasSettings): Record<string, unknown> {
  return {
    name: "faas-netes",
    image: s.images.faasNetes,
    imagePullPolicy: "Never",
    env: env({
      port: String(PROVIDER_PORT),
      function_namespace: OPENFAAS_FUNCTION_NAMESPACE,
      read_timeout: PROVIDER_READ_TIMEOUT,
      write_timeout: s.timeout,
      basic_auth: "true",
      secret_mount_path: SECRET_MOUNT,
      // The functions' probes: GET /_/health over HTTP (the watchdog's), not `cat /tmp/.lock` in the image.
      http_probe: "true",
    }),
    volumeMounts: [secretMount],
  };
}

/** of-watchdog serving the ConfigMap's file at /api/v1/query (see the header). */
function prometheusStandIn(s: OpenfaasSettings): Record<string, unknown> {
  return {
    name: PROMETHEUS_STAND_IN,
    image: s.images.watchdog,
    imagePullPolicy: "Never",
    env: env({ mode: "static", static_path: "/srv", port: String(PROMETHEUS_PORT) }),
    volumeMounts: [
      { name: PROMETHEUS_STAND_IN, mountPath: "/srv", readOnly: true },
      { name: "tmp", mountPath: "/tmp" },
    ],
  };
}

function gatewayDeployment(s: OpenfaasSettings): ManifestObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: GATEWAY_NAME, namespace: OPENFAAS_NAMESPACE, labels: GATEWAY_LABELS },
    spec: {
      replicas: 1,
      selector: { matchLabels: GATEWAY_LABELS },
      template: {
        metadata: { labels: GATEWAY_LABELS },
        spec: {
          serviceAccountName: ACCOUNT,
          containers: [gatewayContainer(s), providerContainer(s), prometheusStandIn(s)],
          volumes: [
            { name: BASIC_AUTH_SECRET, secret: { secretName: BASIC_AUTH_SECRET } },
            {
              name: PROMETHEUS_STAND_IN,
              configMap: { name: PROMETHEUS_STAND_IN, items: [{ key: "query", path: "api/v1/query" }] },
            },
            { name: "tmp", emptyDir: {} },
          ],
        },
      },
    },
  };
}

/** Everything `cluster up --openfaas` creates, namespaces first. */
export function openfaasObjects(s: OpenfaasSettings): ManifestObject[] {
  const namespace = (name: string) =>
    placedOnRealNode({ apiVersion: "v1", kind: "Namespace", metadata: { name } }) as ManifestObject;
  return [
    namespace(OPENFAAS_NAMESPACE),
    namespace(OPENFAAS_FUNCTION_NAMESPACE),
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: BASIC_AUTH_SECRET, namespace: OPENFAAS_NAMESPACE },
      stringData: { "basic-auth-user": BASIC_AUTH_USER, "basic-auth-password": s.password },
    },
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: PROMETHEUS_STAND_IN, namespace: OPENFAAS_NAMESPACE },
      data: { query: EMPTY_VECTOR },
    },
    ...accountObjects(),
    gatewayDeployment(s),
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: GATEWAY_NAME, namespace: OPENFAAS_NAMESPACE, labels: GATEWAY_LABELS },
      spec: {
        type: "ClusterIP",
        selector: GATEWAY_LABELS,
        ports: [{ name: "http", port: GATEWAY_PORT, targetPort: GATEWAY_PORT, protocol: "TCP" }],
      },
    },
  ];
}
