#!/usr/bin/env bash
# Builds cert-manager v1.21.1's controller, webhook and cainjector (static, CGO off) for the real node
# (`cluster up --cert-manager`, and `--knative` by default), and renders cert-manager's own Helm chart from its
# root module into the cache, where functions/local-cluster/cert-manager/ takes the CRDs, RBAC and webhook
# configurations from (the Deployments and Services are the project's own).
#
# Inputs: the Go module proxy serves cert-manager's root module (github.com/cert-manager/cert-manager
# v1.21.1) and every dependency, but answers 404 for the three nested cmd/* modules and for Venafi's vcert
# v5.13.7, which the controller imports. Those come as source archives (`git archive`, gzip) of the upstream
# trees, from the directory $SIMKUBE_FN_UPSTREAM names, by default the upstream-archive directory CI places beside
# the clone (see `upstream=` below):
#   cert-manager-cmd-v1.21.1.tar.gz  cert-manager's cmd/{controller,webhook,cainjector} at tag v1.21.1
#   venafi-vcert-v5.13.7.tar.gz      Venafi's vcert at tag v5.13.7
# Each cmd module's go.mod is edited at build time (nothing of it is kept): the root module is
# required at v1.21.1 from the proxy instead of `replace => ../../`, and vcert is replaced by the archive's tree.
# The chart is rendered with helm (scripts/build-helm.sh), crds.enabled=true, release cert-manager in
# namespace cert-manager.
#
# Output:  ${SIMKUBE_FN_CACHE:-$HOME/.cache/simkube-fn}/cert-manager/<key>/bin/{controller,webhook,cainjector}
#          and <key>/cert-manager.yaml (the rendered chart)
#          <key> = first 16 hex of sha256(both archives, this script)
# The last line on stdout is the bin directory; progress goes to stderr. Exit 127 without Go, 2 without the
# archives. Cold on the 2-core machine: see docs/local-cluster.md.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
VERSION=v1.21.1
VCERT=v5.13.7
upstream="${SIMKUBE_FN_UPSTREAM:-$repo/../shared/upstream}"
cmd_archive="$upstream/cert-manager-cmd-$VERSION.tar.gz"
vcert_archive="$upstream/venafi-vcert-$VCERT.tar.gz"
for f in "$cmd_archive" "$vcert_archive"; do
  if [ ! -f "$f" ]; then
    echo "missing $f: cert-manager's cmd modules and vcert are built from source archives the Go module proxy" \
      "does not serve; set SIMKUBE_FN_UPSTREAM to the directory holding them" >&2
    exit 2
  fi
done

# The cache scheme of controlplane/knative/cache-lib.sh (one directory per key, serialised with flock,
# finished by a stamp), here under cert-manager/ rather than knative/.
if ! command -v go >/dev/null 2>&1; then
  echo "go not found: Go >= 1.26 must be on PATH to build cert-manager (PATH=$PATH)" >&2
  exit 127
fi
export GOTOOLCHAIN=local CGO_ENABLED=0
log() { echo "[controlplane/cert-manager] $*" >&2; }
key="$(cat "$cmd_archive" "$vcert_archive" "$here/build.sh" | sha256sum | cut -c1-16)"
root="${SIMKUBE_FN_CACHE:-$HOME/.cache/simkube-fn}/cert-manager/$key"
bin="$root/bin"
stamp="$root/stamp"
if [ -f "$stamp" ]; then
  log "already built ($stamp)"
  echo "$bin"
  exit 0
fi
mkdir -p "$bin"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$root/lock"
  flock 9
  if [ -f "$stamp" ]; then
    log "built by a concurrent run ($stamp)"
    echo "$bin"
    exit 0
  fi
fi
total0="$(date +%s)"
step() {
  local name="$1"; shift
  local t0
  t0="$(date +%s)"
  log "$name: start"
  if ! "$@" >&2; then
    log "$name: FAILED after $(( $(date +%s) - t0 ))s (nothing stamped; rerun after fixing)"
    exit 1
  fi
  log "$name: done in $(( $(date +%s) - t0 ))s"
}

# The sources are unpacked afresh under the key's directory (a half-unpacked tree from a killed run is replaced).
src="$root/src"
unpack() {
  rm -rf "$src"
  mkdir -p "$src"
  tar -xzf "$cmd_archive" -C "$src"
  tar -xzf "$vcert_archive" -C "$src"
}
# edit_mod CMD: the root module from the proxy at $VERSION, vcert from the archive.
edit_mod() {
  (cd "$src/cert-manager/cmd/$1" \
    && go mod edit -dropreplace github.com/cert-manager/cert-manager \
      -require "github.com/cert-manager/cert-manager@$VERSION" \
      -replace "github.com/Venafi/vcert/v5=$src/vcert")
}
# build CMD: a static, stripped binary under a temporary name, then renamed.
build() {
  edit_mod "$1"
  (cd "$src/cert-manager/cmd/$1" \
    && GOFLAGS=-mod=mod go build -trimpath -buildvcs=false -ldflags "-s -w" -o "$bin/.$1.tmp" .)
  mv -f "$bin/.$1.tmp" "$bin/$1"
}
# render: cert-manager's chart from its root module, as one YAML stream.
render() {
  local helm chart
  helm="$(bash "$repo/scripts/build-helm.sh")"
  chart="$(go mod download -json "github.com/cert-manager/cert-manager@$VERSION" \
    | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')/deploy/charts/cert-manager"
  [ -f "$chart/Chart.yaml" ] || { echo "no chart at $chart" >&2; return 1; }
  # The module's chart carries placeholder versions a release would stamp; the image tags are the project's.
  "$helm" template cert-manager "$chart" --namespace cert-manager --set crds.enabled=true \
    --set "image.tag=$VERSION" --set "webhook.image.tag=$VERSION" --set "cainjector.image.tag=$VERSION" \
    --set "startupapicheck.enabled=false" >"$root/.cert-manager.yaml.tmp"
  mv -f "$root/.cert-manager.yaml.tmp" "$root/cert-manager.yaml"
}

step unpack unpack
for cmd in webhook cainjector controller; do
  step "$cmd" build "$cmd"
done
step "cert-manager.yaml" render
rm -rf "$src"
{ echo "key=$key"; echo "cert-manager=$VERSION"; echo "vcert=$VCERT"; echo "go=$(go env GOVERSION)"
  echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"; } >"$root/.stamp.tmp"
mv -f "$root/.stamp.tmp" "$stamp"
log "all done in $(( $(date +%s) - total0 ))s"
echo "$bin"
