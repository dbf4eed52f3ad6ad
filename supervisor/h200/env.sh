# Sourced by the supervisor/h200 scripts on the H200 machine (no Rust there): the repo root
# as working directory, $OUT for results, $B for the binaries carried in .device/bin
# (supervisor/h200/build.sh), $P and the parents cache for 2 KiB test parameters made there,
# libnvrtc on the library path (the kernels are compiled by NVRTC when a gpu process starts),
# and the machine's GPUs and cores noted in $OUT/gpu.txt.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT=${OUT:-/tmp/cuzk-out}
mkdir -p "$OUT"
B=${CUZK_BIN:-$PWD/.device/bin}
lib=$(dirname "$(find / -name 'libnvrtc.so*' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH="$lib:${LD_LIBRARY_PATH:-}"
P=/tmp/cuzk-params
export FIL_PROOFS_PARENT_CACHE=/tmp/filecoin-parents
nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
echo "cpus: $(nproc)" | tee -a "$OUT/gpu.txt"
