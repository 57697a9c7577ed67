#!/usr/bin/env bash
# The hostile-tenant scenarios on a real API server (../shared/realk8s, or any cluster you may
# create namespaces in): what a tenant with create rights in one namespace can write, and what
# the product does with it. Prints what each showed; exits non-zero if the product was steered.
#
#   KUBECONFIG=~/.cache/realk8s/kubeconfig scripts/hostile-tenant-realk8s.sh [BINARY]
#
# 1. A forged owner: pod `evil`, failing to pull, names Deployment `checkout` (with its real uid)
#    as its controller. `scan` must not offer to scale it; `headless --once` with imagePull on
#    auto (and scaleWhileAvailable) must leave `checkout` at 2 replicas.
# 2. Escapes in an owner name: `scan --output table` must print no ESC, BEL or forged row.
set -euo pipefail
BIN=${1:-target/release/ops-pod-cleaner}
: "${KUBECONFIG:?set KUBECONFIG to an admin kubeconfig}"
NS=hostile-$$
K="kubectl --kubeconfig $KUBECONFIG"
work=$(mktemp -d)
cleanup() { $K delete namespace "$NS" --wait=false >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT

$K create namespace "$NS" >/dev/null
$K create namespace ops-pod-cleaner >/dev/null 2>&1 || true
$K -n "$NS" create deployment checkout --image=registry.local/checkout:1 --replicas=2 >/dev/null
uid=$($K -n "$NS" get deployment checkout -o jsonpath='{.metadata.uid}')

pull_failing() { # NAME OWNER_JSON
  $K -n "$NS" apply -f - >/dev/null <<EOF
{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "$1", "labels": {"app": "checkout"}, "ownerReferences": [$2]},
 "spec": {"containers": [{"name": "app", "image": "registry.local/evil:1"}]}}
EOF
  $K -n "$NS" patch pod "$1" --subresource=status --type=merge -p '{"status": {"phase": "Pending",
    "containerStatuses": [{"name": "app", "image": "registry.local/evil:1", "imageID": "", "ready": false,
    "restartCount": 0, "state": {"waiting": {"reason": "ErrImagePull",
    "message": "rpc error: code = NotFound desc = registry.local/evil:1: not found"}}}]}}' >/dev/null
}

pull_failing evil "{\"apiVersion\": \"apps/v1\", \"kind\": \"Deployment\", \"name\": \"checkout\", \"uid\": \"$uid\", \"controller\": true}"
# An owner of a group nobody serves: the garbage collector leaves the pod alone.
escapes=$(printf 'x\033[2J\033[1;1HALL CLEAR\033]52;c;SGVsbG8=\007\nimagePull  %s  fake-row' "$NS")
owner=$(jq -cn --arg name "$escapes" '{apiVersion: "x.example/v1", kind: "Thing", name: $name, uid: "6a1d6f0e-0000-4000-8000-000000000001", controller: true}')
pull_failing shady "$owner"

cat > "$work/config.yaml" <<EOF
rules:
  - {rule: imagePull, auto: true, after: 0s, scaleWhileAvailable: true}
audit:
  path: $work/audit.jsonl
  events: false
EOF
export OPS_POD_CLEANER_CONFIG=$work/config.yaml
failed=0

echo "== 1. a forged owner"
"$BIN" --kubeconfig "$KUBECONFIG" scan -n "$NS" > "$work/scan.txt" || true
grep evil "$work/scan.txt" | cat -v
"$BIN" --kubeconfig "$KUBECONFIG" headless --once -n "$NS" > "$work/once.txt" 2>&1 || true
grep -E "checkout|evil|one pass" "$work/once.txt" | cut -c1-300
replicas=$($K -n "$NS" get deployment checkout -o jsonpath='{.spec.replicas}')
echo "Deployment checkout: spec.replicas=$replicas"
[ "$replicas" = 2 ] || { echo "STEERED: the forged owner got checkout scaled"; failed=1; }

echo "== 2. escapes in an owner name"
"$BIN" --kubeconfig "$KUBECONFIG" scan -n "$NS" --output table > "$work/table.txt" || true
grep shady "$work/table.txt" | cat -v
if LC_ALL=C grep -q $'[\x1b\x07]' "$work/table.txt"; then
  echo "STEERED: scan printed a raw ESC or BEL"; failed=1
fi
if grep -q '^imagePull  '"$NS"'  fake-row' "$work/table.txt"; then
  echo "STEERED: scan printed a forged row"; failed=1
fi
echo "rows printed: $(wc -l < "$work/table.txt") (a header and two pods)"
exit $failed
