// The CREATE floor's answer (answers.ts) served through the functions' own HTTP adapter
// (functions/runtime/http-server.ts: createApp and listen, with its limits, connection tracking and latency
// timing) instead of minimal-server.ts. Beside the floor and mutate-create in bench:vs-simkube it splits the
// function's cost above the floor in two: what the adapter adds, and what the handler adds. PORT, and
// TLS_CERT_FILE with TLS_KEY_FILE for https, as the other reference servers take them.

import { readFileSync } from "node:fs";
import { createApp, drainAndClose, listen } from "../../functions/runtime/http-server.js";
import type { ReviewHandler } from "../../shared/admission/review.js";
import { createLogger } from "../../shared/base/log.js";
import { createFloorReview } from "./answers.js";

async function serveThroughAdapter(): Promise<void> {
  const review = createFloorReview();
  // The handler contract is a promise, as mutate-create's async handler returns one.
  const handle: ReviewHandler = (body) => Promise.resolve(review(body));
  const { TLS_CERT_FILE: cert, TLS_KEY_FILE: key, PORT } = process.env;
  const tls = cert && key ? { cert: readFileSync(cert), key: readFileSync(key) } : undefined;
  const log = createLogger("warn");
  const stats = () => ({});
  const server = await listen(createApp(handle, log, { stats }), Number(PORT ?? 8080), "0.0.0.0", tls);
  const stop = () => {
    drainAndClose(server, 2_000, 0).then(() => process.exit(0));
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

// Under the test runner (NODE_TEST_CONTEXT set, see bare-server.ts) it does nothing.
if (!process.env.NODE_TEST_CONTEXT) void serveThroughAdapter();
