//! Decoding the file's uncompressed big-endian points into blst's in-memory form, in
//! parallel straight from the mapping.

use std::path::Path;

use blstrs::{G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;
use rayon::prelude::*;

use super::layout::VectorSpan;
use super::load_progress::PointsDone;
use super::{SrsError, Validation};

/// Flag bits in the first byte of a serialized point.
const COMPRESSED_FLAG: u8 = 0x80;
const INFINITY_FLAG: u8 = 0x40;

/// A point type as stored in the file.
pub trait FilePoint: PrimeCurveAffine + Send + Sync {
    const BYTES: usize;
    /// Decodes and checks the point is on the curve (blst always does that much).
    fn decode_on_curve(bytes: &[u8]) -> Option<Self>;
    fn in_subgroup(&self) -> bool;
}

impl FilePoint for G1Affine {
    const BYTES: usize = 96;
    fn decode_on_curve(bytes: &[u8]) -> Option<Self> {
        Option::from(G1Affine::from_uncompressed_unchecked(
            bytes.try_into().ok()?,
        ))
    }
    fn in_subgroup(&self) -> bool {
        self.is_torsion_free().into()
    }
}

impl FilePoint for G2Affine {
    const BYTES: usize = 192;
    fn decode_on_curve(bytes: &[u8]) -> Option<Self> {
        Option::from(G2Affine::from_uncompressed_unchecked(
            bytes.try_into().ok()?,
        ))
    }
    fn in_subgroup(&self) -> bool {
        self.is_torsion_free().into()
    }
}

/// What went wrong with one point, before the file and vector are attached.
type PointFault = &'static str;

fn decode_one<P: FilePoint>(
    bytes: &[u8],
    validation: Validation,
    allow_identity: bool,
) -> Result<P, PointFault> {
    if bytes[0] & COMPRESSED_FLAG != 0 {
        return Err("compressed encoding where an uncompressed point belongs");
    }
    if bytes[0] & INFINITY_FLAG != 0 && !allow_identity {
        return Err("point at infinity, which the prover cannot use");
    }
    let p =
        P::decode_on_curve(bytes).ok_or("not a point on the curve (bad coordinates or flags)")?;
    if validation == Validation::Full && !p.in_subgroup() {
        return Err("not in the prime-order subgroup");
    }
    Ok(p)
}

/// Decodes one point at `offset` (a verifying-key element).
pub fn point_at<P: FilePoint>(
    bytes: &[u8],
    path: &Path,
    vector: &'static str,
    offset: u64,
    validation: Validation,
) -> Result<P, SrsError> {
    let at = offset as usize;
    decode_one(&bytes[at..at + P::BYTES], validation, true).map_err(|reason| SrsError::BadPoint {
        path: path.to_path_buf(),
        vector,
        index: 0,
        offset,
        reason,
    })
}

/// Decodes a whole vector in parallel.
pub fn vector<P: FilePoint>(
    bytes: &[u8],
    path: &Path,
    span: &VectorSpan,
    validation: Validation,
    allow_identity: bool,
) -> Result<Vec<P>, SrsError> {
    let start = span.offset as usize;
    let raw = &bytes[start..start + span.count * P::BYTES];
    raw.par_chunks_exact(P::BYTES)
        .with_min_len(1 << 10)
        .enumerate()
        .map(|(index, b)| {
            decode_one(b, validation, allow_identity).map_err(|reason| SrsError::BadPoint {
                path: path.to_path_buf(),
                vector: span.name,
                index,
                offset: span.offset + (index * P::BYTES) as u64,
                reason,
            })
        })
        .collect()
}

/// Decodes a whole vector in parallel into `out` (exactly `span.count` points), e.g. a
/// shared segment.
pub fn vector_into<P: FilePoint>(
    bytes: &[u8],
    path: &Path,
    span: &VectorSpan,
    validation: Validation,
    allow_identity: bool,
    out: &mut [P],
    done: &PointsDone,
) -> Result<(), SrsError> {
    assert_eq!(out.len(), span.count);
    let start = span.offset as usize;
    let raw = &bytes[start..start + span.count * P::BYTES];
    // Blocks of points a task, each counted once decoded (the progress lines).
    const BLOCK: usize = 1 << 12;
    raw.par_chunks(BLOCK * P::BYTES)
        .zip(out.par_chunks_mut(BLOCK))
        .enumerate()
        .try_for_each(|(block, (raw, slots))| {
            for (k, (b, slot)) in raw.chunks_exact(P::BYTES).zip(slots.iter_mut()).enumerate() {
                let index = block * BLOCK + k;
                *slot = decode_one(b, validation, allow_identity).map_err(|reason| {
                    SrsError::BadPoint {
                        path: path.to_path_buf(),
                        vector: span.name,
                        index,
                        offset: span.offset + (index * P::BYTES) as u64,
                        reason,
                    }
                })?;
            }
            done.add(slots.len());
            Ok(())
        })
}
