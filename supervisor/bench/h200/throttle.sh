#!/usr/bin/env bash
# The bottleneck rule against deliberately throttled stage counts on the real pipeline
# (H200, gpu stage on CUDA). Runs there, with stripped release binaries carried in
# .device/cb/bin (made on the dev machine: see docs/bench.md). For each configuration:
# `cuzk run` over fresh directories, a `cuzk-bench batch --timeline` of real 2 KiB C1
# copies, then the supervisor drained; the timeline's verdict is printed.
#   A: synthesis cut to 1 process            -> synthesis should bound throughput
#   B: synthesis 8, host-prep cut to 1 process on 1 thread -> host-prep should bound it
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/cuzk-out}
mkdir -p "$OUT"
B=$PWD/.device/cb/bin
lib=$(dirname "$(find / -name 'libnvrtc.so*' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH="$lib:${LD_LIBRARY_PATH:-}"
export FIL_PROOFS_PARENT_CACHE=/tmp/filecoin-parents
P=/tmp/cuzk-params
JOBS=${JOBS:-6}
t0=$(date +%s)
"$B/cuzk" params generate --sector-size 2KiB --param-cache $P > "$OUT/params.log" 2>&1 || { tail "$OUT/params.log"; exit 1; }
echo "params in $(( $(date +%s) - t0 )) s"

run() { # name, then cuzk run flags
  local name=$1; shift
  local D=/tmp/cuzk-$name
  rm -rf $D; mkdir -p $D
  "$B/cuzk" run --data-dir $D --param-cache $P --trust-params true --sector-size 2KiB "$@" \
    > "$OUT/$name-run.log" 2>&1 &
  local sup=$!
  for _ in $(seq 100); do [ -d $D/incoming ] && break; sleep 0.2; done
  timeout 150 "$B/cuzk-bench" batch --type porep --c1 tests/fixtures/porep-2KiB-a.c1.json \
    --count $JOBS --concurrency 4 --data-dir $D --timeout 140 --timeline \
    > "$OUT/$name-batch.txt" 2>&1
  echo "== $name ($*): batch rc $?"
  kill -TERM $sup; wait $sup
  grep -E "summary:|throughput:|utilisation [ 0-9.]+ %|^bottleneck|^note" "$OUT/$name-batch.txt"
  cp $D/timeline.jsonl "$OUT/$name-timeline.jsonl"
}
case ${ONLY:-AB} in *A*) run A --slots 4 --synthesis-count 1 --host-prep-count 2;; esac
case ${ONLY:-AB} in *B*) run B --slots 8 --synthesis-count 8 --host-prep-count 1 --host-prep-threads 1;; esac
