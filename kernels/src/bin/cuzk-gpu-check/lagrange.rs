//! `cuzk-gpu-check lagrange`: H's bases in Lagrange form. LC and LD' made on the device
//! (`lagrange_bases_on`) against the CPU reference (`groth16::lagrange::lagrange_bases`) at
//! 2^10 and 2^12 on fresh random bases; then the transform timed at 2^16..2^22 (or the
//! sizes in `CUZK_LAGRANGE_LOGS`, e.g. "22 27": 2^27 is the 32 GiB domain itself, minutes
//! and ~40 GB of host memory), with the 32 GiB domain's cost extrapolated from each
//! (levels scale as n·log n). The partitions
//! proved in this form are checked by `correctness` (prove() against the CPU).

use super::*;
use cuzk_kernels::cuda::lagrange_bases_on;
use cuzk_kernels::groth16::lagrange::lagrange_bases;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

pub(crate) fn lagrange(seed: u64, rep: &mut Report) -> Result<(), GpuError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // The timed sizes repeat these points. 1021 of them, a prime: with a power of two the
    // bases would repeat with a period dividing n, so LD' (one scalar for every base) would
    // pair equal points in its first level and run the rest on infinity, many times faster
    // than on real bases (seen at 2^27: LD' took a fifth of LC's time).
    let pool: Vec<G1Affine> = (0..1021)
        .map(|_| G1Projective::random(&mut rng).to_affine())
        .collect();
    for log_n in [1u32, 10, 12] {
        let n = 1usize << log_n;
        // Fresh points for the checked sizes (a repeat and the point at infinity among them).
        let h: Vec<G1Affine> = (0..n - 1)
            .map(|i| match i {
                5 => G1Affine::identity(),
                9 => pool[0],
                _ => G1Projective::random(&mut rng).to_affine(),
            })
            .collect();
        let (lc, ld, t) = lagrange_bases_on(0, &h)?;
        let tc = Instant::now();
        let (want_lc, want_ld) = lagrange_bases(&h, log_n);
        let cpu = ms(tc.elapsed());
        let ok = lc == want_lc && ld == want_ld;
        rep.row(
            &format!("LC, LD' of 2^{log_n} against the CPU"),
            Some(ok),
            ms(t),
            cpu,
            &format!("LC {} LD' {}", lc == want_lc, ld == want_ld),
        );
    }
    let n27 = (1u64 << 27) as f64;
    for log_n in timed_logs() {
        let n = 1usize << log_n;
        let h: Vec<G1Affine> = (0..n - 1).map(|i| pool[i % pool.len()]).collect();
        let (_, _, t) = lagrange_bases_on(0, &h)?;
        let t = ms(t);
        let at27 = t * (n27 * 27.0) / (n as f64 * log_n as f64);
        rep.row(
            &format!("LC and LD' of 2^{log_n}"),
            None,
            t,
            0.0,
            &format!(
                "{:.1} ns a point and level; 2^27 (32 GiB) at this rate: {:.0} s",
                t * 1e6 / (n as f64 * log_n as f64),
                at27 / 1e3
            ),
        );
    }
    Ok(())
}

/// The timed sizes: `CUZK_LAGRANGE_LOGS` (logs 2..=27, separated by commas or spaces),
/// else 16 18 20 22.
fn timed_logs() -> Vec<u32> {
    env_list("CUZK_LAGRANGE_LOGS", "16,18,20,22")
        .into_iter()
        .filter(|l| (2..=27).contains(l))
        .map(|l| l as u32)
        .collect()
}
