// The local cluster's options and what startLocalCluster hands back (public), and the setup its steps share.

import type { DeploymentOptions } from "../../knative/manifests.js";
import type { PodReads } from "../../knative/options.js";
import type { FunctionName, LogLevel } from "../../shared/base/index.js";
import type { KubeObject } from "../../shared/kube/index.js";
import type { CertManagerBuild } from "./cert-manager/build.js";
import type { CertManager } from "./cert-manager/install.js";
import type { ControlPlaneBinaries } from "./control-plane.js";
import type { LocalFunction, RecordedReview } from "./functions.js";
import type { KnativeServing } from "./knative/serving.js";
import type { KnativeServingBuild } from "./knative/serving-build.js";
import type { OpenfaasBuild } from "./openfaas/build.js";
import type { Openfaas } from "./openfaas/install.js";
import type { Pki } from "./pki.js";
import type { ManagedProcess } from "./processes.js";
import type { PreparedNode, RealNode } from "./real-node/real-node.js";
import type { RestClient } from "./rest.js";
import type { SecurityMode } from "./security.js";

export const DEFAULT_SIM_NAME = "local-sim";
/** Where the functions, their accounts, the sequence ConfigMaps and SimKube's driver account live. */
export const FUNCTIONS_NAMESPACE = "simkube";

export interface LocalClusterOptions {
  binaries: ControlPlaneBinaries;
  simName?: string;
  /** The Simulation's spec.rescheduleInterruptedBarePods, and (unless serveReschedule says otherwise) the deployment's. */
  reschedule?: boolean;
  /**
   * Whether the deployment registers reschedule-delete's DELETE webhook (`manifests --no-reschedule` when
   * false). Default: as `reschedule`. A test sets it apart to see a Simulation ask for what is not served.
   */
  serveReschedule?: boolean;
  /** TRACE_PATH of both functions (lifecycles); none by default. */
  tracePath?: string;
  logLevel?: LogLevel;
  /** Keep every review each function answered, in order (tests read it). */
  recordReviews?: boolean;
  /** A real kubelet node beside the KWOK nodes (real-node/): containerd, kubelet, kube-proxy, the CNI bridge. */
  realNode?: boolean;
  /** Knative Serving on the real node, from this build (knative/serving.ts); implies realNode. */
  knative?: KnativeServingBuild;
  /** cert-manager on the real node, from this build (cert-manager/install.ts); implies realNode. */
  certManager?: CertManagerBuild;
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
  /** cert-manager on the real node, with --cert-manager (or --knative). */
  readonly certManager?: CertManager;
  /** OpenFaaS CE on the real node, with --openfaas. */
  readonly openfaas?: Openfaas;
  stop(): Promise<void>;
}

export interface Setup {
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

/** What startLocalCluster owns and stops: its directory, processes, served functions and the real node. */
export interface Run {
  dir: string;
  processes: ManagedProcess[];
  /** In-process servers to close first (OpenFaaS's TLS front). */
  closers: (() => Promise<void>)[];
  served: LocalFunction[];
  node: PreparedNode | undefined;
}
