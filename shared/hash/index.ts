export { hashJson, podSpecHash } from "./pod-hash.js";
