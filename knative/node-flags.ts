// How every deployed `serve` process starts: the Node flags of the image's ENTRYPOINT (Dockerfile) and of the
// OpenFaaS functions' NODE_OPTIONS (knative/openfaas-stack.ts), and the environment both set.
// test/unit/node-flags.test.ts holds the Dockerfile to this file, and `npm run bench` starts the functions
// with both, so the bench measures what is deployed.
//
// Why (README "Performance" has the figures): under a burst of 64 concurrent reviews V8 grows its young
// generation to 16 MiB per semi-space and keeps it, old space fills with promoted garbage before a major GC,
// and glibc gives each thread that allocates its own malloc arena. That left the functions at 130-140 MiB RSS
// after the bench's bursts (Node 20); with these, 84-89 MiB, at the same CPU per review.
// - --max-semi-space-size=4: the young generation stays at 4 MiB per semi-space. 2 MiB saved ~8 MiB more
//   but cost mutate-create ~20% more CPU per review (a scavenge every ~45 reviews, ~0.7 ms each).
// - --heap-growing-percent=20: after each major GC, V8 lets the old generation grow by 20% of what survived
//   (by default a factor up to 4), so garbage promoted during a burst is collected sooner.
//   (--optimize-for-size got RSS as low but cost mutate-create ~50% more CPU per review: 90 µs vs 60.)
// - MALLOC_ARENA_MAX=2: two malloc arenas instead of one per thread (glibc; other libcs ignore it).
//
// A V8 code cache is only accepted by a V8 started with the same flags: the image writes its cache with
// exactly these (Dockerfile), or every cold start would compile the bundle from scratch.
export const SERVE_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=4", "--heap-growing-percent=20"];

export const SERVE_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: "2" };

/** The V8 flags Node accepts in NODE_OPTIONS (it refuses the others, --heap-growing-percent among them). */
const NODE_OPTIONS_V8_FLAGS = ["--max-semi-space-size=", "--max-old-space-size="];

/**
 * NODE_OPTIONS for the OpenFaaS functions, whose template starts node itself (no code cache there): the
 * flags NODE_OPTIONS can carry, i.e. the semi-space cap alone.
 */
export const OPENFAAS_NODE_OPTIONS = SERVE_NODE_FLAGS.filter((flag) =>
  NODE_OPTIONS_V8_FLAGS.some((prefix) => flag.startsWith(prefix)),
).join(" ");
