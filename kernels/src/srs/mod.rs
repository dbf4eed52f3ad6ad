//! Reading the Groth16 parameters (SRS) users already have: bellperson / filecoin-proofs
//! `.params` and `.vk` files, memory-mapped and decoded in parallel.

mod decode;
mod error;
mod image;
mod layout;
mod load_progress;
mod synthetic;

pub use error::SrsError;
pub use image::{fill_image, image_len, view_image, SrsView};
pub use layout::{ParamsLayout, VectorSpan, G1_BYTES, G2_BYTES};
pub use synthetic::{fill_synthetic_image, synthetic_image_len};

use std::fs::File;
use std::path::Path;

use blstrs::{G1Affine, G2Affine};
use memmap2::Mmap;

/// How much to check of each point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Validation {
    /// On the curve and in the prime-order subgroup (the default: a point outside the
    /// subgroup can leak the witness through a proof).
    Full,
    /// On the curve only, for a file already checked once (what filecoin-proofs does
    /// when it maps its parameter files).
    Trusted,
}

/// The verifying key.
#[derive(Clone, Debug, PartialEq)]
pub struct VerifyingKey {
    pub alpha_g1: G1Affine,
    pub beta_g1: G1Affine,
    pub beta_g2: G2Affine,
    pub gamma_g2: G2Affine,
    pub delta_g1: G1Affine,
    pub delta_g2: G2Affine,
    /// One point per public input (ic[0] for the constant ONE).
    pub ic: Vec<G1Affine>,
}

/// The proving key: the verifying key and the five query vectors.
#[derive(Clone, Debug, PartialEq)]
pub struct Srs {
    pub vk: VerifyingKey,
    /// τ^i·Z(τ)/δ for i < n − 1.
    pub h: Vec<G1Affine>,
    /// (β·u_j(τ) + α·v_j(τ) + w_j(τ))/δ per aux variable.
    pub l: Vec<G1Affine>,
    /// u_j(τ) for inputs, then for aux variables that occur in A.
    pub a: Vec<G1Affine>,
    /// v_j(τ) in G1 for inputs, then aux variables, that occur in B.
    pub b_g1: Vec<G1Affine>,
    /// The same in G2.
    pub b_g2: Vec<G2Affine>,
}

fn map(path: &Path) -> Result<Mmap, SrsError> {
    let io = |source| SrsError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    // SAFETY: the mapping is read-only and lives only while this function's caller decodes
    // it; parameter files are not modified in place by any Filecoin tool (they are written
    // to a temporary name and renamed).
    unsafe { Mmap::map(&file) }.map_err(io)
}

fn read_vk(
    bytes: &[u8],
    path: &Path,
    layout: &ParamsLayout,
    v: Validation,
) -> Result<VerifyingKey, SrsError> {
    Ok(VerifyingKey {
        alpha_g1: decode::point_at(bytes, path, "vk.alpha_g1", layout.alpha_g1, v)?,
        beta_g1: decode::point_at(bytes, path, "vk.beta_g1", layout.beta_g1, v)?,
        beta_g2: decode::point_at(bytes, path, "vk.beta_g2", layout.beta_g2, v)?,
        gamma_g2: decode::point_at(bytes, path, "vk.gamma_g2", layout.gamma_g2, v)?,
        delta_g1: decode::point_at(bytes, path, "vk.delta_g1", layout.delta_g1, v)?,
        delta_g2: decode::point_at(bytes, path, "vk.delta_g2", layout.delta_g2, v)?,
        ic: decode::vector(bytes, path, &layout.ic, v, true)?,
    })
}

impl VerifyingKey {
    /// Reads a `.vk` file.
    pub fn read(path: &Path, validation: Validation) -> Result<Self, SrsError> {
        let bytes = map(path)?;
        let layout = ParamsLayout::scan(&bytes, path, false)?;
        read_vk(&bytes, path, &layout, validation)
    }
}

impl Srs {
    /// Reads a `.params` file.
    pub fn read(path: &Path, validation: Validation) -> Result<Self, SrsError> {
        let bytes = map(path)?;
        Self::from_bytes(&bytes, path, validation)
    }

    /// Scans a `.params` file's counts and offsets without decoding any point (fast: it
    /// reads the counts only), so buffers can be sized while the points decode.
    pub fn layout(path: &Path) -> Result<ParamsLayout, SrsError> {
        ParamsLayout::scan(&map(path)?, path, true)
    }

    /// Decodes a `.params` image already in memory; `path` names it in errors.
    pub fn from_bytes(bytes: &[u8], path: &Path, validation: Validation) -> Result<Self, SrsError> {
        let layout = ParamsLayout::scan(bytes, path, true)?;
        let vk = read_vk(bytes, path, &layout, validation)?;
        let [h, l, a, b_g1, b_g2] = layout.vectors.expect("scanned with vectors");
        // The prover never adds the identity: bellperson refuses it in these vectors too.
        Ok(Srs {
            vk,
            h: decode::vector(bytes, path, &h, validation, false)?,
            l: decode::vector(bytes, path, &l, validation, false)?,
            a: decode::vector(bytes, path, &a, validation, false)?,
            b_g1: decode::vector(bytes, path, &b_g1, validation, false)?,
            b_g2: decode::vector(bytes, path, &b_g2, validation, false)?,
        })
    }
}
