#!/usr/bin/env bash
# Runs on the H200 machine (no Rust there): the release binary and the kernels' CUBIN, both
# built on the development machine and carried in $DEV (default .device/, see
# kernels/h200/build.sh). MODES (default "start correctness scale"):
#   start        time to a ready GpuProver: NVRTC PTX JIT-compiled by the driver with its
#                cache off (the old path, a fresh machine), then NVRTC's CUBIN (the prover's
#                path), then the PTX again with the driver's cache on
#   correctness  every kernel against the CPU on fresh random inputs
#   scale        NTT/MSM timings and the synthetic 32 GiB partition
#   sweep        MSM time by window width
# Prints a short table last; logs and tables go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/cuzk-out}
DEV=${DEV:-.device}
mkdir -p "$OUT"
BIN=$DEV/cuzk-gpu-check
# NVRTC for the start measurement (and for every mode when no prebuilt CUBIN is carried).
lib=$(dirname "$(find / -name 'libnvrtc.so*' -not -path '/proc/*' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH="$lib:${LD_LIBRARY_PATH:-}"
CUBIN=""
[ -f "$DEV/cuzk.cubin" ] && CUBIN=$DEV/cuzk.cubin
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv | tee "$OUT/gpu.txt"
nproc
rc=0
MODES=${MODES:-start correctness scale}
for mode in $MODES; do
  if [ "$mode" = start ]; then
    {
      CUZK_KERNELS_LOAD=ptx CUDA_CACHE_DISABLE=1 "$BIN" start
      "$BIN" start
      CUZK_KERNELS_LOAD=ptx "$BIN" start
      CUZK_KERNELS_LOAD=ptx "$BIN" start
    } > "$OUT/start.log" 2>&1 || rc=1
    grep '^start:' "$OUT/start.log"
    continue
  fi
  CUZK_KERNELS_CUBIN=$CUBIN "$BIN" "$mode" ${MSM_MAX:-22} > "$OUT/$mode.log" 2>&1 || rc=1
  tail -n 3 "$OUT/$mode.log"
done
for mode in $MODES; do
  [ "$mode" = start ] && continue
  sed -n '/^== /,$p' "$OUT/$mode.log"
done
exit $rc
