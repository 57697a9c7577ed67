#!/usr/bin/env bash
# Two attacks by a tenant, reproduced on a real kube-apiserver (../shared/realk8s, started with
# up.sh), then one worker pass (`headless --once`, imagePull on auto) against them. Prints what
# it set up and what the worker did; exits non-zero if any scenario FAILs.
#
#   scripts/evidence-realk8s.sh [BINARY]       (default target/debug/ops-pod-cleaner)
#   KUBECONFIG (default ~/.cache/realk8s/kubeconfig), KUBECTL (default kubectl: needs
#   `patch --subresource`, kubectl >= 1.24 final; the one built in the realk8s tree lacks it)
#
# A. Squatted StatefulSet ordinal: the set `db` waits at a not-ready db-0; the tenant creates
#    db-1 itself, naming the set (real uid, labels, revision) as controller, failing to pull.
#    PASS: `db` keeps its 3 replicas. A2: the same with the set's own image, made to fail by
#    `imagePullPolicy: Never`.
# B. One tenant's two namespaces pause a rule for everyone: every pod of ev-t1 and ev-t2 fails
#    to pull; ev-t3's small Deployment fails on its own registry.
#    PASS: no cluster-wide pause, and ev-t3/other is not held by the others' burst.
set -euo pipefail
BIN=${1:-target/debug/ops-pod-cleaner}
KUBECONFIG=${KUBECONFIG:-$HOME/.cache/realk8s/kubeconfig}
CTX=local-admin
K="${KUBECTL:-kubectl} --kubeconfig $KUBECONFIG --context $CTX"
# The Lease and the parked ConfigMap go to a namespace of our own, so reruns start afresh
# (recent actions on a shared Lease would carry cooldowns and the workload window over).
export POD_NAMESPACE=ev-opc
NAMESPACES=(ev-db ev-t1 ev-t2 ev-t3 ev-opc)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
AGO=$(date -u -d '1 hour ago' +%Y-%m-%dT%H:%M:%SZ)
NOW=$(date -u +%Y-%m-%dT%H:%M:%SZ)

[ -x "$BIN" ] || { echo "no binary at $BIN" >&2; exit 2; }
$K patch --help 2>/dev/null | grep -q -- --subresource \
  || { echo "this kubectl has no 'patch --subresource': set KUBECTL to kubectl >= 1.24" >&2; exit 2; }

say() { printf '\n== %s\n' "$*"; }
echo "binary: $BIN ($("$BIN" --version 2>/dev/null || echo 'no --version')); API server: $($K version -o json 2>/dev/null | jq -r .serverVersion.gitVersion)"
wait_for() { # SECONDS DESCRIPTION COMMAND...: until COMMAND succeeds
  local n=$1 what=$2; shift 2
  for _ in $(seq "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
  echo "gave up waiting for $what" >&2; exit 2
}
status() { $K -n "$1" patch pod "$2" --subresource=status --type=merge -p "{\"status\": $3}" >/dev/null; }
# What a kubelet writes for a pod whose container `$1` (image $2) waits in reason $3 ($4).
waiting() {
  jq -cn --arg c "$1" --arg img "$2" --arg r "$3" --arg m "$4" --arg t "$AGO" '{phase: "Pending", startTime: $t,
    conditions: [{type: "Initialized", status: "True", lastTransitionTime: $t},
      {type: "Ready", status: "False", reason: "ContainersNotReady", message: "containers with unready status: [\($c)]", lastTransitionTime: $t},
      {type: "ContainersReady", status: "False", reason: "ContainersNotReady", message: "containers with unready status: [\($c)]", lastTransitionTime: $t},
      {type: "PodScheduled", status: "True", lastTransitionTime: $t}],
    containerStatuses: [{name: $c, image: $img, imageID: "", ready: false, restartCount: 0, started: false,
      state: {waiting: {reason: $r, message: $m}}}]}'
}
gone() { [ -z "$($K get ns "${NAMESPACES[@]}" --ignore-not-found -o name)" ]; }
# The product's config: imagePull on auto at once (headless turns the master switch on),
# every other key default; the files it writes stay in $work.
cat > "$work/config.yaml" <<EOF
rules:
  - {rule: imagePull, auto: true, after: 0s}
audit:
  path: $work/audit.jsonl
report:
  spoolDir: $work/spool
  stateFile: $work/report-state.json
EOF
run_pass() { # NAME: one worker pass over all namespaces; its output in $work/NAME.out
  echo "\$ POD_NAMESPACE=$POD_NAMESPACE $BIN headless --once -A --kubeconfig $KUBECONFIG --context $CTX --config $work/config.yaml"
  local rc=0
  "$BIN" headless --once -A --kubeconfig "$KUBECONFIG" --context "$CTX" --config "$work/config.yaml" \
    > "$work/$1.out" 2>&1 || rc=$?
  sed 's/^/  | /' "$work/$1.out"
  echo "  (exit status $rc)"
}

reset() { # delete our namespaces and wait until they are gone
  $K delete ns "${NAMESPACES[@]}" --ignore-not-found --wait=false >/dev/null
  # No kubelet confirms a graceful delete: pods bound to node-a would stay Terminating and hold
  # their namespace forever, so they are force-deleted until the namespaces are gone.
  for _ in $(seq 180); do
    gone && return 0
    for ns in "${NAMESPACES[@]}"; do $K -n "$ns" delete pods --all --grace-period=0 --force >/dev/null 2>&1 || true; done
    sleep 1
  done
  echo "namespaces still terminating: $($K get ns "${NAMESPACES[@]}" --ignore-not-found -o name)" >&2
  exit 2
}
say "reset: delete ${NAMESPACES[*]} and wait until they are gone"
reset
for ns in "${NAMESPACES[@]}"; do $K create ns "$ns" >/dev/null; done

say "node node-a, Ready (no kubelet: its status is written here)"
# Created first: the pod garbage collector deletes pods bound to a node that does not exist.
$K get node node-a >/dev/null 2>&1 || $K create -f - >/dev/null <<EOF
{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a", "labels": {"kubernetes.io/hostname": "node-a"}}}
EOF
$K patch node node-a --subresource=status --type=merge -p "{\"status\": {
  \"capacity\": {\"cpu\": \"8\", \"memory\": \"32Gi\", \"pods\": \"110\"},
  \"allocatable\": {\"cpu\": \"8\", \"memory\": \"32Gi\", \"pods\": \"110\"},
  \"conditions\": [{\"type\": \"Ready\", \"status\": \"True\", \"reason\": \"KubeletReady\",
    \"message\": \"kubelet is posting ready status\", \"lastHeartbeatTime\": \"$NOW\", \"lastTransitionTime\": \"$AGO\"}]}}" >/dev/null
# Admission taints a new node not-ready; the node lifecycle controller that would lift it
# does not run here, and the scheduler would bind nothing.
$K taint node node-a node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true
$K get node node-a -o jsonpath='{.metadata.name}: Ready={.status.conditions[?(@.type=="Ready")].status} taints={.spec.taints}{"\n"}'
failed=0

say "A. squatted StatefulSet ordinal (namespace ev-db)"
$K -n ev-db apply -f - >/dev/null <<EOF
{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
 "spec": {"replicas": 3, "podManagementPolicy": "OrderedReady", "serviceName": "db",
  "selector": {"matchLabels": {"app": "db"}},
  "template": {"metadata": {"labels": {"app": "db"}},
   "spec": {"containers": [{"name": "db", "image": "postgres:16"}]}}}}
EOF
wait_for 60 "db-0 to be created and bound" sh -c "$K -n ev-db get pod db-0 -o jsonpath='{.spec.nodeName}' | grep -q node-a"
# Running but not Ready: an OrderedReady set waits at db-0 and never creates db-1.
status ev-db db-0 "$(jq -cn --arg t "$AGO" '{phase: "Running", startTime: $t,
  conditions: [{type: "Initialized", status: "True", lastTransitionTime: $t},
    {type: "Ready", status: "False", reason: "ContainersNotReady", message: "containers with unready status: [db]", lastTransitionTime: $t},
    {type: "ContainersReady", status: "False", reason: "ContainersNotReady", message: "containers with unready status: [db]", lastTransitionTime: $t},
    {type: "PodScheduled", status: "True", lastTransitionTime: $t}],
  containerStatuses: [{name: "db", image: "postgres:16", imageID: "", ready: false, restartCount: 0, started: true,
    state: {running: {startedAt: $t}}}]}')"
wait_for 60 "the set's currentRevision" sh -c "$K -n ev-db get sts db -o jsonpath='{.status.currentRevision}' | grep -q ."
uid=$($K -n ev-db get sts db -o jsonpath='{.metadata.uid}')
rev=$($K -n ev-db get sts db -o jsonpath='{.status.currentRevision}')
echo "StatefulSet db: uid $uid, currentRevision $rev; pods: $($K -n ev-db get pods -o name | xargs)"
# A tenant's pod in db-1's place: everything a set's own pod carries (name, labels, owner
# reference, current revision) but a container of its own (`container`), failing as the
# kubelet says (`reason`, `message`). The set must stay at 3.
squat() {
  label=$1 container=$2 image=$3 reason=$4 message=$5 held=$6
  $K -n ev-db create -f - >/dev/null <<EOF
{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "db-1", "labels": {"app": "db", "controller-revision-hash": "$rev", "statefulset.kubernetes.io/pod-name": "db-1"},
  "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": "$uid", "controller": true, "blockOwnerDeletion": true}]},
 "spec": {"nodeName": "node-a", "containers": [$container]}}
EOF
  status ev-db db-1 "$(waiting db "$image" "$reason" "$message")"
  sleep 2 # let the StatefulSet controller see db-1 before the worker looks
  $K -n ev-db get pods -o wide
  run_pass "$label"
  replicas=$($K -n ev-db get sts db -o jsonpath='{.spec.replicas}')
  echo "kubectl -n ev-db get sts db -o jsonpath={.spec.replicas}: $replicas"
  if [ "$replicas" = 3 ] && ! grep -q "scaled StatefulSet" "$work/$label.out"; then
    echo "$label: PASS ($held)"
  else
    echo "$label: FAIL (db scaled by a pod the tenant wrote); the worker's lines about db:"
    grep -E 'ev-db|db-[0-9]|StatefulSet' "$work/$label.out" | sed 's/^/  | /' || true
    failed=1
  fi
  # db-1 keeps failing: out of the way for the next squat.
  $K -n ev-db delete pod db-1 --grace-period=0 --force >/dev/null 2>&1 || true
  wait_for 30 "db-1 to be gone" sh -c "! $K -n ev-db get pod db-1 >/dev/null 2>&1"
}

squat A '{"name": "db", "image": "registry.invalid/tenant:1"}' registry.invalid/tenant:1 ErrImagePull \
  'rpc error: code = Unknown desc = failed to pull and unpack image "registry.invalid/tenant:1": failed to resolve reference: dial tcp: lookup registry.invalid: no such host' \
  "the squatted ordinal did not get db scaled"

say "A2. the same squat with the set's own image, made to fail (imagePullPolicy: Never)"
squat A2 '{"name": "db", "image": "postgres:16", "imagePullPolicy": "Never"}' postgres:16 ErrImageNeverPull \
  'Container image "postgres:16" is not present with pull policy of Never' \
  "a squat that pulls otherwise than the template did not get db scaled"

say "B. one tenant's two namespaces pause a rule for everyone (ev-t1, ev-t2 vs ev-t3)"
$K -n ev-t1 create deployment app --image=registry-a.invalid/app:1 --replicas=6 >/dev/null
$K -n ev-t2 create deployment app --image=registry-a.invalid/app:1 --replicas=6 >/dev/null
$K -n ev-t3 create deployment other --image=registry-b.invalid/other:1 --replicas=2 >/dev/null
bound() { # NS COUNT: COUNT pods, every one bound to node-a by the scheduler
  [ "$($K -n "$1" get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c node-a)" = "$2" ]
}
wait_for 90 "ev-t1's 6 pods" bound ev-t1 6
wait_for 90 "ev-t2's 6 pods" bound ev-t2 6
wait_for 90 "ev-t3's 2 pods" bound ev-t3 2
for ns in ev-t1 ev-t2 ev-t3; do
  $K -n "$ns" get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.containers[0].name} {.spec.containers[0].image}{"\n"}{end}' |
    while read -r pod container image; do
      status "$ns" "$pod" "$(waiting "$container" "$image" ImagePullBackOff "Back-off pulling image \"$image\"")"
    done
  echo "$ns: $($K -n "$ns" get pods --no-headers | awk '{print $1 "=" $3}' | xargs)"
done
run_pass B
echo "the worker's lines that say paused or scaled:"
grep -E 'paused|scaled' "$work/B.out" | sed 's/^/  | /' || echo "  (none)"
other=$($K -n ev-t3 get deployment other -o jsonpath='{.spec.replicas}')
echo "kubectl -n ev-t3 get deployment other -o jsonpath={.spec.replicas}: $other"
b=PASS
if grep -q "paused cluster-wide" "$work/B.out"; then
  echo "B: a rule was paused cluster-wide by bursts in ev-t1 and ev-t2"; b=FAIL
fi
# ev-t3 is fine if `other` was scaled, or if a line names a reason of ev-t3's own.
own=$(grep 'ev-t3' "$work/B.out" | grep -v -e 'cluster-wide' -e 'ev-t1' -e 'ev-t2' || true)
if [ "$other" != 0 ] && [ -z "$own" ]; then
  echo "B: ev-t3/other was left at $other with no reason of its own (held by the others' pause)"; b=FAIL
fi
[ -n "$own" ] && [ "$other" != 0 ] && { echo "B: ev-t3/other held for a reason of its own:"; echo "$own" | sed 's/^/  | /'; }
echo "B: $b"
[ "$b" = PASS ] || failed=1

# Leave the control plane as found: no namespace of ours, and no node that reports Ready (the
# e2e suite starts its stand-in kubelet only where no node does).
reset
$K delete node node-a --ignore-not-found >/dev/null
say "result: $([ $failed = 0 ] && echo 'every scenario PASSed' || echo 'at least one scenario FAILed')"
exit $failed
