# Sourced by the supervisor/h200 scripts on the H200 machine (no Rust there): the repo root
# as working directory, $OUT for results, $B for the binaries carried in .device/bin
# (supervisor/h200/build.sh), $P and the parents cache for 2 KiB test parameters made there,
# libnvrtc on the library path (the kernels are compiled by NVRTC when a gpu process starts),
# and the machine's GPUs and cores noted in $OUT/gpu.txt.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT=${OUT:-/tmp/cuzk-out}
mkdir -p "$OUT"
B=${CUZK_BIN:-$PWD/.device/bin}
lib=$(dirname "$(find / -name 'libnvrtc.so*' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH="$lib:${LD_LIBRARY_PATH:-}"
P=/tmp/cuzk-params
export FIL_PROOFS_PARENT_CACHE=/tmp/filecoin-parents

# write_config FILE DATA_DIR: the configuration a script's `cuzk run` takes: $SLOTS slots
# (3) sized for $SECTOR (2KiB), $SYNTH synthesis processes (4) of $SYNTH_THREADS threads
# (one a core if unset), 2 host-prep, 1 epilogue, the parameters trusted (made here).
write_config() {
  cat > "$1" <<TOML
data_dir = "$2"
param_cache = "$P"
slots = ${SLOTS:-3}
sector_size = "${SECTOR:-2KiB}"
trust_params = true
[stages.synthesis]
count = ${SYNTH:-4}
${SYNTH_THREADS:+threads = $SYNTH_THREADS}
[stages.host_prep]
count = 2
[stages.epilogue]
count = 1
TOML
}

# The real 2 KiB fixtures as jobs: jobI.json is fixture a for odd I, b for even I.
fixture_2kib() { [ $(($1 % 2)) -eq 0 ] && echo tests/fixtures/porep-2KiB-b.c1.json || echo tests/fixtures/porep-2KiB-a.c1.json; }
# submit_2kib DIR N: job1..N into DIR/incoming as writers must (temp name, then rename).
submit_2kib() {
  mkdir -p "$1/incoming"
  for i in $(seq 1 "$2"); do
    cp "$(fixture_2kib $i)" "$1/incoming/.job$i.tmp" && mv "$1/incoming/.job$i.tmp" "$1/incoming/job$i.json"
  done
}
# verified_2kib DIR N: how many of DIR/done/job1..N.proof `cuzk verify` accepts.
verified_2kib() {
  local n=0
  for i in $(seq 1 "$2"); do
    "$B/cuzk" verify --c1 "$(fixture_2kib $i)" --proof "$1/done/job$i.proof" --param-cache $P > /dev/null 2>&1 && n=$((n + 1))
  done
  echo $n
}

nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
echo "cpus: $(nproc)" | tee -a "$OUT/gpu.txt"
