// OpenFaaS entry for reschedule-delete: bundled to dist/openfaas/reschedule-delete/handler.js (module.exports = handler).

import { createRescheduleDeleteHandler } from "../../reschedule-delete/handler.js";
import { buildRescheduleDeleteDeps } from "../../reschedule-delete/wiring.js";
import { collectWhenIdle } from "../idle-memory.js";
import { createOpenfaasHandler, loadOpenfaasRuntime, openfaasPathSecret } from "./adapter.js";
import { mapOwnStacks } from "./own-stacks.js";

mapOwnStacks();

export const handler = createOpenfaasHandler(
  async () => {
    const { config, kube, log } = await loadOpenfaasRuntime(process.env, "reschedule-delete");
    return createRescheduleDeleteHandler(await buildRescheduleDeleteDeps(config, kube, log));
  },
  { pathSecret: openfaasPathSecret(process.env), onReview: collectWhenIdle() },
);
