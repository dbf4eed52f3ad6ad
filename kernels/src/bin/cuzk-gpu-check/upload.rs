//! `cuzk-gpu-check upload`: a prover's resident SRS upload from pageable host memory, the
//! driver's own staging (`CUZK_UPLOAD_STAGING=0`) against our page-locked staging buffers,
//! same bases, interleaved, each result downloaded and compared with the host's bases.

use super::*;

pub(crate) fn upload(seed: u64, rep: &mut Report) -> Result<(), GpuError> {
    // 32 GiB sizes of H, L, A, B_G1 (G1 only: 41 GB), all cut from one synthetic vector of
    // 2^27 − 1 points made on the device and copied to the host.
    let n27 = (1usize << 27) - 1;
    let counts = [
        n27,
        synthetic::PORE_32G_AUX,
        synthetic::PORE_32G_AUX - 400_000,
        synthetic::PORE_32G_AUX / 4,
    ];
    let t = Instant::now();
    let host = {
        let (mut gen, _) = GpuProver::new_synthetic(0, 27, 1 << 20, [n27, 0, 0, 0], false, seed)?;
        gen.download_bases(BaseSet::H, n27)?
    };
    rep.row(
        "synthetic 2^27 - 1 points to the host",
        None,
        0.0,
        ms(t.elapsed()),
        "",
    );
    let bytes: usize = counts.iter().sum::<usize>() * std::mem::size_of::<G1Affine>();
    let mut best = [f64::MAX; 2];
    for round in 0..2 {
        for (i, staged) in [false, true].into_iter().enumerate() {
            std::env::set_var("CUZK_UPLOAD_STAGING", if staged { "1" } else { "0" });
            let t = Instant::now();
            let mut p = GpuProver::new(
                0,
                20,
                1 << 20,
                ResidentBases {
                    h: &host[..counts[0]],
                    l: &host[1..counts[1] + 1],
                    a: &host[2..counts[2] + 2],
                    b_g1: &host[3..counts[3] + 3],
                    b_g2: None,
                },
            )?;
            let took = ms(t.elapsed());
            best[i] = best[i].min(took);
            // What landed on the device is the host's bases (first round: the download of
            // 41 GB takes seconds).
            let ok = round > 0 || {
                let sets = [
                    (BaseSet::H, 0),
                    (BaseSet::L, 1),
                    (BaseSet::A, 2),
                    (BaseSet::BG1, 3),
                ];
                let mut same = true;
                for (set, off) in sets {
                    let got = p.download_bases(set, counts[off])?;
                    same &= got[..] == host[off..off + counts[off]];
                }
                same
            };
            let how = if staged {
                "page-locked staging"
            } else {
                "pageable (driver staging)"
            };
            rep.row(
                &format!("resident G1 SRS upload, {how}, run {round}"),
                Some(ok),
                took,
                0.0,
                &format!(
                    "{:.1} GB, {:.1} GB/s, new() wall incl. allocation",
                    bytes as f64 / 1e9,
                    bytes as f64 / took / 1e6
                ),
            );
        }
    }
    std::env::remove_var("CUZK_UPLOAD_STAGING");
    rep.row(
        "resident G1 SRS upload, staged vs pageable (best of 2, same run)",
        None,
        best[1],
        best[0],
        &format!("{:.2}x", best[0] / best[1]),
    );
    Ok(())
}
