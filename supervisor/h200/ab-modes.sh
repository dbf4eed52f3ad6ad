#!/usr/bin/env bash
# Runs on the GPU machine (no Rust there) with the release binaries carried in .device/bin
# (supervisor/h200/build.sh): who makes a = A·z and b = B·z, measured where synthesis bounds
# the prover. Random test parameters for $SECTOR are made there, then the same batch of
# real C1 files ($C1, copied $JOBS times) goes through `cuzk run` with the gpu stage on the
# GPU, taking turns: CUZK_SYNTHESIS_AB=synthesis (synthesis writes a and b into the slot)
# and =prover (the default: the slots sized without them, the gpu process makes them from
# the recorded R1CS), $ROUNDS rounds. MODES picks the ways and their order ("synthesis
# prover" unless set); a way written MODE@DIR runs with the binaries in DIR instead of
# $B (the same way before and after a change; the ratio printed is last over first), same slots, same processes. Every proof is checked
# by `cuzk verify`. The rate compared is the timeline's steady one (proofs after the first
# over the time between the first and the last done), which leaves out each run's start.
# Results under $OUT; a short table last.
source "$(dirname "$0")/env.sh"

SECTOR=${SECTOR:-8MiB}
C1=${C1:-tests/fixtures/porep-8MiB-a.c1.json}
SLOTS=${SLOTS:-6}
SYNTH_THREADS=${SYNTH_THREADS:-4}
N=${JOBS:-16}
t0=$(date +%s.%N)
"$B/cuzk" params generate --sector-size "$SECTOR" --param-cache $P > "$OUT/params.log" 2>&1 || { tail "$OUT/params.log"; exit 1; }
t1=$(date +%s.%N)
echo "$SECTOR parameters generated in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"

one_run() { # $1: who makes a and b (MODE or MODE@DIR), $2: round
  local mode=${1%%@*} label=$1 bin=$B
  if [[ $1 == *@* ]]; then bin=${1#*@}; label=$mode-$(basename "$bin"); fi
  local tag=$label-$2 D=/tmp/cuzk-data-$label-$2
  rm -rf $D; mkdir -p $D/incoming
  for i in $(seq 1 $N); do
    cp "$C1" $D/incoming/.job$i.tmp && mv $D/incoming/.job$i.tmp $D/incoming/job$i.json
  done
  write_config /tmp/cuzk-$tag.toml $D
  local s0 s1
  s0=$(date +%s.%N)
  CUZK_SYNTHESIS_AB=$mode timeout 400 "$bin/cuzk" run --config /tmp/cuzk-$tag.toml --exit-when-idle \
    > "$OUT/run-$tag.log" 2>&1
  local rc=$?
  s1=$(date +%s.%N)
  "$B/cuzk-bench" timeline $D/timeline.jsonl --svg "$OUT/waterfall-$tag.svg" > "$OUT/timeline-$tag.txt" 2>&1
  local ok=0 bad=0
  for i in $(seq 1 $N); do
    if "$B/cuzk" verify --c1 "$C1" --proof $D/done/job$i.proof --param-cache $P > /dev/null 2>&1; then
      ok=$((ok + 1)); else bad=$((bad + 1)); fi
  done
  local steady
  steady=$(grep -m1 "^throughput" "$OUT/timeline-$tag.txt")
  printf "%-9s round %s: rc=%s, verified %s/%s (bad %s), wall %.1f s | %s\n" "$label" "$2" "$rc" "$ok" "$N" "$bad" \
    "$(awk -v a="$s0" -v b="$s1" 'BEGIN { print b - a }')" "$steady" | tee -a "$OUT/summary.txt"
  grep -m1 "^  gpu " "$OUT/timeline-$tag.txt" | sed 's/^/    gpu ms (count p50 p90 p99 max mean):/' | tee -a "$OUT/summary.txt"
  grep -h "slot(s) sized\|R1CS of /\|readied\|rror\|failed" "$OUT/run-$tag.log" | grep -v "proofs/min" | head -4 | cut -c1-300
}

for r in $(seq 1 ${ROUNDS:-2}); do
  for m in ${MODES:-synthesis prover}; do one_run $m $r; done
done
# The same C1 through `cuzk bench gpu --ab prover`: the GPU's sums against the CPU device's,
# bit-exact proofs with the same r, s, verify_seal (skipped when the runs took too long).
if [ $(( $(date +%s) - ${t1%.*} )) -lt ${BENCH_BEFORE_S:-330} ]; then
  timeout 150 "$B/cuzk" bench gpu --c1 "$C1" --param-cache $P --runs 2 --ab prover > "$OUT/bench-gpu.txt" 2>&1
  echo "bench gpu --ab prover rc=$?" | tee -a "$OUT/summary.txt"
  grep -E "equal|bit-exact|verify_seal|GPU total|r1cs" "$OUT/bench-gpu.txt" | head -8 | tee -a "$OUT/summary.txt"
fi
echo "== stage loads, last round of each"
for m in ${MODES:-synthesis prover}; do
  l=${m%%@*}; [[ $m == *@* ]] && l=$l-$(basename "${m#*@}")
  echo "-- $l"; grep -A8 "stage loads" "$OUT/timeline-$l-${ROUNDS:-2}.txt" | head -9
done
echo "== summary ($SECTOR, $N jobs a run, slots $SLOTS, synthesis ${SYNTH:-4} x $SYNTH_THREADS threads)"
cat "$OUT/summary.txt"
# The ratios: each way's mean rates over its rounds (steady, and over the whole span, which
# counts each run's start) and its mean wait for the first proof, the last way's over the first's.
awk '/ round / { w = $1; if (!(w in n)) order[k++] = w; n[w]++
    for (i = 1; i <= NF; i++) {
      if ($i == "steady") st[w] += $(i + 1)
      if ($i == "throughput:") sp[w] += $(i + 1)
      if ($i == "proof" && $(i + 1) == "at") { fp[w] += $(i + 2); fpn[w]++ }
    } }
  END { for (j = 0; j < k; j++) { w = order[j]
      printf "%s: mean of %d rounds: steady %s, span %.2f proofs/min, first proof at %s s\n", w, n[w], \
        st[w] ? sprintf("%.1f", st[w] / n[w]) : "-", sp[w] / n[w], fpn[w] ? sprintf("%.2f", fp[w] / fpn[w]) : "-" }
    if (k > 1) { f = order[0]; l = order[k - 1]
      printf "%s / %s: steady %s, span %.2fx\n", l, f, \
        st[f] && st[l] ? sprintf("%.2fx", (st[l] / n[l]) / (st[f] / n[f])) : "-", (sp[l] / n[l]) / (sp[f] / n[f]) } }' \
  "$OUT/summary.txt" | tee -a "$OUT/summary.txt"
