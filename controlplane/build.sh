#!/usr/bin/env bash
# Builds a pinned Kubernetes control plane (kube-apiserver, kube-controller-manager,
# kube-scheduler, etcd) from this Go module, plus kwok from its own released module, and the real
# node's kubelet, kube-proxy and sandbox `pause` program (`cluster up --real-node`).
#
# Output:  ${SIMKUBE_FN_CACHE:-$HOME/.cache/simkube-fn}/controlplane/<key>/bin/
#          <key> = first 16 hex of sha256(go.mod + go.sum + build.sh)
# The last line on stdout is that bin directory; everything else goes to stderr.
# A stamp file (<key>/stamp) is written last; when it exists nothing is built.
set -euo pipefail

if ! command -v go >/dev/null 2>&1; then
  echo "go not found: Go >= 1.26 must be on PATH to build the control plane (PATH=$PATH)" >&2
  exit 127
fi

export GOTOOLCHAIN=local CGO_ENABLED=0

K8S_VERSION=v1.36.3
K8S_MAJOR=1
K8S_MINOR=36
KWOK_MODULE=sigs.k8s.io/kwok
KWOK_VERSION=v0.8.0

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

key="$(cat go.mod go.sum build.sh | sha256sum | cut -c1-16)"
root="${SIMKUBE_FN_CACHE:-$HOME/.cache/simkube-fn}/controlplane/$key"
bin="$root/bin"
stamp="$root/stamp"

if [ -f "$stamp" ]; then
  echo "control plane already built ($stamp)" >&2
  echo "$bin"
  exit 0
fi

mkdir -p "$bin"

# One builder at a time per key (parallel test runners may call this together).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$root/lock"
  flock 9
  if [ -f "$stamp" ]; then
    echo "control plane built by a concurrent run ($stamp)" >&2
    echo "$bin"
    exit 0
  fi
fi

log() { echo "[controlplane/build.sh] $*" >&2; }

# step NAME CMD...: runs CMD with its output on stderr and logs wall time.
step() {
  local name="$1"; shift
  local t0 t1
  t0="$(date +%s)"
  log "$name: start"
  if ! "$@" >&2; then
    log "$name: FAILED after $(( $(date +%s) - t0 ))s (nothing stamped; rerun after fixing)"
    exit 1
  fi
  t1="$(date +%s)"
  log "$name: done in $((t1 - t0))s"
}

common=(-trimpath -buildvcs=false)
kube_ldflags="-s -w \
 -X k8s.io/component-base/version.gitVersion=${K8S_VERSION} \
 -X k8s.io/component-base/version.gitMajor=${K8S_MAJOR} \
 -X k8s.io/component-base/version.gitMinor=${K8S_MINOR} \
 -X k8s.io/component-base/version.gitTreeState=clean"

# go build -o into a temporary name, then rename, so a half-written binary is
# never visible under its final name.
gobuild() {
  local out="$1" pkg="$2" ldflags="$3"
  go build "${common[@]}" -ldflags "$ldflags" -o "$bin/.$out.tmp" "$pkg"
  mv -f "$bin/.$out.tmp" "$bin/$out"
}

kwok_install() {
  local tmp="$root/.kwok-gobin"
  rm -rf "$tmp"; mkdir -p "$tmp"
  # kwok's go.mod has no replace directives, so "go install mod@version" works and
  # uses kwok's own dependency versions, never this module's.
  GOBIN="$tmp" GOFLAGS=-buildvcs=false go install "${common[@]}" -ldflags "-s -w" \
    "$KWOK_MODULE/cmd/kwok@$KWOK_VERSION"
  mv -f "$tmp/kwok" "$bin/kwok"
  rm -rf "$tmp"
}

total0="$(date +%s)"
# Plain "go mod download" fetches what the build needs and leaves go.sum alone
# ("go mod download all" would add go.sum lines, and so change the cache key).
step "go mod download" go mod download
step "kube-apiserver" gobuild kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$kube_ldflags"
step "kube-controller-manager" gobuild kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "$kube_ldflags"
step "kube-scheduler" gobuild kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler "$kube_ldflags"
# The etcd main is the module root of go.etcd.io/etcd/server/v3 (would be named "server").
step "etcd" gobuild etcd go.etcd.io/etcd/server/v3 "-s -w"
step "kubelet" gobuild kubelet k8s.io/kubernetes/cmd/kubelet "$kube_ldflags"
step "kube-proxy" gobuild kube-proxy k8s.io/kubernetes/cmd/kube-proxy "$kube_ldflags"
step "pause" gobuild pause ./pause "-s -w"
step "kwok ($KWOK_VERSION)" kwok_install

{
  echo "key=$key"
  echo "kubernetes=$K8S_VERSION"
  echo "kwok=$KWOK_VERSION"
  echo "go=$(go env GOVERSION)"
  echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$root/.stamp.tmp"
mv -f "$root/.stamp.tmp" "$stamp"
log "all done in $(( $(date +%s) - total0 ))s"
echo "$bin"
