// One real local cluster per test file (start-up costs seconds), and what happens when there can be none:
// with CI=true the file fails; elsewhere, when Go (or the project's controlplane/) is missing, every test of
// the file is skipped with one loud line that says how many. Any other start failure fails the file.

import path from "node:path";
import { type TestContext, test } from "node:test";
import { fileURLToPath } from "node:url";
import { MissingControlPlaneError, resolveControlPlane } from "../../../functions/local-cluster/binaries.js";
import { resolveCertManager } from "../../../functions/local-cluster/cert-manager/build.js";
import { startLocalCluster } from "../../../functions/local-cluster/cluster.js";
import type { LocalCluster, LocalClusterOptions } from "../../../functions/local-cluster/cluster-types.js";
import { resolveKnativeServing } from "../../../functions/local-cluster/knative/serving-build.js";
import { resolveOpenfaas } from "../../../functions/local-cluster/openfaas/build.js";
import { RealNodeUnavailableError } from "../../../functions/local-cluster/real-node/real-node.js";

export interface ClusterCase {
  name: string;
  run: (t: TestContext) => Promise<void>;
  /** Default 120 s. */
  timeoutMs?: number;
}

export type ClusterSuite = { cluster: LocalCluster } | { skip: string } | { error: Error };

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * `withKnative`: Knative Serving on the real node, built by controlplane/knative/ (cluster up --knative).
 * `withCertManager` (default: as withKnative): cert-manager on it, built by controlplane/cert-manager/.
 * `withOpenfaas`: OpenFaaS CE on the real node, built by controlplane/openfaas/ (cluster up --openfaas).
 */
export async function openClusterSuite(
  options: Omit<LocalClusterOptions, "binaries" | "knative" | "certManager" | "openfaas"> & {
    withKnative?: boolean;
    withCertManager?: boolean;
    withOpenfaas?: boolean;
  },
): Promise<ClusterSuite> {
  const ci = process.env.CI === "true";
  try {
    const binDir = process.env.SIMKUBE_FN_CONTROLPLANE_BIN?.trim();
    const searchFrom = [process.cwd(), here];
    const binaries = await resolveControlPlane({ searchFrom, ...(binDir ? { binDir } : {}) });
    const { withKnative, withCertManager = withKnative, withOpenfaas, ...rest } = options;
    const knative = withKnative ? await resolveKnativeServing(searchFrom, "inherit") : undefined;
    const certManager = withCertManager ? await resolveCertManager(searchFrom, "inherit") : undefined;
    const openfaas = withOpenfaas ? await resolveOpenfaas(searchFrom, "inherit") : undefined;
    const platform = {
      ...(knative ? { knative } : {}),
      ...(certManager ? { certManager } : {}),
      ...(openfaas ? { openfaas } : {}),
    };
    return { cluster: await startLocalCluster({ ...rest, binaries, ...platform }) };
  } catch (err) {
    const unavailable = err instanceof MissingControlPlaneError || err instanceof RealNodeUnavailableError;
    if (unavailable && !ci) return { skip: err.message };
    return { error: err as Error };
  }
}

/** A suite whose functions run as pods on the real node, and what was deployed there (absent: not started). */
export interface DeployedSuite<D> {
  suite: ClusterSuite;
  deployed?: D;
}

/**
 * Builds what the function pods run (`build`, by the script named `buildScript`), opens the cluster, deploys.
 * A failed build fails the file under CI=true and skips it elsewhere, with the build's last line; a failed
 * deploy stops the cluster and fails the file.
 */
export async function openDeployedSuite<B, D>(o: {
  buildScript: string;
  build: () => Promise<B>;
  cluster: Parameters<typeof openClusterSuite>[0];
  deploy: (cluster: LocalCluster, built: B) => Promise<D>;
}): Promise<DeployedSuite<D>> {
  let built: B;
  try {
    built = await o.build();
  } catch (err) {
    const message = `${o.buildScript} failed: ${(err as { stderr?: string }).stderr?.trim().split("\n").at(-1) ?? err}`;
    return { suite: process.env.CI === "true" ? { error: new Error(message) } : { skip: message } };
  }
  const suite = await openClusterSuite(o.cluster);
  if (!("cluster" in suite)) return { suite };
  try {
    return { suite, deployed: await o.deploy(suite.cluster, built) };
  } catch (err) {
    await suite.cluster.stop();
    return { suite: { error: err as Error } };
  }
}

/** The suite's cluster; only for cases, which run only when it started. */
export function clusterOf(suite: ClusterSuite): LocalCluster {
  if (!("cluster" in suite)) throw new Error("no cluster");
  return suite.cluster;
}

/** Registers the cases, or one failing test (cannot start), or every case skipped with one loud line. */
export function registerClusterCases(file: string, suite: ClusterSuite, cases: readonly ClusterCase[]): void {
  if ("error" in suite) {
    test(`${file}: the local cluster starts`, () => {
      throw suite.error;
    });
    return;
  }
  if ("skip" in suite) {
    process.stderr.write(`\n*** SKIPPED ${cases.length} real-cluster tests (${file}): ${suite.skip} ***\n\n`);
    for (const c of cases) test(c.name, { skip: "no local cluster (see the SKIPPED line)" }, () => {});
    return;
  }
  for (const c of cases) test(c.name, { timeout: c.timeoutMs ?? 120_000 }, (t) => c.run(t));
}
