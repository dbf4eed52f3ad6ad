#!/usr/bin/env bash
# Checks the systemd files the way systemd reads them, without installing anything:
#   1. `systemd-analyze verify` on cuzk.service, with ExecStart pointing at a built `cuzk`
#      (verify needs the binary to exist);
#   2. cuzk.sysusers.conf and cuzk.tmpfiles.conf applied to an empty root in a temp
#      directory: the user is created and the directories get their owner and modes;
#   3. cuzk.logrotate run on a timeline in a temp directory: copied and truncated in place.
# Usage: systemd/verify.sh [path/to/cuzk]   (default: the release cuzk in the target directory, built if missing)
set -euo pipefail
cd "$(dirname "$0")/.."

command -v systemd-analyze >/dev/null || { echo "systemd-analyze not found (apt-get install systemd)"; exit 1; }
# The build's target directory (CARGO_TARGET_DIR or the workspace's target/).
target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
cuzk="${1:-$target_dir/release/cuzk}"
if [[ ! -x "$cuzk" ]]; then
    cargo build --release --bin cuzk
fi
cuzk="$(realpath "$cuzk")"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "== systemd-analyze verify cuzk.service (ExecStart=$cuzk)"
sed "s|/usr/local/bin/cuzk|$cuzk|" systemd/cuzk.service >"$tmp/cuzk.service"
# verify prints problems but exits 0 for some of them: any output is a failure.
out="$(systemd-analyze verify "$tmp/cuzk.service" 2>&1)" || { echo "$out"; exit 1; }
[[ -z "$out" ]] || { echo "$out"; exit 1; }

echo "== sysusers + tmpfiles into an empty root"
root="$tmp/root"
mkdir -p "$root/etc" "$root/usr/lib/sysusers.d" "$root/usr/lib/tmpfiles.d"
cp systemd/cuzk.sysusers.conf "$root/usr/lib/sysusers.d/cuzk.conf"
cp systemd/cuzk.tmpfiles.conf "$root/usr/lib/tmpfiles.d/cuzk.conf"
systemd-sysusers --root="$root" cuzk.conf
systemd-tmpfiles --create --root="$root" cuzk.conf
uid="$(awk -F: '$1 == "cuzk" { print $3 }' "$root/etc/passwd")"
[[ -n "$uid" ]] || { echo "sysusers did not create the cuzk user"; exit 1; }
for dir in incoming working done failed; do
    path="$root/var/lib/cuzk/$dir"
    [[ -d "$path" && "$(stat -c %u "$path")" == "$uid" ]] || { echo "$path: missing or not owned by cuzk"; exit 1; }
done
[[ -d "$root/var/cache/filecoin-proof-parameters" ]] || { echo "parameter cache not created"; exit 1; }

echo "== logrotate: cuzk.logrotate rotates the timeline in place (copytruncate)"
command -v logrotate >/dev/null || { echo "logrotate not found (apt-get install logrotate)"; exit 1; }
mkdir -p "$tmp/lr"
sed "s|/var/lib/cuzk/|$tmp/lr/|; s|^    su cuzk cuzk|    su $(id -un) $(id -gn)|" systemd/cuzk.logrotate >"$tmp/lr.conf"
printf '{"event":"JOB_CLAIMED"}\n' >"$tmp/lr/timeline.jsonl"
logrotate --force --state "$tmp/lr.state" "$tmp/lr.conf"
[[ -s "$tmp/lr/timeline.jsonl.1" && -f "$tmp/lr/timeline.jsonl" && ! -s "$tmp/lr/timeline.jsonl" ]] ||
    { echo "logrotate did not copy and truncate the timeline"; ls -la "$tmp/lr"; exit 1; }

echo "systemd files OK"
