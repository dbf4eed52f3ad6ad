#!/usr/bin/env bash
# Runs on the H200 machine (no Rust there) with the release binaries carried in
# .device/bin (supervisor/h200/build.sh): NonInteractivePoRep through the GPU pipeline.
#  1. 2 KiB test parameters and a random inner-product SRS made there (`cuzk params
#     generate --proof-type <NI>`), then $JOBS (2) NonInteractivePoRep 2 KiB C1 files sealed
#     there by filecoin-proofs (`cuzk fixture seal --proof-type`, seeds 1..JOBS; 13
#     partitions each);
#  2. `cuzk run` with the gpu stage on the GPU: every partition proved on the device, each
#     job's proofs aggregated (SnarkPack) and passed by verify_seal before it is written;
#     then `cuzk verify` of each proof in done/.
# The 126-partition shape of a 32/64 GiB NonInteractivePoRep job is timed by
# `FULL1=1 PARTS=126 bash supervisor/h200/synth-gpus.sh` (synthetic partitions, speed only).
# Results under $OUT; a short table last.
source "$(dirname "$0")/env.sh"
NI=StackedDrg2KiBV1_2_Feat_NonInteractivePoRep
N=${JOBS:-2}

t0=$(date +%s.%N)
"$B/cuzk" params generate --sector-size 2KiB --proof-type $NI --param-cache $P > "$OUT/params.log" 2>&1 || { tail "$OUT/params.log"; exit 1; }
t1=$(date +%s.%N)
echo "params and SRS made in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"

rm -rf /tmp/ni-c1; mkdir -p /tmp/ni-c1
D=/tmp/cuzk-ni
rm -rf $D; mkdir -p $D/incoming
for i in $(seq 1 $N); do
  c1=$("$B/cuzk" fixture seal --sector-size 2KiB --proof-type $NI --seed $i --sector-num $i --out /tmp/ni-c1 2>> "$OUT/seal.log") || { tail "$OUT/seal.log"; exit 1; }
  cp "$c1" $D/incoming/.ni$i.tmp && mv $D/incoming/.ni$i.tmp $D/incoming/ni$i.json
  echo "$c1" > /tmp/ni-c1/job$i
done
write_config /tmp/cuzk-ni.toml $D
t0=$(date +%s.%N)
timeout ${RUN_TIMEOUT:-400} "$B/cuzk" run --config /tmp/cuzk-ni.toml --exit-when-idle > "$OUT/run.log" 2>&1; run_rc=$?
t1=$(date +%s.%N)
wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
done_n=$(ls $D/done/*.proof 2>/dev/null | wc -l)
cp $D/timeline.jsonl "$OUT/" 2>/dev/null
"$B/cuzk-bench" timeline $D/timeline.jsonl > "$OUT/timeline.txt" 2>&1
for i in $(seq 1 $N); do
  "$B/cuzk" verify --c1 "$(cat /tmp/ni-c1/job$i)" --proof $D/done/ni$i.proof --param-cache $P 2>&1 | tail -1
done | tee "$OUT/verify.txt"
ls -l $D/done $D/failed 2>/dev/null | tee "$OUT/done.txt"
grep -c '"GPU_END"' $D/timeline.jsonl > "$OUT/gpu-partitions.txt" 2>/dev/null
head -30 "$OUT/timeline.txt"
echo "== summary"
echo "pipeline rc=$run_rc: $done_n/$N NonInteractivePoRep 2 KiB proofs in $wall s (incl. stage start and SRS load); partitions through the GPU stage: $(cat "$OUT/gpu-partitions.txt")"
grep -E "gpu stage|device|CUDA" "$OUT/run.log" | head -3
echo "cuzk verify: $(grep -c '^valid' "$OUT/verify.txt") of $N valid"
