//! Where each vector of a `.params` / `.vk` file sits, found by reading only the counts.
//!
//! Layout (bellperson `Parameters::write`): the verifying key (alpha_g1, beta_g1, beta_g2,
//! gamma_g2, delta_g1, delta_g2, then ic as a u32 big-endian count and points), then h, l,
//! a, b_g1, b_g2, each a u32 big-endian count followed by uncompressed affine points
//! (G1: 96 bytes, G2: 192 bytes, big-endian coordinates).

use std::path::Path;

use super::SrsError;

pub const G1_BYTES: u64 = 96;
pub const G2_BYTES: u64 = 192;

/// A run of points in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VectorSpan {
    pub name: &'static str,
    /// Offset of the first point (after the count).
    pub offset: u64,
    pub count: usize,
    pub point_bytes: u64,
}

impl VectorSpan {
    pub fn end(&self) -> u64 {
        self.offset + self.count as u64 * self.point_bytes
    }
}

/// Offsets of the fixed verifying-key points and of every vector.
#[derive(Clone, Debug)]
pub struct ParamsLayout {
    pub alpha_g1: u64,
    pub beta_g1: u64,
    pub beta_g2: u64,
    pub gamma_g2: u64,
    pub delta_g1: u64,
    pub delta_g2: u64,
    pub ic: VectorSpan,
    /// h, l, a, b_g1, b_g2: absent for a `.vk` file.
    pub vectors: Option<[VectorSpan; 5]>,
    pub end: u64,
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: u64,
    path: &'a Path,
}

impl Cursor<'_> {
    fn need(&self, vector: &'static str, needed: u64) -> Result<(), SrsError> {
        let len = self.bytes.len() as u64;
        if self.at.checked_add(needed).is_none_or(|e| e > len) {
            return Err(SrsError::Truncated {
                path: self.path.to_path_buf(),
                vector,
                offset: self.at,
                needed,
                file_len: len,
            });
        }
        Ok(())
    }

    fn point(&mut self, vector: &'static str, size: u64) -> Result<u64, SrsError> {
        self.need(vector, size)?;
        self.at += size;
        Ok(self.at - size)
    }

    fn vector(&mut self, name: &'static str, point_bytes: u64) -> Result<VectorSpan, SrsError> {
        self.need(name, 4)?;
        let at = self.at as usize;
        let count = u32::from_be_bytes(self.bytes[at..at + 4].try_into().unwrap()) as usize;
        self.at += 4;
        let span = VectorSpan {
            name,
            offset: self.at,
            count,
            point_bytes,
        };
        self.need(name, count as u64 * point_bytes)?;
        self.at = span.end();
        Ok(span)
    }
}

impl ParamsLayout {
    /// Scans the counts of a `.params` file (`with_vectors`) or a `.vk` file.
    pub fn scan(bytes: &[u8], path: &Path, with_vectors: bool) -> Result<Self, SrsError> {
        let mut c = Cursor { bytes, at: 0, path };
        let alpha_g1 = c.point("vk.alpha_g1", G1_BYTES)?;
        let beta_g1 = c.point("vk.beta_g1", G1_BYTES)?;
        let beta_g2 = c.point("vk.beta_g2", G2_BYTES)?;
        let gamma_g2 = c.point("vk.gamma_g2", G2_BYTES)?;
        let delta_g1 = c.point("vk.delta_g1", G1_BYTES)?;
        let delta_g2 = c.point("vk.delta_g2", G2_BYTES)?;
        let ic = c.vector("vk.ic", G1_BYTES)?;
        let vectors = if with_vectors {
            Some([
                c.vector("h", G1_BYTES)?,
                c.vector("l", G1_BYTES)?,
                c.vector("a", G1_BYTES)?,
                c.vector("b_g1", G1_BYTES)?,
                c.vector("b_g2", G2_BYTES)?,
            ])
        } else {
            None
        };
        let end = c.at;
        if end != bytes.len() as u64 {
            return Err(SrsError::TrailingBytes {
                path: path.to_path_buf(),
                offset: end,
                extra: bytes.len() as u64 - end,
            });
        }
        Ok(ParamsLayout {
            alpha_g1,
            beta_g1,
            beta_g2,
            gamma_g2,
            delta_g1,
            delta_g2,
            ic,
            vectors,
            end,
        })
    }
}
