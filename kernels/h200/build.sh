#!/usr/bin/env bash
# On the development machine: builds the check binary and the kernels' CUBIN (NVRTC, as the
# prover makes it at start) into $DEST (default .device/) for kernels/h200/check.sh, and
# prints registers and spills per kernel (ptxas from the nvidia-cuda-nvcc wheel, report only).
set -euo pipefail
cd "$(dirname "$0")/../.."
DEST=${DEST:-.device}
NV=$(python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13"))')
export LD_LIBRARY_PATH="$NV/lib:${LD_LIBRARY_PATH:-}"
cargo build --release -p cuzk-kernels --bin cuzk-gpu-check
mkdir -p "$DEST"
cp target/release/cuzk-gpu-check "$DEST/"
./target/release/cuzk-gpu-check compile "$DEST/cuzk"
"$NV/bin/ptxas" -arch=sm_90 -O3 -v -o /dev/null "$DEST/cuzk.ptx" 2> "$DEST/ptxas.log"
rm "$DEST/cuzk.ptx"
awk "/Compiling entry/ {f=\$(NF-2)} /registers/ {print f, \$5, \"registers\"} /spill/ {print \"   \", \$0}" "$DEST/ptxas.log"
