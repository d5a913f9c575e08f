// The benchmark baseline: a bare node:http server that parses the JSON body and admits the review, echoing
// its uid (minimal-server.ts). What any admission webhook in Node costs at the least.

import { reviewUid, serveMinimal } from "./minimal-server.js";

// `node --test dist/test/` runs every file under a test/ directory as a test file, this one included:
// under the test runner (NODE_TEST_CONTEXT set) it does nothing.
if (!process.env.NODE_TEST_CONTEXT) {
  serveMinimal((body) =>
    JSON.stringify({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: reviewUid(body), allowed: true },
    }),
  );
}
