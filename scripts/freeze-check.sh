#!/bin/bash
# Real-control-plane freshness check: a headless worker on a quiet namespace
# with the default settings; the apiserver frozen (SIGSTOP) FREEZE seconds, then thawed.
set -u
R=${REALK8S_DIR:-$HOME/.cache/realk8s}
BIN=${BIN:-$(dirname "$0")/../target/debug/ops-pod-cleaner}
FREEZE=${FREEZE:-60}
export KUBECONFIG=$R/kubeconfig
kubectl create namespace quiet >/dev/null 2>&1
kubectl create namespace ops-pod-cleaner >/dev/null 2>&1
scratch=$(mktemp -d)
cat > $scratch/config.yaml <<YAML
rules:
  - rule: evicted
    auto: true
audit:
  path: $scratch/audit.jsonl
  events: false
YAML
PORT=19377
$BIN headless --context local-admin -n quiet --listen 127.0.0.1:$PORT --config $scratch/config.yaml >$scratch/out.log 2>&1 &
pid=$!
sample() { curl -s --max-time 2 http://127.0.0.1:$PORT/metrics | grep -E "^opc_(watch_stale_seconds|worker_blocked|leader) " | awk '{printf "%s=%s ", $1, $2}'; }
t0=$(date +%s.%N)
el() { printf "%6.1f" $(echo "$(date +%s.%N) - $t0" | bc); }
for i in $(seq 1 60); do echo "$(el) $(sample)"; sleep 1; done > $scratch/quiet.txt
echo "quiet 60 s: max stale seconds $(grep -o 'stale_seconds=[0-9.]*' $scratch/quiet.txt | cut -d= -f2 | sort -n | tail -1)"
kill -STOP $(cat $R/run/apiserver.pid); echo "$(el) FROZEN"
for i in $(seq 1 $FREEZE); do echo "$(el) $(sample)"; sleep 1; done
kill -CONT $(cat $R/run/apiserver.pid); echo "$(el) THAWED"
for i in $(seq 1 25); do echo "$(el) $(sample)"; sleep 1; done
kill -TERM $pid; wait $pid
echo "--- headless output"; cat $scratch/out.log | tail -30
