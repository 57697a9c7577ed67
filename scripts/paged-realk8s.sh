#!/usr/bin/env bash
# The pods an on-call engineer is paged for, written on a real kube-apiserver as the v1.24
# kubelet writes them (../shared/realk8s, started with up.sh; no kubelet runs there), then
# `scan -o json` on them: each must land in its category with its cause class.
#
#   scripts/paged-realk8s.sh [BINARY]      (default target/debug/ops-pod-cleaner)
#   KUBECONFIG (default ~/.cache/realk8s/kubeconfig), KUBECTL (default kubectl, >= 1.24)
set -euo pipefail
BIN=${1:-target/debug/ops-pod-cleaner}
KUBECONFIG=${KUBECONFIG:-$HOME/.cache/realk8s/kubeconfig}
CTX=local-admin
K="${KUBECTL:-kubectl} --kubeconfig $KUBECONFIG --context $CTX"
NS=pg-paged
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
AGO=$(date -u -d '3 hours ago' +%Y-%m-%dT%H:%M:%SZ)
NOW=$(date -u +%Y-%m-%dT%H:%M:%SZ)
[ -x "$BIN" ] || { echo "no binary at $BIN" >&2; exit 2; }

# Pods bound to a node that does not exist are removed by the pod GC: a node that reports
# NotReady (so the e2e suite, which looks for a Ready one, still starts its stand-in kubelet).
node() {
  $K get node pg-node >/dev/null 2>&1 || $K create -f - >/dev/null <<EOF
{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "pg-node"}}
EOF
}
reset() {
  $K delete ns "$NS" --ignore-not-found --wait=false >/dev/null
  for _ in $(seq 120); do
    [ -z "$($K get ns "$NS" --ignore-not-found -o name)" ] && return 0
    $K -n "$NS" delete pods --all --grace-period=0 --force >/dev/null 2>&1 || true
    sleep 1
  done
  echo "namespace $NS still terminating" >&2; exit 2
}
reset; node; $K create ns "$NS" >/dev/null
pod() { # NAME [INIT]: a pod bound to pg-node, its container `app` (and init container `migrate`)
  local init=""
  [ "${2:-}" = init ] && init='"initContainers": [{"name": "migrate", "image": "registry.local/migrate:1"}],'
  $K -n "$NS" create -f - >/dev/null <<EOF
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "$1"},
 "spec": {"nodeName": "pg-node", $init "containers": [{"name": "app", "image": "registry.local/app:1"}]}}
EOF
}
status() { $K -n "$NS" patch pod "$1" --subresource=status --type=merge -p "{\"status\": $2}" >/dev/null; }
cond() { # TYPE STATUS
  jq -cn --arg t "$1" --arg s "$2" --arg at "$AGO" '{type: $t, status: $s, lastTransitionTime: $at}'
}
not_ready="[$(cond Initialized True), $(cond Ready False), $(cond ContainersReady False), $(cond PodScheduled True)]"
container() { # STATE_JSON [RESTARTS]
  jq -cn --argjson st "$1" --argjson n "${2:-0}" '{name: "app", image: "registry.local/app:1", imageID: "", ready: false, restartCount: $n, started: false, state: $st}'
}
warning() { # POD REASON MESSAGE
  local uid; uid=$($K -n "$NS" get pod "$1" -o jsonpath='{.metadata.uid}')
  $K -n "$NS" create -f - >/dev/null <<EOF
{"apiVersion": "v1", "kind": "Event", "metadata": {"name": "$1.$(date +%s%N)"},
 "involvedObject": {"kind": "Pod", "apiVersion": "v1", "name": "$1", "namespace": "$NS", "uid": "$uid"},
 "reason": "$2", "message": $(jq -cn --arg m "$3" '$m'), "type": "Warning", "count": 37,
 "source": {"component": "kubelet", "host": "pg-node"},
 "firstTimestamp": "$AGO", "lastTimestamp": "$NOW"}
EOF
}

# Stuck on the way up, for 3 hours.
pod mount; status mount "{\"phase\": \"Pending\", \"startTime\": \"$AGO\", \"conditions\": $not_ready, \"containerStatuses\": [$(container '{"waiting": {"reason": "ContainerCreating"}}')]}"
warning mount FailedMount 'MountVolume.SetUp failed for volume "config" : configmap "app-config" not found'
pod sandbox; status sandbox "{\"phase\": \"Pending\", \"startTime\": \"$AGO\", \"conditions\": $not_ready, \"containerStatuses\": [$(container '{"waiting": {"reason": "ContainerCreating"}}')]}"
warning sandbox FailedCreatePodSandBox 'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "4c1f": plugin type="calico" failed (add): connection is unauthorized: Unauthorized'
pod init init; status init "{\"phase\": \"Pending\", \"startTime\": \"$AGO\", \"conditions\": $not_ready,
  \"initContainerStatuses\": [{\"name\": \"migrate\", \"image\": \"registry.local/migrate:1\", \"imageID\": \"\", \"ready\": false, \"restartCount\": 0, \"state\": {\"running\": {\"startedAt\": \"$AGO\"}}}],
  \"containerStatuses\": [$(container '{"waiting": {"reason": "PodInitializing"}}')]}"
pod unready; status unready "{\"phase\": \"Running\", \"startTime\": \"$AGO\", \"conditions\": $not_ready, \"containerStatuses\": [$(container "{\"running\": {\"startedAt\": \"$AGO\"}}")]}"
warning unready Unhealthy 'Readiness probe failed: HTTP probe failed with statuscode: 503'
# Failed by the kubelet itself, in its own words.
failed() { # NAME REASON MESSAGE
  pod "$1"; status "$1" "$(jq -cn --arg r "$2" --arg m "$3" --arg t "$AGO" '{phase: "Failed", reason: $r, message: $m, startTime: $t}')"
}
failed outofcpu OutOfcpu "Pod Node didn't have enough resource: cpu, requested: 4000, used: 3500, capacity: 4000"
failed preempted Preempting 'Preempted in order to admit critical pod'
failed shutdown Terminated 'Pod was terminated in response to imminent node shutdown.'
failed diskpressure Evicted 'The node had condition: [DiskPressure]. '
failed taint TaintToleration 'Predicate TaintToleration failed'
failed sysctl SysctlForbidden 'forbidden sysctl: "net.core.somaxconn" not allowlisted'
failed rejectshutdown NodeShutdown 'Pod was rejected as the node is shutting down.'
# Killed for a disruption (1.26+ writes the condition; a v1.24 server keeps what it is given).
disrupted() { # NAME REASON MESSAGE
  pod "$1"; status "$1" "$(jq -cn --arg r "$2" --arg m "$3" --arg t "$AGO" '{phase: "Failed", startTime: $t,
    conditions: [{type: "DisruptionTarget", status: "True", reason: $r, message: $m, lastTransitionTime: $t}],
    containerStatuses: [{name: "app", image: "registry.local/app:1", imageID: "", ready: false, restartCount: 0,
      state: {terminated: {exitCode: 137, reason: "Error", startedAt: $t, finishedAt: $t}}}]}')"
}
disrupted bumped PreemptionByScheduler 'default-scheduler: preempting to accommodate a higher priority pod'
disrupted drained EvictionByEvictionAPI 'Eviction API: evicting'
pod noexec; status noexec "{\"phase\": \"Running\", \"startTime\": \"$AGO\", \"conditions\": $not_ready, \"containerStatuses\": [$(container '{"waiting": {"reason": "RunContainerError", "message": "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: \"/app\": permission denied: unknown"}}' 6)]}"

cat > "$work/config.yaml" <<EOF
audit:
  path: $work/audit.jsonl
EOF
"$BIN" scan -o json -n "$NS" --kubeconfig "$KUBECONFIG" --context "$CTX" --config "$work/config.yaml" > "$work/scan.json" || true
jq -r '.[] | "\(.name)\t\(.category)\t\(.reason)\t\(.cause.class)"' "$work/scan.json" | sort | column -t
failed=0
expect() { # NAME CATEGORY CAUSE
  local got; got=$(jq -r --arg n "$1" '.[] | select(.name == $n) | "\(.category) \(.cause.class)"' "$work/scan.json")
  if [ "$got" = "$2 $3" ]; then echo "PASS $1: $got"; else echo "FAIL $1: got '$got', want '$2 $3'"; failed=1; fi
}
expect mount starting missingConfigMap
expect sandbox starting podSandbox
expect init starting initRunning
expect unready starting readinessProbe
expect outofcpu failed rejectedResources
expect preempted failed preempted
expect shutdown failed nodeShutdown
expect diskpressure evicted nodeDiskPressure
expect noexec crashLoop execPermission
expect taint failed rejectedTaint
expect sysctl failed rejectedFeature
expect rejectshutdown failed nodeShutdown
expect bumped failed preempted
expect drained failed evictedByAPI
reset
$K delete node pg-node --ignore-not-found >/dev/null
exit $failed
