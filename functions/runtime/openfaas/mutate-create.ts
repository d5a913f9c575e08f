// OpenFaaS entry for mutate-create: bundled to dist/openfaas/mutate-create/handler.js (module.exports = handler).

import { createMutateCreateHandler } from "../../mutate-create/handler.js";
import { buildMutateCreateDeps } from "../../mutate-create/wiring.js";
import { collectWhenIdle } from "../idle-memory.js";
import {
  closeOnSigterm,
  createOpenfaasHandler,
  lazyOpenfaasRuntime,
  openfaasPathSecret,
  openfaasReadiness,
} from "./adapter.js";
import { mapOwnStacks } from "./own-stacks.js";

mapOwnStacks();

const runtime = lazyOpenfaasRuntime(process.env, "mutate-create");

export const handler = createOpenfaasHandler(
  async () => {
    const { config, kube, log } = await runtime();
    const deps = await buildMutateCreateDeps(config, kube, log);
    const { sequences } = deps;
    if (sequences.close) closeOnSigterm(() => sequences.close?.() ?? Promise.resolve(), log);
    return createMutateCreateHandler(deps);
  },
  {
    pathSecret: openfaasPathSecret(process.env),
    onReview: collectWhenIdle(),
    readiness: openfaasReadiness(runtime),
  },
);
