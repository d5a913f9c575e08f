// The pod model both functions read: what an AdmissionReview's object or oldObject is once it is known to be
// a JSON object. Only the fields the functions look at are typed; everything else passes through untouched.

import type { KubeObject } from "./api.js";

export interface PodCondition {
  type?: string;
  status?: string;
  reason?: string;
  [field: string]: unknown;
}

export type Pod = KubeObject & {
  spec?: Record<string, unknown>;
  status?: { phase?: string; conditions?: PodCondition[]; [field: string]: unknown };
};
