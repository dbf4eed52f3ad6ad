#!/usr/bin/env bash
# On the H200 machine: builds of the kernels side by side in one device call, each a
# process of its own, alternating (a b a b ...), then one table: each row's best time a
# variant and the first variant's time over it (cuzk-bench variants).
#   VARIANTS="base new" MODES="msm-once scale" ROUNDS=2 bash kernels/h200/side-by-side.sh
# VARIANTS: names of .device-v/<name> folders (kernels/h200/variant.sh made them; carry
# .device-v); the first is the one the others are compared to. MODES: cuzk-gpu-check modes
# as kernels/h200/check.sh runs them (default "msm-once scale"; msm-once takes MSM_MAX,
# default 27 here); other variables pass through (CUZK_SCALE_STREAM=0, CUZK_SCALE_KERNELS=0,
# CUZK_MSM_PROFILE, ...). CHECK: variants to run `correctness` on first (MSM_MAX=22).
# ONLY: rows of the table to keep (a |-separated list of label texts; default all).
# Logs under $OUT/<mode>-<variant>-<round>/; exit status 1 if a check failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/cuzk-out}
VARIANTS=${VARIANTS:?name the variants, e.g. VARIANTS="base new"}
MODES=${MODES:-msm-once scale}
ROUNDS=${ROUNDS:-2}
export MSM_MAX=${MSM_MAX:-27}
mkdir -p "$OUT"
args=()
rc=0
for v in ${CHECK:-}; do
  DEV=.device-v/$v MODES=correctness MSM_MAX=22 OUT=$OUT/correctness-$v \
    bash kernels/h200/check.sh > "$OUT/correctness-$v.txt" 2>&1 || rc=1
  args+=("$v=$OUT/correctness-$v/correctness.log")
done
for r in $(seq 1 "$ROUNDS"); do
  for mode in $MODES; do
    for v in $VARIANTS; do
      dir=$OUT/$mode-$v-$r
      DEV=.device-v/$v MODES=$mode OUT=$dir bash kernels/h200/check.sh > "$dir.txt" 2>&1 || rc=1
      args+=("$v=$dir/$mode.log")
    done
  done
done
only=()
IFS='|' read -ra keep <<< "${ONLY:-}"
for o in "${keep[@]}"; do only+=(--only "$o"); done
.device-v/cuzk-bench variants "${args[@]}" "${only[@]}" | tee "$OUT/side-by-side.txt" || rc=1
exit $rc
