#!/usr/bin/env bash
# On the development machine (no GPU): compiles the kernel sources of two revisions with
# NVRTC exactly as the prover does (source.rs: the files of SOURCES concatenated in order,
# the same options) and compares the SASS of every kernel of the first revision with the
# second's, instruction for instruction (cuobjdump -sass, encodings included) and its
# resources (registers, stack, shared memory: cuobjdump -res-usage). Each kernel's section
# holds the code of every function it calls, so equal sections mean equal code on the device.
#   kernels/h200/sass-diff.sh [BASE [NEW]]   BASE default HEAD, NEW default the working tree
# Needs the wheels of docs/gpu.md: nvidia-cuda-nvrtc==13.0.88 and a cuobjdump on PATH
# (nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm ==13.2.51, docs/gpu.md "How to run"). Exit 1 if a BASE kernel differs or
# is gone; kernels new in NEW are listed.
set -euo pipefail
cd "$(dirname "$0")/../.."
BASE=${1:-HEAD}
NEW=${2:-}
NV=$(python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13"))')
export LD_LIBRARY_PATH="$NV/lib:${LD_LIBRARY_PATH:-}"
OBJDUMP=$NV/bin/cuobjdump
[ -x "$OBJDUMP" ] || OBJDUMP=$(command -v cuobjdump)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# $1: revision ("" = working tree), $2: output stem.
export_rev() {
  local rev=$1 dir=$2
  mkdir -p "$dir"
  if [ -z "$rev" ]; then
    cp kernels/src/cuda/source.rs kernels/cuda/* "$dir/"
  else
    git show "$rev:kernels/src/cuda/source.rs" > "$dir/source.rs"
    for f in $(git ls-tree --name-only "$rev" kernels/cuda/); do
      git show "$rev:$f" > "$dir/$(basename "$f")"
    done
  fi
}
export_rev "$BASE" "$work/base"
export_rev "$NEW" "$work/new"

python3 - "$work" "$NV" "$OBJDUMP" <<'EOF'
import ctypes, hashlib, os, re, subprocess, sys
work, nv, objdump = sys.argv[1:4]
lib = ctypes.CDLL(os.path.join(nv, "lib", "libnvrtc.so.13"))

def compile_dir(d):
    src_rs = open(os.path.join(d, "source.rs")).read()
    files = re.findall(r'\("([\w.]+)", include_str!', src_rs)
    # The options of source.rs compile_for (kept in step with it by hand).
    opts = re.findall(r'"(--std=c\+\+17|-default-device|-Xptxas=[^"]*)"', src_rs)
    opts = ["--gpu-architecture=sm_90"] + opts
    src = "".join(f"// ---- {f}\n" + open(os.path.join(d, f)).read() + "\n" for f in files)
    prog = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"cuzk.cu", 0, None, None) == 0
    arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    if lib.nvrtcCompileProgram(prog, len(opts), arr) != 0:
        n = ctypes.c_size_t(); lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
        log = ctypes.create_string_buffer(n.value); lib.nvrtcGetProgramLog(prog, log)
        sys.exit(f"{d}: NVRTC failed\n{log.value.decode()}")
    n = ctypes.c_size_t(); lib.nvrtcGetCUBINSize(prog, ctypes.byref(n))
    cub = ctypes.create_string_buffer(n.value); lib.nvrtcGetCUBIN(prog, cub)
    path = os.path.join(d, "cuzk.cubin")
    open(path, "wb").write(cub.raw)
    print(f"{os.path.basename(d)}: {', '.join(files)}; options {' '.join(opts)}")
    return path

def kernels(cubin):
    sass = subprocess.run([objdump, "-sass", cubin], capture_output=True, text=True, check=True).stdout
    res = subprocess.run([objdump, "-res-usage", cubin], capture_output=True, text=True, check=True).stdout
    code, cur = {}, None
    for line in sass.splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            cur = m.group(1); code[cur] = []
        elif cur:
            code[cur].append(line)
    usage, cur = {}, None
    for line in res.splitlines():
        m = re.match(r"\s*Function (\S+):", line)
        if m:
            cur = m.group(1)
        elif cur and "REG:" in line:
            usage[cur] = line.strip()
    return code, usage

(bc, bu), (nc, nu) = (kernels(compile_dir(os.path.join(work, x))) for x in ("base", "new"))
bad = 0
for k in sorted(bc):
    n_inst = sum(1 for l in bc[k] if re.match(r"\s*/\*[0-9a-f]{4,}\*/", l))
    digest = hashlib.sha256("\n".join(bc[k]).encode()).hexdigest()[:16]
    same = bc[k] == nc.get(k) and bu.get(k) == nu.get(k)
    bad += not same
    print(f"{k:24} {'identical' if same else 'DIFFERENT':9} {n_inst:6} instructions  sass sha256 {digest}  {bu.get(k, '')}")
    if not same and k in nc:
        # What the new revision's kernel became, beside the base's line.
        n_new = sum(1 for l in nc[k] if re.match(r"\s*/\*[0-9a-f]{4,}\*/", l))
        print(f"{'  new:':34} {n_new:6} instructions  {'':28}  {nu.get(k, '')}")
for k in sorted(set(nc) - set(bc)):
    print(f"{k:24} {'new':9} {nu.get(k, '')}")
print(f"{len(bc) - bad} of {len(bc)} kernels identical")
sys.exit(1 if bad else 0)
EOF
