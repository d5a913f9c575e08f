#!/usr/bin/env bash
# Smoke test of the built control plane: etcd, kube-apiserver, kube-controller-manager
# (service-account credentials), kube-scheduler and kwok, all on 127.0.0.1.
# Creates one fake Node and one Pod and waits until the Pod is Running.
#
# Usage: ./smoke-test.sh [BIN_DIR]   (default: the bin dir printed by ./build.sh)
# Env:   KEEP=1 leaves the temp dir (logs, certs) in place; BASE_PORT (default 26000).
# Every process started here is killed on exit.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BIN="${1:-$("$here/build.sh" | tail -n1)}"
for b in etcd kube-apiserver kube-controller-manager kube-scheduler kwok; do
  [ -x "$BIN/$b" ] || { echo "missing $BIN/$b" >&2; exit 1; }
done
command -v openssl >/dev/null || { echo "openssl not found" >&2; exit 1; }
command -v curl >/dev/null || { echo "curl not found" >&2; exit 1; }

P="${BASE_PORT:-26000}"
ETCD_PORT=$((P + 1)); ETCD_PEER=$((P + 2)); API_PORT=$((P + 3)); KCM_PORT=$((P + 4)); SCHED_PORT=$((P + 5))
W="$(mktemp -d /tmp/simkube-fn-cp.XXXXXX)"
pids=()
cleanup() {
  local rc=$? i
  # stop in reverse start order (etcd last), so the apiserver can still reach etcd while stopping
  for (( i=${#pids[@]}-1; i>=0; i-- )); do
    kill "${pids[$i]}" 2>/dev/null || true
    wait "${pids[$i]}" 2>/dev/null || true
  done
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $W" >&2; else rm -rf "$W"; fi
  exit $rc
}
trap cleanup EXIT INT TERM

ms() { date +%s%3N; }
say() { echo "[smoke] $*" >&2; }
rss() { awk '/VmRSS/ {printf "%d MiB", $2/1024}' "/proc/$1/status" 2>/dev/null; }
wait_for() { # wait_for SECONDS CMD...
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}

# --- credentials ---------------------------------------------------------------
cd "$W"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=simkube-fn-ca \
  -keyout ca.key -out ca.crt 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj /CN=kube-apiserver -keyout apiserver.key -out apiserver.csr 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\nextendedKeyUsage=serverAuth\n' >apiserver.ext
openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
  -extfile apiserver.ext -out apiserver.crt 2>/dev/null
openssl genrsa -out sa.key 2048 2>/dev/null
openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
# token,user,uid,"group1,group2"
cat >tokens.csv <<EOF
admin-token,admin,admin,"system:masters"
kcm-token,system:kube-controller-manager,kcm
scheduler-token,system:kube-scheduler,scheduler
kwok-token,kwok-controller,kwok
EOF
kubeconfig() { # kubeconfig FILE TOKEN
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority: $W/ca.crt
users:
- name: u
  user:
    token: $2
contexts:
- name: c
  context: {cluster: local, user: u}
current-context: c
EOF
}
kubeconfig admin.kubeconfig admin-token
kubeconfig kcm.kubeconfig kcm-token
kubeconfig scheduler.kubeconfig scheduler-token
kubeconfig kwok.kubeconfig kwok-token
api() { curl -sS --cacert ca.crt -H "Authorization: Bearer admin-token" "https://127.0.0.1:$API_PORT$1" "${@:2}"; }

T_START=$(ms)
# --- etcd ------------------------------------------------------------------------
t0=$(ms)
"$BIN/etcd" --name=default --data-dir="$W/etcd" \
  --listen-client-urls="http://127.0.0.1:$ETCD_PORT" --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls="http://127.0.0.1:$ETCD_PEER" --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER" \
  --initial-cluster="default=http://127.0.0.1:$ETCD_PEER" \
  --unsafe-no-fsync --quota-backend-bytes=4294967296 --auto-compaction-retention=1 \
  --listen-metrics-urls="" --log-level=warn >etcd.log 2>&1 &
pids+=($!); ETCD_PID=$!
wait_for 30 curl -fsS "http://127.0.0.1:$ETCD_PORT/health" || { tail -20 etcd.log >&2; exit 1; }
say "etcd healthy after $(( $(ms) - t0 )) ms"

# --- kube-apiserver ------------------------------------------------------------------
t0=$(ms)
"$BIN/kube-apiserver" \
  --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
  --bind-address=127.0.0.1 --secure-port="$API_PORT" --advertise-address=127.0.0.1 \
  --endpoint-reconciler-type=none \
  --tls-cert-file="$W/apiserver.crt" --tls-private-key-file="$W/apiserver.key" \
  --client-ca-file="$W/ca.crt" \
  --token-auth-file="$W/tokens.csv" \
  --authorization-mode=Node,RBAC \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$W/sa.pub" --service-account-signing-key-file="$W/sa.key" \
  --service-cluster-ip-range=10.0.0.0/24 \
  --allow-privileged=true \
  --default-not-ready-toleration-seconds=30 --default-unreachable-toleration-seconds=30 \
  >apiserver.log 2>&1 &
pids+=($!); API_PID=$!
wait_for 120 bash -c "[ \"\$(curl -sS --cacert $W/ca.crt -H 'Authorization: Bearer admin-token' https://127.0.0.1:$API_PORT/readyz)\" = ok ]" \
  || { tail -30 apiserver.log >&2; exit 1; }
say "kube-apiserver /readyz ok after $(( $(ms) - t0 )) ms"
say "version: $(api /version | tr -d '\n ' | cut -c1-120)"

# kwok's identity: its own user, bound to cluster-admin.
api /apis/rbac.authorization.k8s.io/v1/clusterrolebindings -X POST -H 'Content-Type: application/json' -d '{
  "apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"kwok-controller"},
  "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},
  "subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"kwok-controller"}]}' >/dev/null

# --- kube-controller-manager --------------------------------------------------------
t0=$(ms)
"$BIN/kube-controller-manager" \
  --kubeconfig="$W/kcm.kubeconfig" \
  --use-service-account-credentials=true \
  --service-account-private-key-file="$W/sa.key" --root-ca-file="$W/ca.crt" \
  --bind-address=127.0.0.1 --secure-port="$KCM_PORT" \
  --leader-elect=false \
  --controllers='*' \
  --node-monitor-period=2s --node-monitor-grace-period=10s --node-startup-grace-period=10s \
  >kcm.log 2>&1 &
pids+=($!); KCM_PID=$!
wait_for 60 curl -fsSk "https://127.0.0.1:$KCM_PORT/healthz" || { tail -30 kcm.log >&2; exit 1; }
say "kube-controller-manager /healthz ok after $(( $(ms) - t0 )) ms"

# --- kube-scheduler -----------------------------------------------------------------
t0=$(ms)
"$BIN/kube-scheduler" \
  --kubeconfig="$W/scheduler.kubeconfig" \
  --bind-address=127.0.0.1 --secure-port="$SCHED_PORT" \
  --leader-elect=false \
  >scheduler.log 2>&1 &
pids+=($!); SCHED_PID=$!
wait_for 60 curl -fsSk "https://127.0.0.1:$SCHED_PORT/healthz" || { tail -30 scheduler.log >&2; exit 1; }
say "kube-scheduler /healthz ok after $(( $(ms) - t0 )) ms"

# --- kwok -------------------------------------------------------------------------------
t0=$(ms)
"$BIN/kwok" \
  --kubeconfig="$W/kwok.kubeconfig" \
  --config="$here/kwok-stages.yaml" \
  --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
  --node-lease-duration-seconds=40 \
  --cidr=10.244.0.0/16 --node-ip=10.1.0.1 \
  >kwok.log 2>&1 &
pids+=($!); KWOK_PID=$!
sleep 1
kill -0 "$KWOK_PID" 2>/dev/null || { tail -30 kwok.log >&2; exit 1; }
say "kwok started"

# --- a node and a pod ------------------------------------------------------------------
api /api/v1/nodes -X POST -H 'Content-Type: application/json' -d '{
  "apiVersion":"v1","kind":"Node",
  "metadata":{"name":"virtual-1","labels":{"type":"virtual","kubernetes.io/hostname":"virtual-1"},
              "annotations":{"kwok.x-k8s.io/node":"fake"}},
  "spec":{"taints":[{"key":"kwok-provider","value":"true","effect":"NoSchedule"}]}}' >/dev/null
node_ready() { api /api/v1/nodes/virtual-1 | grep -A1 '"type": "Ready"' | grep -q '"status": "True"'; }
wait_for 30 node_ready || { tail -30 kwok.log >&2; exit 1; }
say "node virtual-1 Ready after $(( $(ms) - t0 )) ms (from kwok start); $(( $(ms) - T_START )) ms since etcd start"
lease_ok() { api /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/virtual-1 | grep -q renewTime; }
wait_for 30 lease_ok && say "node lease kube-node-lease/virtual-1 present"

# the default ServiceAccount appears once KCM's serviceaccount controller ran
wait_for 30 bash -c "curl -fsS --cacert $W/ca.crt -H 'Authorization: Bearer admin-token' https://127.0.0.1:$API_PORT/api/v1/namespaces/default/serviceaccounts/default"
mkpod() { # mkpod NAME EXTRA_LABELS_JSON EXTRA_ANNOTATIONS_JSON
  api /api/v1/namespaces/default/pods -X POST -H 'Content-Type: application/json' -d '{
    "apiVersion":"v1","kind":"Pod",
    "metadata":{"name":"'"$1"'","labels":{'"$2"'},
      "annotations":{"simkube.io/kwok-stage-create-delay":"500ms","simkube.io/kwok-stage-create-delay-jitter":"1s",
                     "simkube.io/kwok-stage-ready-delay":"1s"'"$3"'}},
    "spec":{"nodeSelector":{"type":"virtual"},
            "tolerations":[{"key":"kwok-provider","operator":"Exists","effect":"NoSchedule"}],
            "containers":[{"name":"c","image":"busybox"}]}}' >/dev/null
}
pod_phase_is() { # pod_phase_is NAME PHASE
  curl -sS --cacert "$W/ca.crt" -H 'Authorization: Bearer admin-token' \
    "https://127.0.0.1:$API_PORT/api/v1/namespaces/default/pods/$1" | grep -q "\"phase\": \"$2\""
}
pod_gone() {
  [ "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$W/ca.crt" -H 'Authorization: Bearer admin-token' \
    "https://127.0.0.1:$API_PORT/api/v1/namespaces/default/pods/$1")" = 404 ]
}
t0=$(ms)
mkpod smoke '"simkube.io/kwok-stage-complete":"true"' \
  ',"simkube.io/kwok-stage-complete-time":"'"$(date -u -d '+8 seconds' +%Y-%m-%dT%H:%M:%SZ)"'"'
mkpod smoke-long '' ''
wait_for 30 pod_phase_is smoke Running \
  || { api /api/v1/namespaces/default/pods/smoke >&2; tail -30 kwok.log >&2; exit 1; }
say "pod smoke Running after $(( $(ms) - t0 )) ms: $(api /api/v1/namespaces/default/pods/smoke | grep -E '"(nodeName|podIP|hostIP)"' | tr -d ' \n')"
wait_for 30 pod_phase_is smoke Succeeded \
  && say "pod smoke Succeeded (complete-time) after $(( $(ms) - t0 )) ms" \
  || { say "pod smoke did NOT reach Succeeded"; exit 1; }
wait_for 30 pod_phase_is smoke-long Running || { say "pod smoke-long not Running"; exit 1; }
t0=$(ms)
api /api/v1/namespaces/default/pods/smoke-long -X DELETE >/dev/null
wait_for 30 pod_gone smoke-long \
  && say "pod smoke-long gone $(( $(ms) - t0 )) ms after a graceful DELETE (kwok finished it)" \
  || { say "pod smoke-long still present after delete"; exit 1; }
# --use-service-account-credentials: KCM mints one ServiceAccount per controller in kube-system
sa_ok() { curl -fsS --cacert "$W/ca.crt" -H 'Authorization: Bearer admin-token' \
  "https://127.0.0.1:$API_PORT/api/v1/namespaces/kube-system/serviceaccounts/$1" >/dev/null; }
wait_for 15 sa_ok replicaset-controller && wait_for 15 sa_ok namespace-controller \
  && say "KCM controller ServiceAccounts present (replicaset-controller, namespace-controller)" \
  || { say "KCM controller ServiceAccounts missing"; exit 1; }
events="$(api /api/v1/namespaces/default/events)"
grep -q '"reason": "Pulling"' <<<"$events" && say "kwok event Pulling recorded" || say "no Pulling event seen"

say "RSS: etcd $(rss $ETCD_PID), kube-apiserver $(rss $API_PID), kcm $(rss $KCM_PID), scheduler $(rss $SCHED_PID), kwok $(rss $KWOK_PID)"
say "OK"
