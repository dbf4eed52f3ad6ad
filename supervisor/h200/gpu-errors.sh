#!/usr/bin/env bash
# Runs on the GPU machine with the binaries of supervisor/h200/build.sh: CUDA errors on a
# partition through the test hook CUZK_TEST_GPU_ERRORS (stages/gpu/src/device_error.rs),
# on the real CudaDevice with uploads ahead. Two real 2 KiB jobs; the first partition's
# first try ends in a retryable error (the slot goes back, the process keeps serving), its
# second in a lost context (the process exits and is restarted); both proofs must be
# written, verify, and nothing may fail. Results under $OUT; a short table last.
source "$(dirname "$0")/env.sh"

"$B/cuzk" params generate --sector-size 2KiB --param-cache $P > "$OUT/params.log" 2>&1 || { tail "$OUT/params.log"; exit 1; }
D=/tmp/cuzk-gpu-errors; M=/tmp/cuzk-gpu-errors-markers
rm -rf $D $M; mkdir -p $M
submit_2kib $D 2
SLOTS=2 SYNTH=1 write_config /tmp/cuzk-gpu-errors.toml $D
CUZK_TEST_GPU_ERRORS=$M timeout 300 "$B/cuzk" run --config /tmp/cuzk-gpu-errors.toml --exit-when-idle \
  > "$OUT/gpu-errors.log" 2>&1; rc=$?
verified=$(verified_2kib $D 2)
failed=$(ls $D/failed/*.reason 2>/dev/null | wc -l)
usable=$(grep -c "context still usable" "$OUT/gpu-errors.log")
lost=$(grep -c "device context lost" "$OUT/gpu-errors.log")
restarts=$(grep -c "cuzk: gpu #.*restart scheduled" "$OUT/gpu-errors.log")
grep -m 4 "CUZK_TEST_GPU_ERRORS\|cuzk: gpu #" "$OUT/gpu-errors.log"
echo "== summary"
echo "cuzk run rc=$rc; proofs verified $verified/2, failed $failed; retryable errors $usable, lost contexts $lost, gpu restarts $restarts (want 0; 2, 0; 1, 1, 1)"
[ "$rc" -eq 0 ] && [ "$verified" -eq 2 ] && [ "$failed" -eq 0 ] && [ "$usable" -eq 1 ] && [ "$lost" -eq 1 ] \
  && [ "$restarts" -eq 1 ] && echo "PASS" || { echo "FAIL"; exit 1; }
