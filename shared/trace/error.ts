// The one error every trace problem becomes, from reading the bytes to checking their shape.

/** A trace that cannot be read: bad bytes, wrong shape, unsupported version, or a failed download. */
export class TraceError extends Error {
  override readonly name = "TraceError";
}
