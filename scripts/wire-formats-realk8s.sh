#!/usr/bin/env bash
# The first view in each wire format on a real API server, each beside the bare list in the
# same format measured in the same run (../shared/realk8s after seeding it with
# `cargo run --release --example seed_pods -- KUBECONFIG 50000 32`). Prints one line a run:
#
#   REALK8S_DIR=~/.cache/realk8s [BEFORE=OLD_BINARY] scripts/wire-formats-realk8s.sh [BINARY] [RUNS] [CAPTURE_DIR]
#
# With BEFORE, each run also times an older build's first view (in whatever it asks for).
#
# - bare list: one `resourceVersion=0` GET of every pod (what the first view is made from on a
#   v1.24 server, which serves it from its watch cache in one body), bytes only, with curl.
# - headless --once -A --dry-run: the product's first complete view and one pass of the worker,
#   with OPS_POD_CLEANER_WIRE_FORMAT set; wall time and peak RSS from /usr/bin/time.
# With CAPTURE_DIR, also saves a watch from version 0 in each format (every pod as ADDED), the
# input of `cargo bench --bench pipeline -- --captured DIR/watch.json DIR/watch.pb`.
set -euo pipefail
BIN=${1:-target/release/ops-pod-cleaner}
RUNS=${2:-3}
CAPTURE=${3:-}
DIR=${REALK8S_DIR:?set REALK8S_DIR}
KUBECONFIG_FILE=$DIR/kubeconfig
SERVER=https://127.0.0.1:6443
TOKEN=$(cut -d, -f1 "$DIR/pki/tokens.csv" | head -1)
PROTOBUF='application/vnd.kubernetes.protobuf'

# A user agent that is not curl's: curl gets pretty-printed JSON.
get() { # ACCEPT PATH_AND_QUERY [OUT]
  curl -sS --fail --cacert "$DIR/pki/ca.crt" -H "Authorization: Bearer $TOKEN" -A measure/1 \
    -H "Accept: $1" -o "${3:-/dev/null}" -w '%{size_download} %{time_total}' "$SERVER$2"
}

bare() { # ACCEPT
  read -r bytes secs < <(get "$1" '/api/v1/pods?resourceVersion=0')
  printf '%.1f MB in %.2f s' "$(echo "$bytes / 1000000" | bc -l)" "$secs"
}

view() { # FORMAT [BINARY]
  local out
  out=$(mktemp)
  OPS_POD_CLEANER_WIRE_FORMAT=$1 /usr/bin/time -f '%e %M' -o "$out" \
    "${2:-$BIN}" --kubeconfig "$KUBECONFIG_FILE" --dry-run headless --once -A >/dev/null 2>&1 || true
  read -r secs kb < "$out"
  rm -f "$out"
  printf '%.2f s, peak %d MiB' "$secs" $((kb / 1024))
}

pods=$(curl -sS --cacert "$DIR/pki/ca.crt" -H "Authorization: Bearer $TOKEN" -A measure/1 \
  "$SERVER/api/v1/pods?resourceVersion=0" | jq '.items | length')
echo "$pods pods on $SERVER; $RUNS runs, formats alternated"
for run in $(seq "$RUNS"); do
  echo "run $run: protobuf bare list $(bare "$PROTOBUF"), view $(view protobuf)"
  echo "run $run: json     bare list $(bare application/json), view $(view json)"
  if [ -n "${BEFORE:-}" ]; then
    echo "run $run: before   view $(view json "$BEFORE")"
  fi
done

if [ -n "$CAPTURE" ]; then
  mkdir -p "$CAPTURE"
  watch='/api/v1/pods?watch=1&resourceVersion=0&allowWatchBookmarks=false&timeoutSeconds=20'
  for f in json pb; do
    accept=application/json
    [ $f = pb ] && accept=$PROTOBUF
    # The watch stays open until its timeout: what came by then is every pod's ADDED event.
    curl -sS --cacert "$DIR/pki/ca.crt" -H "Authorization: Bearer $TOKEN" -A measure/1 \
      -H "Accept: $accept" -o "$CAPTURE/watch.$f" "$SERVER$watch" || true
    echo "captured $CAPTURE/watch.$f: $(stat -c %s "$CAPTURE/watch.$f") bytes"
  done
fi
