// `simkube-fn cluster up` as a library: a real local control plane (etcd, kube-apiserver, kube-controller-manager
// with service-account credentials, kube-scheduler, KWOK) with SimKube's CRDs, a Simulation and its driver's
// SimulationRoot, virtual nodes, and both functions registered as its webhooks by the project's own manifest
// builders (url mode, the run's CA as caBundle), guarded as in production unless asked not to be (security.ts).
// stop() ends every process it started and removes its files.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type PodReads, resolveOptions } from "../../knative/deployment-options.js";
import {
  buildAllManifests,
  buildSimulationWebhookConfiguration,
  buildWebhookConfiguration,
  type DeploymentOptions,
} from "../../knative/manifests.js";
import { podCreatePolicyName } from "../../knative/pod-create-policy.js";
import {
  podReadBindingPolicyName,
  podReadEnvironment,
  podReadSettingsOf,
  readsPodsPerNamespace,
} from "../../knative/pod-reads.js";
import { loadConfig } from "../../shared/config.js";
import { FUNCTION_NAMES, type FunctionName } from "../../shared/function-names.js";
import { DEFAULT_DRIVER_USERS } from "../../shared/identities.js";
import type { KubeObject } from "../../shared/kube-api.js";
import type { LogLevel } from "../../shared/log.js";
import { DEFAULT_VIRTUAL_NS_PREFIX } from "../../shared/simulation.js";
import { podReadBinding } from "../reschedule-delete/pod-read-grants.js";
import {
  buildNamespace,
  buildSimulation,
  buildSimulationRoot,
  buildVirtualNamespace,
  buildVirtualNode,
  collectionPath,
  simkubeCrds,
} from "./cluster-objects.js";
import { type ControlPlaneBinaries, KWOK_USER, startControlPlane } from "./control-plane.js";
import {
  type AccountTarget,
  applyFunctionObjects,
  objectsToApply,
  serviceAccountCredentials,
  waitForPolicyEnforced,
} from "./deployment.js";
import { type LocalFunction, type RecordedReview, serveFunction } from "./functions.js";
import { type Janitor, startJanitor } from "./janitor.js";
import { CLUSTER_DNS_IP } from "./knative/cluster-dns.js";
import { installKnativeServing, type KnativeServing } from "./knative/serving.js";
import type { KnativeServingBuild } from "./knative/serving-build.js";
import { startKwok } from "./kwok.js";
import type { OpenfaasBuild } from "./openfaas/build.js";
import { installOpenfaas, type Openfaas } from "./openfaas/install.js";
import { createPki, type Pki } from "./pki.js";
import { freePort } from "./ports.js";
import type { ManagedProcess } from "./processes.js";
import { waitUntil } from "./readiness.js";
import {
  cgroupRootName,
  type NodeCertificates,
  nodeCertificates,
  type PreparedNode,
  prepareRealNode,
  type RealNode,
  startRealNode,
} from "./real-node/real-node.js";
import { createRestClient, type RestClient } from "./rest.js";
import { newPathSecret, type SecurityMode, writeWebhookClientFiles } from "./security.js";

export const DEFAULT_SIM_NAME = "local-sim";
/** Where the functions, their accounts, the sequence ConfigMaps and SimKube's driver account live. */
export const FUNCTIONS_NAMESPACE = "simkube";
const NODE_COUNT = 3;

export interface LocalClusterOptions {
  binaries: ControlPlaneBinaries;
  simName?: string;
  reschedule?: boolean;
  /** TRACE_PATH of both functions (lifecycles); none by default. */
  tracePath?: string;
  logLevel?: LogLevel;
  /** Keep every review each function answered, in order (tests read it). */
  recordReviews?: boolean;
  /** A real kubelet node beside the KWOK nodes (real-node/): containerd, kubelet, kube-proxy, the CNI bridge. */
  realNode?: boolean;
  /** Knative Serving on the real node, from this build (knative/serving.ts); implies realNode. */
  knative?: KnativeServingBuild;
  /** OpenFaaS CE (gateway, faas-netes) on the real node, from this build (openfaas/install.ts); implies realNode. */
  openfaas?: OpenfaasBuild;
  /**
   * One deployment for every Simulation: the functions run without SIM_NAME, the RBAC is rendered without
   * a Simulation, and the Simulation created here gets its own sk-<sim>-mutatepods, as users of such a
   * deployment render it (manifests webhook --sim-name).
   */
  everySimulation?: boolean;
  /**
   * No path secret, no client certificate, no pod-create policy (`cluster up --insecure-dev`). Default: the
   * production setup, which the real-cluster suite runs with.
   */
  insecureDev?: boolean;
  /** `manifests --pod-reads`: where reschedule-delete may read pods. Default "cluster". */
  podReads?: PodReads;
}

/** The credentials kube-apiserver presents to the functions (production mode): a test can call them as it. */
export interface WebhookClientCredentials {
  certFile: string;
  keyFile: string;
  /** The CA that signed it and nothing else: what the functions verify it against (CLIENT_CA_FILE). */
  caFile: string;
}

export interface LocalCluster {
  readonly dir: string;
  readonly server: string;
  /** Cluster admin (group system:masters). */
  readonly kubeconfig: string;
  /** SimKube's driver account (DRIVER_USERS), bound to cluster-admin as SimKube's controller is. */
  readonly driverKubeconfig: string;
  /** The functions' service accounts, by function. */
  readonly functionKubeconfigs: Record<FunctionName, string>;
  readonly simName: string;
  /** The deployment options the RBAC and the webhook configuration were rendered from. */
  readonly deployment: DeploymentOptions;
  readonly virtualNamespacePrefix: string;
  readonly simulation: KubeObject;
  readonly root: KubeObject;
  readonly functions: Record<FunctionName, LocalFunction>;
  readonly reviews: RecordedReview[];
  readonly caCertPem: string;
  readonly admin: RestClient;
  readonly logDir: string;
  /** Milliseconds from the start until each step was done. */
  readonly timings: Record<string, number>;
  readonly nodeNames: string[];
  /** production: path secret, client certificate, pod-create policy; insecure-dev: none of them. */
  readonly security: SecurityMode;
  /** Set in production mode. */
  readonly webhookClient?: WebhookClientCredentials;
  /** The real node, with --real-node. */
  readonly realNode?: RealNode;
  /** Knative Serving on the real node, with --knative. */
  readonly knative?: KnativeServing;
  /** OpenFaaS CE on the real node, with --openfaas. */
  readonly openfaas?: Openfaas;
  stop(): Promise<void>;
}

interface Setup {
  dir: string;
  pki: Pki;
  admin: RestClient;
  server: string;
  simName: string;
  prefix: string;
  /** Where each function listens (chosen up front: the manifests name the URLs). */
  ports: Record<FunctionName, number>;
  security: SecurityMode;
  /** In every webhook URL (production mode). */
  pathSecret?: string;
}

async function applyCrds(admin: RestClient): Promise<void> {
  for (const crd of simkubeCrds())
    await admin.ensure("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
  for (const crd of simkubeCrds()) {
    const name = (crd.metadata as { name: string }).name;
    await waitUntil(
      `CRD ${name} established`,
      async () => {
        const got = await admin.request<{ status?: { conditions?: { type: string; status: string }[] } }>(
          "GET",
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
        );
        return Boolean(got.status?.conditions?.some((c) => c.type === "Established" && c.status === "True"));
      },
      { timeoutMs: 30_000 },
    );
  }
}

/** POST, retried while the API is still catching up (a CRD's first objects, a namespace's first pods). */
async function createRetrying(admin: RestClient, object: KubeObject): Promise<KubeObject> {
  let created: KubeObject | undefined;
  await waitUntil(
    `${object.kind} ${object.metadata?.name} created`,
    async () => {
      created = await admin.request<KubeObject>("POST", collectionPath(object), object);
      return true;
    },
    { timeoutMs: 30_000 },
  );
  return created as KubeObject;
}

async function clusterAdminBinding(
  admin: RestClient,
  name: string,
  subject: Record<string, string>,
): Promise<void> {
  await admin.ensure("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
    subjects: [subject],
  });
}

export async function startLocalCluster(options: LocalClusterOptions): Promise<LocalCluster> {
  const t0 = Date.now();
  const dir = await mkdtemp(path.join(tmpdir(), "simkube-fn-cluster-"));
  const processes: ManagedProcess[] = [];
  const served: LocalFunction[] = [];
  const nodes: PreparedNode[] = [];
  const janitors: Janitor[] = [];
  const closers: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const close of closers) await close();
    for (const fn of served.reverse()) await fn.stop();
    try {
      for (const node of nodes) await node.stop();
    } finally {
      for (const p of processes.reverse()) await p.stop();
      await rm(dir, { recursive: true, force: true });
      for (const janitor of janitors) await janitor.close();
    }
  };
  try {
    if (options.realNode || options.knative || options.openfaas) nodes.push(await prepareRealNode(dir));
    janitors.push(
      startJanitor(
        dir,
        nodes.map((node) => cgroupRootName(node.namespaces)),
      ),
    );
    return await bringUp(options, { dir, processes, served, closers, node: nodes[0] }, stop, t0);
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Gives KWOK cluster-admin, starts it, and waits for its virtual nodes to be Ready. */
async function startKwokNodes(
  admin: RestClient,
  options: LocalClusterOptions,
  kwokKubeconfig: string,
  dir: string,
  processes: ManagedProcess[],
): Promise<string[]> {
  await clusterAdminBinding(admin, KWOK_USER, {
    apiGroup: "rbac.authorization.k8s.io",
    kind: "User",
    name: KWOK_USER,
  });
  const kwok = startKwok(options.binaries, kwokKubeconfig, path.join(dir, "logs"));
  processes.push(kwok);
  return createNodes(admin, kwok);
}

function accountTarget(s: Setup): AccountTarget {
  return {
    admin: s.admin,
    dir: s.dir,
    server: s.server,
    caCertFile: s.pki.caCertFile,
    caCertPem: s.pki.caCertPem,
  };
}

/**
 * The functions' namespace, then what `manifests` renders for them (the policy in production mode, the RBAC),
 * and a kubeconfig per service account (the driver's and each function's).
 */
async function applyAccounts(s: Setup, deployment: DeploymentOptions) {
  await s.admin.ensure("/api/v1/namespaces", buildNamespace(FUNCTIONS_NAMESPACE));
  const objects = objectsToApply(buildAllManifests(deployment), s.security);
  const accounts = await applyFunctionObjects(accountTarget(s), FUNCTIONS_NAMESPACE, objects);
  // The policy guards the pods the functions' accounts create. Without rescheduling none of them may create a
  // pod (RBAC refuses first), so there is no enforcement to wait for.
  if (s.security === "production" && deployment.rescheduleInterruptedBarePods) {
    const policy = podCreatePolicyName(resolveOptions(deployment));
    await waitForPolicyEnforced(accounts["reschedule-delete"].client, `${s.prefix}-default`, policy);
  }
  const resolved = resolveOptions(deployment);
  if (s.security === "production" && readsPodsPerNamespace(resolved)) {
    // A binding of the pod-read role in the functions' own namespace (not virtual): the fence refuses it.
    const probe = podReadBinding(podReadSettingsOf(resolved), FUNCTIONS_NAMESPACE);
    await waitForPolicyEnforced(
      accounts["reschedule-delete"].client,
      FUNCTIONS_NAMESPACE,
      podReadBindingPolicyName(resolved),
      {
        path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${FUNCTIONS_NAMESPACE}/rolebindings`,
        body: probe,
      },
    );
  }
  const driverKubeconfig = await driverAccount(s);
  const functionKubeconfigs = {} as Record<FunctionName, string>;
  for (const fn of FUNCTION_NAMES) functionKubeconfigs[fn] = accounts[fn].kubeconfig;
  return { driverKubeconfig, functionKubeconfigs };
}

/** Production mode: the path secret and kube-apiserver's client certificate for the functions' URLs. */
async function securityFor(
  dir: string,
  pki: Pki,
  ports: Record<FunctionName, number>,
  insecureDev?: boolean,
) {
  if (insecureDev) return { security: "insecure-dev" as const };
  // The host processes by URL host:port; functions deployed as pods in the functions' namespace
  // (`manifests --platform kubernetes --client-ca-secret`) by their Service's name, matched by the wildcard.
  const hostPorts = [...FUNCTION_NAMES.map((fn) => `127.0.0.1:${ports[fn]}`), `*.${FUNCTIONS_NAMESPACE}.svc`];
  const client = {
    certFile: pki.webhookClientCertFile,
    keyFile: pki.webhookClientKeyFile,
    caFile: pki.webhookClientCaFile,
  };
  return {
    security: "production" as const,
    pathSecret: newPathSecret(),
    webhookClient: client,
    admissionConfigFile: await writeWebhookClientFiles(dir, hostPorts, client),
  };
}

async function functionPorts(): Promise<Record<FunctionName, number>> {
  const ports = {} as Record<FunctionName, number>;
  for (const fn of FUNCTION_NAMES) ports[fn] = await freePort();
  return ports;
}

interface Run {
  dir: string;
  processes: ManagedProcess[];
  served: LocalFunction[];
  /** In-process servers to close first (OpenFaaS's TLS front). */
  closers: (() => Promise<void>)[];
  node: PreparedNode | undefined;
}

/**
 * The run's credentials, how the functions are guarded, and the control plane started with them; with a real
 * node, the API server listens where the node reaches it.
 */
async function startPlane(options: LocalClusterOptions, run: Run) {
  const { dir, processes, node } = run;
  const hostIp = node?.namespaces.addresses.hostIp;
  const pki = await createPki(dir, hostIp ? [hostIp] : []);
  const certificates = node ? await nodeCertificates(dir) : undefined;
  // The ports first: kube-apiserver's webhook credentials are keyed by the functions' host:port.
  const ports = await functionPorts();
  const guard = await securityFor(dir, pki, ports, options.insecureDev);
  const plane = await startControlPlane({
    dir,
    pki,
    binaries: options.binaries,
    processes,
    ...("admissionConfigFile" in guard ? { admissionConfigFile: guard.admissionConfigFile } : {}),
    ...(hostIp && certificates
      ? { realNode: { address: hostIp, kubeletClient: certificates.kubeletClient } }
      : {}),
  });
  const timings: Record<string, number> = { ...plane.timings };
  const admin = createRestClient(plane.server, pki.caCertPem, plane.adminToken);
  const simName = options.simName ?? DEFAULT_SIM_NAME;
  const s: Setup = {
    dir,
    pki,
    admin,
    server: plane.server,
    simName,
    prefix: DEFAULT_VIRTUAL_NS_PREFIX,
    ports,
    security: guard.security,
    ...("pathSecret" in guard ? { pathSecret: guard.pathSecret } : {}),
  };
  const webhookClient = "webhookClient" in guard ? guard.webhookClient : undefined;
  return { s, plane, timings, webhookClient, certificates };
}

interface NodeWorkloads {
  realNode?: RealNode;
  knative?: KnativeServing;
  openfaas?: Openfaas;
}

/** OpenFaaS on the real node (--openfaas), its TLS front closed with the cluster. */
async function startOpenfaas(
  s: Setup,
  realNode: RealNode,
  build: OpenfaasBuild,
  closers: (() => Promise<void>)[],
): Promise<Openfaas> {
  const dirs = { work: path.join(s.dir, "openfaas-images"), pki: s.dir, caCertFile: s.pki.caCertFile };
  const openfaas = await installOpenfaas(s.admin, realNode, build, dirs);
  closers.push(() => openfaas.front.stop());
  return openfaas;
}

/** The real node (--real-node) and Knative Serving (--knative) or OpenFaaS (--openfaas) on it, each timed from the start. */
async function startNodeWorkloads(
  options: LocalClusterOptions,
  up: {
    s: Setup;
    plane: { server: string };
    node?: PreparedNode;
    certificates?: NodeCertificates;
    closers: (() => Promise<void>)[];
  },
  timings: Record<string, number>,
  t0: number,
): Promise<NodeWorkloads> {
  const { s, node, certificates } = up;
  if (!node || !certificates) return {};
  const realNode = await startRealNode({
    ...{ prepared: node, certificates, binDir: options.binaries.binDir },
    ...{
      server: up.plane.server,
      caFile: s.pki.caCertFile,
      admin: s.admin,
      logDir: path.join(s.dir, "logs"),
    },
    ...(options.knative ? { clusterDns: CLUSTER_DNS_IP } : {}),
  });
  timings.realNodeReady = Date.now() - t0;
  if (options.openfaas) {
    const openfaas = await startOpenfaas(s, realNode, options.openfaas, up.closers);
    timings.openfaasReady = Date.now() - t0;
    return { realNode, openfaas };
  }
  if (!options.knative) return { realNode };
  const knative = await installKnativeServing(s.admin, realNode, options.knative, path.join(s.dir, "images"));
  timings.knativeReady = Date.now() - t0;
  return { realNode, knative };
}

async function bringUp(
  options: LocalClusterOptions,
  run: Run,
  stop: () => Promise<void>,
  t0: number,
): Promise<LocalCluster> {
  const { processes, served, node } = run;
  const { s, plane, timings, webhookClient, certificates } = await startPlane(options, run);
  const { admin, simName, pki, dir } = s;
  const nodeNames = await startKwokNodes(admin, options, plane.kwokKubeconfig, dir, processes);
  timings.nodesReady = Date.now() - t0;
  const { realNode, knative, openfaas } = await startNodeWorkloads(
    options,
    { s, plane, node, certificates, closers: run.closers },
    timings,
    t0,
  );

  await applyCrds(admin);
  const sim = await createSimulation(s, options);
  const deployment = deploymentOptions(s, options);
  const { driverKubeconfig, functionKubeconfigs } = await applyAccounts(s, deployment);

  const reviews: RecordedReview[] = [];
  const recorded = options.recordReviews ? reviews : undefined;
  const functions = await serveFunctions(s, options, deployment, functionKubeconfigs, recorded);
  served.push(...Object.values(functions));
  const webhooks = options.everySimulation
    ? buildSimulationWebhookConfiguration({ ...deployment, simName })
    : buildWebhookConfiguration(deployment);
  await registerWebhooks(s, webhooks, functions["mutate-create"]);
  timings.ready = Date.now() - t0;
  return {
    dir,
    server: plane.server,
    kubeconfig: plane.adminKubeconfig,
    driverKubeconfig,
    functionKubeconfigs,
    simName,
    deployment,
    virtualNamespacePrefix: s.prefix,
    simulation: sim.simulation,
    root: sim.root,
    functions,
    reviews,
    caCertPem: pki.caCertPem,
    admin,
    logDir: path.join(dir, "logs"),
    timings,
    nodeNames,
    security: s.security,
    ...(webhookClient ? { webhookClient } : {}),
    ...(realNode ? { realNode } : {}),
    ...(knative ? { knative } : {}),
    ...(openfaas ? { openfaas } : {}),
    stop,
  };
}

async function createNodes(admin: RestClient, kwok: ManagedProcess): Promise<string[]> {
  const names = Array.from({ length: NODE_COUNT }, (_, i) => `virtual-node-${i + 1}`);
  for (const name of names) await admin.ensure("/api/v1/nodes", buildVirtualNode(name));
  for (const name of names) {
    await waitUntil(
      `node ${name} Ready (KWOK)`,
      async () => {
        const node = await admin.request<{ status?: { conditions?: { type: string; status: string }[] } }>(
          "GET",
          `/api/v1/nodes/${name}`,
        );
        return Boolean(node.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"));
      },
      { timeoutMs: 60_000, process: kwok },
    );
  }
  return names;
}

async function createSimulation(
  s: Setup,
  o: LocalClusterOptions,
): Promise<{ simulation: KubeObject; root: KubeObject }> {
  const simulation = await createRetrying(
    s.admin,
    buildSimulation({
      name: s.simName,
      reschedule: o.reschedule ?? false,
      virtualNsPrefix: s.prefix,
      driverNamespace: FUNCTIONS_NAMESPACE,
      ...(o.tracePath ? { tracePath: o.tracePath } : {}),
    }),
  );
  const root = await createRetrying(s.admin, buildSimulationRoot(simulation));
  // SimKube's driver makes one virtual namespace per traced namespace; `<prefix>-default` is ready to use.
  await s.admin.ensure("/api/v1/namespaces", buildVirtualNamespace(`${s.prefix}-default`, root, s.simName));
  return { simulation, root };
}

const functionUrl = (port: number) => `https://127.0.0.1:${port}/`;

function deploymentOptions(s: Setup, o: LocalClusterOptions): DeploymentOptions {
  return {
    ...(o.everySimulation ? {} : { simName: s.simName }),
    namespace: FUNCTIONS_NAMESPACE,
    virtualNsPrefix: s.prefix,
    rescheduleInterruptedBarePods: o.reschedule ?? false,
    webhookMode: "url",
    webhookUrls: Object.fromEntries(FUNCTION_NAMES.map((fn) => [fn, functionUrl(s.ports[fn])])),
    caBundle: Buffer.from(s.pki.caCertPem).toString("base64"),
    ...(o.tracePath ? { tracePath: o.tracePath } : {}),
    ...(s.pathSecret ? { pathSecret: s.pathSecret } : {}),
    ...(o.podReads ? { podReads: o.podReads } : {}),
  };
}

/** SimKube's driver account (sk-ctrl-sa in the driver's namespace), so its deletes carry DRIVER_USERS. */
async function driverAccount(s: Setup): Promise<string> {
  const [namespace, name] = (DEFAULT_DRIVER_USERS[0] as string).split(":").slice(2) as [string, string];
  await s.admin.ensure(`/api/v1/namespaces/${namespace}/serviceaccounts`, {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name, namespace },
  });
  await clusterAdminBinding(s.admin, `simkube-fn-local-${name}`, { kind: "ServiceAccount", name, namespace });
  return (await serviceAccountCredentials(accountTarget(s), namespace, name)).kubeconfig;
}

async function serveFunctions(
  s: Setup,
  o: LocalClusterOptions,
  deployment: DeploymentOptions,
  kubeconfigs: Record<FunctionName, string>,
  record: RecordedReview[] | undefined,
): Promise<Record<FunctionName, LocalFunction>> {
  const env: Record<string, string> = {
    SEQUENCE_NAMESPACE: FUNCTIONS_NAMESPACE,
    TLS_CERT_FILE: s.pki.webhookCertFile,
    TLS_KEY_FILE: s.pki.webhookKeyFile,
  };
  if (!o.everySimulation) env.SIM_NAME = s.simName;
  if (o.tracePath) env.TRACE_PATH = o.tracePath;
  if (s.pathSecret) env.WEBHOOK_PATH_SECRET = s.pathSecret;
  if (s.security === "production") env.CLIENT_CA_FILE = s.pki.webhookClientCaFile;
  const functions = {} as Record<FunctionName, LocalFunction>;
  for (const name of FUNCTION_NAMES) {
    functions[name] = await serveFunction({
      name,
      // As the rendered manifests set it: POD_READ_ROLE and POD_READ_ACCOUNT for reschedule-delete in narrow mode.
      config: loadConfig({ ...env, ...podReadEnvironment(resolveOptions(deployment), name) }, { port: "0" }),
      kubeconfig: kubeconfigs[name],
      port: s.ports[name],
      logFile: path.join(s.dir, "logs", `${name}.log`),
      logLevel: o.logLevel ?? "info",
      ...(record ? { onReview: (review: RecordedReview) => record.push(review) } : {}),
    });
  }
  return functions;
}

/** The MutatingWebhookConfiguration from the project's builders, then a dry-run create until it is live. */
async function registerWebhooks(s: Setup, config: object, mutateCreate: LocalFunction): Promise<void> {
  await s.admin.request(
    "POST",
    "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
    config,
  );
  const namespace = `${s.prefix}-default`;
  await waitUntil(
    `ServiceAccount ${namespace}/default`,
    async () => {
      await s.admin.request("GET", `/api/v1/namespaces/${namespace}/serviceaccounts/default`);
      return true;
    },
    { timeoutMs: 60_000 },
  );
  const probe = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "webhook-probe" },
    spec: { containers: [{ name: "c", image: "probe" }] },
  };
  const before = mutateCreate.reviewsSeen();
  await waitUntil(
    "the webhook configuration to reach mutate-create",
    async () => {
      await s.admin.request("POST", `/api/v1/namespaces/${namespace}/pods?dryRun=All`, probe);
      return mutateCreate.reviewsSeen() > before;
    },
    { timeoutMs: 30_000 },
  );
}
