// OpenFaaS entry for reschedule-delete: bundled to dist/openfaas/reschedule-delete/handler.js (module.exports = handler).

import { createRescheduleDeleteHandler } from "../../reschedule-delete/handler.js";
import { buildRescheduleDeleteDeps } from "../../reschedule-delete/wiring.js";
import { collectWhenIdle } from "../idle-memory.js";
import {
  createOpenfaasHandler,
  lazyOpenfaasRuntime,
  openfaasPathSecret,
  openfaasReadiness,
} from "./adapter.js";
import { mapOwnStacks } from "./own-stacks.js";

mapOwnStacks();

const runtime = lazyOpenfaasRuntime(process.env, "reschedule-delete");

export const handler = createOpenfaasHandler(
  async () => {
    const { config, kube, log } = await runtime();
    return createRescheduleDeleteHandler(await buildRescheduleDeleteDeps(config, kube, log));
  },
  {
    pathSecret: openfaasPathSecret(process.env),
    onReview: collectWhenIdle(),
    readiness: openfaasReadiness(runtime),
  },
);
