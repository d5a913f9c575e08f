#!/usr/bin/env bash
# The Prometheus Operator's PodMonitor and ServiceMonitor CRDs (monitoring.coreos.com/v1), so a real-cluster
# test can show the API server takes the monitors `manifests --pod-monitor/--service-monitor` and the chart
# render (test/cluster/helm.test.ts). Copied, unchanged, from the operator's root module
# (github.com/prometheus-operator/prometheus-operator v0.85.0, example/prometheus-operator-crd/), which the Go
# module proxy serves; nothing is built or run from it.
#
# Output:  ${SIMKUBE_FN_CACHE:-$HOME/.cache/simkube-fn}/prometheus-operator/<key>/bin/
#          monitoring.coreos.com_podmonitors.yaml and monitoring.coreos.com_servicemonitors.yaml
#          <key> = first 16 hex of sha256(this script, ../cache-lib.sh)
# The last line on stdout is that directory; progress goes to stderr. Exit 127 without Go.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VERSION=v0.85.0
MODULE=github.com/prometheus-operator/prometheus-operator
CRDS=(monitoring.coreos.com_podmonitors.yaml monitoring.coreos.com_servicemonitors.yaml)

# shellcheck source=../cache-lib.sh
source "$here/../cache-lib.sh"
key="$(cat "$here/crds.sh" "$here/../cache-lib.sh" | sha256sum | cut -c1-16)"
cache_open prometheus-operator "$key"

copy_crds() {
  local dir
  # Outside any module (the cache directory has no go.mod): only the proxy's zip of the module is fetched.
  dir="$(cd "$root" && go mod download -json "$MODULE@$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [ -n "$dir" ] || { echo "go mod download gave no directory for $MODULE@$VERSION" >&2; return 1; }
  for crd in "${CRDS[@]}"; do
    install -m 0644 "$dir/example/prometheus-operator-crd/$crd" "$bin/$crd"
  done
}
step "CRDs from $MODULE@$VERSION" copy_crds
cache_close "key=$key" "prometheus-operator=$VERSION"
