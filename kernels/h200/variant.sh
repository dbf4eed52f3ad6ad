#!/usr/bin/env bash
# On the development machine: one build of the kernels for kernels/h200/side-by-side.sh.
#   kernels/h200/variant.sh NAME [REV]
# builds `cuzk-gpu-check` and the kernels' CUBIN (NVRTC, as the prover makes it at start) of
# git revision REV (default: the working tree) into .device-v/NAME (git-ignored: list
# .device-v/ in .git/info/exclude), the binary stripped so that several fit the device
# tool's 64 MiB, ptxas' registers and spills beside them (ptxas.log, report only), and
# `cuzk-bench` (the comparison table) into .device-v/. A revision is built from a worktree
# under target/variant-src/ into this tree's target directory (dependencies are shared;
# the workspace crates of the other path are built once). Needs the wheels of docs/gpu.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
NAME=${1:?usage: kernels/h200/variant.sh NAME [REV]}
REV=${2:-}
root=$PWD
dest=$root/.device-v/$NAME
src=$root
if [ -n "$REV" ]; then
  src=$root/target/variant-src/$(git rev-parse --short "$REV")
  [ -d "$src" ] || git worktree add --detach "$src" "$REV" > /dev/null
fi
NV=$(python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13"))')
export LD_LIBRARY_PATH="$NV/lib:${LD_LIBRARY_PATH:-}"
(cd "$src" && CARGO_TARGET_DIR=$root/target cargo build --release -p cuzk-kernels --bin cuzk-gpu-check)
mkdir -p "$dest"
cp target/release/cuzk-gpu-check "$dest/"
# The binary embeds its revision's kernel sources: its `compile` writes that CUBIN.
"$dest/cuzk-gpu-check" compile "$dest/cuzk"
"$NV/bin/ptxas" -arch=sm_90 -O3 -v -o /dev/null "$dest/cuzk.ptx" 2> "$dest/ptxas.log"
rm "$dest/cuzk.ptx"
strip "$dest/cuzk-gpu-check"
git -C "$src" rev-parse HEAD > "$dest/revision"
[ -z "$REV" ] && [ -n "$(git status --porcelain)" ] && echo "working tree with changes" >> "$dest/revision"
cargo build --release -p cuzk-bench
cp target/release/cuzk-bench "$root/.device-v/" && strip "$root/.device-v/cuzk-bench"
du -sh "$root/.device-v"
