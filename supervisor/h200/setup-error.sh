#!/usr/bin/env bash
# Runs on the H200 machine with the binaries of supervisor/h200/build.sh: a gpu stage whose
# device cannot be set up (here: CUZK_KERNELS_CUBIN naming a file that is not there, as a
# wrong path in a unit file would) must fail no job. It exits and is restarted after
# back-off while the jobs wait in working/; once the set-up is right again (the supervisor
# started without the bad setting, as after an operator's fix), the same jobs are proved
# and verified.
#  1. `cuzk run` with the bad setting for ${BAD_S:-45} s, two real 2 KiB jobs: nothing may
#     reach failed/ or done/, the log must say why and show the gpu restarted;
#  2. the supervisor killed (its stages die with it), then `cuzk run --exit-when-idle`
#     without the setting: both proofs written and accepted by `cuzk verify`.
# Results under $OUT; a short table last.
source "$(dirname "$0")/env.sh"

"$B/cuzk" params generate --sector-size 2KiB --param-cache $P > "$OUT/params.log" 2>&1 || { tail "$OUT/params.log"; exit 1; }
D=/tmp/cuzk-data
rm -rf $D
submit_2kib $D 2
SLOTS=2 SYNTH=1 write_config /tmp/cuzk.toml $D

CUZK_KERNELS_CUBIN=/nonexistent/cuzk.cubin "$B/cuzk" run --config /tmp/cuzk.toml > "$OUT/bad.log" 2>&1 &
sup=$!
sleep "${BAD_S:-45}"
failed_bad=$(ls $D/failed/*.reason 2>/dev/null | wc -l)
done_bad=$(ls $D/done/*.proof 2>/dev/null | wc -l)
working_bad=$(ls $D/working/*.json 2>/dev/null | wc -l)
kill -KILL $sup; wait $sup 2>/dev/null
sleep 2
said=$(grep -c "the device cannot be set up, its jobs wait" "$OUT/bad.log")
restarts=$(grep -c "cuzk: gpu #.*restart scheduled" "$OUT/bad.log")

timeout 300 "$B/cuzk" run --config /tmp/cuzk.toml --exit-when-idle > "$OUT/good.log" 2>&1; good_rc=$?
verified=$(verified_2kib $D 2)
failed_end=$(ls $D/failed/*.reason 2>/dev/null | wc -l)

grep -m 3 "cannot be set up\|restart scheduled" "$OUT/bad.log"
tail -n 4 "$OUT/good.log"
echo "== summary"
echo "bad set-up, after ${BAD_S:-45} s: failed $failed_bad, done $done_bad, in working $working_bad (want 0, 0, 2); 'cannot be set up' said $said times, gpu restarts scheduled $restarts (want >= 1 each)"
echo "set-up right again: cuzk run rc=$good_rc, proofs verified $verified/2, failed $failed_end (want 0, 2, 0)"
[ "$failed_bad" -eq 0 ] && [ "$done_bad" -eq 0 ] && [ "$working_bad" -eq 2 ] && [ "$said" -ge 1 ] \
  && [ "$restarts" -ge 1 ] && [ "$good_rc" -eq 0 ] && [ "$verified" -eq 2 ] && [ "$failed_end" -eq 0 ] \
  && echo "PASS" || { echo "FAIL"; exit 1; }
