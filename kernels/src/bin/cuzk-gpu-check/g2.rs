//! `cuzk-gpu-check msm-g2`: the B_G2 MSM on the device against the CPU, and at 32 GiB size.

use super::*;

/// The B_G2 MSM on the device (`GpuG2Msm`) against the CPU: the Fp2 and G2 layers, dense
/// MSMs 2^10..2^max_log with full-width random scalars, every window width, a plan with edge
/// cases (scalars 0, 1, 2, r − 1; infinity, repeated and negated bases) against blst term by
/// term and the CPU plan path, then the 32 GiB B_G2 shape timed against the CPU.
pub(crate) fn msm_g2(seed: u64, max_log: u32, rep: &mut Report) -> Result<(), GpuError> {
    let max_log = max_log.clamp(16, 24);
    let n_max = 1usize << max_log;
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x62);
    let t = Instant::now();
    let bases = synthetic::random_g2_bases(n_max, seed);
    rep.row(
        "G2 random bases (host)",
        None,
        0.0,
        ms(t.elapsed()),
        &format!("2^{max_log} points"),
    );
    let t = Instant::now();
    let mut gpu = GpuG2Msm::new(0, &bases, n_max)?;
    println!("device: {}", gpu.describe());
    rep.row("G2 bases upload + plan", None, ms(t.elapsed()), 0.0, "");

    // Layers: Fp2 products and squares, G2 additions.
    {
        let n = 1 << 14;
        let mut fa: Vec<Fp2> = (0..n).map(|_| Fp2::random(&mut rng)).collect();
        let mut fb: Vec<Fp2> = (0..n).map(|_| Fp2::random(&mut rng)).collect();
        for i in (0..n).step_by(4) {
            fb[i] = fa[i];
        }
        let u = Fp2::new(Fp::ZERO, Fp::ONE);
        for (i, v) in [Fp2::ZERO, Fp2::ONE, -Fp2::ONE, u, -u]
            .into_iter()
            .enumerate()
        {
            fa[4 * i + 1] = v;
            fb[4 * i + 1] = v;
            fa[4 * i + 2] = v;
        }
        let m = 1024;
        let mut ga: Vec<G2Affine> = bases[..m].to_vec();
        let mut gb: Vec<G2Affine> = bases[m..2 * m].to_vec();
        ga[0] = G2Affine::identity(); // inf + q
        gb[1] = G2Affine::identity(); // p + inf
        gb[2] = ga[2]; // p + p (doubling in madd)
        gb[3] = -ga[3]; // p − p = inf
        ga[4] = G2Affine::identity();
        gb[4] = G2Affine::identity();
        let (f, g) = gpu.layer_check((&fa, &fb), (&ga, &gb))?;
        let f_ok = f
            .iter()
            .zip(fa.iter().zip(&fb))
            .all(|(&(p, s), (a, b))| p == *a * b && s == a.square());
        let g_ok = g.iter().enumerate().all(|(i, &(s1, s2))| {
            let s = G2Projective::from(ga[i]) + gb[i];
            s1 == s && s2 == s.double() + gb[i]
        });
        rep.row(
            "Fp2 mul + sqr 2^14 random (0, 1, -1, ±u)",
            Some(f_ok),
            0.0,
            0.0,
            "",
        );
        rep.row(
            "G2 xyzz add/dbl 1024 (+inf, p+p, p-p)",
            Some(g_ok),
            0.0,
            0.0,
            "",
        );
    }

    // Dense MSMs, full-width random scalars, against the CPU (cuzk_kernels::msm over G2).
    let s_all = rand_scalars(n_max, seed ^ 0x6300);
    let cpu_dense = |n: usize, s: &[Limbs]| {
        let terms: Vec<[u32; 2]> = (0..n as u32).map(|i| [i, i]).collect();
        let t = Instant::now();
        let c = PlanRef {
            ones: &[],
            terms: &terms,
        }
        .execute(&bases[..n], s);
        (c, ms(t.elapsed()))
    };
    let mut log = 10;
    while log <= max_log {
        let n = 1usize << log;
        let (g, tg) = gpu.msm_dense(&s_all[..n])?;
        let (c, tc) = cpu_dense(n, &s_all[..n]);
        rep.row(
            &format!("G2 MSM 2^{log} dense random vs CPU"),
            Some(g == c),
            ms(tg.terms),
            tc,
            &format!("c={}", msm::Windows::for_terms(n).c),
        );
        log += 2;
    }

    // Every window width on one size.
    {
        let n = 1usize << 14;
        let (want, _) = cpu_dense(n, &s_all[..n]);
        let mut bad = Vec::new();
        for c in 4..=msm::MAX_C {
            msm::force_window_width(c);
            let (g, _) = gpu.msm_dense(&s_all[..n])?;
            if g != want {
                bad.push(c);
            }
        }
        msm::force_window_width(0);
        rep.row(
            &format!("G2 MSM 2^14 every width c=4..{} vs CPU", msm::MAX_C),
            Some(bad.is_empty()),
            0.0,
            0.0,
            &format!("failing c: {bad:?}"),
        );
    }

    // All-zero, all-one and all-(r − 1) scalars.
    {
        let n = 4096;
        let sum = bases[..n]
            .iter()
            .fold(G2Projective::identity(), |a, b| a + b);
        let (g, _) = gpu.msm_dense(&vec![[0u64; 4]; n])?;
        rep.row(
            "G2 MSM 4096 zero scalars = infinity",
            Some(g == G2Projective::identity()),
            0.0,
            0.0,
            "",
        );
        let (g, _) = gpu.msm_dense(&vec![[1u64, 0, 0, 0]; n])?;
        rep.row(
            "G2 MSM 4096 unit scalars = sum",
            Some(g == sum),
            0.0,
            0.0,
            "",
        );
        let (g, _) = gpu.msm_dense(&vec![scalars::max_scalar(); n])?;
        rep.row(
            "G2 MSM 4096 scalars r-1 = -sum",
            Some(g == -sum),
            0.0,
            0.0,
            "",
        );
    }
    drop(gpu);

    // A plan with edge cases over its own base vector: scalars 0, 1, 2, r − 1 and random;
    // infinity, repeated and negated bases; ones batch-added.
    {
        let n = 1usize << 16;
        let mut eb = bases[..n].to_vec();
        eb[5] = G2Affine::identity();
        eb[7] = eb[3];
        eb[9] = -eb[3];
        let (s, ones, terms) = edge_case_plan(n, seed ^ 0x6400, &mut rng);
        let plan = PlanRef {
            ones: &ones,
            terms: &terms,
        };
        let mut gpu = GpuG2Msm::new(0, &eb, n)?;
        let (g, tg) = gpu.msm(plan, &s)?;
        let c = terms
            .par_iter()
            .map(|&[b, si]| G2Projective::from(eb[b as usize]) * fr_of_limbs(&s[si as usize]))
            .chain(ones.par_iter().map(|&b| G2Projective::from(eb[b as usize])))
            .reduce(G2Projective::identity, |a, b| a + b);
        rep.row(
            "G2 MSM plan 2^16 edge cases vs blst",
            Some(g == c),
            0.0,
            0.0,
            "",
        );
        let c2 = plan.execute(&eb, &s);
        rep.row(
            "G2 MSM plan 2^16 edge cases vs CPU",
            Some(g == c2),
            ms(tg.terms + tg.ones),
            0.0,
            "0,1,2,r-1, inf/rep/neg bases",
        );
    }
    drop(bases);
    drop(s_all);
    b_g2_scale(seed, rep)
}

/// The 32 GiB B_G2 shape (`synthetic::b_g2_shape`; `CUZK_G2_SCALE` shrinks it) on the device
/// against the CPU path on `CUZK_G2_CPU_THREADS` threads (default 6, host-prep's count in
/// the measured pipeline), results compared.
pub(crate) fn b_g2_scale(seed: u64, rep: &mut Report) -> Result<(), GpuError> {
    let scale: f64 = env_or("CUZK_G2_SCALE", 1.0);
    let threads: usize = env_or("CUZK_G2_CPU_THREADS", 6);
    let t = Instant::now();
    let (count, s, plan) = synthetic::b_g2_shape(scale, scale_mix(), seed ^ 0x6500);
    let bases = synthetic::random_g2_bases(count, seed ^ 0x6501);
    rep.row(
        "B_G2 shape: bases + scalars (host)",
        None,
        0.0,
        ms(t.elapsed()),
        &format!(
            "{count} bases, ones {}, terms {}, zeros {}",
            plan.ones.len(),
            plan.terms.len(),
            plan.zeros
        ),
    );
    let t = Instant::now();
    let mut gpu = GpuG2Msm::new(0, &bases, count)?;
    println!("device: {}", gpu.describe());
    rep.row(
        "B_G2 bases upload (resident) + plan",
        None,
        ms(t.elapsed()),
        0.0,
        &format!("{:.2} GB", (count * 192) as f64 / 1e9),
    );
    let mut runs = Vec::new();
    for _ in 0..3 {
        runs.push(gpu.msm(plan.as_ref(), &s)?);
    }
    drop(gpu);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("CPU thread pool");
    let t = Instant::now();
    let want = pool.install(|| plan.execute(&bases, &s));
    let t_cpu = ms(t.elapsed());
    let same = runs.iter().all(|(g, _)| *g == want);
    let best = runs
        .iter()
        .map(|(_, t)| *t)
        .min_by(|a, b| (a.terms + a.ones).cmp(&(b.terms + b.ones)))
        .unwrap();
    let dev = ms(best.terms + best.ones);
    rep.row(
        &format!("B_G2 32GiB shape x{scale} vs CPU ({threads} thr)"),
        Some(same),
        dev,
        t_cpu,
        &format!(
            "best of 3: terms {:.1} ones {:.1} upload {:.1} call {:.1} ms; cpu/gpu {:.1}x",
            ms(best.terms),
            ms(best.ones),
            ms(best.upload),
            ms(best.total),
            t_cpu / dev
        ),
    );
    Ok(())
}
