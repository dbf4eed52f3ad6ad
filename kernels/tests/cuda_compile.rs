//! CI checks of the CUDA backend without a GPU: every kernel source compiles through NVRTC
//! for sm_90, a machine without a driver gets an error (not a panic), and the MSM's digit
//! recoding (the CPU model of `msm_digits`) reconstructs every scalar.
//!
//! NVRTC comes from the `nvidia-cuda-nvrtc` wheel (`nvidia/cu13/lib` on LD_LIBRARY_PATH).
//! Without it the compile test is skipped, unless CUZK_REQUIRE_NVRTC=1 (CI), where it fails.

use cuzk_kernels::cuda::msm::Windows;
use cuzk_kernels::cuda::source;
use cuzk_kernels::cuda::{driver_present, GpuError, GpuProver, ResidentBases};
use cuzk_kernels::msm::scalars;

const KERNELS: [&str; 35] = [
    "ntt_pass",
    "ntt_pass_full",
    "ntt_pass_r9",
    "ntt_pass_r9_full",
    "ntt_pass_r9u",
    "ntt_full_table",
    "msm_digits",
    "msm_scan",
    "msm_scatter",
    "msm_scatter_capped",
    "msm_compact",
    "msm_place_overflow",
    "msm_accumulate",
    "msm_accumulate_wide",
    "msm_fixup",
    "msm_bucket_reduce",
    "xyzz_reduce",
    "batch_add",
    // G2 instantiations of the point kernels (B_G2 MSM).
    "msm_accumulate_g2",
    "msm_accumulate_split_g2",
    "msm_fixup_g2",
    "msm_bucket_reduce_g2",
    "xyzz_reduce_g2",
    "batch_add_g2",
    "batch_add_split_g2",
    // The ones over the bases' aligned pair sums, and the pair sums' making (pairs.cu).
    "batch_add_pairs",
    "batch_add_pairs_g2",
    "pair_sums_g1",
    "pair_sums_g2",
    "srs_synthetic",
    "test_fr_mul",
    "test_fp_mul",
    "test_g1_add",
    "test_fp2_mul",
    "test_g2_add",
];

#[test]
fn every_kernel_compiles_with_nvrtc() {
    if !source::nvrtc_present() {
        assert!(
            std::env::var("CUZK_REQUIRE_NVRTC").as_deref() != Ok("1"),
            "CUZK_REQUIRE_NVRTC=1 but libnvrtc cannot be loaded (LD_LIBRARY_PATH?)"
        );
        eprintln!("skipped: libnvrtc not found (set CUZK_REQUIRE_NVRTC=1 to fail instead)");
        return;
    }
    let c = source::compile().unwrap_or_else(|e| panic!("{e}"));
    assert!(c.ptx.contains(".target sm_90"), "PTX is not for sm_90");
    // The CUBIN is what the driver loads: an ELF image whose symbol table names every kernel.
    assert_eq!(&c.cubin[..4], b"\x7fELF", "CUBIN is not an ELF image");
    let has = |name: &str| {
        let needle = format!("{name}\0");
        c.cubin
            .windows(needle.len())
            .any(|w| w == needle.as_bytes())
    };
    for k in KERNELS {
        assert!(
            c.ptx.contains(&format!(".entry {k}(")),
            "kernel {k} missing from the PTX"
        );
        assert!(has(k), "kernel {k} missing from the CUBIN");
    }
    assert!(
        source::compile_for("compute_90").is_err(),
        "a virtual architecture has no CUBIN"
    );
}

#[test]
fn sources_are_embedded_in_layer_order() {
    let p = source::program();
    let pos = |name: &str| p.find(&format!("// ---- {name}")).unwrap();
    assert!(pos("field.cuh") < pos("bls12_381.cuh"));
    assert!(pos("bls12_381.cuh") < pos("fp2.cuh"));
    assert!(pos("fp2.cuh") < pos("ec.cuh"));
    assert!(pos("ec.cuh") < pos("ntt.cu") && pos("ec.cuh") < pos("msm.cu"));
}

#[test]
fn no_driver_is_an_error_not_a_panic() {
    if driver_present() {
        return; // a machine with a GPU: nothing to check here
    }
    let r = GpuProver::new(
        0,
        10,
        16,
        ResidentBases {
            h: &[],
            l: &[],
            a: &[],
            b_g1: &[],
            b_g2: None,
        },
    );
    assert!(matches!(r, Err(GpuError::NoDriver)), "expected NoDriver");
}

/// s = Σ_w d_w·2^{w·c} with |d_w| ≤ 2^{c−1}, for every window width, on 0, 1, r − 1 and
/// pseudo-random scalars.
#[test]
fn signed_digits_reconstruct_every_scalar() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut cases = vec![scalars::ZERO, scalars::ONE, scalars::max_scalar()];
    for _ in 0..200 {
        let mut l = [next(), next(), next(), next()];
        l[3] &= u64::MAX >> 2;
        cases.push(l);
    }
    for c in 4..=20 {
        let w = Windows::for_width(c);
        for s in &cases {
            let d = w.digits(s);
            assert!(
                d.iter().all(|&v| v.abs() <= 1 << (c - 1)),
                "c={c}: digit out of range"
            );
            // Σ d_w 2^{wc} as a signed 320-bit number in 5 u64 limbs (two's complement).
            let mut acc = [0u64; 5];
            for (i, &v) in d.iter().enumerate() {
                let bit = i as u32 * c;
                let mut add = [0u64; 5];
                let mag = v.unsigned_abs();
                let (limb, sh) = ((bit / 64) as usize, bit % 64);
                add[limb] = mag << sh;
                if sh != 0 && limb + 1 < 5 {
                    add[limb + 1] = mag >> (64 - sh);
                }
                if v < 0 {
                    // two's complement negate
                    let mut carry = 1u64;
                    for a in add.iter_mut() {
                        let (s1, c1) = (!*a).overflowing_add(carry);
                        *a = s1;
                        carry = c1 as u64;
                    }
                }
                let mut carry = 0u64;
                for (a, b) in acc.iter_mut().zip(add) {
                    let (s1, c1) = a.overflowing_add(b);
                    let (s2, c2) = s1.overflowing_add(carry);
                    *a = s2;
                    carry = (c1 | c2) as u64;
                }
            }
            assert_eq!(&acc[..4], &s[..], "c={c}: digits do not sum to the scalar");
            assert_eq!(acc[4], 0, "c={c}: high limb");
        }
    }
}
