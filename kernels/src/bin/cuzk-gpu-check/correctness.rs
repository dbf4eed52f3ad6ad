//! `cuzk-gpu-check correctness`: every kernel against the CPU on fresh random inputs.

use super::folded::{folded_check, Wanted};
use super::*;

pub(crate) fn correctness(seed: u64, max_msm_log: u32, rep: &mut Report) -> Result<(), GpuError> {
    set_h_form(HForm::Coefficients);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Bases: synthetic on the device, copied back for the CPU references.
    // At least 2^18: the edge-case plans and the partitions below use that many.
    let n_bases = 1usize << max_msm_log.max(18);
    let t = Instant::now();
    let (mut gen, _) = GpuProver::new_synthetic(0, 20, 1 << 16, [n_bases, 0, 0, 0], false, seed)?;
    let mut bases = gen.download_bases(BaseSet::H, n_bases)?;
    drop(gen);
    let t_bases = ms(t.elapsed());
    // Edge cases in the L vector: infinity, a repeated point, a negated one.
    let mut lb = bases[..1 << 16].to_vec();
    lb[5] = G1Affine::identity();
    lb[7] = lb[3];
    lb[9] = -lb[3];
    let max_log = 22u32.max(max_msm_log);
    let mut gpu = GpuProver::new(
        0,
        max_log,
        n_bases.max(1 << 16),
        ResidentBases {
            h: &bases,
            l: &lb,
            a: &bases[..1 << 16],
            b_g1: &bases[..1 << 12],
            b_g2: None,
        },
    )?;
    println!("device: {}", gpu.describe());
    rep.row(
        "synthetic bases + upload",
        None,
        t_bases,
        0.0,
        &format!("2^{max_msm_log} points"),
    );

    // Layer checks.
    {
        let n = 1 << 14;
        let fa = rand_frs(n, seed ^ 11);
        let fb = rand_frs(n, seed ^ 12);
        let mut pa: Vec<Fp> = (0..n).map(|_| Fp::random(&mut rng)).collect();
        let mut pb: Vec<Fp> = (0..n).map(|_| Fp::random(&mut rng)).collect();
        // Squares (a quarter of the pairs: fp_sqr is fp_mul(a, a)) and the edges 0, 1, −1.
        for i in (0..n).step_by(4) {
            pb[i] = pa[i];
        }
        for (i, v) in [Fp::ZERO, Fp::ONE, -Fp::ONE].into_iter().enumerate() {
            pa[4 * i] = v;
            pb[4 * i] = v;
        }
        let m = 1024;
        let mut ga: Vec<G1Affine> = bases[..m].to_vec();
        let mut gb: Vec<G1Affine> = bases[m..2 * m].to_vec();
        ga[0] = G1Affine::identity(); // inf + q
        gb[1] = G1Affine::identity(); // p + inf
        gb[2] = ga[2]; // p + p (doubling in madd)
        gb[3] = -ga[3]; // p − p = inf
        ga[4] = G1Affine::identity();
        gb[4] = G1Affine::identity();
        let (fr, fp, g) = gpu.layer_check((&fa, &fb), (&pa, &pb), (&ga, &gb))?;
        let fr_ok = fr
            .iter()
            .zip(fa.iter().zip(&fb))
            .all(|(r, (a, b))| *r == *a * b);
        let fp_ok = fp
            .iter()
            .zip(pa.iter().zip(&pb))
            .all(|(r, (a, b))| *r == *a * b);
        let g_ok = (0..m).all(|i| {
            let s = G1Projective::from(ga[i]) + gb[i];
            g[2 * i] == s && g[2 * i + 1] == s.double() + gb[i]
        });
        rep.row("Fr mul 2^14 random", Some(fr_ok), 0.0, 0.0, "");
        rep.row(
            "Fp mul 2^14 random (1/4 squares; 0, 1, -1)",
            Some(fp_ok),
            0.0,
            0.0,
            "",
        );
        rep.row(
            "G1 xyzz add/dbl 1024 (+inf, p+p, p-p)",
            Some(g_ok),
            0.0,
            0.0,
            "",
        );
    }

    // NTT against the CPU, every size 2^10..2^22 (each has its own pass plan).
    for log in 10..=22 {
        let n = 1usize << log;
        let x = rand_frs(n, seed ^ (100 + log as u64));
        let d = Domain::new(log);
        let mut g = x.clone();
        let tg = gpu.ntt(&mut g, false)?;
        let mut c = x.clone();
        let t = Instant::now();
        ntt::ntt(&mut c, &d);
        let tc = ms(t.elapsed());
        rep.row(
            &format!("NTT 2^{log} forward vs CPU"),
            Some(g == c),
            ms(tg),
            tc,
            "",
        );
        let mut gi = x.clone();
        gpu.ntt(&mut gi, true)?;
        let mut ci = x.clone();
        ntt::intt(&mut ci, &d);
        rep.row(
            &format!("NTT 2^{log} inverse vs CPU"),
            Some(gi == ci),
            0.0,
            0.0,
            "",
        );
    }

    // H = (A·B − C)/Z against the CPU.
    for log in [12u32, 16, 20] {
        let n = 1usize << log;
        let (a, b, c) = (
            rand_frs(n, seed ^ 201),
            rand_frs(n, seed ^ 202),
            rand_frs(n, seed ^ 203),
        );
        let (h, tg) = gpu.quotient(&a, &b, &c)?;
        let (mut ca, mut cb, mut cc) = (a.clone(), b.clone(), c.clone());
        let t = Instant::now();
        quotient_in_place(&mut ca, &mut cb, &mut cc, &Domain::new(log));
        let tc = ms(t.elapsed());
        let want: Vec<Limbs> = ca.iter().map(scalars::to_limbs).collect();
        rep.row(
            &format!("quotient H 2^{log} vs CPU"),
            Some(h == want),
            ms(tg),
            tc,
            "6 NTTs",
        );
    }

    // Dense MSMs, full-width random scalars, against blst's Pippenger (blstrs multi_exp),
    // an oracle independent of our CPU path.
    let mut log = 10;
    while log <= max_msm_log {
        let n = 1usize << log;
        let s = rand_scalars(n, seed ^ (300 + log as u64));
        let (g, tg) = gpu.msm_dense(BaseSet::H, &s)?;
        let (c, tc) = blst_msm(&bases[..n], &s);
        rep.row(
            &format!("MSM 2^{log} dense random vs blst"),
            Some(g == c),
            ms(tg),
            tc,
            "",
        );
        log += 2;
    }

    // Scalars from a handful of values: every term of a window lands in a few buckets, far
    // past their capped slots (2^21 terms are sorted a window at a time, into capped slots
    // with the overflow list taking the rest; msm/capped.rs).
    if max_msm_log >= 21 {
        let n = 1usize << 21;
        let few = rand_scalars(6, seed ^ 360);
        let mut pick = ChaCha8Rng::seed_from_u64(seed ^ 361);
        let s: Vec<Limbs> = (0..n)
            .map(|_| match pick.next_u32() % 8 {
                6 => [0; 4],
                7 => [1, 0, 0, 0],
                k => few[k as usize],
            })
            .collect();
        let (g, tg) = gpu.msm_dense(BaseSet::H, &s)?;
        let (c, tc) = blst_msm(&bases[..n], &s);
        rep.row(
            "MSM 2^21 scalars of 8 values vs blst",
            Some(g == c),
            ms(tg),
            tc,
            "capped slots overflowing",
        );
    }

    // Every window width on one size (the size-based choice uses only some of them).
    {
        let n = 1usize << 18.min(max_msm_log);
        let sc = rand_scalars(n, seed ^ 350);
        let (want, _) = blst_msm(&bases[..n], &sc);
        let mut bad = Vec::new();
        for c in 4..=msm::MAX_C {
            msm::force_window_width(c);
            let (g, _) = gpu.msm_dense(BaseSet::H, &sc)?;
            if g != want {
                bad.push(c);
            }
        }
        msm::force_window_width(0);
        let what = format!(
            "MSM 2^{} every width c=4..{} vs blst",
            n.trailing_zeros(),
            msm::MAX_C
        );
        rep.row(
            &what,
            Some(bad.is_empty()),
            0.0,
            0.0,
            &format!("failing c: {bad:?}"),
        );
    }

    // Plan MSM with edge cases: scalars 0, 1, 2, r − 1 and random; repeated, negated and
    // infinity bases; batch-added ones.
    {
        let n = 1usize << 16;
        let (s, ones, terms) = edge_case_plan(n, seed ^ 400, &mut rng);
        let plan = PlanRef {
            ones: &ones,
            terms: &terms,
        };
        let (g, tg) = gpu.msm(BaseSet::L, plan, &s)?;
        // Reference term by term with blst (independent of our CPU Pippenger).
        let c = terms
            .par_iter()
            .map(|&[b, si]| G1Projective::from(lb[b as usize]) * fr_of_limbs(&s[si as usize]))
            .chain(ones.par_iter().map(|&b| G1Projective::from(lb[b as usize])))
            .reduce(G1Projective::identity, |a, b| a + b);
        rep.row(
            "MSM plan 2^16 edge cases vs blst",
            Some(g == c),
            0.0,
            0.0,
            "",
        );
        let c2 = plan.execute(&lb, &s);
        rep.row(
            "MSM plan 2^16 edge cases vs CPU",
            Some(g == c2),
            ms(tg),
            0.0,
            "0,1,2,r-1, inf/rep/neg bases",
        );
        // All-zero and all-ones scalars.
        let zeros = vec![[0u64; 4]; 4096];
        let (g, _) = gpu.msm_dense(BaseSet::H, &zeros)?;
        rep.row(
            "MSM 4096 zero scalars = infinity",
            Some(g == G1Projective::identity()),
            0.0,
            0.0,
            "",
        );
        let onesv = vec![[1u64, 0, 0, 0]; 4096];
        let (g, _) = gpu.msm_dense(BaseSet::H, &onesv)?;
        let c = bases[..4096]
            .iter()
            .fold(G1Projective::identity(), |a, b| a + b);
        rep.row("MSM 4096 unit scalars = sum", Some(g == c), 0.0, 0.0, "");
        let rm = vec![scalars::max_scalar(); 4096];
        let (g, _) = gpu.msm_dense(BaseSet::H, &rm)?;
        rep.row("MSM 4096 scalars r-1 = -sum", Some(g == -c), 0.0, 0.0, "");
    }
    bases.truncate(1 << 18);
    drop(gpu);
    // B_G2 bases for the whole-partition checks, with the edge cases of the L vector.
    let mut g2_bases = synthetic::random_g2_bases(1 << 18, seed ^ 0x6232);
    g2_bases[5] = G2Affine::identity();
    g2_bases[7] = g2_bases[3];
    g2_bases[9] = -g2_bases[3];

    // A whole partition through prove() against the CPU path: 2^14 and 2^17 run the
    // shared-memory NTT passes, 2^18 the radix-2^9 ones (with the full tables, as at 2^27).
    for log in [14u32, 17, 18] {
        let n = 1usize << log;
        let part = SyntheticPartition::new(
            log,
            12,
            n - 40,
            (0.997, 0.254),
            // The old assumption's 10 % full-width scalars: more Pippenger terms to check
            // than a real witness's ~1 %.
            ScalarMix::ASSUMED_45_45,
            seed ^ 500 ^ log as u64,
        );
        let [ch, cl, ca, cb] = part.base_counts;
        let srs = ResidentBases {
            h: &bases[..ch],
            l: &bases[1..cl + 1],
            a: &bases[2..ca + 2],
            b_g1: &bases[3..cb + 3],
            b_g2: Some(&g2_bases[..cb]),
        };
        let mut p = GpuProver::new(0, log, part.scalars.len(), srs)?;
        let (r, t) = p.prove(&part.as_gpu(true))?;
        // The same prover without B_G2 leaves it out (the gpu stage's choice per slot).
        let (r_no_g2, _) = p.prove(&part.as_gpu(false))?;
        let tc = Instant::now();
        let hd: Vec<[u32; 2]> = (0..(n - 1) as u32).map(|i| [i, i]).collect();
        // Σ_{i<n−1} h_i·H_i on the CPU, h = (A·B − C)/Z in the coefficient form.
        let cpu_h = |a: &[Fr], b: &[Fr], c: &[Fr]| {
            let (mut a, mut b, mut c) = (a.to_vec(), b.to_vec(), c.to_vec());
            quotient_in_place(&mut a, &mut b, &mut c, &Domain::new(log));
            let h: Vec<Limbs> = a[..n - 1].iter().map(scalars::to_limbs).collect();
            PlanRef {
                ones: &[],
                terms: &hd,
            }
            .execute(&bases[..ch], &h)
        };
        let want_h = cpu_h(&part.a, &part.b, &part.c);
        let want_l = part.l.execute(&bases[1..cl + 1], &part.scalars);
        let want_a = part.a_plan.execute(&bases[2..ca + 2], &part.scalars);
        let want_b = part.b_plan.execute(&bases[3..cb + 3], &part.scalars);
        let want_b_g2 = part.b_plan.execute(&g2_bases[..cb], &part.scalars);
        let tcpu = ms(tc.elapsed());
        let g2_ok = r.b_g2 == Some(want_b_g2);
        let skip_ok = r_no_g2.b_g2.is_none() && r_no_g2.b_g1 == want_b;
        let ok =
            r.h == want_h && r.l == want_l && r.a == want_a && r.b_g1 == want_b && g2_ok && skip_ok;
        let detail = format!(
            "h {} l {} a {} b {} b_g2 {} ({:.1} ms) without b_g2 {}",
            r.h == want_h,
            r.l == want_l,
            r.a == want_a,
            r.b_g1 == want_b,
            g2_ok,
            ms(t.msm_b_g2),
            skip_ok
        );
        rep.row(
            &format!("prove() partition 2^{log} vs CPU"),
            Some(ok),
            ms(t.total),
            tcpu,
            &detail,
        );
        if log == 14 {
            bad_plans_check(&mut p, &part, &r, rep)?;
        }
        upload_ahead_check(&mut p, &part, seed, rep, cpu_h)?;
        let seed_ab = seed ^ 0xc0 ^ log as u64;
        c_from_ab_check(&mut p, &part, seed_ab, rep, "coefficient form", &cpu_h)?;
        // The same partition with H's bases in Lagrange form (LC and LD' made from H on the
        // device at start): the same group elements, so the same sums as the CPU's
        // coefficient form; prove() and prove_ahead().
        drop(p);
        set_h_form(HForm::Lagrange);
        let lp = GpuProver::new(0, log, part.scalars.len(), srs);
        set_h_form(HForm::Coefficients);
        let mut lp = lp?;
        // C's values of each kind the Lagrange form sums apart (0, 1, −1, small and wide
        // others) and the synthetic partition's c (a real witness's mix: twos too).
        let c_mix: Vec<Fr> = part
            .c
            .iter()
            .enumerate()
            .map(
                |(j, x)| match (j as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 57 {
                    0..=99 => Fr::ZERO,
                    100..=103 => Fr::ONE,
                    // Below 2^32, every bit pattern (no buckets crowded by equal low bits).
                    104..=123 => Fr::from((j as u64).wrapping_mul(0xd1b5_4a32_d192_ed03) >> 32),
                    124..=125 => -Fr::ONE,
                    _ => *x,
                },
            )
            .collect();
        let mut mixed = part.as_gpu(true);
        mixed.c = Some(&c_mix);
        let want_h_mix = cpu_h(&part.a, &part.b, &c_mix);
        let (rm, tl) = lp.prove(&mixed)?;
        let (rl, _) = lp.prove(&part.as_gpu(true))?;
        let ok_l = lp.h_in_lagrange_form()
            && rm.h == want_h_mix
            && rl.h == want_h
            && rl.l == want_l
            && rl.a == want_a
            && rl.b_g1 == want_b
            && rl.b_g2 == Some(want_b_g2);
        rep.row(
            &format!("prove() 2^{log}, H in Lagrange form vs CPU"),
            Some(ok_l),
            ms(tl.total),
            tcpu,
            &format!(
                "lagrange {}, h with c mixed {} (msm_h {:.2} ms, msm_c {:.2} ms), synthetic c {}",
                lp.h_in_lagrange_form(),
                rm.h == want_h_mix,
                ms(tl.msm_h),
                ms(tl.msm_c),
                rl.h == want_h
            ),
        );
        upload_ahead_check(&mut lp, &part, seed ^ 0x1a, rep, cpu_h)?;
        c_from_ab_check(&mut lp, &part, seed_ab, rep, "H in Lagrange form", &cpu_h)?;
        drop(lp);
        // And with C folded into L (a random C; the prover reads no c).
        let want = Wanted {
            h_of: &cpu_h,
            l: want_l,
            a: want_a,
            b: want_b,
            b_g2: want_b_g2,
        };
        folded_check(&part, srs, log, seed ^ 0xf0 ^ log as u64, &want, rep)?;
        // The same partition with the bases streamed through two 1 MiB buffers: every MSM
        // in pieces of 10922 G1 / 5461 G2 bases (the path of a device too small for the key).
        let mut sp = GpuProver::streaming(0, log, part.scalars.len(), srs, 1 << 20)?;
        let mut input = part.as_gpu(true);
        input.bases = Some(srs);
        let (r2, t2) = sp.prove(&input)?;
        let ok2 = r2.h == want_h
            && r2.l == want_l
            && r2.a == want_a
            && r2.b_g1 == want_b
            && r2.b_g2 == Some(want_b_g2);
        rep.row(
            &format!("prove() 2^{log}, bases streamed (1 MiB pieces) vs CPU"),
            Some(ok2),
            ms(t2.total),
            tcpu,
            &sp.describe(),
        );
    }
    drop(bases);
    drop(g2_bases);

    // NTT round trips above the CPU comparisons, every size 2^23..2^27 (forward then inverse
    // gives the input back; the forward is timed best of 3).
    let (mut big, _) = GpuProver::new_synthetic(0, 27, 1 << 27, [1 << 10, 0, 0, 0], false, seed)?;
    for log in 23..=27 {
        ntt_best_of_3(
            &mut big,
            rand_frs(1 << log, seed ^ (600 + log as u64)),
            log,
            rep,
        )?;
    }
    Ok(())
}

/// Plans that index past their bases or scalars (a term's base, a term's scalar, one of
/// the ones) are refused with an error naming the plan, after the device has already run
/// the partition's transforms and H's MSM (prover/check.rs scans the plans under them); the
/// prover then proves the good partition as before, also right after a refused
/// `prove_ahead` that had a and b uploaded ahead for it.
fn bad_plans_check(
    p: &mut GpuProver,
    part: &SyntheticPartition,
    good: &GpuResults,
    rep: &mut Report,
) -> Result<(), GpuError> {
    use cuzk_kernels::cuda::Preload;
    let [_, cl, _, cb] = part.base_counts;
    let mut l_terms = part.l.terms.clone();
    l_terms[0][0] = cl as u32;
    let mut a_terms = part.a_plan.terms.clone();
    if let Some(t) = a_terms.last_mut() {
        t[1] = part.scalars.len() as u32;
    }
    let mut b_ones = part.b_plan.ones.clone();
    b_ones[0] = cb as u32 + 5;
    let t = Instant::now();
    let mut refused = Vec::new();
    for (name, which) in [("L", 0), ("A", 1), ("B", 2)] {
        let mut bad = part.as_gpu(true);
        match which {
            0 => bad.l.terms = &l_terms,
            1 => bad.a_plan.terms = &a_terms,
            _ => bad.b_plan.ones = &b_ones,
        }
        let want = format!("{name} plan indexes past its bases or scalars");
        refused.push(matches!(p.prove(&bad), Err(GpuError::Input(m)) if m == want));
    }
    // Refused with a and b uploaded ahead for it, then the same partition under its key.
    let mut bad = part.as_gpu(true);
    bad.l.terms = &l_terms;
    let _ = p.prove_ahead(&part.as_gpu(true), Some(11), || {
        Some(Preload {
            key: 12,
            a: &part.a,
            b: &part.b,
            scalars: None,
        })
    })?;
    refused.push(p.prove_ahead(&bad, Some(12), || None).is_err());
    let (after_ahead, _) = p.prove_ahead(&part.as_gpu(true), Some(12), || None)?;
    let (after, _) = p.prove(&part.as_gpu(true))?;
    let ok = refused.iter().all(|&x| x) && after == *good && after_ahead == *good;
    rep.row(
        &format!(
            "prove() 2^{}: plans indexing past their bases or scalars refused",
            part.domain_log2
        ),
        Some(ok),
        ms(t.elapsed()),
        0.0,
        &format!(
            "L term base, A term scalar, B one, after an upload ahead: refused {refused:?}; the good partition after them equal {}",
            after == *good && after_ahead == *good
        ),
    );
    Ok(())
}

/// `prove_ahead`: a partition whose `a` was uploaded ahead (during the previous partition's
/// call, into the spare buffer) proves the same as with its own upload and as the CPU's H,
/// and an upload under another key, or for other memory under the same key, is not used.
/// `part2` differs from `part` in a, b, c only (H differs; L, A, B are the same sums).
fn upload_ahead_check(
    p: &mut GpuProver,
    part: &SyntheticPartition,
    seed: u64,
    rep: &mut Report,
    cpu_h: impl Fn(&[Fr], &[Fr], &[Fr]) -> G1Projective,
) -> Result<(), GpuError> {
    use cuzk_kernels::cuda::Preload;
    let n = part.a.len();
    let (a2, b2, c2) = (
        rand_frs(n, seed ^ 0xa2),
        rand_frs(n, seed ^ 0xb2),
        rand_frs(n, seed ^ 0xc2),
    );
    let mut part2 = part.as_gpu(true);
    part2.evals = cuzk_kernels::cuda::Evals::Given { a: &a2, b: &b2 };
    part2.c = Some(&c2[..]);
    let (plain1, _) = p.prove(&part.as_gpu(true))?;
    let (plain2, _) = p.prove(&part2)?;
    // 1 uploads 2's a, b ahead; 2 uses them and uploads 1's under key 3; 1 asked for under
    // key 4 must not use that upload, and uploads 2's a with 1's b under key 5; 2 asked for
    // under key 5 may use that a only when the prover uploads a alone (one spare buffer),
    // never that b.
    let ahead = |key, a, b| {
        move || {
            Some(Preload {
                key,
                a,
                b,
                scalars: None,
            })
        }
    };
    let (r1, t1) = p.prove_ahead(&part.as_gpu(true), Some(1), ahead(2, &a2[..], &b2[..]))?;
    let (r2, t2) = p.prove_ahead(&part2, Some(2), ahead(3, &part.a[..], &part.b[..]))?;
    let (r1b, t1b) = p.prove_ahead(&part.as_gpu(true), Some(4), ahead(5, &a2[..], &part.b[..]))?;
    let (r2b, t2b) = p.prove_ahead(&part2, Some(5), || None)?;
    let want2 = cpu_h(&a2, &b2, &c2);
    // Two spare buffers (b ahead too): 2 under key 5 must not use 2's a beside 1's b.
    let two = t2.b_ahead;
    let used = !t1.a_ahead && t2.a_ahead && !t1b.a_ahead && t2b.a_ahead != two && !t2b.b_ahead;
    let uploaded = [&t1, &t2, &t1b]
        .iter()
        .all(|t| t.upload_ahead > std::time::Duration::ZERO);
    let ok = r1 == plain1
        && r2 == plain2
        && r2.h == want2
        && r2.h != plain1.h
        && r1b == plain1
        && r2b == plain2
        && used
        && uploaded;
    rep.row(
        &format!("prove_ahead 2^{}: a, b uploaded ahead", part.domain_log2),
        Some(ok),
        ms(t2.total),
        ms(t1.total),
        &format!(
            "same as own upload {}, H vs CPU {}, used only under its key and slices {}, b ahead too {two}, uploads {:?} ms",
            r1 == plain1 && r2 == plain2 && r1b == plain1 && r2b == plain2,
            r2.h == want2,
            used,
            [&t1, &t2, &t1b].map(|t| ms(t.upload_ahead))
        ),
    );
    Ok(())
}

/// Σ s_i·P_i by blst's Pippenger (`G1Projective::multi_exp`) and how long it took (ms).
fn blst_msm(bases: &[G1Affine], s: &[Limbs]) -> (G1Projective, f64) {
    let points: Vec<G1Projective> = bases.par_iter().map(G1Projective::from).collect();
    let frs: Vec<Fr> = s.par_iter().map(fr_of_limbs).collect();
    let t = Instant::now();
    let sum = G1Projective::multi_exp(&points, &frs);
    (sum, ms(t.elapsed()))
}
