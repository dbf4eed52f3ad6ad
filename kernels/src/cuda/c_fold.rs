//! The circuit's C folded into L on the device (c_fold.cu; docs/gpu.md "C folded into L"),
//! once per proving key when the prover starts, after LD' is made: L' = L − Cᵀ·LD' and the
//! inputs' Q = Cᵀ·LD'. The CPU reference is `groth16::folded::fold_c_into_l` (minutes at
//! 32 GiB on the host's threads: ~24 M full-width products; seconds here).

use std::time::{Duration, Instant};

use blstrs::G1Affine;
use group::prime::PrimeCurveAffine;

use super::device::{args, Device};
use super::layout::{AFFINE_BYTES, FR_BYTES, XYZZ_BYTES};
use super::GpuError;
use crate::msm::mix::bit_length;
use crate::msm::scalars::Limbs;
use crate::witness::matrix::R1csMatrix;

/// (L', Q_inputs) of `l` (one point an aux variable of C's circuit) and `ld` (LD', a point
/// a row of C at least) on `dev`, in an allocation of its own released before returning (so
/// call it before the plan's one allocation), and the device time.
pub(crate) fn fold_on_device(
    dev: &mut Device,
    l: &[G1Affine],
    ld: &[G1Affine],
    c: &R1csMatrix,
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
    let (vstart, cstart) = fold_chunks(&start, &coeff_of, &mags, CHUNK_COST);
    let chunks = cstart.len() - 1;
    let vars = c.num_inputs + c.num_aux;
    let u32s = |n: usize| n * 4;
    dev.ctx.bind_to_thread().step("bind context")?;
    dev.allocate(
        (vars + l.len() + ld.len()) * AFFINE_BYTES
            + chunks.max(1) * XYZZ_BYTES
            + u32s(vstart.len() + cstart.len() + 2 * rows.len() + negs.len())
            + mags.len() * FR_BYTES
            + 9 * 256,
    )?;
    let out = dev.carve(vars * AFFINE_BYTES);
    let l_buf = dev.carve(l.len() * AFFINE_BYTES);
    let ld_buf = dev.carve(ld.len() * AFFINE_BYTES);
    let partial = dev.carve(chunks.max(1) * XYZZ_BYTES);
    let vstart_buf = dev.carve(u32s(vstart.len()));
    let cstart_buf = dev.carve(u32s(cstart.len()));
    let rows_buf = dev.carve(u32s(rows.len()).max(4));
    let coeff_buf = dev.carve(u32s(coeff_of.len()).max(4));
    let mags_buf = dev.carve((mags.len() * FR_BYTES).max(FR_BYTES));
    let negs_buf = dev.carve(u32s(negs.len()).max(4));
    let ks = dev.compute;
    let started = Instant::now();
    dev.upload(l_buf.ptr, l_buf.bytes, l, ks)?;
    dev.upload(ld_buf.ptr, ld_buf.bytes, ld, ks)?;
    dev.upload(vstart_buf.ptr, vstart_buf.bytes, &vstart, ks)?;
    dev.upload(cstart_buf.ptr, cstart_buf.bytes, &cstart, ks)?;
    dev.upload(rows_buf.ptr, rows_buf.bytes, &rows, ks)?;
    dev.upload(coeff_buf.ptr, coeff_buf.bytes, &coeff_of, ks)?;
    dev.upload(mags_buf.ptr, mags_buf.bytes, &mags, ks)?;
    dev.upload(negs_buf.ptr, negs_buf.bytes, &negs, ks)?;
    let (vars32, n_in, chunks32) = (vars as u32, c.num_inputs as u32, chunks as u32);
    // SAFETY: c_fold_chunks(partial, ld, cstart, rows, coeff_of, mags, negs, chunks):
    // partial holds `chunks` XYZZ points, cstart chunks + 1 offsets into rows and coeff_of,
    // ld every row C names, coefficient indices below the count mags and negs hold;
    // c_fold_sum(out, l, partial, vstart, vars, n_in): out holds vars points, l the
    // n_aux = vars − n_in points it reads at k − n_in, vstart vars + 1 offsets into partial
    // (all carved above, launched in order on one stream).
    unsafe {
        if chunks32 > 0 {
            dev.launch(
                "fold C into L: chunks",
                dev.k.c_fold_chunks,
                chunks32.div_ceil(128),
                128,
                0,
                ks,
                &mut args![
                    partial.ptr,
                    ld_buf.ptr,
                    cstart_buf.ptr,
                    rows_buf.ptr,
                    coeff_buf.ptr,
                    mags_buf.ptr,
                    negs_buf.ptr,
                    chunks32
                ],
            )?;
        }
        dev.launch(
            "fold C into L: sums",
            dev.k.c_fold_sum,
            vars32.div_ceil(128),
            128,
            0,
            ks,
            &mut args![
                out.ptr,
                l_buf.ptr,
                partial.ptr,
                vstart_buf.ptr,
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

/// A chunk's cost bound, in coefficient bits (an entry costs its magnitude's bit length, at
/// least 1): about 16 full-width products a thread, so the ONE variable's ~10^4 wide
/// entries at 2 KiB spread over ~600 threads and the usual variable (a few small
/// coefficients) is one chunk.
pub const CHUNK_COST: u32 = 4096;

/// Each variable's entries (`start`, from `ByVar::columns`) cut into chunks of at most
/// `budget` cost, never across variables: (vstart, cstart), variable k's chunks
/// vstart[k]..vstart[k + 1], chunk i's entries cstart[i]..cstart[i + 1]. A variable
/// without entries has no chunk; one entry costlier than `budget` is a chunk of its own.
pub fn fold_chunks(
    start: &[u32],
    coeff_of: &[u32],
    mags: &[Limbs],
    budget: u32,
) -> (Vec<u32>, Vec<u32>) {
    let cost: Vec<u32> = mags.iter().map(|m| bit_length(m).max(1) as u32).collect();
    let mut vstart = Vec::with_capacity(start.len());
    let mut cstart = Vec::with_capacity(start.len());
    for w in start.windows(2) {
        vstart.push(cstart.len() as u32);
        // The cost of the chunk open for this variable (None: the variable's first entry
        // opens one).
        let mut spent: Option<u32> = None;
        for e in w[0]..w[1] {
            let c = cost[coeff_of[e as usize] as usize];
            let open = match spent {
                Some(s) if s + c <= budget => s,
                _ => {
                    cstart.push(e);
                    0
                }
            };
            spent = Some(open + c);
        }
    }
    vstart.push(cstart.len() as u32);
    cstart.push(*start.last().unwrap_or(&0));
    (vstart, cstart)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entry in exactly one chunk, chunks in order and within their variable, each
    /// within the budget unless it is one entry; variables without entries get none.
    #[test]
    fn chunks_cover_each_variables_entries_within_the_budget() {
        // Coefficients: 1 (cost 1), 2^40 (41), a 255-bit one.
        let mags: Vec<Limbs> = vec![[1, 0, 0, 0], [1 << 40, 0, 0, 0], [7, 7, 7, 1 << 62]];
        let per_var: Vec<Vec<u32>> = vec![
            vec![],
            vec![0; 5],
            vec![2; 40],
            vec![],
            vec![1, 2, 0, 2, 1, 1, 1, 2],
            vec![2],
        ];
        let mut start = vec![0u32];
        let mut coeff_of = Vec::new();
        for v in &per_var {
            coeff_of.extend(v);
            start.push(coeff_of.len() as u32);
        }
        for budget in [1, 100, 300, 1000, 4096] {
            let (vstart, cstart) = fold_chunks(&start, &coeff_of, &mags, budget);
            assert_eq!(vstart.len(), per_var.len() + 1);
            assert_eq!(*cstart.last().unwrap(), coeff_of.len() as u32);
            assert_eq!(*vstart.last().unwrap() as usize + 1, cstart.len());
            for (k, v) in per_var.iter().enumerate() {
                let (a, b) = (vstart[k] as usize, vstart[k + 1] as usize);
                assert_eq!(v.is_empty(), a == b, "var {k} budget {budget}");
                if v.is_empty() {
                    continue;
                }
                assert_eq!(
                    cstart[a], start[k],
                    "var {k}'s first chunk at its first entry"
                );
                assert_eq!(
                    cstart[b],
                    start[k + 1],
                    "var {k}'s chunks end at its last entry"
                );
                for i in a..b {
                    let (s, e) = (cstart[i] as usize, cstart[i + 1] as usize);
                    assert!(s < e, "no empty chunk");
                    let cost: u32 = coeff_of[s..e]
                        .iter()
                        .map(|&c| [1, 41, 255][c as usize])
                        .sum();
                    assert!(cost <= budget || e - s == 1, "chunk {i}: {cost} > {budget}");
                }
            }
        }
        // 40 wide entries at 4096: 16 a chunk (16 · 255 ≤ 4096 < 17 · 255), so 3 chunks.
        let (vstart, _) = fold_chunks(&start, &coeff_of, &mags, 4096);
        assert_eq!(vstart[3] - vstart[2], 3);
    }
}
