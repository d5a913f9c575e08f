#!/usr/bin/env bash
# Builds SimKube's sk-driver (the program that serves SimKube's own mutating webhook) from SimKube's source
# archive at 46c21b3, once into a cache, so `npm run bench:vs-simkube` can measure the function against it.
# Nothing of SimKube enters this repository: the archive is a build input only.
#
# Archive: $SIMKUBE_ARCHIVE, else simkube-46c21b3.tar.gz in $SIMKUBE_FN_UPSTREAM, else where CI keeps the
#          upstream sources beside the clone (the lookup below).
# Output:  ${SIMKUBE_FN_CACHE:-$HOME/.cache/simkube-fn}/simkube/<key>/bin/sk-driver
#          <key> = first 16 hex of sha256(archive + this script)
# The last line on stdout is that binary's path; everything else goes to stderr. A stamp file is written
# last; when it exists nothing is built. Exit 3 (with a message) when cargo or the archive is missing.
# cargo fetches SimKube's dependencies from crates.io (Cargo.lock pins them): about 7 min on 2 idle cores.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
name=simkube-46c21b3.tar.gz
archive="${SIMKUBE_ARCHIVE:-${SIMKUBE_FN_UPSTREAM:-$repo/../shared/upstream}/$name}"

log() { echo "[scripts/build-simkube.sh] $*" >&2; }

if [ ! -f "$archive" ]; then
  log "SimKube's source archive at 46c21b3 not found ($name; set SIMKUBE_ARCHIVE or SIMKUBE_FN_UPSTREAM)"
  exit 3
fi
if ! command -v cargo >/dev/null 2>&1; then
  log "cargo not found: a Rust toolchain must be on PATH to build SimKube's sk-driver (PATH=$PATH)"
  exit 3
fi

key="$(cat "$archive" "$here/build-simkube.sh" | sha256sum | cut -c1-16)"
root="${SIMKUBE_FN_CACHE:-$HOME/.cache/simkube-fn}/simkube/$key"
bin="$root/bin/sk-driver"
stamp="$root/stamp"

if [ -f "$stamp" ]; then
  log "already built ($stamp)"
  echo "$bin"
  exit 0
fi
mkdir -p "$root/bin"
# One builder at a time per key.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$root/lock"
  flock 9
  if [ -f "$stamp" ]; then
    log "built by a concurrent run ($stamp)"
    echo "$bin"
    exit 0
  fi
fi

t0="$(date +%s)"
src="$root/src"
rm -rf "$src"
mkdir -p "$src"
tar -xzf "$archive" -C "$src"
cd "$src"/*/
log "cargo build --release -p sk-driver (crates.io; several minutes)"
# The target directory sits beside the source, inside this key's cache directory.
if ! CARGO_TARGET_DIR="$root/target" cargo build --release --locked -p sk-driver >&2; then
  log "cargo build FAILED after $(( $(date +%s) - t0 ))s (nothing stamped; rerun after fixing)"
  exit 1
fi
cp -f "$root/target/release/sk-driver" "$root/bin/.sk-driver.tmp"
mv -f "$root/bin/.sk-driver.tmp" "$bin"
{
  echo "key=$key"
  echo "simkube=46c21b3733d1dd002ff24634d2b207991f67bc5a"
  echo "cargo=$(cargo --version)"
  echo "seconds=$(( $(date +%s) - t0 ))"
  echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$root/.stamp.tmp"
mv -f "$root/.stamp.tmp" "$stamp"
log "done in $(( $(date +%s) - t0 ))s"
echo "$bin"
