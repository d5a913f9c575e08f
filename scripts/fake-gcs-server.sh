#!/usr/bin/env bash
# Builds fake-gcs-server (github.com/fsouza/fake-gcs-server), the Google Cloud Storage emulator the gs://
# trace tests read from, once into a cache, the way controlplane/build.sh builds the control plane.
#
# Output:  ${SIMKUBE_FN_CACHE:-$HOME/.cache/simkube-fn}/fake-gcs-server/<version>/bin/fake-gcs-server
# The last line on stdout is that binary's path; everything else goes to stderr. A stamp file is written
# last; when it exists nothing is built.
set -euo pipefail

if ! command -v go >/dev/null 2>&1; then
  echo "go not found: Go must be on PATH to build fake-gcs-server (PATH=$PATH)" >&2
  exit 127
fi

VERSION=v1.56.1
root="${SIMKUBE_FN_CACHE:-$HOME/.cache/simkube-fn}/fake-gcs-server/$VERSION"
bin="$root/bin/fake-gcs-server"
stamp="$root/stamp"

if [ -f "$stamp" ]; then
  echo "$bin"
  exit 0
fi
mkdir -p "$root/bin"
# One builder at a time (parallel test files may call this together).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$root/lock"
  flock 9
  if [ -f "$stamp" ]; then
    echo "$bin"
    exit 0
  fi
fi

t0="$(date +%s)"
echo "[scripts/fake-gcs-server.sh] building fake-gcs-server $VERSION" >&2
tmp="$root/.gobin"
rm -rf "$tmp"; mkdir -p "$tmp"
# Its own go.mod decides its dependencies' versions (go install module@version).
GOTOOLCHAIN=local CGO_ENABLED=0 GOBIN="$tmp" GOFLAGS=-buildvcs=false \
  go install -trimpath -ldflags "-s -w" "github.com/fsouza/fake-gcs-server@$VERSION" >&2
mv -f "$tmp/fake-gcs-server" "$bin"
rm -rf "$tmp"
echo "version=$VERSION built=$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$stamp"
echo "[scripts/fake-gcs-server.sh] done in $(( $(date +%s) - t0 ))s" >&2
echo "$bin"
