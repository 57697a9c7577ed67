#!/bin/bash
# Pack the release archive of one target, as the release workflow ships it:
#   ops-pod-cleaner-v<version>-<target>.tar.gz (.zip for Windows) holding, under a directory of
#   the same name, the stripped binary, LICENSE, README.md and every file it links to, the
#   shell completions (bash, zsh, fish, powershell) and the man page; beside it <archive>.sha256 (sha256sum format) and
#   <stem>-debuginfo.tar.gz, the split-off debug info under the same directory name, so that
#   unpacking both in one place puts the debug file where backtraces and gdb look for it.
#
# usage: scripts/build-archive.sh [--binary PATH] [--target TRIPLE] [--out DIR]
#   --binary PATH    a binary already built for TARGET (default: cargo build --release --locked)
#   --target TRIPLE  the Rust target triple (default: this host's)
#   --out DIR        where the archives go (default: target/dist)
#
# The completions and the man page come from running the binary itself; a binary that cannot
# run here (a cross build) gets them from a host build of the same commit instead.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
name=ops-pod-cleaner
binary=
target=
out=$root/target/dist
while [ $# -gt 0 ]; do
    case $1 in
        --binary) binary=${2:?--binary needs a path}; shift 2 ;;
        --target) target=${2:?--target needs a triple}; shift 2 ;;
        --out) out=${2:?--out needs a directory}; shift 2 ;;
        -h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "$0: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done

host=$(rustc -vV | sed -n 's/^host: //p')
target=${target:-$host}
case $target in
    *windows*) exe=.exe ext=zip ;;
    *) exe= ext=tar.gz ;;
esac
# The first `version =` of the root manifest is the package's own.
version=$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' "$root/Cargo.toml" | head -n 1)
# The tag's spelling (v0.1.0): the krew manifest names the archives after the release tag.
stem=$name-v$version-$target
cargo_target_dir=${CARGO_TARGET_DIR:-$root/target}
# cargo below runs in the root: a relative target dir is relative to it.
case $cargo_target_dir in /*) ;; *) cargo_target_dir=$root/$cargo_target_dir ;; esac

if [ -z "$binary" ]; then
    (cd "$root" && cargo build --release --locked --target "$target")
    binary=$cargo_target_dir/$target/release/$name$exe
fi
[ -f "$binary" ] || { echo "$0: no binary at $binary" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage=$work/archive/$stem
debug=$work/debuginfo/$stem
mkdir -p "$stage/completions" "$stage/man" "$debug" "$out"
out=$(cd "$out" && pwd)
cp "$binary" "$stage/$name$exe"
chmod +x "$stage/$name$exe"

# The debug info leaves the shipped binary but is kept: on Linux it is in the executable
# (split here), on macOS and Windows the release profile leaves a .dSYM or .pdb beside it.
case $target in
    *linux*)
        # Quiet: it names files under the staging directory, which is gone once this ends.
        "$root/scripts/split-debuginfo.sh" "$stage/$name" >/dev/null
        mv "$stage/$name.debug" "$debug/"
        if [ -e "$binary.dwp" ]; then cp "$binary.dwp" "$debug/$name.dwp"; fi
        ;;
    *apple*)
        if [ -d "$binary.dSYM" ]; then cp -R "$binary.dSYM" "$debug/$name.dSYM"; fi
        ;;
    *windows*)
        for pdb in "$(dirname "$binary")"/*.pdb; do
            if [ -e "$pdb" ]; then cp "$pdb" "$debug/"; fi
        done
        ;;
esac

runner=$stage/$name$exe
if ! "$runner" --version >/dev/null 2>&1; then
    echo "$target binaries do not run here: completions and man page from a host build" >&2
    (cd "$root" && cargo build --release --locked)
    runner=$cargo_target_dir/release/$name
fi
"$runner" completions bash >"$stage/completions/$name.bash"
"$runner" completions zsh >"$stage/completions/_$name"
"$runner" completions fish >"$stage/completions/$name.fish"
"$runner" completions powershell >"$stage/completions/_$name.ps1"
"$runner" manpage >"$stage/man/$name.1"
cp "$root/LICENSE" "$root/README.md" "$stage/"
# Every file the README links to (images, BENCHMARKS.md): no link in the archive is dead.
grep -o '](\([^)#:]*\))' "$root/README.md" | sed 's/^](//; s/)$//' | sort -u |
    while read -r linked; do
        mkdir -p "$stage/$(dirname "$linked")"
        cp "$root/$linked" "$stage/$linked"
    done

# ARCHIVE gets DIR (its name included) and ARCHIVE.sha256 names it relative to itself, so
# `sha256sum -c` works in the directory where both are downloaded.
pack() {
    local dir=$1 archive=$2
    rm -f "$archive"
    case $archive in
        *.zip)
            if command -v zip >/dev/null; then
                (cd "$(dirname "$dir")" && zip -qr "$archive" "$(basename "$dir")")
            else # Windows runners have 7-Zip, not zip
                (cd "$(dirname "$dir")" && 7z a -tzip -bd "$archive" "$(basename "$dir")" >/dev/null)
            fi
            ;;
        *) tar -czf "$archive" -C "$(dirname "$dir")" "$(basename "$dir")" ;;
    esac
    if command -v sha256sum >/dev/null; then
        (cd "$(dirname "$archive")" && sha256sum "$(basename "$archive")") >"$archive.sha256"
    else # macOS
        (cd "$(dirname "$archive")" && shasum -a 256 "$(basename "$archive")") >"$archive.sha256"
    fi
    echo "$archive"
}

pack "$stage" "$out/$stem.$ext"
if [ -n "$(ls -A "$debug")" ]; then
    pack "$debug" "$out/$stem-debuginfo.tar.gz"
else
    echo "no debug info found beside $binary: no debuginfo archive" >&2
fi
