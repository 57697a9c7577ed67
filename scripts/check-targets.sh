#!/usr/bin/env bash
# Proves that the code compiles for each release target of scripts/targets.txt that a Linux
# machine can check, and says which it cannot check and why. `cargo check` needs the target's
# Rust std (rustup) and a C compiler for it (ring and psm build C in their build scripts); it
# installs what is missing with rustup and apt-get. Fails when a check fails; a target whose
# toolchain this machine cannot install is named as not checked.
#
#   scripts/check-targets.sh [--tidy]    --tidy: remove each target's build after its check
#
# Windows: the release builds x86_64-pc-windows-msvc, whose C compiler (cl.exe) does not run on
# Linux; x86_64-pc-windows-gnu compiles the same `cfg(windows)` code, with mingw's gcc for C.
# macOS: ring's C needs Apple's SDK, which is not on Linux: the release workflow builds it.
set -euo pipefail
cd "$(dirname "$0")/.."
tidy=false
[[ "${1:-}" == --tidy ]] && tidy=true

# target checked, C compiler, Debian package of the compiler
plan() {
    case "$1" in
        x86_64-unknown-linux-gnu) echo "host" ;;
        x86_64-unknown-linux-musl) echo "$1 musl-gcc musl-tools" ;;
        aarch64-unknown-linux-gnu) echo "$1 aarch64-linux-gnu-gcc gcc-aarch64-linux-gnu" ;;
        # No musl cross compiler in Debian: gcc for aarch64 compiles ring's C for a check,
        # which links nothing.
        aarch64-unknown-linux-musl) echo "$1 aarch64-linux-gnu-gcc gcc-aarch64-linux-gnu" ;;
        x86_64-pc-windows-msvc)
            echo "x86_64-pc-windows-gnu x86_64-w64-mingw32-gcc gcc-mingw-w64-x86-64"
            ;;
        *-apple-darwin) echo "none" ;;
        *) echo "unknown" ;;
    esac
}

need_compiler() {
    local cc=$1 package=$2
    command -v "$cc" >/dev/null && return
    echo "installing $package for $cc"
    local sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo)
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$package" >/dev/null ||
        {
            "${sudo[@]}" apt-get update -q >/dev/null &&
                "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$package" >/dev/null
        }
}

failed=()
while read -r target _; do
    [[ -z "$target" || "$target" == \#* ]] && continue
    read -r checked cc package <<<"$(plan "$target")"
    case "$checked" in
        host) echo "$target: the host, built and tested by .ci/run"; continue ;;
        none) echo "$target: not checked here (needs Apple's SDK); the release workflow builds it"; continue ;;
        unknown) echo "$target: no plan to check it: add one to scripts/check-targets.sh"; failed+=("$target"); continue ;;
    esac
    # A machine that cannot fetch them (no registry, no rustup server) cannot check this
    # target: said loudly, not a failure of the code.
    if ! need_compiler "$cc" "$package" || ! rustup target add "$checked" >/dev/null 2>&1; then
        echo "$target: NOT CHECKED: this machine cannot install $package or the $checked std" >&2
        continue
    fi
    echo "$target: cargo check --target $checked (C by $cc)"
    env_cc="CC_${checked//-/_}"
    # The features the release archives are built with: the default ones.
    if ! env "$env_cc=$cc" cargo check --locked --quiet --target "$checked" -p ops-pod-cleaner --bins; then
        failed+=("$target")
    fi
    $tidy && rm -rf "target/$checked"
done <scripts/targets.txt

if ((${#failed[@]})); then
    echo "not proven: ${failed[*]}" >&2
    exit 1
fi
