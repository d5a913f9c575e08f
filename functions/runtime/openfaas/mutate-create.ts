// OpenFaaS entry for mutate-create: bundled to dist/openfaas/mutate-create/handler.js (module.exports = handler).

import { buildMutateCreateDeps, createMutateCreateHandler } from "../../mutate-create/handler.js";
import { collectWhenIdle } from "../idle-memory.js";
import { createOpenfaasHandler, loadOpenfaasRuntime, openfaasPathSecret } from "./adapter.js";

export const handler = createOpenfaasHandler(
  async () => {
    const { config, kube, log } = await loadOpenfaasRuntime(process.env, "mutate-create");
    return createMutateCreateHandler(await buildMutateCreateDeps(config, kube, log));
  },
  { pathSecret: openfaasPathSecret(process.env), onReview: collectWhenIdle() },
);
