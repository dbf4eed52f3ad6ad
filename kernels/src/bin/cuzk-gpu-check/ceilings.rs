//! `cuzk-gpu-check ceilings`: the field products and the madd alone, in registers, one full
//! wave each (`GpuProver::ceilings`), against the multiply-add rate the floors count with.

use super::*;
use cuzk_kernels::cuda::FLOOR_RATE;

pub(crate) fn ceilings(seed: u64, rep: &mut Report) -> Result<(), GpuError> {
    // Inputs for the largest full wave (2048 threads on each of up to 160 SMs).
    let n = 2048 * 160;
    let (mut gpu, _) = GpuProver::new_synthetic(0, 22, 1 << 10, [1 << 10, 0, 0, 0], false, seed)?;
    let fr = (rand_frs(n, seed ^ 1), rand_frs(n, seed ^ 2));
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 3);
    let mut rand_fps = || (0..n).map(|_| Fp::random(&mut rng)).collect::<Vec<_>>();
    let fp = (rand_fps(), rand_fps());
    let points: Vec<G1Affine> = (0..64)
        .map(|_| G1Projective::random(&mut rng).to_affine())
        .collect();
    let y32 = rng.next_u32() | 1;
    let secs = env_or("CUZK_CEILING_SECS", 0.2f64);
    println!(
        "floor rate: {:.1} T 32-bit multiply-adds a second",
        FLOOR_RATE / 1e12
    );
    // Each kernel as many blocks an SM as fit, then at the accumulation's 4 (16 warps an SM).
    for per_sm in [None, Some(4)] {
        let at = per_sm.map_or("full".to_string(), |b| format!("{b}/SM"));
        for c in gpu.ceilings(secs, per_sm, (&fr.0, &fr.1), (&fp.0, &fp.1), &points, y32)? {
            rep.row(
                &format!("{} [{at}]", c.name),
                Some(c.ok),
                c.time.as_secs_f64() * 1e3,
                0.0,
                &format!(
                    "{:.4} ns a unit, {:.1} % of the floor rate ({} counted multiply-adds a unit; {} threads x {} iterations)",
                    c.ns_per_unit(),
                    100.0 * c.of_floor_rate(),
                    c.macs_per_unit,
                    c.threads,
                    c.iters
                ),
            );
        }
    }
    Ok(())
}
