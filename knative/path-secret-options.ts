// The path secret (README "Who may call the functions"): the last segment of every webhook path, checked by
// the functions. What a secret may look like in each webhook mode, and where a deployment keeps it.

import { randomBytes } from "node:crypto";
import { isDns1123Subdomain } from "../shared/base/index.js";
import { type DeploymentOptions, type ResolvedOptions, rejectOption, type WebhookMode } from "./options.js";

const PATH_SECRET = /^[A-Za-z0-9_-]{24,256}$/;
/**
 * A service-mode webhook's path segments must each be a lowercase RFC 1123 subdomain (the API server refuses
 * the configuration otherwise: k8s.io/apiserver pkg/apis/apiserver/validation, ValidateWebhookService), so there
 * a secret is lowercase letters, digits and `-` only, starting and ending with a letter or digit.
 */
const SERVICE_PATH_SECRET = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** 32 random bytes as hex: one path segment every webhook mode accepts (and WEBHOOK_PATH_SECRET too). */
export function newPathSecret(): string {
  return randomBytes(32).toString("hex");
}

/**
 * A render never makes a secret: the same flags must print the same YAML (GitOps), and a new secret would
 * also change every webhook path and roll every pod. So one of the two must be given.
 */
export function requirePathSecret(o: Pick<DeploymentOptions, "pathSecret" | "pathSecretFrom">): void {
  if (o.pathSecret !== undefined || o.pathSecretFrom !== undefined) return;
  rejectOption(
    'manifests makes no path secret, so the same flags always render the same YAML: give --path-secret S (make one with --path-secret "$(openssl rand -hex 32)" and keep it for every render) or --path-secret-from SECRET (an existing Secret with key path-secret)',
  );
}

/** A given secret is one URL path segment, and in service mode one the API server accepts for a Service. */
export function checkPathSecretValue(pathSecret: string | undefined, webhookMode: WebhookMode): void {
  if (pathSecret !== undefined && !PATH_SECRET.test(pathSecret)) {
    rejectOption("pathSecret must be 24 to 256 characters of A-Z a-z 0-9 _ - (it is one URL path segment)");
  }
  if (webhookMode === "service" && pathSecret !== undefined && !SERVICE_PATH_SECRET.test(pathSecret)) {
    rejectOption(
      "pathSecret in service mode must be lowercase letters, digits and - (the API server takes only RFC 1123 path segments for a Service): e.g. openssl rand -hex 32",
    );
  }
}

export function resolvePathSecretFrom(options: DeploymentOptions): string | undefined {
  const name = options.pathSecretFrom;
  if (name !== undefined && !isDns1123Subdomain(name))
    rejectOption(`pathSecretFrom "${name}" is not a Secret name (a DNS-1123 subdomain)`);
  return name;
}

/**
 * With an existing Secret, the webhook paths still carry the secret itself: the API server cannot read a
 * Secret, so the webhook configuration has to hold the value (README "Who may call the functions").
 */
export function checkPathSecretFrom(o: ResolvedOptions): void {
  if (o.pathSecretFrom === undefined || o.pathSecret !== undefined) return;
  if (o.webhookConfiguration && o.target !== "openfaas-stack") {
    rejectOption(
      `pathSecretFrom ${o.pathSecretFrom}: the webhook configuration's paths end in the secret itself; give its value as pathSecret too (kubectl get secret -n ${o.namespace} ${o.pathSecretFrom} -o jsonpath='{.data.path-secret}' | base64 -d), or render no webhook configuration`,
    );
  }
}

/** The Secret holding the path secret (one per deployment, in the functions' namespace), and its key. */
export function pathSecretName(o: ResolvedOptions): string {
  return o.pathSecretFrom ?? `${o.name}-webhook-path`;
}

/** Whether the functions check a path secret: one given or generated, or one an existing Secret holds. */
export function checksPathSecret(o: ResolvedOptions): boolean {
  return o.pathSecret !== undefined || o.pathSecretFrom !== undefined;
}
export const PATH_SECRET_KEY = "path-secret";
