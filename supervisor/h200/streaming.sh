#!/usr/bin/env bash
# Runs on the GPU machine with the binaries of supervisor/h200/build.sh: the gpu stage with
# its bases streamed (what a device too small for the proving key does, e.g. an 80 GB H100
# at 32 GiB with B_G2), forced on real 2 KiB jobs by CUZK_GPU_STREAM_MIB:
#  1. `cuzk-gpu-check host-register`: a read-only file mapping page-locked without and with
#     CU_MEMHOSTREGISTER_READ_ONLY (the SRS segment is mapped read-only);
#  2. `cuzk run` of $JOBS real 2 KiB jobs, the SRS page-locked, pieces of STREAM_MIB: every
#     proof written and verified, none failed, and no "could not be page-locked" line.
# Results under $OUT; a short table last.
source "$(dirname "$0")/env.sh"

"$B/cuzk-gpu-check" host-register > "$OUT/host-register.txt" 2>&1; reg_rc=$?
"$B/cuzk" params generate --sector-size 2KiB --param-cache $P > "$OUT/params.log" 2>&1 || { tail "$OUT/params.log"; exit 1; }
D=/tmp/cuzk-streaming; N=${JOBS:-4}
rm -rf $D
submit_2kib $D $N
SLOTS=2 SYNTH=2 write_config /tmp/cuzk-streaming.toml $D
t0=$(date +%s.%N)
CUZK_GPU_STREAM_MIB=${STREAM_MIB:-16} timeout 400 "$B/cuzk" run --config /tmp/cuzk-streaming.toml --exit-when-idle \
  > "$OUT/streaming.log" 2>&1; rc=$?
wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
verified=$(verified_2kib $D $N)
failed=$(ls $D/failed/*.reason 2>/dev/null | wc -l)
streamed=$(grep -c "its bases stream from the host on every partition" "$OUT/streaming.log")
unpinned=$(grep -c "could not be page-locked" "$OUT/streaming.log")
grep -m 3 "prover ready\|bases stream\|page-locked" "$OUT/streaming.log"
echo "== summary"
tail -n 4 "$OUT/host-register.txt"
echo "host-register rc=$reg_rc; cuzk run rc=$rc in $wall s; proofs verified $verified/$N, failed $failed; streamed provers $streamed (>= 1), SRS pin refused $unpinned (want 0)"
[ "$reg_rc" -eq 0 ] && [ "$rc" -eq 0 ] && [ "$verified" -eq "$N" ] && [ "$failed" -eq 0 ] && [ "$streamed" -ge 1 ] \
  && [ "$unpinned" -eq 0 ] && echo "PASS" || { echo "FAIL"; exit 1; }
