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
#          <key> = first 16 hex of sha256(both archives, this script, ../cache-lib.sh)
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

# shellcheck source=../cache-lib.sh
source "$here/../cache-lib.sh"
key="$(cat "$cmd_archive" "$vcert_archive" "$here/build.sh" "$here/../cache-lib.sh" | sha256sum | cut -c1-16)"
cache_open cert-manager "$key"

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
# build CMD: its go.mod edited, then a static, stripped binary (modules from the proxy, vcert from the archive).
build() {
  edit_mod "$1"
  GOFLAGS=-mod=mod gobuild "$1" . "$src/cert-manager/cmd/$1"
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
cache_close "key=$key" "cert-manager=$VERSION" "vcert=$VCERT"
