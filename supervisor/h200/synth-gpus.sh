#!/usr/bin/env bash
# Runs on the two-GPU H200 machine (nvidia-h200-x2) with the release binaries carried in
# .device/bin (supervisor/h200/build.sh): synthetic 32 GiB-shaped partitions through the
# real stage processes (`cuzk-bench synth`), same stage counts, only the gpu count differs:
#   gpu1 / gpu2 — GPU stage isolated (--skip-b-g2: host-prep leaves out the CPU B_G2 MSM),
#                 1 device then 2, the same RATIO_JOBS (2) x PARTS (10) partitions: how the
#                 GPU stage scales (RATIO_ONLY=1 stops after these two);
#   kill        — 2 devices, one gpu process SIGKILLed after 3 partitions: its partition goes
#                 back to the pipeline, the process restarts, every job completes;
#   full2       — the whole pipeline with B_G2 on the host CPUs, 2 devices: what bounds it.
# With B_G2_COMPARE=1 only the whole pipeline runs, twice on ${GPUS:-2} device(s), the same
# partitions, only the B_G2 placement differs: full-cpu (--b-g2-msm host_prep: host-prep's
# CPU threads) then full-gpu (--b-g2-msm gpu: the gpu stage, bases resident on the device).
# With AHEAD_COMPARE=1 only the whole pipeline runs (B_G2 on the GPU), twice on ${GPUS:-1}
# device(s), the same partitions, only the gpu stage's upload ahead differs: serial
# (CUZK_GPU_UPLOAD_AHEAD=false: each partition uploads its own a) then ahead (the default:
# the next slot's a uploads under the current partition's compute).
# With FULL1=1 only the whole pipeline runs, once, on ${GPUS:-1} device(s), B_G2 on the GPU,
# every default (upload ahead on), with the gpu process's set-up lines (arena page-locking).
# Results under $OUT; a short table last.
source "$(dirname "$0")/env.sh"
# The arena (6 slots x 20.2 GB) and the synthetic SRS (47 GB) do not fit /dev/shm's default
# half of RAM: a tmpfs of our own.
SHM=/mnt/cuzk-shm
mkdir -p $SHM && mount -t tmpfs -o size=${SHM_GB:-230}g tmpfs $SHM || { echo "tmpfs mount failed"; exit 1; }
STAGES=(--slots ${SLOTS:-6} --arena-dir $SHM --keep-synthetic-srs
  --synthesis-count ${SYNTH:-3} --synthesis-threads ${SYNTH_THREADS:-4}
  --host-prep-count ${PREP:-3} --host-prep-threads ${PREP_THREADS:-6} --epilogue-count 1)

# run NAME GPUS JOBS BENCH-FLAGS...: one synth run ($RUN_ARGS added to `cuzk run`'s flags);
# its JSON summary to $OUT/NAME.json.
run() {
  local name=$1 gpus=$2 jobs=$3; shift 3
  local D=/tmp/synth-$name
  rm -rf $D
  "$B/cuzk-bench" synth --shape ${SHAPE:-32GiB} --jobs "$jobs" --partitions ${PARTS:-10} \
    --data-dir $D --json --timeout ${RUN_TIMEOUT:-200} "$@" -- "${STAGES[@]}" --gpu-count "$gpus" ${RUN_ARGS:-} \
    > "$OUT/$name.json" 2> "$OUT/$name.err"
  local rc=$?
  cp $D/synth-*.run.log "$OUT/$name-run.log" 2>/dev/null
  python3 - "$OUT/$name.json" "$name" "$rc" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
path, name, rc = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    v = json.load(open(path))
except Exception as e:
    print(f"{name:6} rc={rc} no summary ({e})"); sys.exit()
s = v["synth"]
busy = " ".join(f"{g['pid']}:{g['partitions']}p,{100*g['busy_fraction']:.0f}%" for g in v["gpus"])
steps = {f"{x['event']} {x['step']}": x["durations"]["mean_ms"] for x in v["steps"] if x.get("durations")}
b_g2 = steps.get("PREP_END msm_b_g2") or steps.get("GPU_END msm_b_g2")
where = "prep" if steps.get("PREP_END msm_b_g2") else "gpu" if b_g2 else "" 
print(f"{name:6} gpus={s['gpu_processes']} rc={rc} jobs {s['jobs_done']}/{s['jobs']} partitions={s['partitions_proved']} "
      f"wall={s['wall_s']:.1f}s steady={s['steady_s_per_partition'] or 0:.3f}s/partition gpu-p50={s['gpu_p50_ms'] or 0:.0f}ms "
      f"b_g2-mean={'%.0fms' % b_g2 if b_g2 else '-'}{'(' + where + ')' if b_g2 else ''} bottleneck: {v['bottleneck'].get('stage', v['bottleneck'])}")
loads = " ".join(f"{l['stage']}:{100*l['utilisation_without_startup']:.0f}%" for l in v["bottleneck"]["loads"])
per = " ".join(f"{pid}:{t:.3f}s" for pid, t in s["steady_per_gpu_process"])
print(f"       gpu busy: {busy}; steady per gpu process: {per}; utilisation: {loads}")
PY
}

# ratio A B LABEL: steady s/partition and wall of run A against run B (same run of the script).
ratio() {
  python3 - "$OUT/$1.json" "$OUT/$2.json" "$3" <<'PY'
import json, sys
try:
    a, b = (json.load(open(p))["synth"] for p in sys.argv[1:3])
    print(f"{sys.argv[3]}, in the same run: "
          f"steady {a['steady_s_per_partition']:.3f} vs {b['steady_s_per_partition']:.3f} s/partition = "
          f"{a['steady_s_per_partition'] / b['steady_s_per_partition']:.2f}x; wall {a['wall_s']:.1f} vs {b['wall_s']:.1f} s = {a['wall_s'] / b['wall_s']:.2f}x")
except Exception as e:
    print("no ratio:", e)
PY
}

if [ -n "${FULL1:-}" ]; then
  RUN_ARGS="--b-g2-msm gpu" run full ${GPUS:-1} 1
  rm -f $SHM/*; umount $SHM
  python3 -c 'import json, sys
for x in json.load(open(sys.argv[1]))["steps"]:
    if x["step"].startswith("setup_"): print("gpu process set-up %s: %.0f ms" % (x["step"], x["durations"]["max_ms"]))' "$OUT/full.json" | tee -a "$OUT/summary.txt"
  echo "== summary"
  cat "$OUT/summary.txt"
  exit 0
fi

if [ -n "${AHEAD_COMPARE:-}" ]; then
  CUZK_GPU_UPLOAD_AHEAD=false RUN_ARGS="--b-g2-msm gpu" run serial ${GPUS:-1} 1
  CUZK_GPU_UPLOAD_AHEAD=true RUN_ARGS="--b-g2-msm gpu" run ahead ${GPUS:-1} 1
  rm -f $SHM/*; umount $SHM
  grep -ho '"upload_ahead":[0-9.]*' /tmp/synth-ahead/synth-*.timeline.jsonl 2>/dev/null | head -3
  echo "== summary"
  cat "$OUT/summary.txt"
  ratio serial ahead "whole pipeline, each partition uploading its own a vs the next a uploaded ahead, same partitions"
  exit 0
fi

if [ -n "${B_G2_COMPARE:-}" ]; then
  RUN_ARGS="--b-g2-msm host_prep" run full-cpu ${GPUS:-2} 1
  RUN_ARGS="--b-g2-msm gpu" run full-gpu ${GPUS:-2} 1
  rm -f $SHM/*; umount $SHM
  echo "== summary"
  cat "$OUT/summary.txt"
  ratio full-cpu full-gpu "whole pipeline, B_G2 in host-prep vs in the gpu stage, same partitions"
  exit 0
fi

run gpu1 1 ${RATIO_JOBS:-2} --skip-b-g2
run gpu2 2 ${RATIO_JOBS:-2} --skip-b-g2
[ -n "${RATIO_ONLY:-}" ] && { rm -f $SHM/*; umount $SHM; cat "$OUT/summary.txt"; exit 0; }

# kill: SIGKILL the device-0 gpu process once 3 partitions are through the gpu stage.
(
  for _ in $(seq 1 600); do
    n=$(cat /tmp/synth-kill/synth-*.timeline.jsonl 2>/dev/null | grep -c '"GPU_END"')
    [ "${n:-0}" -ge 3 ] && break
    sleep 0.2
  done
  for p in $(pgrep -x cuzk-gpu); do
    tr '\0' '\n' < /proc/$p/environ | grep -qx CUZK_GPU_DEVICE=0 && victim=$p
  done
  echo "kill: SIGKILL gpu process ${victim:-none} (device 0) after $n partitions" | tee "$OUT/kill.txt"
  [ -n "${victim:-}" ] && kill -9 "$victim"
) &
run kill 2 1 --skip-b-g2
wait
grep -E "exited|restart" "$OUT/kill-run.log" | head -4 | tee -a "$OUT/summary.txt"

RUN_ARGS="--b-g2-msm host_prep" run full2 2 1

rm -f $SHM/*; umount $SHM
echo "== summary"
cat "$OUT/summary.txt"
ratio gpu1 gpu2 "two GPUs vs one, GPU stage isolated, same ${RATIO_JOBS:-2} x ${PARTS:-10} partitions"
