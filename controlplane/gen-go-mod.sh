#!/usr/bin/env bash
# Regenerates go.mod / go.sum of the control-plane module from scratch.
#
# Inputs (env, all optional):
#   K8S_VERSION   Kubernetes release, default v1.36.3
#   ETCD_VERSION  etcd server version; default: the go.etcd.io/etcd/server/v3
#                 version that k8s.io/kubernetes itself requires
#
# Staging modules are not typed here: they are read from k8s.io/kubernetes's
# own go.mod (every "k8s.io/<x> v0.0.0" requirement) and each gets a replace
# to the matching v0.<minor>.<patch> tag.
set -euo pipefail
cd "$(dirname "$0")"
export GOTOOLCHAIN=local CGO_ENABLED=0

command -v go >/dev/null 2>&1 || { echo "go not found: install Go >= 1.26 and put it on PATH" >&2; exit 127; }

K8S_VERSION="${K8S_VERSION:-v1.36.3}"
STAGING_VERSION="v0.${K8S_VERSION#v1.}"   # v1.36.3 -> v0.36.3
MODULE=simkube-fn/controlplane

modfile="$(go mod download -json "k8s.io/kubernetes@${K8S_VERSION}" \
  | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
[ -f "$modfile" ] || { echo "could not fetch go.mod of k8s.io/kubernetes@${K8S_VERSION}" >&2; exit 1; }

# Staging modules: required at the placeholder v0.0.0.
mapfile -t staging < <(awk '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" {print $1}' "$modfile" | sort -u)
[ "${#staging[@]}" -gt 0 ] || { echo "no v0.0.0 requirements found in $modfile" >&2; exit 1; }

if [ -z "${ETCD_VERSION:-}" ]; then
  ETCD_VERSION="$(awk '$1 == "go.etcd.io/etcd/server/v3" {print $2; exit}' "$modfile")"
fi
[ -n "$ETCD_VERSION" ] || { echo "cannot tell which etcd server version ${K8S_VERSION} pins" >&2; exit 1; }

rm -f go.mod go.sum
go mod init "$MODULE" 2>/dev/null
go mod edit -go=1.26.0
go mod edit -require="k8s.io/kubernetes@${K8S_VERSION}"
go mod edit -require="go.etcd.io/etcd/server/v3@${ETCD_VERSION}"
for m in "${staging[@]}"; do
  go mod edit -replace="${m}=${m}@${STAGING_VERSION}"
done
# Tool directives keep the mains (and so every dependency) in the graph for
# "go mod tidy"; build.sh builds them by import path.
for t in \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler \
  k8s.io/kubernetes/cmd/kubelet \
  k8s.io/kubernetes/cmd/kube-proxy \
  go.etcd.io/etcd/server/v3; do
  go mod edit -tool="$t"
done

echo "k8s.io/kubernetes ${K8S_VERSION}; ${#staging[@]} staging replaces -> ${STAGING_VERSION}; etcd server ${ETCD_VERSION}" >&2
go mod tidy
echo "go.mod and go.sum regenerated" >&2
