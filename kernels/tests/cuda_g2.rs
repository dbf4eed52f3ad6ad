//! CPU tests of the G2 MSM's host side and formulas (no GPU needed): blstrs' G2Affine bytes
//! are what `g2_affine_t` reads, XYZZ over Fp2 comes back to blstrs exactly, the window sums
//! combine by Horner in G2, a Rust model of the device formulas (fp2.cuh's Karatsuba
//! product and complex squaring, ec.cuh's XYZZ additions) agrees with blstrs over Fp2, the
//! plan checks refuse bad indices, and the synthetic B_G2 inputs have the shape they claim.

use blstrs::{Fp, Fp2, G2Affine, G2Projective, Scalar as Fr};
use cuzk_kernels::cuda::layout::{bytes_of, fp2_raw, fp_raw, Xyzz2, G2_AFFINE_BYTES};
use cuzk_kernels::cuda::msm::{combine_windows, Curve as MsmCurve, Windows};
use cuzk_kernels::cuda::msm_g2::{check_plan, plan_bytes_g2};
use cuzk_kernels::cuda::synthetic::{b_g2_count, b_g2_shape, random_g2_bases, ScalarMix};
use cuzk_kernels::cuda::GpuError;
use cuzk_kernels::msm::PlanRef;
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn le_bytes(limbs: &[u64]) -> Vec<u8> {
    limbs.iter().flat_map(|l| l.to_le_bytes()).collect()
}

/// `g2_affine_t` is { x: { c0, c1 }, y: { c0, c1 } }, each Fp 12 little-endian u32 limbs in
/// Montgomery form: exactly the bytes of a blstrs G2Affine; infinity is all zeros.
#[test]
fn g2_affine_bytes_are_the_device_layout() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..16 {
        let p = G2Projective::random(&mut rng).to_affine();
        let mut want = Vec::new();
        for c in [p.x(), p.y()] {
            want.extend(le_bytes(&fp_raw(&c.c0())));
            want.extend(le_bytes(&fp_raw(&c.c1())));
        }
        assert_eq!(want.len(), G2_AFFINE_BYTES);
        assert_eq!(bytes_of(&[p]), &want[..]);
        let [c0, c1] = fp2_raw(&p.x());
        assert_eq!(le_bytes(&c0), le_bytes(&fp_raw(&p.x().c0())));
        assert_eq!(le_bytes(&c1), le_bytes(&fp_raw(&p.x().c1())));
    }
    let inf = G2Affine::identity();
    assert!(bytes_of(&[inf]).iter().all(|&b| b == 0));
    assert!(bool::from(
        G2Affine::from_raw_unchecked(Fp2::ZERO, Fp2::ZERO, false).is_identity()
    ));
}

/// The XYZZ form of p with scale z: X = x·z², Y = y·z³, ZZ = z², ZZZ = z³.
fn xyzz2_of(p: &G2Projective, z: Fp2) -> Xyzz2 {
    let a = p.to_affine();
    let (zz, zzz) = (z.square(), z.square() * z);
    Xyzz2([
        fp2_raw(&(a.x() * zz)),
        fp2_raw(&(a.y() * zzz)),
        fp2_raw(&zz),
        fp2_raw(&zzz),
    ])
}

#[test]
fn xyzz2_converts_back_exactly() {
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    for _ in 0..32 {
        let p = G2Projective::random(&mut rng);
        let z = Fp2::random(&mut rng);
        assert_eq!(xyzz2_of(&p, z).to_projective(), p);
    }
    assert_eq!(Xyzz2::default().to_projective(), G2Projective::identity());
}

#[test]
fn g2_window_sums_combine_by_horner() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    for c in [4u32, 16] {
        let win = Windows::for_width(c);
        let pts: Vec<G2Projective> = (0..win.windows)
            .map(|_| G2Projective::random(&mut rng))
            .collect();
        let sums: Vec<Xyzz2> = pts
            .iter()
            .map(|p| xyzz2_of(p, Fp2::random(&mut rng)))
            .collect();
        let mut want = G2Projective::identity();
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

// ---- A Rust model of the device formulas, line for line, over any field. ----

/// fp2.cuh `fp2_mul`: t0 = a0·b0, t1 = a1·b1, t2 = (a0 + a1)(b0 + b1);
/// c0 = t0 − t1, c1 = t2 − t0 − t1.
fn model_fp2_mul(a: Fp2, b: Fp2) -> Fp2 {
    let t0 = a.c0() * b.c0();
    let t1 = a.c1() * b.c1();
    let t2 = (a.c0() + a.c1()) * (b.c0() + b.c1());
    Fp2::new(t0 - t1, t2 - t0 - t1)
}

/// fp2.cuh `fp2_sqr`: c0 = (a0 + a1)(a0 − a1), c1 = (a0 + a0)·a1.
fn model_fp2_sqr(a: Fp2) -> Fp2 {
    Fp2::new(
        (a.c0() + a.c1()) * (a.c0() - a.c1()),
        (a.c0() + a.c0()) * a.c1(),
    )
}

#[derive(Clone, Copy)]
struct Pt<F> {
    x: F,
    y: F,
    zz: F,
    zzz: F,
}

impl<F: Field> Pt<F> {
    fn inf() -> Self {
        Pt {
            x: F::ZERO,
            y: F::ZERO,
            zz: F::ZERO,
            zzz: F::ZERO,
        }
    }
    fn is_inf(&self) -> bool {
        bool::from(self.zz.is_zero())
    }
    /// ec.cuh xyzz_dbl (dbl-2008-s-1).
    fn dbl(&mut self) {
        if self.is_inf() {
            return;
        }
        let u = self.y + self.y;
        let v = u.square();
        let w = u * v;
        let s = self.x * v;
        let x2 = self.x.square();
        let m = x2 + x2 + x2;
        let x3 = m.square() - s - s;
        self.y = m * (s - x3) - w * self.y;
        self.x = x3;
        self.zz *= v;
        self.zzz *= w;
    }
    /// ec.cuh xyzz_add_affine_inl (madd-2008-s); (x, y) not infinity.
    fn madd(&mut self, x: F, y: F) {
        if self.is_inf() {
            *self = Pt {
                x,
                y,
                zz: F::ONE,
                zzz: F::ONE,
            };
            return;
        }
        let p = x * self.zz - self.x;
        let r = y * self.zzz - self.y;
        if bool::from(p.is_zero()) {
            if bool::from(r.is_zero()) {
                // mdbl-2008-s-1: dbl with ZZ = ZZZ = 1.
                *self = Pt {
                    x,
                    y,
                    zz: F::ONE,
                    zzz: F::ONE,
                };
                self.dbl();
            } else {
                *self = Pt::inf();
            }
            return;
        }
        let pp = p.square();
        let ppp = p * pp;
        let q = self.x * pp;
        let x3 = r.square() - ppp - (q + q);
        self.y = r * (q - x3) - self.y * ppp;
        self.x = x3;
        self.zz *= pp;
        self.zzz *= ppp;
    }
    /// ec.cuh xyzz_add (add-2008-s).
    fn add(&mut self, q: &Pt<F>) {
        if q.is_inf() {
            return;
        }
        if self.is_inf() {
            *self = *q;
            return;
        }
        let u1 = self.x * q.zz;
        let u2 = q.x * self.zz;
        let s1 = self.y * q.zzz;
        let s2 = q.y * self.zzz;
        let p = u2 - u1;
        let r = s2 - s1;
        if bool::from(p.is_zero()) {
            if bool::from(r.is_zero()) {
                self.dbl();
            } else {
                *self = Pt::inf();
            }
            return;
        }
        let pp = p.square();
        let ppp = p * pp;
        let qq = u1 * pp;
        let x3 = r.square() - ppp - (qq + qq);
        self.y = r * (qq - x3) - s1 * ppp;
        self.x = x3;
        self.zz = self.zz * q.zz * pp;
        self.zzz = self.zzz * q.zzz * ppp;
    }
    /// ec.cuh xyzz_mul_small.
    fn mul_small(&mut self, k: u32) {
        let base = *self;
        *self = Pt::inf();
        if k == 0 {
            return;
        }
        for bit in (0..=31 - k.leading_zeros()).rev() {
            self.dbl();
            if (k >> bit) & 1 == 1 {
                self.add(&base);
            }
        }
    }
}

fn to_g2(p: &Pt<Fp2>) -> G2Projective {
    Xyzz2([
        fp2_raw(&p.x),
        fp2_raw(&p.y),
        fp2_raw(&p.zz),
        fp2_raw(&p.zzz),
    ])
    .to_projective()
}

#[test]
fn fp2_formulas_match_blstrs() {
    let mut rng = ChaCha8Rng::seed_from_u64(10);
    let u = Fp2::new(Fp::ZERO, Fp::ONE);
    assert_eq!(u * u, -Fp2::ONE, "Fp2 = Fp[u]/(u^2 + 1)");
    let mut vals: Vec<Fp2> = (0..200).map(|_| Fp2::random(&mut rng)).collect();
    vals.extend([Fp2::ZERO, Fp2::ONE, -Fp2::ONE, u, -u]);
    for a in &vals {
        assert_eq!(model_fp2_sqr(*a), a.square());
        for b in vals.iter().step_by(7) {
            assert_eq!(model_fp2_mul(*a, *b), *a * b);
        }
    }
}

/// The XYZZ formulas hold on G2 (a = 0 on the twist as on G1): random chains of mixed and
/// full additions, the edge cases (doubling inside madd, p + (−p), infinity on either side)
/// and the small multiples of the bucket reduction, against blstrs.
#[test]
fn xyzz_formulas_over_fp2_match_blstrs() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let pts: Vec<G2Affine> = (0..24)
        .map(|_| G2Projective::random(&mut rng).to_affine())
        .collect();
    // Mixed additions, as the bucket accumulation does them.
    let mut acc = Pt::<Fp2>::inf();
    let mut want = G2Projective::identity();
    for p in &pts {
        acc.madd(p.x(), p.y());
        want += p;
        assert_eq!(to_g2(&acc), want);
    }
    // p + p inside madd, then p + (−p).
    let p = pts[0];
    let mut d = Pt::<Fp2>::inf();
    d.madd(p.x(), p.y());
    d.madd(p.x(), p.y());
    assert_eq!(to_g2(&d), G2Projective::from(p).double());
    let mut z = Pt::<Fp2>::inf();
    z.madd(p.x(), p.y());
    z.madd(p.x(), -p.y());
    assert!(z.is_inf());
    // Full additions: of the accumulator to itself (doubling), of an independent sum, of
    // its negation, of infinity.
    let mut full = acc;
    full.add(&acc);
    assert_eq!(to_g2(&full), want.double());
    let mut other = Pt::<Fp2>::inf();
    other.madd(pts[5].x(), pts[5].y());
    other.madd(pts[9].x(), pts[9].y());
    full.add(&other);
    assert_eq!(to_g2(&full), want.double() + pts[5] + pts[9]);
    let mut neg = other;
    neg.y = -neg.y;
    let mut gone = other;
    gone.add(&neg);
    assert!(gone.is_inf());
    let before = to_g2(&full);
    full.add(&Pt::inf());
    assert_eq!(to_g2(&full), before);
    let mut from_inf = Pt::<Fp2>::inf();
    from_inf.add(&other);
    assert_eq!(to_g2(&from_inf), to_g2(&other));
    // Small multiples (bucket reduction's lo·Σ).
    for k in [0u32, 1, 2, 3, 7, 64, 1000, 65_535] {
        let mut m = other;
        m.mul_small(k);
        assert_eq!(to_g2(&m), to_g2(&other) * Fr::from(k as u64), "k = {k}");
    }
}

#[test]
fn random_g2_bases_are_valid_and_distinct() {
    // Crosses a chunk boundary (chunks of 2^12).
    let b = random_g2_bases(5000, 3);
    assert_eq!(b.len(), 5000);
    assert!(b.iter().all(|p| bool::from(p.is_on_curve())
        && bool::from(p.is_torsion_free())
        && !bool::from(p.is_identity())));
    let mut keys: Vec<Vec<u8>> = b.iter().map(|p| bytes_of(&[*p]).to_vec()).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 5000, "repeated points");
    assert_eq!(
        random_g2_bases(5000, 3)[4321],
        b[4321],
        "deterministic by seed"
    );
}

#[test]
fn b_g2_shape_is_consistent() {
    let (count, s, plan) = b_g2_shape(0.001, ScalarMix::PORE_32GIB, 4);
    // 328 inputs + 25.4 % of 130,169,893 aux, scaled by 1/1000.
    assert_eq!(count, 33_063);
    assert_eq!(s.len(), count);
    assert_eq!(plan.ones.len() + plan.terms.len() + plan.zeros, count);
    assert!(plan.ones.iter().all(|&b| s[b as usize] == [1, 0, 0, 0]));
    assert!(plan
        .terms
        .iter()
        .all(|&[b, si]| b == si && s[b as usize] != [0; 4] && s[b as usize] != [1, 0, 0, 0]));
    // The mix of B's variables (48.01 % ones, 3.72 % full width), within sampling noise
    // (33,063 draws: 4.5 standard deviations).
    let f = |n: usize| n as f64 / count as f64;
    assert!((f(plan.ones.len()) - 0.4801).abs() < 0.0125);
    assert!((f(plan.terms.len()) - 0.0372).abs() < 0.0047);
    check_plan(plan.as_ref(), count, count, count).unwrap();
}

#[test]
fn plan_checks_refuse_bad_indices() {
    let terms = [[0u32, 1], [2, 0]];
    let ones = [1u32];
    let plan = PlanRef {
        ones: &ones,
        terms: &terms,
    };
    assert!(check_plan(plan, 3, 2, 2).is_ok());
    // A base index past the bases, a scalar index past the scalars.
    assert!(matches!(check_plan(plan, 3, 1, 2), Err(GpuError::Input(_))));
    let bad_one = [3u32];
    let p2 = PlanRef {
        ones: &bad_one,
        terms: &terms,
    };
    // The one 3 with 3 bases: 3 entries fit, the index does not.
    assert!(matches!(check_plan(p2, 3, 2, 2), Err(GpuError::Input(_))));
    assert!(check_plan(p2, 4, 2, 2).is_ok());
    // More entries than bases, more scalars than planned.
    assert!(matches!(
        check_plan(plan, 2, 2, 2),
        Err(GpuError::TooLarge(_))
    ));
    assert!(matches!(
        check_plan(plan, 3, 2, 1),
        Err(GpuError::TooLarge(_))
    ));
}

/// What `GpuG2Msm` allocates at the 32 GiB shape (33.06 M bases, 130.2 M scalars) is what
/// its doc comment says (~16 GB); inside the prover B_G2 adds less (it shares the scalars
/// and B's plan with B_G1): the G2 bases and a G2 workspace, and the whole plan still fits
/// one H200 (139 GiB usable).
#[test]
fn prover_with_b_g2_fits_an_h200() {
    use cuzk_kernels::cuda::plan_bytes;
    use cuzk_kernels::cuda::synthetic::{PORE_32G_AUX, PORE_32G_A_DENSITY, PORE_32G_INPUTS};
    let count = b_g2_count(1.0);
    assert_eq!(count, 33_063_481);
    let scalars = PORE_32G_INPUTS + PORE_32G_AUX;
    let alone = plan_bytes_g2(count, scalars);
    assert!((15e9..18e9).contains(&(alone as f64)), "{alone} bytes");
    let a = PORE_32G_INPUTS + (PORE_32G_AUX as f64 * PORE_32G_A_DENSITY) as usize;
    let counts = [(1 << 27) - 1, PORE_32G_AUX, a, count];
    let g1 = plan_bytes(27, scalars.max(1 << 27), counts, 0);
    let with = plan_bytes(27, scalars.max(1 << 27), counts, count);
    let extra = with - g1;
    assert!(
        count * 192 < extra && extra < alone - scalars * 32,
        "B_G2 adds {extra} bytes to the prover"
    );
    assert!(with < 139 << 30, "G1 {g1} + B_G2 {extra} bytes");
}

/// The host's sizes and block shapes for G2 are the kernels': point sizes, the reduction
/// blocks whose shared arrays msm.cu sizes by REDUCE_THREADS / REDUCE_THREADS_G2, and the
/// accumulation / batch-addition blocks whose shared slots it sizes by ACC_BLOCK /
/// ACC_BLOCK_G2 (a launch with more threads than slots would overrun them).
#[test]
fn host_constants_match_the_kernel_source() {
    use cuzk_kernels::cuda::layout::{Xyzz, XYZZ2_BYTES};
    use cuzk_kernels::cuda::source::SOURCES;
    assert_eq!(MsmCurve::G1.xyzz_bytes(), std::mem::size_of::<Xyzz>());
    assert_eq!(MsmCurve::G2.xyzz_bytes(), std::mem::size_of::<Xyzz2>());
    assert_eq!(XYZZ2_BYTES, 2 * MsmCurve::G1.xyzz_bytes());
    let msm = SOURCES.iter().find(|(n, _)| *n == "msm.cu").unwrap().1;
    // `#define NAME value` (a comment may follow): the value.
    let defined = |name: &str| -> u32 {
        let head = format!("#define {name} ");
        let line = msm
            .lines()
            .find(|l| l.starts_with(&head))
            .unwrap_or_else(|| panic!("msm.cu defines no {name}"));
        line[head.len()..]
            .split_whitespace()
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("msm.cu: `{line}`"))
    };
    for (name, curve) in [
        ("REDUCE_THREADS", MsmCurve::G1),
        ("REDUCE_THREADS_G2", MsmCurve::G2),
    ] {
        assert_eq!(defined(name), curve.reduce_threads(), "{name}");
    }
    for (name, curve) in [("ACC_BLOCK", MsmCurve::G1), ("ACC_BLOCK_G2", MsmCurve::G2)] {
        assert_eq!(defined(name), curve.acc_block(), "{name}");
    }
}
