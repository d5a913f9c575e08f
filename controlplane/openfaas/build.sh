#!/usr/bin/env bash
# Builds OpenFaaS Community Edition's programs from their upstream source archives (each vendors its Go
# dependencies, so no network): the gateway, faas-netes (the Kubernetes provider, run in its classic mode),
# of-watchdog (the process in front of a function in its container) and faas-cli. Also unpacks the `node22`
# function template (its index.js and package.json), which functions/local-cluster/openfaas/ lays out in the
# function image the way `faas-cli build` would.
#
# Archives: from $SIMKUBE_FN_UPSTREAM, else from the upstream-sources directory beside the checkout:
#   openfaas-faas-gateway-cf8741ac.tar.gz   gateway at openfaas/faas cf8741ac (2024-09-17, MIT)
#   openfaas-faas-netes-dc46f5f9.tar.gz     faas-netes at dc46f5f9 (2024-10-30, MIT)
#   openfaas-of-watchdog-0.10.6.tar.gz      of-watchdog 0.10.6
#   openfaas-faas-cli-0.18.12.tar.gz        faas-cli 0.18.12
#   openfaas-templates-node22-69ca16ae.tar.gz  openfaas/templates 69ca16ae (template/node22)
# Output:  ${SIMKUBE_FN_CACHE:-$HOME/.cache/simkube-fn}/openfaas/<key>/bin/{gateway,faas-netes,fwatchdog,faas-cli}
#          and <key>/template/node22/. <key> = first 16 hex of sha256(the archives, this script, ../cache-lib.sh).
# Three changes to faas-netes' sources, made here at build time because the local cluster is offline (its pods
# have no route to the internet and no registry is reachable); nothing else in any tree is touched, and each
# step fails unless its code is found exactly where expected:
#   - main.go's first step, an HTTPS request to a public IP-echo service without which faas-netes CE refuses to
#     start ("cannot be run in an offline environment"), becomes a nil error;
#   - the deploy/update check that the image can be fetched anonymously from its registry (CE takes only public
#     images) returns nil: the function images here are imported into the node, never pushed;
#   - the functions' imagePullPolicy, Always in CE, becomes IfNotPresent, so the kubelet runs the imported image
#     instead of failing to pull it.
# These trees are MIT-licensed (the last MIT commits, see the archive names above), which allows the changes.
# The cache is controlplane/cache-lib.sh's: serialised with flock, finished by a stamp.
# The last line on stdout is the bin directory; progress goes to stderr. Exit 127 without Go.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
upstream="${SIMKUBE_FN_UPSTREAM:-$repo/../shared/upstream}"
archives=(
  openfaas-faas-gateway-cf8741ac.tar.gz
  openfaas-faas-netes-dc46f5f9.tar.gz
  openfaas-of-watchdog-0.10.6.tar.gz
  openfaas-faas-cli-0.18.12.tar.gz
  openfaas-templates-node22-69ca16ae.tar.gz
)
for a in "${archives[@]}"; do
  if [ ! -f "$upstream/$a" ]; then
    echo "OpenFaaS source archive $a not found in $upstream (set SIMKUBE_FN_UPSTREAM to the directory holding the upstream archives)" >&2
    exit 2
  fi
done
# shellcheck source=../cache-lib.sh
source "$here/../cache-lib.sh"
export GOFLAGS=-mod=vendor
key="$( (cd "$upstream" && sha256sum "${archives[@]}"; cat "$here/build.sh" "$here/../cache-lib.sh") | sha256sum | cut -c1-16)"
cache_open openfaas "$key"

src="$root/src"
rm -rf "$src"
mkdir -p "$src"
unpack() { local a; for a in "${archives[@]}"; do tar -xzf "$upstream/$a" -C "$src"; done; }

template() {
  rm -rf "$root/template"
  mkdir -p "$root/template"
  cp -r "$src/openfaas-templates/template/node22" "$root/template/node22"
}

# replace_once FILE FROM TO COUNT: FROM (a fixed string) occurs COUNT times in FILE and becomes TO.
replace_once() {
  local n
  n="$(grep -cF -- "$2" "$1" || true)"
  if [ "$n" != "$4" ]; then
    echo "expected $4 line(s) with '$2' in $1, found $n: the faas-netes sources changed, review this step" >&2
    return 1
  fi
  FROM="$2" TO="$3" perl -0pi -e 's/\Q$ENV{FROM}\E/$ENV{TO}/g' "$1"
}
# offline: the three changes named in the header.
offline() {
  local n="$src/faas-netes"
  replace_once "$n/main.go" 'config.ConnectivityCheck()' 'error(nil)' 1
  replace_once "$n/pkg/handlers/validate.go" 'func isAnonymous(image string) error {' \
    'func isAnonymous(image string) error { return nil }

func isAnonymousOnline(image string) error {' 1
  replace_once "$n/pkg/handlers/deploy.go" 'corev1.PullAlways' 'corev1.PullIfNotPresent' 1
  replace_once "$n/pkg/handlers/update.go" 'corev1.PullAlways' 'corev1.PullIfNotPresent' 1
}

step unpack unpack
step "faas-netes offline" offline
step fwatchdog gobuild fwatchdog . "$src/of-watchdog"
step faas-cli gobuild faas-cli . "$src/faas-cli"
step gateway gobuild gateway . "$src/faas-gateway/gateway"
step faas-netes gobuild faas-netes . "$src/faas-netes"
step "template node22" template
rm -rf "$src"
cache_close "key=$key"
