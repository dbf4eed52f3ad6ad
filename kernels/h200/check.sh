#!/usr/bin/env bash
# Runs on the H200 machine (no Rust there): the release binary and the kernels' cubin,
# both built on the development machine and carried in .device/ (see kernels/h200/build.sh).
# Checks every kernel against the CPU on fresh random inputs, then times the synthetic
# 32 GiB partition. Prints a short table last; logs and tables go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/cuzk-out}
mkdir -p "$OUT"
BIN=.device/cuzk-gpu-check
if [ -f .device/cuzk.cubin ]; then
  export CUZK_KERNELS_CUBIN=.device/cuzk.cubin
else
  # NVRTC at run time: find libnvrtc.
  lib=$(dirname "$(find / -name 'libnvrtc.so*' 2>/dev/null | head -1)")
  export LD_LIBRARY_PATH="$lib:${LD_LIBRARY_PATH:-}"
fi
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv | tee "$OUT/gpu.txt"
nproc
rc=0
for mode in ${MODES:-correctness scale}; do
  "$BIN" "$mode" ${MSM_MAX:-22} > "$OUT/$mode.log" 2>&1 || rc=1
  tail -n 3 "$OUT/$mode.log"
done
for mode in ${MODES:-correctness scale}; do
  sed -n '/^== /,$p' "$OUT/$mode.log"
done
exit $rc
