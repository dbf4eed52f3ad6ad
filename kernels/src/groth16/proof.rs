//! A Groth16 proof and its 192-byte encoding.

use blstrs::{G1Affine, G2Affine};

/// π = (A ∈ G1, B ∈ G2, C ∈ G1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    pub a: G1Affine,
    pub b: G2Affine,
    pub c: G1Affine,
}

impl Proof {
    pub const BYTES: usize = 192;

    /// A (48 B) ‖ B (96 B) ‖ C (48 B), each compressed: bellperson's `Proof::write`.
    pub fn to_bytes(&self) -> [u8; Self::BYTES] {
        let mut out = [0u8; Self::BYTES];
        out[..48].copy_from_slice(&self.a.to_compressed());
        out[48..144].copy_from_slice(&self.b.to_compressed());
        out[144..].copy_from_slice(&self.c.to_compressed());
        out
    }
}
