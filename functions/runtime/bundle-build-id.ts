// The id scripts/bundle.mjs appends to each bundle (`//# simkube-fn-build <id>`). The code cache file starts with
// it, because V8 checks only the source's length before it uses a cache.

const BUILD_ID_PATTERN = /\/\/# simkube-fn-build ([0-9a-f]+)\s*$/;

/** The build id at the end of a bundle's source; undefined for a source without one. Pure. */
export function bundleBuildId(source: string): string | undefined {
  return BUILD_ID_PATTERN.exec(source.slice(-100))?.[1];
}
