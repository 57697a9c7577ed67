#!/usr/bin/env bash
# A worker read through a real API server's service proxy (../shared/realk8s, or any cluster
# you are admin of, from a Linux host you are root on). kube-apiserver proxies only to an
# endpoint that is not loopback and whose targetRef is a pod with that IP: `headless` listens
# on the host side of a veth pair (192.0.2.1/30), and a stand-in pod is given that podIP (no
# kubelet runs there). Prints what each request showed; exits non-zero if one was wrong.
#
#   KUBECONFIG=~/.cache/realk8s/kubeconfig scripts/fleet-realk8s.sh [BINARY]
#
# HOLD=SECONDS keeps it all up that long after the checks, to look with the TUI
# (`--source worker`).
#
# 1. /v1/snapshot through the proxy lists an evicted pod, with its cause.
# 2. /v1/findings/{uid} through the proxy is that pod's row, with the cause's words; an
#    unknown uid is null.
set -euo pipefail
BIN=${1:-target/release/ops-pod-cleaner}
: "${KUBECONFIG:?set KUBECONFIG to an admin kubeconfig}"
K="kubectl --kubeconfig $KUBECONFIG"
NS=fleet-$$
HOST_IP=192.0.2.1
PORT=18091
work=$(mktemp -d)
cleanup() {
  [ -n "${worker:-}" ] && kill "$worker" 2>/dev/null
  [ -n "${proxy:-}" ] && kill "$proxy" 2>/dev/null
  $K delete namespace "$NS" --wait=false >/dev/null 2>&1 || true
  $K -n ops-pod-cleaner delete service,endpoints ops-pod-cleaner >/dev/null 2>&1 || true
  $K -n ops-pod-cleaner delete pod worker-stand-in --wait=false >/dev/null 2>&1 || true
  ip link del opc-fleet-h 2>/dev/null || true
  ip netns del opc-fleet 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The worker's address: the host side of a veth pair whose other end is in a namespace.
ip netns add opc-fleet
ip link add opc-fleet-h type veth peer name opc-fleet-n
ip link set opc-fleet-n netns opc-fleet
ip addr add "$HOST_IP/30" dev opc-fleet-h
ip link set opc-fleet-h up
ip netns exec opc-fleet ip link set opc-fleet-n up

# Status is written through `kubectl proxy`: kubectl before 1.24 has no --subresource.
$K proxy --port="$PORT" >/dev/null 2>&1 &
proxy=$!
api=http://127.0.0.1:$PORT
for _ in $(seq 50); do curl -sf "$api/version" >/dev/null && break; sleep 0.2; done
status() { # NAMESPACE POD JSON
  curl -sf -X PATCH -H 'Content-Type: application/merge-patch+json' \
    "$api/api/v1/namespaces/$1/pods/$2/status" -d "$3" >/dev/null
}

$K create namespace "$NS" >/dev/null
$K create namespace ops-pod-cleaner >/dev/null 2>&1 || true
$K -n "$NS" run gone --image=registry.local/web:1 --restart=Never >/dev/null
status "$NS" gone '{"status": {"phase": "Failed", "reason": "Evicted",
  "message": "The node was low on resource: memory. Threshold quantity: 100Mi, available: 80Mi."}}'
uid=$($K -n "$NS" get pod gone -o jsonpath='{.metadata.uid}')

# The Service in front of the worker, as assets/deploy names it, and its one endpoint.
$K -n ops-pod-cleaner run worker-stand-in --image=registry.local/ops-pod-cleaner:1 >/dev/null
status ops-pod-cleaner worker-stand-in "{\"status\": {\"podIP\": \"$HOST_IP\", \"podIPs\": [{\"ip\": \"$HOST_IP\"}]}}"
$K -n ops-pod-cleaner apply -f - >/dev/null <<EOF
{"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "ops-pod-cleaner"},
  "spec": {"ports": [{"name": "findings", "port": 9091, "targetPort": 9091}]}},
 {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "ops-pod-cleaner"},
  "subsets": [{"addresses": [{"ip": "$HOST_IP", "targetRef": {"kind": "Pod",
    "namespace": "ops-pod-cleaner", "name": "worker-stand-in"}}],
   "ports": [{"name": "findings", "port": 9091}]}]}]}
EOF

"$BIN" --kubeconfig "$KUBECONFIG" headless --listen "$HOST_IP:9090" --findings-listen "$HOST_IP:9091" \
  >"$work/worker.log" 2>&1 &
worker=$!
through=$api/api/v1/namespaces/ops-pod-cleaner/services/ops-pod-cleaner:9091/proxy
failed=0
for _ in $(seq 100); do
  curl -sf "$through/v1/snapshot" 2>/dev/null | jq -e --arg uid "$uid" \
    '.findings | any(.uid == $uid)' >/dev/null 2>&1 && break
  sleep 0.3
done

echo "== 1. the snapshot through the proxy"
curl -s "$through/v1/snapshot" | jq -c --arg uid "$uid" \
  '{view, row: (.findings[] | select(.uid == $uid) | {namespace, name, category, cause: .cause.class})}' \
  || failed=1

echo "== 2. one pod's row through the proxy"
row=$(curl -s "$through/v1/findings/$uid")
echo "$row" | jq -c '{uid, category, cause: .cause.class, detail: .cause.detail, next: .cause.next}'
echo "$row" | jq -e --arg uid "$uid" '.uid == $uid and (.cause.detail | length > 0)' >/dev/null \
  || { echo "FAILED: not the pod's row with its cause"; failed=1; }
unknown=$(curl -s "$through/v1/findings/00000000-0000-4000-8000-000000000000")
echo "unknown uid: $unknown"
[ "$unknown" = null ] || { echo "FAILED: an unknown uid is not null"; failed=1; }
[ -n "${HOLD:-}" ] && { echo "holding $HOLD s (worker log: $work/worker.log)"; sleep "$HOLD"; }
exit $failed
