#!/usr/bin/env bash
# On the development machine: the release binaries supervisor/h200/pipeline.sh runs on the
# H200, into .device/bin (git-ignored; pass carry: [".device"] to the device tool).
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release -p cuzk-supervisor -p cuzk-bench -p cuzk-kernels --bins
mkdir -p .device/bin
for b in cuzk cuzk-synthesis cuzk-host-prep cuzk-gpu cuzk-epilogue cuzk-bench cuzk-gpu-check; do
  cp target/release/$b .device/bin/
done
# Stripped: the device tool carries at most 64 MiB (about 45 MB for the seven).
strip -s .device/bin/*
du -sh .device
