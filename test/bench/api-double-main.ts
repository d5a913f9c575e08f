// The API double as its own process, so that it does not share the load generator's event loop: starts
// functions/local-apiserver/ on 127.0.0.1, stores the bench simulation, prints {"url": ...} on one
// line. Over the IPC channel it answers {type: "requests"} with how many API requests it has served.

import { type FakeApiServer, startFakeApiServer } from "../../functions/local-apiserver/server.js";
import {
  BENCH_STORE_NAMESPACE,
  BENCH_VIRTUAL_NAMESPACES,
  benchSimulation,
  benchSimulationRoot,
} from "./bench-world.js";

export interface RequestCount {
  type: "requests";
  total: number;
  byMethod: Record<string, number>;
}

function countRequests(api: FakeApiServer): RequestCount {
  const byMethod: Record<string, number> = {};
  for (const r of api.requests) byMethod[r.method] = (byMethod[r.method] ?? 0) + 1;
  return { type: "requests", total: api.requests.length, byMethod };
}

// `node --test dist/test/` runs every file under a test/ directory as a test file, this one included:
// under the test runner (NODE_TEST_CONTEXT set) it does nothing.
if (!process.env.NODE_TEST_CONTEXT) await serve();

async function serve(): Promise<void> {
  const api = await startFakeApiServer({
    namespaces: ["default", "kube-system", BENCH_STORE_NAMESPACE, ...BENCH_VIRTUAL_NAMESPACES],
  });
  // BENCH_TRACE_PATH: the Simulation's trace, which mutate-create loads when SIM_NAME and TRACE_PATH are unset.
  if (!process.env.BENCH_SIMKUBE_DRIVER)
    api.store.put(benchSimulation(process.env.BENCH_TRACE_PATH || undefined));
  api.store.put(benchSimulationRoot());
  if (process.env.BENCH_SIMKUBE_DRIVER) holdSimKubeDriverNeeds(api);

  process.on("message", (message: { type?: string }) => {
    if (message?.type === "requests") process.send?.(countRequests(api));
  });
  function stop(): void {
    setTimeout(() => process.exit(0), 2_000).unref();
    void api.close().finally(() => process.exit(0));
  }
  // Without the parent there is nothing to serve: go when it goes.
  process.once("disconnect", stop);
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);

  process.stdout.write(`${JSON.stringify({ url: api.url })}\n`);
}

/**
 * BENCH_SIMKUBE_DRIVER set (vs-simkube.ts): what SimKube's sk-driver needs besides what the functions need. Its
 * Simulation type requires the driver's image and port, lifecycleParams and the status's observedGeneration, so the Simulation
 * carries them (the functions ignore them); and it reads and renews its lease (coordination.k8s.io, named
 * sk-lease, in the namespace its --controller-ns names) before it runs, so Leases are served and it is held.
 */
function holdSimKubeDriverNeeds(api: FakeApiServer): void {
  const sim = benchSimulation();
  const spec = sim.spec as unknown as { driver: Record<string, unknown>; lifecycleParams?: object };
  spec.driver.image = "sk-driver:unused";
  spec.driver.port = 8888;
  spec.lifecycleParams = {};
  sim.status = { ...sim.status, observedGeneration: 1 } as typeof sim.status;
  api.store.put(sim);
  api.registerKind({
    group: "coordination.k8s.io",
    version: "v1",
    kind: "Lease",
    plural: "leases",
    singular: "lease",
    namespaced: true,
    statusSubresource: false,
    custom: false,
  });
  api.store.put({
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { name: "sk-lease", namespace: BENCH_STORE_NAMESPACE },
    spec: {},
  });
}
