// OpenFaaS entry for reschedule-delete: bundled to dist/openfaas/reschedule-delete/handler.js (module.exports = handler).

import { createOpenfaasHandler, loadOpenfaasRuntime } from "../openfaas.js";
import { buildRescheduleDeleteDeps, createRescheduleDeleteHandler } from "./handler.js";

export const handler = createOpenfaasHandler(async () => {
  const { config, kube, log } = await loadOpenfaasRuntime(process.env, "reschedule-delete");
  return createRescheduleDeleteHandler(await buildRescheduleDeleteDeps(config, kube, log));
});
