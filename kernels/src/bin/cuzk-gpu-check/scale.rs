//! `cuzk-gpu-check scale`, `msm`, `sweep`, `ntt`: timings at real sizes, the MSM variants
//! side by side, the window sweep, the NTT alone.

use super::*;

pub(crate) fn scale(seed: u64, rep: &mut Report) -> Result<(), GpuError> {
    let t = Instant::now();
    let part = SyntheticPartition::new(
        synthetic::PORE_32G_LOG2,
        synthetic::PORE_32G_INPUTS,
        synthetic::PORE_32G_AUX,
        (synthetic::PORE_32G_A_DENSITY, synthetic::PORE_32G_B_DENSITY),
        scale_mix(),
        seed,
    );
    let t_part = ms(t.elapsed());
    let counts = part.base_counts;
    if cuzk_kernels::cuda::h_form() == HForm::Folded {
        // A C of the partition's shape without entries: L' = L (random points either way).
        let c = cuzk_kernels::witness::R1csMatrix {
            num_inputs: synthetic::PORE_32G_INPUTS,
            num_aux: counts[1],
            ..Default::default()
        };
        cuzk_kernels::cuda::set_folded_c(Some(std::sync::Arc::new(c)));
    }
    let (mut gpu, t_srs) =
        GpuProver::new_synthetic(0, 27, part.scalars.len().max(1 << 27), counts, true, seed)?;
    println!("device: {}", gpu.describe());
    rep.row(
        "synthetic 32GiB partition (host)",
        None,
        0.0,
        t_part,
        &format!(
            "terms L {} A {} B {}, ones L {} A {} B {}",
            part.l.terms.len(),
            part.a_plan.terms.len(),
            part.b_plan.terms.len(),
            part.l.ones.len(),
            part.a_plan.ones.len(),
            part.b_plan.ones.len()
        ),
    );
    rep.row(
        "synthetic SRS on GPU (h,l,a,b_g1,b_g2)",
        None,
        ms(t_srs),
        0.0,
        &format!("{counts:?}"),
    );
    // Page-lock what prove() uploads, as the gpu stage does with the slot arena.
    let t = Instant::now();
    let mut pinned = 0usize;
    {
        let mut reg = |ptr: *const u8, len: usize| {
            // SAFETY: the buffers belong to `part`, which outlives `gpu` (dropped first at
            // the end of this function) and is never reallocated.
            match unsafe { gpu.register_host(ptr as *mut u8, len, false) } {
                Ok(()) => pinned += len,
                Err(e) => println!("register_host: {e}"),
            }
        };
        for v in [&part.a, &part.b, &part.c] {
            reg(v.as_ptr() as *const u8, std::mem::size_of_val(&v[..]));
        }
        reg(
            part.scalars.as_ptr() as *const u8,
            std::mem::size_of_val(&part.scalars[..]),
        );
        for p in [&part.l, &part.a_plan, &part.b_plan] {
            reg(
                p.terms.as_ptr() as *const u8,
                std::mem::size_of_val(&p.terms[..]),
            );
            reg(
                p.ones.as_ptr() as *const u8,
                std::mem::size_of_val(&p.ones[..]),
            );
        }
    }
    let gib = pinned as f64 / (1u64 << 30) as f64;
    rep.row(
        "register_host (page-lock partition)",
        None,
        0.0,
        ms(t.elapsed()),
        &format!("{gib:.1} GiB"),
    );
    // Spot-check synthetic points are on the curve.
    let pts = gpu.download_bases(BaseSet::BG1, 1024)?;
    let on = pts
        .iter()
        .all(|p| bool::from(p.is_on_curve()) && !bool::from(p.is_identity()));
    rep.row("synthetic points on curve (1024)", Some(on), 0.0, 0.0, "");

    // CUZK_SCALE_KERNELS=0 leaves out the kernels by size, CUZK_SCALE_STREAM=0 the streamed
    // prover (device time, when only the partition rows are wanted).
    let kernel_logs: &[u32] = if env_or("CUZK_SCALE_KERNELS", 1) == 0 {
        &[]
    } else {
        &[20, 21, 22, 23, 24, 25, 26, 27]
    };
    for &log in kernel_logs {
        let n = 1usize << log;
        ntt_best_of_3(&mut gpu, rand_frs(n, seed ^ log as u64), log, rep)?;
    }
    let s = rand_scalars(if kernel_logs.is_empty() { 0 } else { 1 << 27 }, seed ^ 77);
    for &log in kernel_logs {
        let n = (1usize << log).min(counts[0]); // 2^27 − 1 at the top: the H vector's size
        let mut best = f64::MAX;
        for _ in 0..2 {
            best = best.min(ms(gpu.msm_dense(BaseSet::H, &s[..n])?.1));
        }
        rep.row(
            &format!("MSM 2^{log} dense full-width (best of 2)"),
            None,
            best,
            0.0,
            "",
        );
    }
    if !kernel_logs.is_empty() && std::env::var_os("CUZK_MSM_PROFILE").is_some() {
        let t = ms(gpu.msm_dense(BaseSet::H, &s[..1 << 26])?.1);
        msm::take_profile();
        gpu.msm_dense(BaseSet::H, &s[..1 << 26])?;
        let p = msm::take_profile();
        let note: Vec<String> = msm::PHASES
            .iter()
            .zip(p)
            .map(|(n, t)| format!("{n} {:.1}", t * 1e3))
            .collect();
        rep.row(
            "MSM 2^26 (phases synced, ms)",
            None,
            t,
            0.0,
            &note.join(" "),
        );
    }
    drop(s);
    // Without B_G2 (host-prep computes it) and with it (the gpu stage's default on CUDA).
    let steps = |t: &cuzk_kernels::cuda::GpuTimings| {
        let mut s: Vec<String> = t
            .steps(true)
            .iter()
            .map(|(name, d)| format!("{name} {:.0}", ms(*d)))
            .collect();
        s.push(format!("finish {:.0}", ms(t.finish)));
        // Of msm_l, msm_a, msm_b_g1, msm_b_g2: the batch additions of the ones (the rest
        // is each MSM's Pippenger tail); absent when streamed.
        for (name, d) in ["ones_l", "ones_a", "ones_b_g1", "ones_b_g2"]
            .iter()
            .zip(t.ones)
        {
            if d > std::time::Duration::ZERO {
                s.push(format!("{name} {:.1}", ms(d)));
            }
        }
        s.join(" ")
    };
    let mut resident = None;
    for (run, b_g2) in [(0, false), (1, false), (0, true), (1, true)] {
        let (r, t) = gpu.prove(&part.as_gpu(b_g2))?;
        let with = if b_g2 { " + B_G2" } else { "" };
        let name = format!("32GiB partition prove(){with} run {run}");
        rep.row(&name, None, ms(t.total), 0.0, &steps(&t));
        resident = Some(r);
    }

    // Back to back as the gpu stage runs them when the next slot is ready: each call
    // uploads the next partition's `a` and `b` (here the same bytes) under its L, A, B MSMs,
    // and the next call starts its NTTs without waiting for those copies. Run 0 has no upload
    // ahead to use; its results must equal the plain calls' above. Alternating with each
    // run: the same partition without its c, made on the device as a∘b as the gpu stage
    // proves (another H: c = a∘b is not the synthetic c; equal from run to run).
    let mut made_first = None;
    let mut key = 10;
    for run in 0..3u64 {
        for made in [false, true] {
            let mut input = part.as_gpu(true);
            if made {
                input.c = None;
            }
            let (r, t) = gpu.prove_ahead(&input, Some(key), || {
                Some(cuzk_kernels::cuda::Preload {
                    key: key + 1,
                    a: &part.a,
                    b: &part.b,
                    scalars: None,
                })
            })?;
            key += 1;
            let (name, ok) = if made {
                let ok = *made_first.get_or_insert(r) == r;
                (
                    format!("32GiB prove_ahead() + B_G2, c made as a∘b run {run}"),
                    ok,
                )
            } else {
                (
                    format!("32GiB prove_ahead() + B_G2 run {run}"),
                    Some(r) == resident,
                )
            };
            let note = format!(
                "a ahead {}, b ahead {}, {}",
                t.a_ahead,
                t.b_ahead,
                steps(&t)
            );
            rep.row(&name, Some(ok), ms(t.total), 0.0, &note);
        }
    }

    // The same partition with the bases streamed from the host, as on a device that cannot
    // hold the key: a prover limited to CUZK_STREAM_LIMIT_GIB (default 40) GiB, its results
    // compared with the resident prover's.
    if env_or("CUZK_SCALE_STREAM", 1) == 0 {
        return Ok(());
    }
    let t = Instant::now();
    let h = gpu.download_bases(BaseSet::H, counts[0])?;
    let l = gpu.download_bases(BaseSet::L, counts[1])?;
    let a = gpu.download_bases(BaseSet::A, counts[2])?;
    let b = gpu.download_bases(BaseSet::BG1, counts[3])?;
    let g2 = gpu.download_b_g2()?;
    drop(gpu);
    let srs = ResidentBases {
        h: &h,
        l: &l,
        a: &a,
        b_g1: &b,
        b_g2: Some(&g2),
    };
    let limit_gib: usize = std::env::var("CUZK_STREAM_LIMIT_GIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    let scalars = part.scalars.len().max(1 << 27);
    let mut sp = GpuProver::with_memory_limit(0, 27, scalars, srs, Some(limit_gib << 30))?;
    let mut pinned = 0usize;
    for (ptr, len) in [
        (h.as_ptr() as *const u8, std::mem::size_of_val(&h[..])),
        (l.as_ptr() as *const u8, std::mem::size_of_val(&l[..])),
        (a.as_ptr() as *const u8, std::mem::size_of_val(&a[..])),
        (b.as_ptr() as *const u8, std::mem::size_of_val(&b[..])),
        (g2.as_ptr() as *const u8, std::mem::size_of_val(&g2[..])),
        (
            part.a.as_ptr() as *const u8,
            std::mem::size_of_val(&part.a[..]),
        ),
        (
            part.b.as_ptr() as *const u8,
            std::mem::size_of_val(&part.b[..]),
        ),
        (
            part.c.as_ptr() as *const u8,
            std::mem::size_of_val(&part.c[..]),
        ),
        (
            part.scalars.as_ptr() as *const u8,
            std::mem::size_of_val(&part.scalars[..]),
        ),
    ] {
        // SAFETY: the vectors outlive `sp` (dropped at the end of this function, before
        // them) and are never reallocated.
        match unsafe { sp.register_host(ptr as *mut u8, len, false) } {
            Ok(()) => pinned += len,
            Err(e) => println!("register_host: {e}"),
        }
    }
    rep.row(
        &format!("streaming prover ({limit_gib} GiB limit)"),
        None,
        0.0,
        ms(t.elapsed()),
        &format!(
            "{}; bases downloaded, {:.1} GiB page-locked",
            sp.describe(),
            pinned as f64 / (1u64 << 30) as f64
        ),
    );
    for run in 0..2 {
        let mut input = part.as_gpu(true);
        input.bases = Some(srs);
        let (r, t) = sp.prove(&input)?;
        rep.row(
            &format!("32GiB prove() + B_G2, bases streamed, run {run}"),
            Some(Some(r) == resident),
            ms(t.total),
            0.0,
            &steps(&t),
        );
    }
    Ok(())
}

/// The MSM's accumulation variants side by side on the same inputs: chunking (one full wave
/// against the old 2^17 threads) and register caps, dense 2^26 and 2^27 and a batch
/// addition of 2^26 ones; every result checked equal to the first configuration's (the
/// old one, itself checked against the CPU by `correctness`).
pub(crate) fn msm_variants(seed: u64, rep: &mut Report) -> Result<(), GpuError> {
    use msm::{AccumulateBuild as B, Chunking as C};
    let n27 = (1usize << 27) - 1;
    let (mut gpu, _) = GpuProver::new_synthetic(0, 27, 1 << 27, [n27, 1 << 26, 0, 0], false, seed)?;
    println!("device: {}", gpu.describe());
    let s = rand_scalars(n27, seed ^ 78);
    let ones: Vec<u32> = (0..1u32 << 26).collect();
    let ones_plan = PlanRef {
        ones: &ones,
        terms: &[],
    };
    // This build's multiplications against the CPU first: MSM and NTT 2^20.
    {
        let n = 1usize << 20;
        let bases = gpu.download_bases(BaseSet::H, n)?;
        let (g, _) = gpu.msm_dense(BaseSet::H, &s[..n])?;
        let terms: Vec<[u32; 2]> = (0..n as u32).map(|i| [i, i]).collect();
        let c = PlanRef {
            ones: &[],
            terms: &terms,
        }
        .execute(&bases, &s[..n]);
        rep.row("MSM 2^20 dense vs CPU", Some(g == c), 0.0, 0.0, "");
        let x = rand_frs(n, seed ^ 20);
        let mut g = x.clone();
        gpu.ntt(&mut g, false)?;
        let mut c = x;
        ntt::ntt(&mut c, &Domain::new(20));
        rep.row("NTT 2^20 forward vs CPU", Some(g == c), 0.0, 0.0, "");
    }
    ntt_best_of_3(&mut gpu, rand_frs(1 << 27, seed ^ 27), 27, rep)?;
    // The old configuration first (the ratios' base), the default second.
    let configs = [
        (C::Fixed, B::R80),
        (C::Waves, B::DEFAULT),
        (C::Waves, B::R80),
    ];
    let mut want: Vec<Option<G1Projective>> = vec![None; 3];
    let mut base_ms = [0.0f64; 3];
    for (ci, &(chunking, build)) in configs.iter().enumerate() {
        msm::set_chunking(chunking);
        msm::set_accumulate_build(build);
        let jobs: [(&str, usize); 3] =
            [("MSM 2^26", 1 << 26), ("MSM 2^27-1", n27), ("ones 2^26", 0)];
        for (ji, &(what, n)) in jobs.iter().enumerate() {
            // 2^27 only for the old and the default configuration (device time).
            if n == n27 && ci > 1 {
                continue;
            }
            let mut best = f64::MAX;
            let mut same = true;
            for _ in 0..2 {
                let (g, t) = if n == 0 {
                    gpu.msm(BaseSet::L, ones_plan, &s[..1])?
                } else {
                    gpu.msm_dense(BaseSet::H, &s[..n])?
                };
                best = best.min(ms(t));
                match want[ji] {
                    None => want[ji] = Some(g),
                    Some(w) => same &= w == g,
                }
            }
            if ci == 0 {
                base_ms[ji] = best;
            }
            rep.row(
                &format!("{what} {chunking:?} {build:?}"),
                Some(same),
                best,
                0.0,
                &format!("old/this {:.3}x", base_ms[ji] / best),
            );
        }
    }
    msm::set_chunking(C::Waves);
    msm::set_accumulate_build(B::DEFAULT);
    Ok(())
}

/// MSM time by window width at several sizes (dense, full-width scalars), each result
/// checked equal to the size-chosen width's.
pub(crate) fn sweep(seed: u64, rep: &mut Report) -> Result<(), GpuError> {
    // CUZK_SWEEP_LOGS: the sizes (default 14,16,18,20,22), each a power of two (up to 40)
    // or a term count (e.g. 13000000, the 32 GiB L and A MSMs' full-width terms), at most
    // 2^26; CUZK_SWEEP_MIN_C: the narrowest width (default 8). With CUZK_MSM_PROFILE each
    // cell also shows the phases.
    let sizes: Vec<usize> = env_list("CUZK_SWEEP_LOGS", "14,16,18,20,22")
        .into_iter()
        .map(|v| if v <= 40 { 1usize << v } else { v as usize })
        .filter(|&n| n <= 1 << 26)
        .collect();
    let most = sizes.iter().copied().max().unwrap_or(1);
    let max = most.next_power_of_two().trailing_zeros().max(10);
    let (mut gpu, _) =
        GpuProver::new_synthetic(0, max, 1 << max, [1 << max, 0, 0, 0], false, seed)?;
    let s = rand_scalars(1 << max, seed ^ 9);
    let min_c = env_or("CUZK_SWEEP_MIN_C", 8u32);
    for n in sizes {
        msm::force_window_width(0);
        let (want, t_auto) = gpu.msm_dense(BaseSet::H, &s[..n])?;
        let mut ok = true;
        let mut cells = Vec::new();
        let mut best = (f64::MAX, 0);
        for c in min_c..=msm::MAX_C {
            msm::force_window_width(c);
            let mut t = f64::MAX;
            msm::take_profile();
            for _ in 0..2 {
                let (g, d) = gpu.msm_dense(BaseSet::H, &s[..n])?;
                ok &= g == want;
                t = t.min(ms(d));
            }
            if t < best.0 {
                best = (t, c);
            }
            let p = msm::take_profile();
            if p.iter().sum::<f64>() > 0.0 {
                // Per phase, the two runs' sum halved: digits, scatter, accumulate, fixup,
                // reduce.
                let ph: Vec<String> = p.iter().map(|x| format!("{:.1}", x * 500.0)).collect();
                cells.push(format!("{c}:{t:.1}[{}]", ph.join("/")));
            } else {
                cells.push(format!("{c}:{t:.1}"));
            }
        }
        msm::force_window_width(0);
        let auto = msm::Windows::for_terms(n).c;
        let what = match n.is_power_of_two() {
            true => format!(
                "MSM 2^{} by width (auto c={auto}, best c={})",
                n.trailing_zeros(),
                best.1
            ),
            false => format!("MSM {n} by width (auto c={auto}, best c={})", best.1),
        };
        rep.row(&what, Some(ok), ms(t_auto), 0.0, &cells.join(" "));
    }
    Ok(())
}

/// The forward NTT of `x` (2^log elements) timed best of 3, then the inverse: a row that
/// says whether the round trip gave `x` back.
pub(crate) fn ntt_best_of_3(
    gpu: &mut GpuProver,
    x: Vec<Fr>,
    log: u32,
    rep: &mut Report,
) -> Result<(), GpuError> {
    let (best, _, back) = ntt_timed(gpu, &x)?;
    rep.row(
        &format!("NTT 2^{log} fwd (best of 3) + round trip"),
        Some(back),
        best,
        0.0,
        "",
    );
    Ok(())
}

/// The forward NTT of x three times: the best time (ms), the forward result, and whether
/// the inverse of it gives x back.
fn ntt_timed(gpu: &mut GpuProver, x: &[Fr]) -> Result<(f64, Vec<Fr>, bool), GpuError> {
    let mut g = x.to_vec();
    let mut best = f64::MAX;
    for _ in 0..3 {
        g.copy_from_slice(x);
        best = best.min(ms(gpu.ntt(&mut g, false)?));
    }
    let fwd = g.clone();
    gpu.ntt(&mut g, true)?;
    Ok((best, fwd, g == x))
}

/// The accumulation builds and window widths side by side on the same inputs (dense
/// full-width MSMs 2^26 and 2^27 − 1, best of 2 each), every result checked equal to the
/// first configuration's (the default build at the automatic width). `CUZK_ACCUM_CONFIGS`
/// picks configurations as `build:c` pairs (c = 0: automatic), comma-separated.
pub(crate) fn accum_variants(seed: u64, rep: &mut Report) -> Result<(), GpuError> {
    use msm::AccumulateBuild as B;
    let n27 = (1usize << 27) - 1;
    let (mut gpu, _) = GpuProver::new_synthetic(0, 27, 1 << 27, [n27, 0, 0, 0], false, seed)?;
    println!("device: {}", gpu.describe());
    let s = rand_scalars(n27, seed ^ 78);
    let builds = [
        ("split", B::Split),
        ("wide", B::Wide),
        ("flat", B::NoPrefetch),
        ("r80", B::R80),
    ];
    let spec = std::env::var("CUZK_ACCUM_CONFIGS")
        .unwrap_or_else(|_| "split:20,wide:20,flat:20,split:22,wide:22".into());
    let mut configs = Vec::new();
    for item in spec.split(',') {
        let (b, c) = item.split_once(':').unwrap_or((item, "0"));
        let build = builds
            .iter()
            .find(|(n, _)| *n == b)
            .map(|(_, x)| *x)
            .ok_or_else(|| GpuError::Input(format!("unknown build {b}")))?;
        configs.push((b, build, c.parse::<u32>().unwrap_or(0)));
    }
    let sizes: [(&str, usize); 2] = [("MSM 2^26", 1 << 26), ("MSM 2^27-1", n27)];
    let mut want: [Option<G1Projective>; 2] = [None, None];
    let mut base_ms = [0.0f64; 2];
    for (ci, &(name, build, c)) in configs.iter().enumerate() {
        msm::set_accumulate_build(build);
        msm::force_window_width(c);
        for (ji, &(what, n)) in sizes.iter().enumerate() {
            let mut best = f64::MAX;
            let mut same = true;
            for _ in 0..2 {
                let (g, t) = gpu.msm_dense(BaseSet::H, &s[..n])?;
                best = best.min(ms(t));
                match want[ji] {
                    None => want[ji] = Some(g),
                    Some(w) => same &= w == g,
                }
            }
            if ci == 0 {
                base_ms[ji] = best;
            }
            let shown = if c == 0 {
                msm::Windows::for_terms(n).c
            } else {
                c
            };
            rep.row(
                &format!("{what} {name} c={shown}"),
                Some(same),
                best,
                0.0,
                &format!("first/this {:.3}x", base_ms[ji] / best),
            );
        }
    }
    msm::force_window_width(0);
    msm::set_accumulate_build(B::DEFAULT);
    Ok(())
}

/// One dense full-width MSM of 2^log terms (for a profiler: `ncu -k regex:msm_accumulate`),
/// with the accumulation build `CUZK_ACCUM_BUILD` names (see main) and the width by
/// `CUZK_FORCE_C` (0: automatic); with `CUZK_MSM_PROFILE`, the phases' times.
pub(crate) fn msm_once(seed: u64, log: u32, rep: &mut Report) -> Result<(), GpuError> {
    let n = 1usize << log;
    let (mut gpu, _) = GpuProver::new_synthetic(0, log, n, [n, 0, 0, 0], false, seed)?;
    let name = std::env::var("CUZK_ACCUM_BUILD").unwrap_or_default();
    let c = env_or("CUZK_FORCE_C", 0u32);
    msm::force_window_width(c);
    let s = rand_scalars(n, seed ^ 5);
    let (_, t) = gpu.msm_dense(BaseSet::H, &s)?;
    msm::take_profile();
    let (_, t2) = gpu.msm_dense(BaseSet::H, &s)?;
    let p = msm::take_profile();
    let phases: Vec<String> = msm::PHASES
        .iter()
        .zip(p)
        .map(|(n, s)| format!("{n} {:.1}", s * 1e3))
        .collect();
    rep.row(
        &format!("MSM 2^{log} {name} c={c}"),
        None,
        ms(t).min(ms(t2)),
        0.0,
        &phases.join(", "),
    );
    msm::force_window_width(0);
    Ok(())
}

/// NTT 2^18, 2^20, 2^24, 2^27 alone with each radix-2^9 pass kernel, and the default
/// kernel without the full tables (best of 3, the forward result against the shared-memory
/// kernel's, and a round trip each): the cheapest timing of the Fr product in device time,
/// for builds compared side by side.
pub(crate) fn ntt_only(seed: u64, rep: &mut Report) -> Result<(), GpuError> {
    let (mut gpu, _) = GpuProver::new_synthetic(0, 27, 1 << 27, [1 << 10, 0, 0, 0], false, seed)?;
    println!("device: {}", gpu.describe());
    use cuzk_kernels::cuda::{set_full_tables, set_pass_build, NttPassBuild as PassBuild};
    for log in [18, 20, 24, 27] {
        // Each radix-2^9 pass kernel on the same input, its forward result against the
        // shared-memory kernel's (2^18 and 2^27 are all radix-2^9 passes; 2^20 and 2^24
        // have none, so their rows time one kernel three times). Beyond 2^18 the last
        // pass's twiddles come from the full table, except in the "no full" row.
        let x = rand_frs(1 << log, seed ^ log as u64);
        let mut want: Option<Vec<Fr>> = None;
        for (name, b, full) in [
            ("shared", PassBuild::Shared, true),
            ("r9", PassBuild::R9, true),
            ("r9u", PassBuild::R9Uncapped, true),
            ("r9 no full", PassBuild::R9, false),
        ] {
            set_pass_build(b);
            set_full_tables(full);
            let (best, fwd, back) = ntt_timed(&mut gpu, &x)?;
            let same = *want.get_or_insert_with(|| fwd.clone()) == fwd;
            rep.row(
                &format!("NTT 2^{log} {name} fwd (best of 3) + round trip"),
                Some(same && back),
                best,
                0.0,
                "forward equal to shared's",
            );
        }
        set_pass_build(PassBuild::R9);
        set_full_tables(true);
    }
    Ok(())
}
