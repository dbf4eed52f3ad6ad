#!/usr/bin/env bash
# On the H200 machine (binaries from supervisor/h200/build.sh in .device/bin): H in
# Lagrange form with its bases kept on disk. `cuzk bench gpu` on the real 2 KiB C1 three
# times with one cache directory: the first makes LC and LD' on the device and writes the
# file, the second reads it, the third finds it damaged (a byte flipped) and makes it again.
# Each run's sums must equal the CPU device's and its proof pass verify_seal (the bench
# fails otherwise). Results under $OUT; a short table last.
source "$(dirname "$0")/env.sh"
"$B/cuzk" params generate --sector-size 2KiB --param-cache $P > "$OUT/params.log" 2>&1 || { tail "$OUT/params.log"; exit 1; }
C=/tmp/cuzk-lagrange-cache
rm -rf $C
rc=0
: > "$OUT/lagrange-cache.txt"
for run in make read damaged; do
  if [ $run = damaged ]; then
    f=$(ls $C/lagrange-*.bin) && printf '\xff' | dd of="$f" bs=1 seek=4096 conv=notrunc status=none
  fi
  t0=$(date +%s.%N)
  CUZK_GPU_H_FORM=lagrange CUZK_GPU_LAGRANGE_CACHE=$C "$B/cuzk" bench gpu \
    --c1 tests/fixtures/porep-2KiB-a.c1.json --param-cache $P --runs 1 > "$OUT/bench-$run.txt" 2>&1
  run_rc=$?
  [ $run_rc -eq 0 ] || rc=1
  t1=$(date +%s.%N)
  echo "$run: rc=$run_rc $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s; $(grep -h 'Lagrange form\|kept in' "$OUT/bench-$run.txt" | tr '\n' ' ')" >> "$OUT/lagrange-cache.txt"
done
ls -l $C >> "$OUT/lagrange-cache.txt"
cat "$OUT/lagrange-cache.txt"
grep -h "bit-exact\|verify_seal" "$OUT"/bench-*.txt
exit $rc
