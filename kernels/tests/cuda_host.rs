//! CPU tests of the CUDA backend's host side (no GPU needed): the device representations
//! (XYZZ back to blstrs), the Horner combination of window sums, the bucket reduction's
//! cut, and the synthetic partition's shape.

use blstrs::{Fp, G1Projective};
use cuzk_kernels::cuda::layout::{fp_raw, Xyzz};
use cuzk_kernels::cuda::msm::{combine_windows, ReducePlan, Windows, POW2_CHAIN_MIN};
use cuzk_kernels::cuda::synthetic::{ScalarMix, SyntheticPartition};
use ff::Field;
use group::{Curve, Group};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The XYZZ form of an affine (x, y) with scale z: X = x·z², Y = y·z³, ZZ = z², ZZZ = z³.
fn xyzz_of(p: &G1Projective, z: Fp) -> Xyzz {
    let a = p.to_affine();
    let (zz, zzz) = (z.square(), z.square() * z);
    Xyzz([
        fp_raw(&(a.x() * zz)),
        fp_raw(&(a.y() * zzz)),
        fp_raw(&zz),
        fp_raw(&zzz),
    ])
}

#[test]
fn xyzz_converts_back_exactly() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for _ in 0..32 {
        let p = G1Projective::random(&mut rng);
        let z = Fp::random(&mut rng);
        assert_eq!(xyzz_of(&p, z).to_projective(), p);
    }
    assert_eq!(Xyzz::default().to_projective(), G1Projective::identity());
}

#[test]
fn window_sums_combine_by_horner() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    for c in [4u32, 13, 16, 20] {
        let win = Windows::for_width(c);
        let pts: Vec<G1Projective> = (0..win.windows)
            .map(|_| G1Projective::random(&mut rng))
            .collect();
        let sums: Vec<Xyzz> = pts
            .iter()
            .map(|p| xyzz_of(p, Fp::random(&mut rng)))
            .collect();
        // Σ_w 2^{w·c}·T_w by plain doubling.
        let mut want = G1Projective::identity();
        for (w, p) in pts.iter().enumerate() {
            let mut q = *p;
            for _ in 0..w as u32 * c {
                q = q.double();
            }
            want += q;
        }
        assert_eq!(combine_windows(&win, &sums), want, "c = {c}");
    }
}

#[test]
fn windows_cover_every_scalar() {
    for c in 4..=cuzk_kernels::cuda::msm::MAX_C {
        let w = Windows::for_width(c);
        assert!(w.windows * c >= 255, "c = {c}: {} windows", w.windows);
    }
    // The size-based choice never exceeds what the device workspace is planned for.
    for log in 0..=28 {
        let w = Windows::for_terms(1 << log);
        assert!(
            w.c <= cuzk_kernels::cuda::msm::MAX_C
                && w.windows as usize <= cuzk_kernels::cuda::msm::MAX_WINDOWS
        );
    }
}

/// bits [lo, lo + n) of a little-endian byte string.
fn bits(v: &[u8], lo: u32, n: u32) -> u64 {
    (0..n).fold(0, |acc, i| {
        let b = lo + i;
        let bit = v.get((b / 8) as usize).map_or(0, |x| (x >> (b % 8)) & 1);
        acc | (u64::from(bit) << i)
    })
}

#[test]
fn top_window_values_are_counted_and_crowded_widths_avoided() {
    use ff::PrimeField;
    // t_max = (r − 1) + K byte by byte, r − 1 from blstrs (not the kernels' R table).
    let r_minus_1 = (-blstrs::Scalar::ONE).to_repr();
    for c in 4..=cuzk_kernels::cuda::msm::MAX_C {
        let w = Windows::for_width(c);
        let mut k = [0u8; 40];
        for i in 0..w.windows {
            let bit = i * c + c - 1;
            k[(bit / 8) as usize] |= 1 << (bit % 8);
        }
        let mut t = [0u8; 40];
        let mut carry = 0u16;
        for i in 0..40 {
            let s = u16::from(*r_minus_1.as_ref().get(i).unwrap_or(&0)) + u16::from(k[i]) + carry;
            t[i] = s as u8;
            carry = s >> 8;
        }
        let top = (w.windows - 1) * c;
        let want = bits(&t, top, c) - bits(&k, top, c) + 1;
        assert_eq!(u64::from(w.top_values), want, "c = {c}");
    }
    // The widths whose top window holds 2 or 8 values (the slow ones on the H200).
    assert_eq!(Windows::for_width(15).top_values, 2);
    assert_eq!(Windows::for_width(14).top_values, 8);
    assert_eq!(Windows::for_width(16).top_values, 29679);
    // The size-based choice avoids them where the fixup chain would be long.
    for log in 0..=28 {
        let m = 1usize << log;
        let w = Windows::for_terms(m);
        assert!(!w.top_crowded(m), "2^{log}: c = {} crowded", w.c);
    }
    assert_eq!(Windows::for_terms(1 << 18).c, 16);
    assert!(Windows::for_width(14).top_crowded(1 << 18));
}

#[test]
fn synthetic_partition_is_consistent() {
    let (inputs, aux) = (7, 3000);
    let p = SyntheticPartition::new(12, inputs, aux, (0.9, 0.3), ScalarMix::PORE_32GIB, 3);
    let [h, l, a, b] = p.base_counts;
    assert_eq!(h, (1 << 12) - 1);
    assert_eq!(l, aux);
    assert_eq!(p.scalars.len(), inputs + aux);
    for (plan, bases) in [(&p.l, l), (&p.a_plan, a), (&p.b_plan, b)] {
        assert!(plan.ones.iter().all(|&i| (i as usize) < bases));
        assert!(plan
            .terms
            .iter()
            .all(|&[bi, si]| (bi as usize) < bases && (si as usize) < p.scalars.len()));
        assert!(plan
            .terms
            .iter()
            .all(|&[_, si]| p.scalars[si as usize] != [0; 4]
                && p.scalars[si as usize] != [1, 0, 0, 0]));
        assert!(plan.ones.len() + plan.terms.len() + plan.zeros == bases);
    }
}

/// The gpu stage reports a partition's device steps by these timeline names, B_G2 only when
/// the device computed it, the upload ahead only when there was one.
#[test]
fn gpu_steps_carry_the_timeline_names() {
    use cuzk_kernels::cuda::GpuTimings;
    use std::time::Duration;
    let t = GpuTimings {
        msm_h: Duration::from_millis(3),
        msm_b_g2: Duration::from_millis(7),
        ..GpuTimings::default()
    };
    let names = |b| t.steps(b).iter().map(|(n, _)| *n).collect::<Vec<_>>();
    let g1 = ["upload", "ntt", "msm_h", "msm_l", "msm_a", "msm_b_g1"];
    assert_eq!(names(false), g1);
    assert_eq!(names(true)[..6], g1);
    assert_eq!(t.steps(true)[6], ("msm_b_g2", Duration::from_millis(7)));
    assert_eq!(t.steps(false)[2].1, Duration::from_millis(3));
    let ahead = GpuTimings {
        upload_ahead: Duration::from_millis(85),
        ..t
    };
    assert_eq!(
        ahead.steps(true)[7],
        ("upload_ahead", Duration::from_millis(85))
    );
    assert_eq!(ahead.steps(false).len(), 7);
}

/// The bucket reduction's cut covers every bucket of a window exactly once, fills at most
/// about one wave, and its window-sum blocks each read within one window: H at 2^27 (13
/// windows of 2^19 buckets), a partition's tails (16 of 2^15), G2, tiny MSMs; the H200's
/// waves of the G1 and G2 kernels (792 and 528 blocks of 64).
#[test]
fn bucket_reduction_cut_covers_each_window_once() {
    for (nb, g) in [
        (1 << 19, 13),
        (1 << 15, 16),
        (1 << 21, 3),
        (8, 64),
        (1, 1),
        (4096, 1),
    ] {
        for (wave, threads) in [(792 * 64, 128), (528 * 64, 64), (1, 128), (1 << 30, 64)] {
            let rp = ReducePlan::new(nb, g, wave, threads);
            let case = format!("{nb} buckets × {g}, wave {wave}: {rp:?}");
            assert!(rp.q >= 1 && rp.q <= nb, "{case}");
            // Chunks [k·q, min(nb, k·q + q)), k < chunks: the last one starts inside.
            assert!(
                (rp.chunks - 1) * rp.q < nb && rp.chunks * rp.q >= nb,
                "{case}"
            );
            assert!(rp.pad() >= rp.chunks && rp.per <= threads, "{case}");
            // Padding is less than one block's worth a window.
            assert!(rp.pad() - rp.chunks < rp.parts, "{case}");
            // One wave of chains (where a wave holds a chunk a window), up to the padding
            // threads that only write infinity; long chains a power of two with at most 1/8
            // more of them.
            if g * nb >= wave && wave >= g {
                if rp.q >= POW2_CHAIN_MIN && rp.q.is_power_of_two() && g * rp.chunks > wave {
                    assert!(8 * g * rp.chunks <= 9 * wave + 8 * g, "{case}");
                } else {
                    assert!(g * rp.chunks <= wave, "{case}");
                }
            }
        }
    }
    // Any forced q (CUZK_MSM_REDUCE_Q) cuts the same way.
    for q in [0, 1, 3, 8, 128, 135, 256, 1 << 19, 1 << 20] {
        let rp = ReducePlan::with_q(1 << 19, q, 128);
        assert!(
            (rp.chunks - 1) * rp.q < 1 << 19 && rp.chunks * rp.q >= 1 << 19,
            "{rp:?}"
        );
        assert!(rp.pad() >= rp.chunks && rp.pad() - rp.chunks < rp.parts && rp.per <= 128);
    }
    // H at 2^27 on the H200: a wave's chains would be 135 buckets long; 128 are 1.05 waves.
    let h = ReducePlan::new(1 << 19, 13, 792 * 64, 128);
    assert_eq!((h.q, h.chunks, h.parts, h.per), (128, 4096, 32, 128));
    // A partition's tails (2^15 buckets × 16 windows): short chains keep the wave's q.
    let t = ReducePlan::new(1 << 15, 16, 792 * 64, 128);
    assert_eq!(t.q, 11);
    // 1/8 more chunks is the most the power of two may cost: q = 146 stays.
    assert_eq!(ReducePlan::new(146 * 1000, 1, 1000, 128).q, 146);
    assert_eq!(ReducePlan::new(144 * 1000, 1, 1000, 128).q, 128);
}
