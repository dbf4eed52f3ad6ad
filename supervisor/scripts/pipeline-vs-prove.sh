#!/usr/bin/env bash
# Benchmark: N real C1 files proved back to back by `cuzk prove` (one process, one proof
# at a time) against the same N files through the pipeline (`cuzk run`, stage processes
# overlapping), same machine, same run, same parameters; prints both and the ratio.
# Usage: supervisor/scripts/pipeline-vs-prove.sh [N] [param-cache]   (after cargo build --release -p cuzk-supervisor)
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-3}
P=${2:-/var/tmp/cuzk-test-params}
B=target/release
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
c1() { if [ $(( $1 % 2 )) -eq 1 ]; then echo tests/fixtures/porep-2KiB-a.c1.json; else echo tests/fixtures/porep-2KiB-b.c1.json; fi; }
now() { date +%s.%N; }

echo "== $N x cuzk prove, back to back"
t0=$(now)
for i in $(seq 1 "$N"); do
  "$B/cuzk" prove --c1 "$(c1 "$i")" --out "$work/prove-$i.proof" --param-cache "$P" --trust-params > /dev/null
done
t1=$(now)
prove_s=$(awk "BEGIN{printf \"%.1f\", $t1 - $t0}")
echo "   $prove_s s"

echo "== $N jobs through cuzk run (2 slots, one process per stage; arena and SRS segment in /dev/shm)"
mkdir -p "$work/data/incoming"
for i in $(seq 1 "$N"); do cp "$(c1 "$i")" "$work/data/incoming/.j$i" && mv "$work/data/incoming/.j$i" "$work/data/incoming/job$i.json"; done
t0=$(now)
"$B/cuzk" run --data-dir "$work/data" --param-cache "$P" --trust-params true --slots 2 \
  --exit-when-idle 2> "$work/run.log"
t1=$(now)
run_s=$(awk "BEGIN{printf \"%.1f\", $t1 - $t0}")
done_n=$(ls "$work/data/done/"*.proof | wc -l)
echo "   $run_s s ($done_n proofs, each verified before it was written)"
[ "$done_n" -eq "$N" ] || { tail -20 "$work/run.log"; exit 1; }
cp "$work/data/timeline.jsonl" /tmp/pipeline-vs-prove.timeline.jsonl
awk "BEGIN{printf \"back-to-back vs pipeline: %.1f s/proof vs %.1f s/proof -> pipeline %.2fx\\n\", $prove_s / $N, $run_s / $N, $prove_s / $run_s}"
