#!/usr/bin/env bash
# Runs on the H200 machine: check.sh's MODES with nvidia-smi sampling the SM clock, the
# power draw and the clock event reasons every SMI_MS milliseconds (default 20) beside
# them. The floors in docs/perf.md count multiply-adds at the full 1980 MHz; whether the
# chip holds that clock under the MSM's and the NTT's integer load, or lowers it for its
# power cap, decides how far below them a kernel can get. Writes $OUT/smi.csv (samples),
# $OUT/marks.txt (each mode's start and end) and prints a table per mode last:
# samples with the GPU busy, their SM clock (median, 10th percentile, lowest), power
# (median, highest, limit) and the event reasons seen (nvidia-smi's bitmask: 0x4 software
# power cap, 0x8 hardware slowdown, 0x20/0x40 thermal, 0x80 power brake).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/cuzk-out}
mkdir -p "$OUT"
MODES=${MODES:-msm-once ntt scale}
fields="timestamp,utilization.gpu,clocks.sm,clocks.mem,power.draw,power.limit,temperature.gpu"
reasons=""
for f in clocks_event_reasons.active clocks_throttle_reasons.active; do
  if nvidia-smi --query-gpu="$f" --format=csv,noheader > /dev/null 2>&1; then
    reasons=",$f"
    break
  fi
done
echo "sampling: $fields$reasons every ${SMI_MS:-20} ms"
nvidia-smi -q -d POWER,CLOCK > "$OUT/smi-before.txt" 2>&1
nvidia-smi --query-gpu="$fields$reasons" --format=csv,noheader,nounits -lms "${SMI_MS:-20}" > "$OUT/smi.csv" &
smi=$!
sleep 1
: > "$OUT/marks.txt"
rc=0
for mode in $MODES; do
  echo "$mode start $(date '+%Y/%m/%d %H:%M:%S.%3N')" >> "$OUT/marks.txt"
  MODES=$mode OUT=$OUT/$mode bash kernels/h200/check.sh > "$OUT/$mode.txt" 2>&1 || rc=1
  echo "$mode end $(date '+%Y/%m/%d %H:%M:%S.%3N')" >> "$OUT/marks.txt"
  tail -n 25 "$OUT/$mode.txt"
done
sleep 1
kill "$smi"
wait "$smi" 2> /dev/null
python3 - "$OUT/smi.csv" "$OUT/marks.txt" << 'EOF'
import sys, datetime as dt, statistics as st

def t(s):
    return dt.datetime.strptime(s.strip(), "%Y/%m/%d %H:%M:%S.%f")

rows = []
for line in open(sys.argv[1]):
    f = [x.strip() for x in line.split(",")]
    try:
        rows.append((t(f[0]), float(f[1]), float(f[2]), float(f[3]), float(f[4]), float(f[5]), float(f[6]),
                     f[7] if len(f) > 7 else "?"))
    except (ValueError, IndexError):
        pass
marks = {}
for line in open(sys.argv[2]):
    mode, what, day, time = line.split()
    marks.setdefault(mode, {})[what] = t(day + " " + time)
print(f"{'mode':10} {'busy samples':>12} {'SM MHz p50':>10} {'p10':>6} {'min':>6} {'W p50':>7} {'W max':>7} {'limit':>6} {'temp max':>8}  reasons (count)")
for mode, m in marks.items():
    busy = [r for r in rows if m["start"] <= r[0] <= m.get("end", r[0]) and r[1] >= 90]
    if not busy:
        print(f"{mode:10} {0:>12}")
        continue
    clk = sorted(r[2] for r in busy)
    pw = [r[4] for r in busy]
    why = {}
    for r in busy:
        why[r[7]] = why.get(r[7], 0) + 1
    print(f"{mode:10} {len(busy):>12} {st.median(clk):>10.0f} {clk[len(clk) // 10]:>6.0f} {clk[0]:>6.0f} "
          f"{st.median(pw):>7.0f} {max(pw):>7.0f} {busy[0][5]:>6.0f} {max(r[6] for r in busy):>8.0f}  "
          + ", ".join(f"{k} ({v})" for k, v in sorted(why.items(), key=lambda kv: -kv[1])))
EOF
exit $rc
