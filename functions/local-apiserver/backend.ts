// What every request handler of the double works on.

import type { AdmissionCaller } from "./admission.js";
import type { ResourceRegistry } from "./resources.js";
import type { ObjectStore } from "./store.js";

export interface Backend {
  kinds: ResourceRegistry;
  store: ObjectStore;
  admission: AdmissionCaller;
  /** Clock for creationTimestamp and deletionTimestamp. */
  now: () => Date;
}
