#!/usr/bin/env bash
# Builds Traefik v3.6.12 (static, CGO off) from the Go module in traefik/, for its experimental Knative provider:
# a real KIngress implementation (ingress class traefik.ingress.networking.knative.dev) written in Go, the one
# ingress for Knative that the Go module proxy serves whole here. Traefik v3.7.13 is refused (8 of its
# dependencies and its nested module pkg/config/dynamic/ext are not served); v3.6.12 resolves and builds.
# Traefik's own go.mod replaces are repeated in traefik/go.mod (a dependency's replaces do not apply).
#
# Output:  ${SIMKUBE_FN_CACHE:-$HOME/.cache/simkube-fn}/knative/traefik/<key>/bin/traefik
#          <key> = first 16 hex of sha256(traefik/go.mod, traefik/go.sum, this script, cache-lib.sh)
# The last line on stdout is the bin directory; progress goes to stderr. Exit 127 without Go.
# About 15 min once on the 2-core machine under load (cold GOCACHE); a no-op after.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
# shellcheck source=cache-lib.sh
source ./cache-lib.sh

key="$(cat traefik/go.mod traefik/go.sum build-traefik.sh cache-lib.sh | sha256sum | cut -c1-16)"
cache_open traefik "$key"
cd traefik
step "go mod download" go mod download
step traefik gobuild traefik github.com/traefik/traefik/v3/cmd/traefik
cache_close "key=$key" "traefik=$(go list -m -f '{{.Version}}' github.com/traefik/traefik/v3)"
