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
  [ -n "${served:-}" ] && kill "$served" 2>/dev/null
  $K delete clusterrolebinding "$SA-read" --ignore-not-found >/dev/null
  $K delete clusterrole "$SA-read" --ignore-not-found >/dev/null
  $K -n default delete serviceaccount "$SA" --ignore-not-found >/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
failed=0
verdict() { # NAME OK?
  if [ "$2" = 0 ]; then echo "PASS $1"; else echo "FAIL $1"; failed=1; fi
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
run() { "$BIN" --kubeconfig "$work/kubeconfig" --context blind "$@"; }

echo "== 1. scan with no grant"
set +e
run scan >"$work/scan.out" 2>&1
code=$?
set -e
cat "$work/scan.out"
[ "$code" = 3 ] && grep -q 'kubectl auth can-i list pods -A --context blind' "$work/scan.out"
verdict "scan: exit $code, names the can-i for the context" $?

echo "== 2. headless with no grant"
run --no-audit --dry-run headless --listen "127.0.0.1:${PORTS[0]}" \
  --findings-listen "127.0.0.1:${PORTS[1]}" >"$work/headless.log" 2>&1 &
served=$!
metric() { curl -s "127.0.0.1:${PORTS[0]}/metrics" | grep -E "^$1" || true; }
for _ in $(seq 30); do
  [ -n "$(metric 'opc_watch_forbidden\{')" ] && break
  sleep 1
done
metric '(opc_watch_forbidden|opc_synced)'
[ "$(metric 'opc_watch_forbidden\{scope="all namespaces"\}')" = 'opc_watch_forbidden{scope="all namespaces"} 1' ]
verdict "headless: opc_watch_forbidden 1" $?
curl -s "127.0.0.1:${PORTS[1]}/v1/snapshot" | jq -r .view.error | tee "$work/view"
grep -q '^forbidden: this identity may not list pods' "$work/view"
verdict "headless: /v1/snapshot's view says forbidden, never healthy" $?

echo "== 3. the grant, to the same process"
$K create clusterrole "$SA-read" --verb=get,list,watch --resource=pods,nodes,events >/dev/null
$K create clusterrolebinding "$SA-read" --clusterrole="$SA-read" --serviceaccount="default:$SA" >/dev/null
for _ in $(seq 60); do
  [ "$(metric opc_synced)" = "opc_synced 1" ] && break
  sleep 1
done
metric '(opc_watch_forbidden|opc_synced)'
[ "$(metric opc_synced)" = "opc_synced 1" ] \
  && [ "$(metric 'opc_watch_forbidden\{scope="all namespaces"\}')" = 'opc_watch_forbidden{scope="all namespaces"} 0' ]
verdict "headless: synced once granted, without a restart" $?

[ "$failed" = 0 ] && echo "== result: every check PASSed"
exit "$failed"
