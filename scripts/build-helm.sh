#!/usr/bin/env bash
# Builds helm from the Go module proxy, once into a cache, the way controlplane/cache-lib.sh builds its tools:
# one directory per key, serialised with flock, finished by a stamp. The chart's tests
# (test/e2e/helm-chart.test.ts, test/cluster/helm.test.ts) lint, template and install charts/simkube-fn with
# both major lines users run: Helm 4 (the default) and Helm 3, whose older releases read only draft-07 values
# schemas.
#
#   bash scripts/build-helm.sh [4|3]
#
# Output:  ${SIMKUBE_FN_CACHE:-$HOME/.cache/simkube-fn}/helm/<version>-<key>/bin/helm
#          <key> = first 16 hex of sha256(this script)
# The last line on stdout is that binary's path; progress goes to stderr. Exit 127 without Go.
# `go install module@version` builds with helm's own go.mod (it has no replace directives), every module
# checked against the Go checksum database, so the version pins every dependency.
set -euo pipefail

if ! command -v go >/dev/null 2>&1; then
  echo "go not found: Go >= 1.26 must be on PATH to build helm (PATH=$PATH)" >&2
  exit 127
fi

major="${1:-4}"
case "$major" in
  4) VERSION=v4.3.2 ;;
  3) VERSION=v3.21.4 ;;  # its k8s.io modules are v0.36.2: Kubernetes 1.36
  *)
    echo "build-helm: major version 3 or 4, not '$major'" >&2
    exit 2
    ;;
esac
module="helm.sh/helm/v${major}"
ldflags="-s -w -X $module/internal/version.version=$VERSION"
# Helm 3 takes the Kubernetes version it assumes offline (`template`, `lint`: .Capabilities.KubeVersion, checked
# against a chart's kubeVersion) from link-time flags its Makefile derives from client-go's version; without
# them it assumes 1.20. Helm 4 reads it from its build information.
if [ "$major" = 3 ]; then
  for pkg in pkg/lint/rules pkg/chartutil; do
    ldflags="$ldflags -X $module/$pkg.k8sVersionMajor=1 -X $module/$pkg.k8sVersionMinor=36"
  done
fi
key="$(sha256sum <"${BASH_SOURCE[0]}" | cut -c1-16)"
root="${SIMKUBE_FN_CACHE:-$HOME/.cache/simkube-fn}/helm/$VERSION-$key"
bin="$root/bin/helm"
stamp="$root/stamp"
log() { echo "[scripts/build-helm.sh] $*" >&2; }

if [ -f "$stamp" ]; then
  echo "$bin"
  exit 0
fi
mkdir -p "$root/bin"
# One builder at a time (parallel test files may call this together).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$root/lock"
  if ! flock -n 9; then
    log "waiting for another build of helm $VERSION ($root/lock)"
    flock 9
  fi
  if [ -f "$stamp" ]; then
    echo "$bin"
    exit 0
  fi
fi

t0="$(date +%s)"
log "building helm $VERSION"
tmp="$root/.gobin"
rm -rf "$tmp"; mkdir -p "$tmp"
# The version helm reports is set at link time, as helm's own Makefile does.
if ! GOTOOLCHAIN=local CGO_ENABLED=0 GOBIN="$tmp" GOFLAGS=-buildvcs=false \
  go install -trimpath -ldflags "$ldflags" \
  "$module/cmd/helm@$VERSION" >&2; then
  log "FAILED after $(( $(date +%s) - t0 ))s (nothing stamped; rerun after fixing)"
  exit 1
fi
mv -f "$tmp/helm" "$bin"
rm -rf "$tmp"
echo "version=$VERSION key=$key go=$(go env GOVERSION) built=$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$root/.stamp.tmp"
mv -f "$root/.stamp.tmp" "$stamp"
log "done in $(( $(date +%s) - t0 ))s"
echo "$bin"
