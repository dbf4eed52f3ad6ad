#!/usr/bin/env bash
# On the development machine: builds the check binary and the kernels' CUBIN (NVRTC, as the
# prover makes it at start) into $DEST (default .device/) for kernels/h200/check.sh, and
# prints registers and spills per kernel (ptxas from the nvidia-cuda-nvcc wheel, report only).
# SRC: another checkout of the repository to build (kernels/h200/variant.sh passes a
# revision's worktree), with its own target directory; default this tree. (One target
# directory for two checkouts is not safe: cargo gives the same crate in both the same
# artifact and records its sources by relative path, so the second build can look fresh
# and keep the first one's binary; seen here.)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
DEST=${DEST:-.device}
SRC=${SRC:-$root}
NV=$(python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13"))')
export LD_LIBRARY_PATH="$NV/lib:${LD_LIBRARY_PATH:-}"
(cd "$SRC" && CARGO_TARGET_DIR=$SRC/target cargo build --release -p cuzk-kernels --bin cuzk-gpu-check)
mkdir -p "$DEST"
cp "$SRC/target/release/cuzk-gpu-check" "$DEST/"
# The binary embeds its checkout's kernel sources: its `compile` writes that CUBIN.
"$DEST/cuzk-gpu-check" compile "$DEST/cuzk"
"$NV/bin/ptxas" -arch=sm_90 -O3 -v -o /dev/null "$DEST/cuzk.ptx" 2> "$DEST/ptxas.log"
rm "$DEST/cuzk.ptx"
awk "/Compiling entry/ {f=\$(NF-2)} /registers/ {print f, \$5, \"registers\"} /spill/ {print \"   \", \$0}" "$DEST/ptxas.log"
