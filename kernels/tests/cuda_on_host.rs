//! The device's own field and curve code, run on the CPU: the layers of `kernels/cuda/`
//! below the algorithms (field.cuh, bls12_381.cuh, fp2.cuh, ec.cuh) are plain C++ apart from
//! their CUDA qualifiers, so with those defined away a host C++ compiler builds them as they
//! are. A small driver runs what the G2 kernels run (fp2_mul, fp2_sqr, the test_g2_add
//! sequence, the signed madd chain of msm_accumulate, xyzz_mul_small of the bucket
//! reduction) on inputs from blstrs, and the results are compared with blstrs.
//!
//! This checks the CUDA source text of the G2 formulas without a GPU; it does not check
//! what nvcc/ptxas make of it (the device check `cuzk-gpu-check msm-g2` does). Needs a C++
//! compiler (`$CXX`, else `c++`); skipped with a message when there is none.

use std::io::Write as _;
use std::path::Path;
use std::process::Command;

use blstrs::{Fp, Fp2, G2Affine, G2Projective, Scalar as Fr};
use cuzk_kernels::cuda::layout::{bytes_of, Xyzz2};
use cuzk_kernels::cuda::source::SOURCES;
use cuzk_kernels::cuda::synthetic::random_g2_bases;
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::Group;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// CUDA qualifiers and intrinsics the layers use, for a host compiler.
const PRELUDE: &str = r#"
#define __device__
#define __host__
#define __global__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
static inline int __clz(unsigned x) { return x ? __builtin_clz(x) : 32; }
"#;

/// Reads (u32 op, u32 n, data) records from stdin, writes results to stdout, in the
/// device's byte layout (x86 and the GPU are both little-endian).
const DRIVER: &str = r#"
#include <cstdio>
#include <cstdlib>
static void rd(void* p, size_t n) { if (fread(p, 1, n, stdin) != n) { fprintf(stderr, "short read\n"); exit(2); } }
static void wr(const void* p, size_t n) { fwrite(p, 1, n, stdout); }
int main() {
  unsigned op, n;
  while (fread(&op, 4, 1, stdin) == 1) {
    rd(&n, 4);
    if (op == 1) {  // Fp2 pairs -> a·b, a² (test_fp2_mul)
      for (unsigned i = 0; i < n; i++) {
        fp2_t a, b; rd(&a, sizeof a); rd(&b, sizeof b);
        fp2_t m = fp2_mul(a, b), s = fp2_sqr(a);
        wr(&m, sizeof m); wr(&s, sizeof s);
      }
    } else if (op == 2) {  // G2 pairs -> p + q, 2(p + q) + q (test_g2_add)
      for (unsigned i = 0; i < n; i++) {
        g2_affine_t p, q; rd(&p, sizeof p); rd(&q, sizeof q);
        g2_xyzz_t acc; xyzz_set_inf(acc);
        xyzz_add_affine_signed(acc, p, false);
        xyzz_add_affine_signed(acc, q, false);
        wr(&acc, sizeof acc);
        g2_xyzz_t d = acc; xyzz_add(d, acc); xyzz_add_affine_signed(d, q, false);
        wr(&d, sizeof d);
      }
    } else if (op == 3) {  // n (u32 negate, point) -> their signed sum (msm_accumulate's loop)
      g2_xyzz_t acc; xyzz_set_inf(acc);
      for (unsigned i = 0; i < n; i++) {
        unsigned neg; g2_affine_t p; rd(&neg, 4); rd(&p, sizeof p);
        xyzz_add_affine_signed(acc, p, neg != 0);
      }
      wr(&acc, sizeof acc);
    } else if (op == 4) {  // n (u32 k, point) -> k·p by xyzz_mul_small (bucket reduction)
      for (unsigned i = 0; i < n; i++) {
        unsigned k; g2_affine_t p; rd(&k, 4); rd(&p, sizeof p);
        g2_xyzz_t acc; xyzz_set_inf(acc); xyzz_add_affine_signed(acc, p, false);
        xyzz_mul_small(acc, k);
        wr(&acc, sizeof acc);
      }
    } else { fprintf(stderr, "bad op %u\n", op); return 2; }
  }
  return 0;
}
"#;

/// The layers below the algorithms, in the order NVRTC sees them.
const LAYERS: [&str; 4] = ["field.cuh", "bls12_381.cuh", "fp2.cuh", "ec.cuh"];

/// Builds the driver in `dir`; None when no C++ compiler runs.
fn build(dir: &Path) -> Option<std::path::PathBuf> {
    let mut src = String::from(PRELUDE);
    for name in LAYERS {
        let (_, text) = SOURCES
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("{name} not among the kernel sources"));
        src.push_str(&format!("// ---- {name}\n{text}\n"));
    }
    src.push_str(DRIVER);
    let cpp = dir.join("layers.cpp");
    std::fs::write(&cpp, src).unwrap();
    let exe = dir.join("layers");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let out = Command::new(&cxx)
        .args(["-O1", "-std=c++17", "-w", "-o"])
        .arg(&exe)
        .arg(&cpp)
        .output();
    match out {
        Err(e) => {
            eprintln!("skipped: no C++ compiler ({cxx}: {e})");
            None
        }
        Ok(o) if !o.status.success() => panic!(
            "the device layers do not build on the host:\n{}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Ok(_) => Some(exe),
    }
}

fn run(exe: &Path, dir: &Path, input: &[u8]) -> Vec<u8> {
    let path = dir.join("input.bin");
    std::fs::File::create(&path)
        .unwrap()
        .write_all(input)
        .unwrap();
    let out = Command::new(exe)
        .stdin(std::fs::File::open(&path).unwrap())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "driver failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn record(op: u32, n: usize) -> Vec<u8> {
    let mut v = op.to_le_bytes().to_vec();
    v.extend((n as u32).to_le_bytes());
    v
}

fn fp2_at(b: &[u8]) -> Fp2 {
    let limbs = |o: usize| {
        let mut l = [0u64; 6];
        for (i, x) in l.iter_mut().enumerate() {
            *x = u64::from_le_bytes(b[o + 8 * i..o + 8 * i + 8].try_into().unwrap());
        }
        Fp::from_raw_unchecked(l)
    };
    Fp2::new(limbs(0), limbs(48))
}

fn xyzz2_at(b: &[u8]) -> G2Projective {
    let mut x = Xyzz2::default();
    for (i, c) in x.0.iter_mut().flatten().flatten().enumerate() {
        *c = u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap());
    }
    x.to_projective()
}

#[test]
fn g2_layers_built_for_the_host_match_blstrs() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build(dir.path()) else {
        return;
    };
    let mut rng = ChaCha8Rng::seed_from_u64(0x6232);
    let pts = random_g2_bases(600, 12);
    let inf = G2Affine::identity();

    // Fp2 products and squares: random, squares of themselves, 0, 1, −1, ±u.
    let u = Fp2::new(Fp::ZERO, Fp::ONE);
    let mut fa: Vec<Fp2> = (0..2000).map(|_| Fp2::random(&mut rng)).collect();
    let mut fb: Vec<Fp2> = (0..2000).map(|_| Fp2::random(&mut rng)).collect();
    for i in (0..2000).step_by(5) {
        fb[i] = fa[i];
    }
    for (i, v) in [Fp2::ZERO, Fp2::ONE, -Fp2::ONE, u, -u]
        .into_iter()
        .enumerate()
    {
        fa[5 * i + 1] = v;
        fb[5 * i + 2] = v;
        fa[5 * i + 3] = v;
        fb[5 * i + 3] = v;
    }
    let mut input = record(1, fa.len());
    for (a, b) in fa.iter().zip(&fb) {
        input.extend(bytes_of(&[*a, *b]));
    }
    let out = run(&exe, dir.path(), &input);
    assert_eq!(out.len(), fa.len() * 192);
    for (i, (a, b)) in fa.iter().zip(&fb).enumerate() {
        assert_eq!(fp2_at(&out[192 * i..]), *a * b, "fp2_mul, pair {i}");
        assert_eq!(
            fp2_at(&out[192 * i + 96..]),
            a.square(),
            "fp2_sqr, pair {i}"
        );
    }

    // test_g2_add's sequence: random pairs and inf + q, p + inf, p + p, p − p, inf + inf.
    let mut ga: Vec<G2Affine> = pts[..256].to_vec();
    let mut gb: Vec<G2Affine> = pts[256..512].to_vec();
    ga[0] = inf;
    gb[1] = inf;
    gb[2] = ga[2];
    gb[3] = -ga[3];
    ga[4] = inf;
    gb[4] = inf;
    let mut input = record(2, ga.len());
    for (p, q) in ga.iter().zip(&gb) {
        input.extend(bytes_of(&[*p, *q]));
    }
    let out = run(&exe, dir.path(), &input);
    for (i, (p, q)) in ga.iter().zip(&gb).enumerate() {
        let s = G2Projective::from(*p) + q;
        assert_eq!(xyzz2_at(&out[768 * i..]), s, "p + q, pair {i}");
        assert_eq!(
            xyzz2_at(&out[768 * i + 384..]),
            s.double() + q,
            "2(p + q) + q, pair {i}"
        );
    }

    // msm_accumulate's loop: a signed chain with a repeated point (doubling inside madd),
    // a point and its negation (infinity midway), and identities.
    let mut chain: Vec<(bool, G2Affine)> = pts[..300]
        .iter()
        .map(|p| (rng.next_u32() & 1 == 1, *p))
        .collect();
    chain.insert(10, chain[9]);
    chain.insert(20, (!chain[19].0, chain[19].1));
    chain.insert(30, (false, inf));
    // From infinity: p, then −p, then p twice.
    chain.splice(
        0..0,
        [
            (false, pts[7]),
            (true, pts[7]),
            (false, pts[7]),
            (false, pts[7]),
        ],
    );
    let mut input = record(3, chain.len());
    let mut want = G2Projective::identity();
    for &(neg, p) in &chain {
        input.extend((neg as u32).to_le_bytes());
        input.extend(bytes_of(&[p]));
        want += if neg { -p } else { p };
    }
    let out = run(&exe, dir.path(), &input);
    assert_eq!(xyzz2_at(&out), want, "signed madd chain");

    // xyzz_mul_small, as the bucket reduction uses it (k up to 2^19).
    let ks = [0u32, 1, 2, 3, 5, 64, 1000, 65_535, 1 << 19];
    let mut input = record(4, ks.len());
    for (i, &k) in ks.iter().enumerate() {
        input.extend(k.to_le_bytes());
        input.extend(bytes_of(&[pts[i]]));
    }
    let out = run(&exe, dir.path(), &input);
    for (i, &k) in ks.iter().enumerate() {
        assert_eq!(
            xyzz2_at(&out[384 * i..]),
            G2Projective::from(pts[i]) * Fr::from(k as u64),
            "{k}·p"
        );
    }
}
