#!/usr/bin/env bash
# Builds what Knative Serving needs beside itself on the real node (`cluster up --knative`), static with CGO
# off, each from its own Go module so that neither's dependencies move Knative's:
# - traefik/: Traefik v3.6.12, for its experimental Knative provider, a real KIngress implementation (ingress
#   class traefik.ingress.networking.knative.dev) in Go, the one ingress for Knative the Go module proxy serves
#   whole here. v3.7.13 is refused (8 of its dependencies and its nested module pkg/config/dynamic/ext are not
#   served); v3.6.12 resolves and builds. Traefik's go.mod replaces are repeated there (a dependency's replaces
#   do not apply).
# - coredns/: CoreDNS v1.14.7, the cluster DNS (Knative's activator and autoscaler dial Services by name).
#
# Output:  ${SIMKUBE_FN_CACHE:-$HOME/.cache/simkube-fn}/knative/node-tools/<key>/bin/{traefik,coredns}
#          <key> = first 16 hex of sha256(both go.mod and go.sum, this script, ../cache-lib.sh)
# The last line on stdout is the bin directory; progress goes to stderr. Exit 127 without Go.
# Cold (empty GOCACHE) on the 2-core machine under load: Traefik ~15 min, CoreDNS ~5 min; a no-op after.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
# shellcheck source=../cache-lib.sh
source ../cache-lib.sh

key="$(cat traefik/go.mod traefik/go.sum coredns/go.mod coredns/go.sum build-node-tools.sh ../cache-lib.sh \
  | sha256sum | cut -c1-16)"
cache_open knative/node-tools "$key"
# build_in DIR OUT PKG: go mod download and build inside that module.
build_in() {
  (cd "$1" && go mod download && gobuild "$2" "$3")
}
step traefik build_in traefik traefik github.com/traefik/traefik/v3/cmd/traefik
step coredns build_in coredns coredns github.com/coredns/coredns
cache_close "key=$key" "traefik=$(cd traefik && go list -m -f '{{.Version}}' github.com/traefik/traefik/v3)" \
  "coredns=$(cd coredns && go list -m -f '{{.Version}}' github.com/coredns/coredns)"
