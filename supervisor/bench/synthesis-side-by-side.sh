#!/usr/bin/env bash
# Two builds of `cuzk` side by side on synthesis: `cuzk bench synthesis` of each, taking
# turns ROUNDS times in one run (so both see the same machine and load), then each build's
# best one-piece and split times and their ratio (split: the bench's last way, a run of
# challenges per thread as the synthesis stage does it: from the recorded R1CS where the
# build has one). Every run checks its split buffers against its one-piece ones; a build
# that fails stops the script.
#
#   supervisor/bench/synthesis-side-by-side.sh OLD_CUZK NEW_CUZK [C1] [ROUNDS]
set -euo pipefail
old=${1:?old cuzk binary}
new=${2:?new cuzk binary}
c1=${3:-tests/fixtures/porep-8MiB-a.c1.json}
rounds=${4:-2}
declare -A one split
best() { # best KEY VALUE: keep the smaller
    local -n arr=$1
    if [[ -z "${arr[$2]:-}" ]] || awk -v a="$3" -v b="${arr[$2]}" 'BEGIN{exit !(a<b)}'; then
        arr[$2]=$3
    fi
}
echo "$(date -u '+%F %T') UTC, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); C1 $c1, $rounds rounds" >&2
for round in $(seq 1 "$rounds"); do
    for name in old new; do
        bin=$old; [[ $name == new ]] && bin=$new
        out=$("$bin" bench synthesis --c1 "$c1" --runs 3)
        o=$(grep '^| one piece' <<<"$out" | awk -F'|' '{gsub(/ s/,"",$3); print $3+0}')
        s=$(grep '^| a run of challenges' <<<"$out" | tail -1 | awk -F'|' '{gsub(/ s/,"",$3); print $3+0}')
        echo "round $round $name: one piece $o s, split $s s" >&2
        best one "$name" "$o"
        best split "$name" "$s"
    done
done
echo "| build | one piece (best) | split (best) |"
echo "|---|---|---|"
echo "| old ($old) | ${one[old]} s | ${split[old]} s |"
echo "| new ($new) | ${one[new]} s | ${split[new]} s |"
awk -v a="${one[old]}" -v b="${one[new]}" -v c="${split[old]}" -v d="${split[new]}" \
    'BEGIN{printf "| new against old | %.2fx | %.2fx |\n", a/b, c/d}'
