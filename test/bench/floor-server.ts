// The CREATE floor served (answers.ts's createFloorAnswer): the bare server plus the hash, sequence number
// and patch every faithful CREATE answer needs, and nothing of what makes it right for a real cluster.

import { createFloorAnswer } from "./answers.js";
import { serveMinimal } from "./minimal-server.js";

// Under the test runner (NODE_TEST_CONTEXT set, see bare-server.ts) it does nothing.
// Its answers are written as the functions write theirs (together, after the turn: write-batch.ts), so the
// floor is the least a faithful answer costs served the same way.
if (!process.env.NODE_TEST_CONTEXT) serveMinimal(createFloorAnswer(), { batchWrites: true });
