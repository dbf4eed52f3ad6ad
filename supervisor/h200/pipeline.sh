#!/usr/bin/env bash
# Runs on the H200 machine (no Rust there) with the release binaries carried in
# .device/bin (see supervisor/h200/build.sh): 2 KiB test parameters made there, then
#  1. `cuzk bench gpu`: the CUDA device against the CPU device on the real 2 KiB C1
#     (sums equal, bit-exact proofs with the same r, s, verify_seal), with timings;
#  2. `cuzk bench r1cs-device`: a and b made on the device from the recorded R1CS, equal to
#     synthesis's on every row of the real 2 KiB partition, timed against the host's;
#  3. `cuzk run` with the gpu stage on the GPU: a batch of real 2 KiB C1 files through
#     the drop directory, every proof verified before it is written; the timeline analysed.
# Results under $OUT; a short table last.
source "$(dirname "$0")/env.sh"

t0=$(date +%s.%N)
"$B/cuzk" params generate --sector-size 2KiB --param-cache $P > "$OUT/params.log" 2>&1 || { tail "$OUT/params.log"; exit 1; }
t1=$(date +%s.%N)
echo "params generated in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"

"$B/cuzk" bench gpu --c1 tests/fixtures/porep-2KiB-a.c1.json --param-cache $P --runs ${RUNS:-3} \
  > "$OUT/bench-gpu.txt" 2>&1; bench_rc=$?
tail -n 22 "$OUT/bench-gpu.txt"
"$B/cuzk" bench r1cs-device --c1 tests/fixtures/porep-2KiB-a.c1.json --runs ${RUNS:-3} \
  > "$OUT/bench-r1cs.txt" 2>&1; r1cs_rc=$?

D=/tmp/cuzk-data
rm -rf $D; mkdir -p $D/incoming
N=${JOBS:-6}
for i in $(seq 1 $N); do
  f=tests/fixtures/porep-2KiB-a.c1.json; [ $((i % 2)) -eq 0 ] && f=tests/fixtures/porep-2KiB-b.c1.json
  cp $f $D/incoming/.job$i.tmp && mv $D/incoming/.job$i.tmp $D/incoming/job$i.json
done
write_config /tmp/cuzk.toml $D
t0=$(date +%s.%N)
timeout 500 "$B/cuzk" run --config /tmp/cuzk.toml --exit-when-idle > "$OUT/run.log" 2>&1; run_rc=$?
t1=$(date +%s.%N)
wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
done_n=$(ls $D/done/*.proof 2>/dev/null | wc -l)
cp $D/timeline.jsonl "$OUT/" 2>/dev/null
"$B/cuzk-bench" timeline $D/timeline.jsonl --svg "$OUT/waterfall.svg" > "$OUT/timeline.txt" 2>&1
for i in $(seq 1 $N); do
  f=tests/fixtures/porep-2KiB-a.c1.json; [ $((i % 2)) -eq 0 ] && f=tests/fixtures/porep-2KiB-b.c1.json
  "$B/cuzk" verify --c1 $f --proof $D/done/job$i.proof --param-cache $P > /dev/null 2>&1 && echo ok || echo "job$i INVALID"
done | sort | uniq -c | tee "$OUT/verify.txt"
tail -n 5 "$OUT/run.log"
cat "$OUT/timeline.txt" | head -40
echo "== summary"
echo "bench gpu rc=$bench_rc; bench r1cs-device rc=$r1cs_rc; pipeline rc=$run_rc: $done_n/$N proofs in $wall s (incl. stage start and SRS load)"
grep -E "GPU total|CPU H..B_G1 total|GPU vs CPU|synthesis" "$OUT/bench-gpu.txt"
grep -E "equal synthesis|host: |device: a|host vs device|error" "$OUT/bench-r1cs.txt"
