#!/usr/bin/env bash
# On the development machine: one build of the kernels for kernels/h200/side-by-side.sh.
#   kernels/h200/variant.sh NAME [REV]
# builds `cuzk-gpu-check` and the kernels' CUBIN of git revision REV (default: the working
# tree) into .device-v/NAME (git-ignored: list .device-v/ in .git/info/exclude) with
# kernels/h200/build.sh, strips the binary so that several fit the device tool's 64 MiB,
# notes the revision, and puts `cuzk-bench` (the comparison table) into .device-v/. A
# revision is built from a worktree under target/variant-src/ by this tree's build.sh, in
# the worktree's own target directory (a first build there compiles the dependencies; later
# ones reuse them). Needs the wheels of docs/gpu.md.
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
SRC=$src DEST=$dest bash kernels/h200/build.sh > /dev/null
strip "$dest/cuzk-gpu-check"
git -C "$src" rev-parse HEAD > "$dest/revision"
if [ -z "$REV" ] && [ -n "$(git status --porcelain)" ]; then
  echo "working tree with changes" >> "$dest/revision"
fi
cargo build --release -p cuzk-bench
cp target/release/cuzk-bench "$root/.device-v/" && strip "$root/.device-v/cuzk-bench"
du -sh "$root/.device-v"
