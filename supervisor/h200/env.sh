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

nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
echo "cpus: $(nproc)" | tee -a "$OUT/gpu.txt"
