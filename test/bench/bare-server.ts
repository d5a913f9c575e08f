// The benchmark baseline: a bare node:http server that parses the JSON body and admits the review, echoing
// its uid (minimal-server.ts, answers.ts). What any admission webhook in Node costs at the least.

import { bareAnswer } from "./answers.js";
import { serveMinimal } from "./minimal-server.js";

// `node --test dist/test/` runs every file under a test/ directory as a test file, this one included:
// under the test runner (NODE_TEST_CONTEXT set) it does nothing.
// BENCH_BATCH_WRITES=1: the same answers, written as the functions write theirs (together, after the turn).
if (!process.env.NODE_TEST_CONTEXT)
  serveMinimal(bareAnswer, { batchWrites: process.env.BENCH_BATCH_WRITES === "1" });
