#!/usr/bin/env bash
# Installs, from Debian's packages, what `simkube-fn cluster up --real-node` and scripts/build-image.sh need
# from the machine: containerd and runc (the node's runtime), the CNI plugins (bridge, host-local, loopback),
# iptables (kube-proxy), podman (builds the image with runc and cgroupfs), mmdebstrap (the image's Debian
# base). Only the missing ones; needs root on Debian or Ubuntu (apt-get). The packages' services are never
# started here: the launcher runs its own containerd from its own state directory and socket.
set -euo pipefail

declare -A wanted=(
  [containerd]=/usr/bin/containerd
  [runc]=/usr/sbin/runc
  [containernetworking-plugins]=/usr/lib/cni/bridge
  [iptables]=/usr/sbin/iptables
  [podman]=/usr/bin/podman
  [mmdebstrap]=/usr/bin/mmdebstrap
)
missing=()
for package in "${!wanted[@]}"; do
  [ -x "${wanted[$package]}" ] || missing+=("$package")
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-real-node: everything is installed" >&2
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1 || [ "$(id -u)" -ne 0 ]; then
  echo "install-real-node: missing ${missing[*]}; install them as root with apt-get (Debian/Ubuntu)" >&2
  exit 1
fi
echo "install-real-node: installing ${missing[*]}" >&2
# policy-rc.d 101: no init script starts a packaged service (containerd's, podman's) during the install.
policy=/usr/sbin/policy-rc.d
own_policy=false
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && own_policy=true
fi
trap '[ "$own_policy" = true ] && rm -f "$policy"' EXIT
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
