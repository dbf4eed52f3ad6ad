#!/usr/bin/env bash
# Runs on the H200 machine (no Rust there): the release binary and the kernels' CUBIN, both
# built on the development machine and carried in $DEV (default .device/, see
# kernels/h200/build.sh). MODES (default "start correctness scale"):
#   start        time to a ready GpuProver: NVRTC's PTX JIT-compiled by the driver with the
#                caches off (the old path on a fresh machine), NVRTC's CUBIN with the caches
#                off, then the CUBIN twice with the caches on (a restarted process)
#   correctness  every kernel against the CPU on fresh random inputs; dense MSMs 2^10..2^MSM_MAX
#                (default 24) against blst's Pippenger
#   scale        NTT/MSM timings and the synthetic 32 GiB partition
#   msm          the MSM's accumulation variants side by side (chunking, register caps),
#                MSM and NTT 2^20 against the CPU, NTT 2^27
#   sweep        MSM time by window width (CUZK_SWEEP_LOGS sizes: powers of two or term
#                counts up to 2^26, CUZK_SWEEP_MIN_C; with CUZK_MSM_PROFILE each width's phases)
#   accum        the accumulation builds and window widths side by side, dense MSM 2^26
#                and 2^27 − 1 (CUZK_ACCUM_CONFIGS, e.g. "wide:20,flat:20,wide:22")
#   msm-once     one dense MSM of 2^MSM_MAX terms (CUZK_ACCUM_BUILD, CUZK_FORCE_C): the
#                launch to profile, e.g. ncu --clock-control none -k regex:msm_accumulate
#                --launch-count 1 $DEV/cuzk-gpu-check msm-once 24
#   ntt          NTT 2^18, 2^20, 2^24, 2^27 alone with each radix-2^9 pass kernel and the
#                default one without the full tables (best of 3, forward equal to the
#                shared-memory kernel's, round trips; CUZK_NTT_BUILD picks the kernel and
#                CUZK_NTT_FULL=0 turns the full tables off in any mode)
#   upload       a prover's resident SRS upload (41 GB of G1 bases at 32 GiB sizes) from pageable
#                memory against page-locked staging, interleaved, each downloaded and compared
#   ceilings     the Fr and Fp products and the G1 madd alone, in registers, one full wave
#                each (results checked against the CPU), against the multiply-add rate the
#                floors count with (CUZK_CEILING_SECS a kernel, default 0.2)
#   msm-g2       the B_G2 MSM alone (GpuG2Msm; the prover's B_G2 is in correctness/scale) against the CPU:
#                Fp2 and G2 layers, MSMs 2^10..2^MSM_MAX, every width, a plan with edge
#                cases, then the 32 GiB B_G2 shape (~3.3 M terms + ~14.9 M ones) timed
#                against the CPU path on CUZK_G2_CPU_THREADS (default 6) threads
#   lagrange     LC and LD' (H in Lagrange form) against the CPU at 2^1..2^12, then timed at
#                2^16..2^22 or the sizes in CUZK_LAGRANGE_LOGS ("22 27": the 32 GiB
#                domain itself, ~5 min and ~40 GB of host memory)
# Prints a short table last; logs and tables go to $OUT. A file $DEV/env (VAR=value lines)
# is exported first: one binary run as two variants with other settings (side-by-side.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/cuzk-out}
DEV=${DEV:-.device}
mkdir -p "$OUT"
BIN=$DEV/cuzk-gpu-check
if [ -f "$DEV/env" ]; then
  set -a
  . "$DEV/env"
  set +a
  echo "settings of $DEV/env: $(tr '\n' ' ' < "$DEV/env")"
fi
# NVRTC for the start measurement.
nvrtc=$(ldconfig -p 2>/dev/null | awk '/libnvrtc.so/ {print $NF; exit}')
[ -n "$nvrtc" ] || nvrtc=$(find /usr /opt / -name 'libnvrtc.so*' -not -path '/proc/*' 2>/dev/null | head -1)
export LD_LIBRARY_PATH="$(dirname "$nvrtc"):${LD_LIBRARY_PATH:-}"
echo "libnvrtc: $nvrtc"
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
      CUDA_CACHE_DISABLE=1 "$BIN" start
      "$BIN" start
      "$BIN" start
    } > "$OUT/start.log" 2>&1 || rc=1
    grep '^start:' "$OUT/start.log"
    continue
  fi
  CUZK_KERNELS_CUBIN=$CUBIN "$BIN" "$mode" ${MSM_MAX:-24} > "$OUT/$mode.log" 2>&1 || rc=1
  tail -n 3 "$OUT/$mode.log"
done
for mode in $MODES; do
  [ "$mode" = start ] && continue
  sed -n '/^== /,$p' "$OUT/$mode.log"
done
exit $rc
