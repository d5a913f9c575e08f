# Sourced by the Go builds of upstream programs (knative/, openfaas/, cert-manager/): one cache directory per
# key, serialised with flock, finished by a stamp. Each caller puts this file's text in its key, so a change
# here rebuilds what it built. Same scheme as controlplane/build.sh (that script is left alone: its own text is
# part of its key, and the control plane takes the longest to rebuild).
#
# cache_open AREA KEY   sets $root (<cache>/AREA/KEY) and $bin, exits 0 printing $bin when the stamp exists
#                       (also after waiting for a concurrent builder); the caller then builds into $bin.
# step NAME CMD...      runs CMD with its output on stderr, logs its wall time, exits 1 on failure.
# gobuild OUT PKG [DIR] a static, stripped binary of PKG (built in DIR, default here) as $bin/OUT.
# cache_close LINES...  writes the stamp (the lines plus go and date) and prints $bin.

if ! command -v go >/dev/null 2>&1; then
  echo "go not found: Go >= 1.26 must be on PATH to build the upstream programs (PATH=$PATH)" >&2
  exit 127
fi
export GOTOOLCHAIN=local CGO_ENABLED=0

log() { echo "[controlplane/$cache_name] $*" >&2; }

cache_open() {
  cache_name="$1"
  root="${SIMKUBE_FN_CACHE:-$HOME/.cache/simkube-fn}/$1/$2"
  bin="$root/bin"
  stamp="$root/stamp"
  if [ -f "$stamp" ]; then
    log "already built ($stamp)"
    echo "$bin"
    exit 0
  fi
  mkdir -p "$bin"
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$root/lock"
    flock 9
    if [ -f "$stamp" ]; then
      log "built by a concurrent run ($stamp)"
      echo "$bin"
      exit 0
    fi
  fi
  total0="$(date +%s)"
}

step() {
  local name="$1"; shift
  local t0
  t0="$(date +%s)"
  log "$name: start"
  if ! "$@" >&2; then
    log "$name: FAILED after $(( $(date +%s) - t0 ))s (nothing stamped; rerun after fixing)"
    exit 1
  fi
  log "$name: done in $(( $(date +%s) - t0 ))s"
}

# gobuild OUT PKG [DIR]: a static, stripped binary, written under a temporary name and then renamed, so a
# half-written binary is never visible under its final name.
gobuild() {
  (cd "${3:-.}" && go build -trimpath -buildvcs=false -ldflags "-s -w" -o "$bin/.$1.tmp" "$2")
  mv -f "$bin/.$1.tmp" "$bin/$1"
}

cache_close() {
  { printf '%s\n' "$@"; echo "go=$(go env GOVERSION)"; echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"; } >"$root/.stamp.tmp"
  mv -f "$root/.stamp.tmp" "$stamp"
  log "all done in $(( $(date +%s) - total0 ))s"
  echo "$bin"
}
