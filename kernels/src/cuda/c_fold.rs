//! The circuit's C folded into L on the device (c_fold.cu; docs/gpu.md "C folded into L"),
//! once per proving key when the prover starts, after LD' is made: L' = L − Cᵀ·LD' and the
//! inputs' Q = Cᵀ·LD'. The CPU reference is `groth16::folded::fold_c_into_l` (minutes at
//! 32 GiB on the host's threads: ~24 M full-width products; seconds here).

use std::time::{Duration, Instant};

use blstrs::G1Affine;
use group::prime::PrimeCurveAffine;

use super::device::{args, Device};
use super::layout::{AFFINE_BYTES, FR_BYTES};
use super::GpuError;
use crate::witness::c_matrix::CMatrix;

/// (L', Q_inputs) of `l` (one point an aux variable of C's circuit) and `ld` (LD', a point
/// a row of C at least) on `dev`, in an allocation of its own released before returning (so
/// call it before the plan's one allocation), and the device time.
pub(crate) fn fold_on_device(
    dev: &mut Device,
    l: &[G1Affine],
    ld: &[G1Affine],
    c: &CMatrix,
) -> Result<(Vec<G1Affine>, Vec<G1Affine>, Duration), GpuError> {
    use super::error::Step;
    if l.len() != c.num_aux || ld.len() < c.rows {
        return Err(GpuError::Input(format!(
            "C of {} aux variables and {} rows for {} L and {} LD' points",
            c.num_aux,
            c.rows,
            l.len(),
            ld.len()
        )));
    }
    let (start, rows, coeff_of) = c.by_var().columns();
    let (mags, negs) = c.signed_magnitudes();
    let vars = c.num_inputs + c.num_aux;
    let u32s = |n: usize| n * 4;
    dev.ctx.bind_to_thread().step("bind context")?;
    dev.allocate(
        (vars + l.len() + ld.len()) * AFFINE_BYTES
            + u32s(start.len() + 2 * rows.len() + negs.len())
            + mags.len() * FR_BYTES
            + 8 * 256,
    )?;
    let out = dev.carve(vars * AFFINE_BYTES);
    let l_buf = dev.carve(l.len() * AFFINE_BYTES);
    let ld_buf = dev.carve(ld.len() * AFFINE_BYTES);
    let start_buf = dev.carve(u32s(start.len()));
    let rows_buf = dev.carve(u32s(rows.len()).max(4));
    let coeff_buf = dev.carve(u32s(coeff_of.len()).max(4));
    let mags_buf = dev.carve((mags.len() * FR_BYTES).max(FR_BYTES));
    let negs_buf = dev.carve(u32s(negs.len()).max(4));
    let ks = dev.compute;
    let started = Instant::now();
    dev.upload(l_buf.ptr, l_buf.bytes, l, ks)?;
    dev.upload(ld_buf.ptr, ld_buf.bytes, ld, ks)?;
    dev.upload(start_buf.ptr, start_buf.bytes, &start, ks)?;
    dev.upload(rows_buf.ptr, rows_buf.bytes, &rows, ks)?;
    dev.upload(coeff_buf.ptr, coeff_buf.bytes, &coeff_of, ks)?;
    dev.upload(mags_buf.ptr, mags_buf.bytes, &mags, ks)?;
    dev.upload(negs_buf.ptr, negs_buf.bytes, &negs, ks)?;
    let (vars32, n_in) = (vars as u32, c.num_inputs as u32);
    // SAFETY: c_fold(out, l, ld, start, rows, coeff_of, mags, negs, vars, n_in): out holds
    // vars points, l the n_aux = vars − n_in points it reads at k − n_in, ld every row C
    // names, start vars + 1 offsets into rows and coeff_of, whose indices are below the
    // coefficient count mags and negs hold (all carved above).
    unsafe {
        dev.launch(
            "fold C into L",
            dev.k.c_fold,
            vars32.div_ceil(128),
            128,
            0,
            ks,
            &mut args![
                out.ptr,
                l_buf.ptr,
                ld_buf.ptr,
                start_buf.ptr,
                rows_buf.ptr,
                coeff_buf.ptr,
                mags_buf.ptr,
                negs_buf.ptr,
                vars32,
                n_in
            ],
        )?;
    }
    let mut folded = vec![G1Affine::identity(); vars];
    dev.download(&mut folded, out.ptr, ks)?;
    dev.sync(ks)?;
    let took = started.elapsed();
    dev.release()?;
    let l_folded = folded.split_off(c.num_inputs);
    Ok((l_folded, folded, took))
}
