export type {
  AdmissionRequest,
  AdmissionResponse,
  AdmissionReview,
  ReviewHandler,
  UserInfo,
} from "./review.js";
export {
  ADMISSION_API_VERSION,
  allow,
  deny,
  parseReview,
  rejectReview,
  reviewJson,
  UnanswerableReviewError,
  withPatch,
} from "./review.js";
