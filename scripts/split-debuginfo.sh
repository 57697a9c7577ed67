#!/bin/bash
# Ship a release binary without its debug info, and keep that info beside it rather than lose
# it: BINARY becomes stripped and linked (.gnu_debuglink) to BINARY.debug, which backtraces,
# gdb and perf pick up when the two files lie side by side.
#
# Linux only: rustc keeps the line tables in the executable there whatever split-debuginfo
# says (macOS gets a .dSYM, Windows a .pdb, from the release profile itself), and
# `strip = "debuginfo"` in the profile would discard them for good.
#
# usage: scripts/split-debuginfo.sh target/release/ops-pod-cleaner
set -euo pipefail
bin=${1:?usage: $0 BINARY}
debug="$bin.debug"
objcopy --only-keep-debug "$bin" "$debug"
chmod -x "$debug"
# The link names the file only, so the pair can move together (into an archive, say).
(cd "$(dirname "$bin")" && objcopy --strip-debug --add-gnu-debuglink="$(basename "$debug")" "$(basename "$bin")")
echo "$bin: $(stat -c %s "$bin") bytes; debug info in $debug: $(stat -c %s "$debug") bytes"
# split-debuginfo = "packed" also leaves the split units in BINARY.dwp: debuggers want it beside
# the other two; backtraces need only the .debug file.
if [ -e "$bin.dwp" ]; then
    echo "keep $bin.dwp ($(stat -c %s "$bin.dwp") bytes) with them for debuggers"
fi
