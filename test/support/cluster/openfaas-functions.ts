// The functions served by OpenFaaS CE on `cluster up --openfaas`, deployed as an OpenFaaS user deploys them:
// - the images scripts/build-openfaas-image.sh lays out from the node22 template (of-watchdog in front of
//   dist/openfaas/<function>/), imported into the real node's containerd (no registry is reachable; the
//   build's faas-netes keeps imagePullPolicy IfNotPresent for that reason);
// - what `manifests --platform openfaas --webhook-gateway-url <the TLS front>` renders (RBAC, pod-create
//   policy, path secret), applied as `kubectl apply --server-side` does, unchanged;
// - the stack file `manifests --target openfaas-stack` renders from the same options, written as stack.yml
//   and read by `faas-cli deploy -f` (after `faas-cli login`, CE's basic auth), unchanged;
// - each function's pod waited for with a bound, its pod's reason in the error when it cannot start;
// - then the rendered webhook configuration replaces the one pointing at the host processes.
// The only non-default options: --image dev.local/simkube-fn:VERSION (the local images' names) and the run's
// CA as --ca-bundle (the TLS front's certificate is from it).

import { execFile, spawn } from "node:child_process";
import { cp, mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { objectPath } from "../../../functions/local-cluster/cluster-objects.js";
import type { LocalCluster } from "../../../functions/local-cluster/cluster-types.js";
import { waitForFunctionPods } from "../../../functions/local-cluster/openfaas/function-status.js";
import { DEFAULT_IMAGE } from "../../../knative/defaults.js";
import { resolveOptions } from "../../../knative/deployment-options.js";
import { buildAllManifests, type Manifest, renderDeployment } from "../../../knative/manifests.js";
import type { DeployedFunction, DeploymentOptions } from "../../../knative/options.js";
import { functionResourceName } from "../../../knative/webhook-endpoints.js";
import type { KubeObject } from "../../../shared/kube/api.js";
import { replaceObject } from "./kube.js";

const exec = promisify(execFile);

/** scripts/build-openfaas-image.sh (a no-op when cached): the directory holding <function>.tar. */
export async function buildOpenfaasImages(repoRoot: string): Promise<string> {
  const { stdout } = await exec("bash", [path.join(repoRoot, "scripts", "build-openfaas-image.sh")], {
    cwd: repoRoot,
    maxBuffer: 64 << 20,
  });
  return stdout.trim().split("\n").at(-1) ?? "";
}

export function openfaasDeploymentOptions(c: LocalCluster): DeploymentOptions {
  if (!c.openfaas) throw new Error("the functions through OpenFaaS need cluster up --openfaas");
  const { webhookMode: _mode, webhookUrls: _urls, namespace: _ns, ...rest } = c.deployment;
  return {
    ...rest,
    clusterPlatform: "openfaas",
    gateway: c.openfaas.gatewayUrl,
    webhookGateway: c.openfaas.webhookGatewayUrl,
    image: DEFAULT_IMAGE,
    caBundle: Buffer.from(c.caCertPem).toString("base64"),
  };
}

/** `kubectl apply --server-side --force-conflicts`: one PATCH per object, created or updated as rendered. */
export async function applyServerSide(c: LocalCluster, objects: readonly Manifest[]): Promise<void> {
  for (const object of objects)
    await c.admin.request(
      "PATCH",
      `${objectPath(object as KubeObject)}?fieldManager=simkube-fn-test&force=true`,
      object,
      "application/apply-patch+yaml",
    );
}

/** Runs faas-cli with `input` on stdin; its output, or an error carrying it. */
function faasCli(
  cli: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  input = "",
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cli, args, { env, cwd, stdio: ["pipe", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolve(output) : reject(new Error(`faas-cli ${args[0]} exit ${code}: ${output.trim()}`)),
    );
    child.stdin.end(input);
  });
}

/** `faas-cli login` then `faas-cli deploy -f stack.yml`, its own config directory beside the stack file. */
async function faasCliDeploy(c: LocalCluster, stackFile: string): Promise<string> {
  const o = c.openfaas;
  if (!o) throw new Error("no OpenFaaS");
  const cli = path.join(o.build.binDir, "faas-cli");
  const dir = path.dirname(stackFile);
  const env = { ...process.env, OPENFAAS_CONFIG: path.join(dir, "faas-cli") };
  await mkdir(env.OPENFAAS_CONFIG, { recursive: true });
  // faas-cli deploy reads the function's template (template/<lang>/template.yml) beside stack.yml, where
  // `faas-cli template store pull node22` or `faas-cli build` leaves it: the same template the images used.
  await cp(o.build.templateDir, path.join(dir, "template", "node22"), { recursive: true });
  const login = ["login", "-g", o.gatewayUrl, "-u", "admin", "--password-stdin"];
  await faasCli(cli, login, env, dir, o.password);
  return faasCli(cli, ["deploy", "-f", stackFile, "-g", o.gatewayUrl], env, dir);
}

export interface OpenfaasDeployment {
  options: DeploymentOptions;
  objects: Manifest[];
  stackFile: string;
  /** faas-cli deploy's output. */
  deployOutput: string;
  /** Milliseconds from faas-cli deploy until both functions had a ready pod. */
  readyMs: number;
}

export function openfaasFunctionName(options: DeploymentOptions, fn: DeployedFunction): string {
  return functionResourceName(resolveOptions(options).name, fn);
}

export async function deployThroughOpenfaas(c: LocalCluster, imageDir: string): Promise<OpenfaasDeployment> {
  if (!c.realNode || !c.openfaas)
    throw new Error("the functions through OpenFaaS need cluster up --openfaas");
  for (const file of (await readdir(imageDir)).filter((f) => f.endsWith(".tar")))
    await c.realNode.importImage(path.join(imageDir, file));
  const options = openfaasDeploymentOptions(c);
  const objects = buildAllManifests(options);
  await applyServerSide(
    c,
    objects.filter((m) => m.kind !== "MutatingWebhookConfiguration"),
  );
  const dir = path.join(c.dir, "openfaas-deploy");
  await mkdir(dir, { recursive: true });
  const stackFile = path.join(dir, "stack.yml");
  await writeFile(stackFile, renderDeployment({ ...options, target: "openfaas-stack" }));
  const t0 = Date.now();
  const deployOutput = await faasCliDeploy(c, stackFile);
  const o = resolveOptions(options);
  for (const fn of o.functions)
    await waitForFunctionPods(c.admin, o.namespace, openfaasFunctionName(options, fn), 180_000);
  const readyMs = Date.now() - t0;
  for (const webhook of objects.filter((m) => m.kind === "MutatingWebhookConfiguration"))
    await replaceObject(c, webhook);
  return { options, objects, stackFile, deployOutput, readyMs };
}
