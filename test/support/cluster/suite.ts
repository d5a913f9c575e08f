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
