#!/usr/bin/env bash
# Builds knative-validate (cmd/knative-validate): Knative Serving's own defaulting and validation, run over
# the YAML on its stdin. Built from this Go module, whose only requirement is knative.dev/serving, so every
# dependency is at the version Knative Serving itself pins.
#
# Output:  ${SIMKUBE_FN_CACHE:-$HOME/.cache/simkube-fn}/knative/validate/<key>/bin/knative-validate
#          <key> = first 16 hex of sha256(go.mod, go.sum, this script, ../cache-lib.sh, the command's sources)
# The last line on stdout is that bin directory; progress goes to stderr. Exit 127 without Go.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
# shellcheck source=../cache-lib.sh
source ../cache-lib.sh

key="$(cat go.mod go.sum build.sh ../cache-lib.sh cmd/knative-validate/*.go | sha256sum | cut -c1-16)"
cache_open knative/validate "$key"
# Plain "go mod download" fetches what the build needs and leaves go.sum alone (the key stays put).
step "go mod download" go mod download
step "knative-validate" gobuild knative-validate ./cmd/knative-validate
cache_close "key=$key" "serving=$(go list -m -f '{{.Version}}' knative.dev/serving)"
