#!/usr/bin/env bash
# Runs on the two-GPU H200 machine (nvidia-h200-x2) with the release binaries carried in
# .device/bin (supervisor/h200/build.sh). The same batch of real 2 KiB C1 files goes through
# `cuzk run` three times, same stage counts, only the gpu stage differs:
#   one   — one gpu process (device 0);
#   two   — one gpu process per device (the default: count = GPUs found);
#   kill  — two gpu processes, and one of them is SIGKILLed while proofs are in flight: its
#           slot goes back to the pipeline, the supervisor restarts it, nothing is lost.
# Every proof is checked with `cuzk verify` (verify_seal); the timeline of each run gives the
# GPU busy time per gpu process. Results under $OUT; a short table last.
source "$(dirname "$0")/env.sh"
N=${JOBS:-24}

"$B/cuzk" params generate --sector-size 2KiB --param-cache $P > "$OUT/params.log" 2>&1 || { tail "$OUT/params.log"; exit 1; }

fixture() { [ $(($1 % 2)) -eq 0 ] && echo tests/fixtures/porep-2KiB-b.c1.json || echo tests/fixtures/porep-2KiB-a.c1.json; }

# run NAME GPUS KILL: one batch; prints "NAME gpus wall done valid invalid restarts busy..."
run() {
  local name=$1 gpus=$2 kill=$3 D=/tmp/cuzk-$1
  rm -rf "$D"; mkdir -p "$D/incoming"
  for i in $(seq 1 "$N"); do
    cp "$(fixture "$i")" "$D/incoming/.job$i.tmp" && mv "$D/incoming/.job$i.tmp" "$D/incoming/job$i.json"
  done
  cat > "$D.toml" <<TOML
data_dir = "$D"
param_cache = "$P"
slots = ${SLOTS:-8}
trust_params = true
[stages.synthesis]
count = ${SYNTH:-12}
[stages.host_prep]
count = 4
[stages.gpu]
count = $gpus
[stages.epilogue]
count = 2
TOML
  local t0 t1
  t0=$(date +%s.%N)
  timeout 500 "$B/cuzk" run --config "$D.toml" --exit-when-idle > "$OUT/$name-run.log" 2>&1 &
  local sup=$!
  if [ "$kill" = 1 ]; then
    # Wait for a few proofs, then SIGKILL the gpu process on device 0 while a partition is on it.
    while [ "$(ls "$D"/done/*.proof 2>/dev/null | wc -l)" -lt $((N / 4)) ] && kill -0 $sup 2>/dev/null; do sleep 0.1; done
    local victim
    for p in $(pgrep -x cuzk-gpu); do
      tr '\0' '\n' < /proc/$p/environ | grep -qx CUZK_GPU_DEVICE=0 && victim=$p
    done
    echo "$name: SIGKILL gpu process $victim (device 0) with $(ls "$D"/done/*.proof | wc -l) proofs done" | tee "$OUT/$name-kill.txt"
    kill -9 "$victim"
  fi
  wait $sup; local rc=$?
  t1=$(date +%s.%N)
  "$B/cuzk-bench" timeline "$D/timeline.jsonl" --svg "$OUT/$name-waterfall.svg" > "$OUT/$name-timeline.txt" 2>&1
  local ok=0 bad=0
  for i in $(seq 1 "$N"); do
    if "$B/cuzk" verify --c1 "$(fixture "$i")" --proof "$D/done/job$i.proof" --param-cache $P > /dev/null 2>&1; then ok=$((ok + 1)); else bad=$((bad + 1)); fi
  done
  local restarts
  restarts=$(grep -ci "restart" "$OUT/$name-run.log")
  local busy
  busy=$(grep -E '^  pid [0-9]+:' "$OUT/$name-timeline.txt" | sed -E 's/^  pid ([0-9]+): ([0-9]+) partitions, busy [0-9.]+ ms = ([0-9.]+) %.*/\1:\2p,\3%/' | tr '\n' ' ')
  awk -v n="$name" -v g="$gpus" -v t0="$t0" -v t1="$t1" -v ok=$ok -v bad=$bad -v rc=$rc -v r="$restarts" -v N="$N" \
    'BEGIN { w = t1 - t0; printf "%-5s gpus=%d rc=%d wall=%6.1fs proofs/min=%5.1f valid=%d/%d invalid=%d restart-lines=%s\n", n, g, rc, w, 60 * ok / w, ok, N, bad, r }' \
    | tee -a "$OUT/summary.txt"
  echo "   gpu busy: $busy" | tee -a "$OUT/summary.txt"
}

# A short warm-up first (both devices' first context and kernel load), so neither measured
# run pays a first-start cost the other does not.
N_MEASURED=$N; N=2; run warm 2 0; N=$N_MEASURED
run one 1 0
run two 2 0
run kill 2 1
grep -E '^  pid [0-9]+:' "$OUT/two-timeline.txt"
grep -iE "restart|killed|signal" "$OUT/kill-run.log" | head -8
echo "== summary"
cat "$OUT/summary.txt"
awk '/^one/ {for (i=1;i<=NF;i++) if ($i ~ /^wall=/) {sub("wall=","",$i); sub("s","",$i); a=$i}}
     /^two/ {for (i=1;i<=NF;i++) if ($i ~ /^wall=/) {sub("wall=","",$i); sub("s","",$i); b=$i}}
     END { if (a > 0 && b > 0) printf "two GPUs vs one (same batch, same run): %.2fx\n", a / b }' "$OUT/summary.txt"
