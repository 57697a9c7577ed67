#!/usr/bin/env bash
# A context that may not list pods is never "nothing abnormal", on a real kube-apiserver
# (../shared/realk8s, started with up.sh): an identity with no grant at all, then the grant.
#   1. `scan` exits 3 and names the can-i for that context;
#   2. `headless` shows the watch forbidden (/metrics, /v1/snapshot's view error);
#   3. once a ClusterRole grants the reads, the same process syncs without a restart.
#
#   scripts/forbidden-realk8s.sh [BINARY]      (default target/debug/ops-pod-cleaner)
#   KUBECONFIG (default ~/.cache/realk8s/kubeconfig), KUBECTL (default kubectl, >= 1.24)
set -euo pipefail
BIN=${1:-target/debug/ops-pod-cleaner}
KUBECONFIG=${KUBECONFIG:-$HOME/.cache/realk8s/kubeconfig}
K="${KUBECTL:-kubectl} --kubeconfig $KUBECONFIG --context local-admin"
SA=opc-blind
PORTS=(19090 19091)
work=$(mktemp -d)
[ -x "$BIN" ] || { echo "no binary at $BIN" >&2; exit 2; }
cleanup() {
  if [ -n "${served:-}" ]; then kill "$served" 2>/dev/null || true; fi
  $K delete clusterrolebinding "$SA-read" --ignore-not-found >/dev/null
  $K delete clusterrole "$SA-read" --ignore-not-found >/dev/null
  $K -n default delete serviceaccount "$SA" --ignore-not-found >/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
failed=0
check() { # NAME COMMAND...: PASS when COMMAND succeeds
  local name=$1
  shift
  if "$@"; then echo "PASS $name"; else echo "FAIL $name"; failed=1; fi
}

$K -n default create serviceaccount "$SA" >/dev/null
token=$($K -n default create token "$SA" --duration=1h)
server=$($K config view --raw --minify -o jsonpath='{.clusters[0].cluster.server}')
ca=$($K config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority}')
cat >"$work/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: real, cluster: {server: '$server', certificate-authority: '$ca'}}]
users: [{name: blind, user: {token: '$token'}}]
contexts: [{name: blind, context: {cluster: real, user: blind}}]
current-context: blind
EOF
blind=(--kubeconfig "$work/kubeconfig" --context blind)
for port in "${PORTS[@]}"; do
  ! curl -s "127.0.0.1:$port" >/dev/null || { echo "port $port is taken" >&2; exit 2; }
done

echo "== 1. scan with no grant"
code=0
"$BIN" "${blind[@]}" scan >"$work/scan.out" 2>&1 || code=$?
cat "$work/scan.out"
check "scan: exit 3" [ "$code" = 3 ]
check "scan: names the can-i for the context" \
  grep -q 'kubectl auth can-i list pods -A --context blind' "$work/scan.out"

echo "== 2. headless with no grant"
"$BIN" "${blind[@]}" --no-audit --dry-run headless --listen "127.0.0.1:${PORTS[0]}" \
  --findings-listen "127.0.0.1:${PORTS[1]}" >"$work/headless.log" 2>&1 &
served=$!
metric() { curl -s "127.0.0.1:${PORTS[0]}/metrics" | grep -E "^$1" || true; }
is() { [ "$(metric "$1")" = "$2" ]; }
for _ in $(seq 30); do
  [ -n "$(metric 'opc_watch_forbidden\{')" ] && break
  sleep 1
done
metric '(opc_watch_forbidden|opc_synced)'
check "headless: opc_watch_forbidden 1" \
  is 'opc_watch_forbidden\{' 'opc_watch_forbidden{scope="all namespaces"} 1'
curl -s "127.0.0.1:${PORTS[1]}/v1/snapshot" | jq -r .view.error | tee "$work/view"
check "headless: /v1/snapshot's view says forbidden, never healthy" \
  grep -q '^forbidden: this identity may not list pods' "$work/view"

echo "== 3. the grant, to the same process"
$K create clusterrole "$SA-read" --verb=get,list,watch --resource=pods,nodes,events >/dev/null
$K create clusterrolebinding "$SA-read" --clusterrole="$SA-read" --serviceaccount="default:$SA" >/dev/null
for _ in $(seq 60); do
  [ "$(metric opc_synced)" = "opc_synced 1" ] && break
  sleep 1
done
metric '(opc_watch_forbidden|opc_synced)'
check "headless: synced once granted, without a restart" is opc_synced "opc_synced 1"
check "headless: no longer forbidden" \
  is 'opc_watch_forbidden\{' 'opc_watch_forbidden{scope="all namespaces"} 0'
check "headless: the same process" kill -0 "$served"

[ "$failed" = 0 ] && echo "== result: every check PASSed"
exit "$failed"
