export type { KubeApi, KubeObject, ObjectRef, OwnerReference } from "./api.js";
export {
  isAlreadyExists,
  isConflict,
  isNotFound,
  isTransient,
  KubeError,
  kubeErrorOf,
  STATUS_REASON_BY_CODE,
} from "./api.js";
export { createKubeApi } from "./client.js";
export type { OwnerLink, OwnerResolver } from "./owners.js";
export {
  createOwnerResolver,
  isBarePod,
  isOwnedBy,
  OwnerGraphTooLarge,
  OwnerReadForbidden,
  ownerReferencesOf,
  refersTo,
  simulationOwnershipOf,
  simulationRootOf,
  simulationsOwning,
  workloadOwners,
} from "./owners.js";
export type { Pod, PodCondition } from "./pod.js";
export { groupOfApiVersion, guessResourceOfKind } from "./resource-names.js";
export { sanitizeObject, stripSimkubeMetadata } from "./sanitize.js";
