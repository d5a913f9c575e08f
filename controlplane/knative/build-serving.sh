#!/usr/bin/env bash
# Builds Knative Serving's controller, webhook, activator, autoscaler and queue-proxy (static, CGO off) from
# this Go module (the `tool` lines of go.mod), and writes Knative's own core config YAML from the module with
# every ko:// image reference replaced by a local image name, as `ko resolve` would with real images.
# Also Knative's own e2e test program helloworld (test/test_images/helloworld: "Hello World!" on :8080), the
# user container that test/cluster/knative-serving.test.ts serves through Knative.
# For a real node (images are not built here: functions/local-cluster/knative/ packs each binary into a
# one-layer image and imports it into the node's containerd).
#
# Output:  ${SIMKUBE_FN_CACHE:-$HOME/.cache/simkube-fn}/knative/serving/<key>/bin/{controller,webhook,
#          activator,autoscaler,queue,helloworld} and <key>/serving-core.yaml, serving-crds.yaml.
#          <key> = first 16 hex of sha256(go.mod, go.sum, this script, ../cache-lib.sh)
# Images named in the YAML: $KNATIVE_IMAGE_PREFIX<cmd>:<serving version>, prefix default dev.local/knative-serving-
# (dev.local: Knative never resolves those tags to digests, and the node loads them from its own store).
# The last line on stdout is the bin directory; progress goes to stderr. Exit 127 without Go.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
# shellcheck source=../cache-lib.sh
source ../cache-lib.sh

prefix="${KNATIVE_IMAGE_PREFIX:-dev.local/knative-serving-}"
key="$(cat go.mod go.sum build-serving.sh ../cache-lib.sh | sha256sum | cut -c1-16)"
cache_open knative/serving "$key"
# resolve_yaml OUT FILES...: the files as one stream, ko://knative.dev/serving/cmd/X -> ${prefix}X:version.
resolve_yaml() {
  local out="$1"; shift
  local f
  for f in "$@"; do cat "$f"; printf '\n---\n'; done \
    | sed -E "s#ko://knative\.dev/serving/cmd/([a-z-]+)#${prefix}\1:${version}#g" >"$root/.$out.tmp"
  if grep -q 'ko://' "$root/.$out.tmp"; then
    echo "unresolved ko:// references left in $out" >&2
    return 1
  fi
  mv -f "$root/.$out.tmp" "$root/$out"
}

step "go mod download" go mod download
# After the download: on an empty module cache `go list -m -f {{.Dir}}` prints nothing, and the YAML below
# would be written empty (and stamped).
version="$(go list -m -f '{{.Version}}' knative.dev/serving)"
src="$(go list -m -f '{{.Dir}}' knative.dev/serving)"
# Knative's repository links the networking CRDs and config-network in from knative.dev/networking; module
# zips carry no symbolic links, so they are taken from that module (at the version serving pins).
net="$(go list -m -f '{{.Dir}}' knative.dev/networking)"
# Likewise config/core/300-imagecache.yaml, the Image CRD the queue-proxy's caching.internal.knative.dev Image
# needs, is a link to knative.dev/caching's config/image.yaml.
caching="$(go list -m -f '{{.Dir}}' knative.dev/caching)"
for dir in "$src" "$net" "$caching"; do
  [ -n "$dir" ] && [ -d "$dir" ] || { log "a module's directory is missing after go mod download"; exit 1; }
done
for cmd in controller webhook activator autoscaler queue; do
  step "$cmd" gobuild "$cmd" "knative.dev/serving/cmd/$cmd"
done
step helloworld gobuild helloworld knative.dev/serving/test/test_images/helloworld
mapfile -t net_crds < <(find "$net/config" -name '*.yaml' ! -name 'config-network.yaml' | sort)
step "serving-crds.yaml" resolve_yaml serving-crds.yaml "$src"/config/core/300-resources/*.yaml \
  "$caching/config/image.yaml" "${net_crds[@]}"
# config/core as Knative's release assembles serving-core.yaml (namespace, RBAC, CRDs, config maps,
# deployments, webhooks), sorted by path as ko walks it, plus the networking files linked into it.
mapfile -t core < <(find "$src/config/core" "$net/config" "$caching/config" -name '*.yaml' | sort)
step "serving-core.yaml" resolve_yaml serving-core.yaml "${core[@]}"
cache_close "key=$key" "serving=$version" "images=${prefix}<cmd>:${version}"
