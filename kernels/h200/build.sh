#!/usr/bin/env bash
# On the development machine: builds the check binary and the kernels' cubin (NVRTC's PTX
# assembled by ptxas from the nvidia-cuda-nvcc wheel) into .device/ for kernels/h200/check.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
NV=$(python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13"))')
export LD_LIBRARY_PATH="$NV/lib:${LD_LIBRARY_PATH:-}"
cargo build --release -p cuzk-kernels --bin cuzk-gpu-check
mkdir -p .device
cp target/release/cuzk-gpu-check .device/
./target/release/cuzk-gpu-check compile .device/cuzk.ptx
"$NV/bin/ptxas" -arch=sm_90 -O3 -v -o .device/cuzk.cubin .device/cuzk.ptx 2> .device/ptxas.log
awk "/Compiling entry/ {f=\$(NF-2)} /registers/ {print f, \$5, \"registers\"} /spill/ {print \"   \", \$0}" .device/ptxas.log
