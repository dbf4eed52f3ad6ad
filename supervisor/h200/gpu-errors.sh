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
rm -rf $D $M; mkdir -p $D/incoming $M
for i in 1 2; do
  f=tests/fixtures/porep-2KiB-a.c1.json; [ $i -eq 2 ] && f=tests/fixtures/porep-2KiB-b.c1.json
  cp $f $D/incoming/.job$i.tmp && mv $D/incoming/.job$i.tmp $D/incoming/job$i.json
done
SLOTS=2 SYNTH=1 write_config /tmp/cuzk-gpu-errors.toml $D
CUZK_TEST_GPU_ERRORS=$M timeout 300 "$B/cuzk" run --config /tmp/cuzk-gpu-errors.toml --exit-when-idle \
  > "$OUT/gpu-errors.log" 2>&1; rc=$?
verified=0
for i in 1 2; do
  f=tests/fixtures/porep-2KiB-a.c1.json; [ $i -eq 2 ] && f=tests/fixtures/porep-2KiB-b.c1.json
  "$B/cuzk" verify --c1 $f --proof $D/done/job$i.proof --param-cache $P > /dev/null 2>&1 && verified=$((verified + 1))
done
failed=$(ls $D/failed/*.reason 2>/dev/null | wc -l)
usable=$(grep -c "context still usable" "$OUT/gpu-errors.log")
lost=$(grep -c "device context lost" "$OUT/gpu-errors.log")
restarts=$(grep -c "cuzk: gpu #.*restart scheduled" "$OUT/gpu-errors.log")
grep -m 4 "CUZK_TEST_GPU_ERRORS\|cuzk: gpu #" "$OUT/gpu-errors.log"
echo "== summary"
echo "cuzk run rc=$rc; proofs verified $verified/2, failed $failed; retryable errors $usable, lost contexts $lost, gpu restarts $restarts (want 0; 2, 0; 1, 1, 1)"
[ "$rc" -eq 0 ] && [ "$verified" -eq 2 ] && [ "$failed" -eq 0 ] && [ "$usable" -eq 1 ] && [ "$lost" -eq 1 ] \
  && [ "$restarts" -eq 1 ] && echo "PASS" || { echo "FAIL"; exit 1; }
