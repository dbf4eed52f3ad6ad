//! A decoded SRS laid out flat in one byte buffer, so it can live in a shared segment:
//! decoded once per parameter file, then every process maps it and reads the points in
//! place (blst's Montgomery affine form), with no per-process copy.
//!
//! ```text
//! 0      header: magic, then the counts of ic, h, l, a, b_g1, b_g2 (u64 each)
//! 4096   vk: alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2
//! ...    ic, h, l, a, b_g1, b_g2, each starting on a 64-byte boundary
//! ```

use std::path::Path;

use blstrs::{G1Affine, G2Affine};

use super::decode;
use super::layout::ParamsLayout;
use super::load_progress;
use super::{read_vk, Srs, SrsError, Validation, VerifyingKey};
use crate::progress::LOG_EVERY;

const MAGIC: u64 = u64::from_le_bytes(*b"CUZKSRS1");
const HEADER_BYTES: usize = 4096;
const ALIGN: usize = 64;
pub(super) const G1: usize = std::mem::size_of::<G1Affine>();
pub(super) const G2: usize = std::mem::size_of::<G2Affine>();
const _: () = assert!(G1 == 96 && G2 == 192);
const _: () = assert!(std::mem::align_of::<G1Affine>() <= ALIGN);
const _: () = assert!(std::mem::align_of::<G2Affine>() <= ALIGN);

/// The proving key borrowed from an image (or from an owned [`Srs`]).
#[derive(Clone, Debug)]
pub struct SrsView<'a> {
    pub vk: VerifyingKey,
    pub h: &'a [G1Affine],
    pub l: &'a [G1Affine],
    pub a: &'a [G1Affine],
    pub b_g1: &'a [G1Affine],
    pub b_g2: &'a [G2Affine],
}

impl Srs {
    pub fn view(&self) -> SrsView<'_> {
        SrsView {
            vk: self.vk.clone(),
            h: &self.h,
            l: &self.l,
            a: &self.a,
            b_g1: &self.b_g1,
            b_g2: &self.b_g2,
        }
    }
}

/// Byte offsets of the image's parts.
pub(super) struct ImageLayout {
    pub(super) counts: [usize; 6],
    pub(super) vk: usize,
    pub(super) vectors: [usize; 6],
    pub(super) len: usize,
}

impl ImageLayout {
    pub(super) fn new(counts: [usize; 6]) -> Self {
        let align = |v: usize| v.div_ceil(ALIGN) * ALIGN;
        let vk = HEADER_BYTES;
        let mut at = align(vk + 3 * G1 + 3 * G2);
        let mut vectors = [0; 6];
        for (i, n) in counts.iter().enumerate() {
            vectors[i] = at;
            at = align(at + n * if i == 5 { G2 } else { G1 });
        }
        ImageLayout {
            counts,
            vk,
            vectors,
            len: at,
        }
    }

    fn of_params(layout: &ParamsLayout) -> Self {
        let [h, l, a, b_g1, b_g2] = layout.vectors.as_ref().expect("scanned with vectors");
        Self::new([
            layout.ic.count,
            h.count,
            l.count,
            a.count,
            b_g1.count,
            b_g2.count,
        ])
    }
}

/// Bytes an image of this parameter file takes.
pub fn image_len(layout: &ParamsLayout) -> usize {
    ImageLayout::of_params(layout).len
}

pub(super) fn slice_mut<P>(out: &mut [u8], at: usize, n: usize) -> &mut [P] {
    let bytes = &mut out[at..at + n * std::mem::size_of::<P>()];
    assert_eq!(bytes.as_ptr() as usize % std::mem::align_of::<P>(), 0);
    // SAFETY: in bounds (sliced above) and aligned (asserted); P is a blst affine point, a
    // repr(C) array of u64 limbs for which every bit pattern is a valid value, and the
    // slice borrows `out` exclusively.
    unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr() as *mut P, n) }
}

fn slice<P>(bytes: &[u8], at: usize, n: usize) -> Result<&[P], SrsError> {
    let end = n
        .checked_mul(std::mem::size_of::<P>())
        .and_then(|b| b.checked_add(at))
        .filter(|&e| e <= bytes.len())
        .ok_or(SrsError::Image("shorter than its counts say"))?;
    let part = &bytes[at..end];
    if !(part.as_ptr() as usize).is_multiple_of(std::mem::align_of::<P>()) {
        return Err(SrsError::Image("not aligned for points"));
    }
    // SAFETY: in bounds and aligned (checked above); the bytes were written by
    // `fill_image` from decoded points of type P, and every bit pattern is a valid P.
    Ok(unsafe { std::slice::from_raw_parts(part.as_ptr() as *const P, n) })
}

/// Decodes a `.params` image `params` (named `path` in errors) into `out`, which must be
/// `image_len` bytes, 64-byte aligned (a page of a mapping is). A load longer than half a
/// minute logs its progress (`load_progress`).
pub fn fill_image(
    params: &[u8],
    path: &Path,
    validation: Validation,
    out: &mut [u8],
) -> Result<(), SrsError> {
    let layout = ParamsLayout::scan(params, path, true)?;
    let img = ImageLayout::of_params(&layout);
    assert_eq!(out.len(), img.len, "image buffer of the wrong size");
    let vk = read_vk(params, path, &layout, validation)?;
    let [h, l, a, b_g1, b_g2] = layout.vectors.expect("scanned with vectors");
    write_vk(out, &img, &vk);
    let total = [&h, &l, &a, &b_g1, &b_g2]
        .iter()
        .map(|v| v.count as u64)
        .sum();
    let what = format!(
        "{}: {}: loading into shared memory{}",
        process_name(),
        path.display(),
        match validation {
            Validation::Full => " with the full point check (once per file)",
            Validation::Trusted => "",
        }
    );
    let line = |l: String| eprintln!("{l}");
    load_progress::report_while(what, total, LOG_EVERY, line, |done| {
        let mut vector = |span: &super::VectorSpan, at: usize| {
            // The prover never adds the identity: bellperson refuses it in these vectors too.
            decode::vector_into::<G1Affine>(
                params,
                path,
                span,
                validation,
                false,
                slice_mut(out, at, span.count),
                done,
            )
        };
        vector(&h, img.vectors[1])?;
        vector(&l, img.vectors[2])?;
        vector(&a, img.vectors[3])?;
        vector(&b_g1, img.vectors[4])?;
        decode::vector_into::<G2Affine>(
            params,
            path,
            &b_g2,
            validation,
            false,
            slice_mut(out, img.vectors[5], b_g2.count),
            done,
        )
    })?;
    seal(out, &img);
    Ok(())
}

/// The running program's file name ("cuzk-gpu"), which starts the stage processes' lines.
fn process_name() -> String {
    std::env::args_os()
        .next()
        .and_then(|a| {
            Path::new(&a)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "cuzk".into())
}

/// The verifying key's points and ic into their places.
pub(super) fn write_vk(out: &mut [u8], img: &ImageLayout, vk: &VerifyingKey) {
    {
        let g1: &mut [G1Affine] = slice_mut(out, img.vk, 2);
        g1[0] = vk.alpha_g1;
        g1[1] = vk.beta_g1;
    }
    {
        let g2: &mut [G2Affine] = slice_mut(out, img.vk + 2 * G1, 2);
        g2[0] = vk.beta_g2;
        g2[1] = vk.gamma_g2;
    }
    slice_mut::<G1Affine>(out, img.vk + 2 * G1 + 2 * G2, 1)[0] = vk.delta_g1;
    slice_mut::<G2Affine>(out, img.vk + 3 * G1 + 2 * G2, 1)[0] = vk.delta_g2;
    slice_mut::<G1Affine>(out, img.vectors[0], vk.ic.len()).copy_from_slice(&vk.ic);
}

/// Counts and magic, written last: a reader that sees the magic sees a complete image.
pub(super) fn seal(out: &mut [u8], img: &ImageLayout) {
    let header: &mut [u64] = slice_mut(out, 0, 7);
    for (i, n) in img.counts.iter().enumerate() {
        header[1 + i] = *n as u64;
    }
    header[0] = MAGIC;
}

/// Borrows the points of an image written by [`fill_image`].
pub fn view_image(bytes: &[u8]) -> Result<SrsView<'_>, SrsError> {
    let header: &[u64] = slice(bytes, 0, 7)?;
    if header[0] != MAGIC {
        return Err(SrsError::Image(
            "no SRS image magic (incomplete or not an image)",
        ));
    }
    let mut counts = [0usize; 6];
    for (i, c) in counts.iter_mut().enumerate() {
        *c = usize::try_from(header[1 + i]).map_err(|_| SrsError::Image("count overflows"))?;
    }
    let img = ImageLayout::new(counts);
    if img.len > bytes.len() {
        return Err(SrsError::Image("shorter than its counts say"));
    }
    let g1 = |at, n| slice::<G1Affine>(bytes, at, n);
    let g2 = |at, n| slice::<G2Affine>(bytes, at, n);
    let vk = VerifyingKey {
        alpha_g1: g1(img.vk, 1)?[0],
        beta_g1: g1(img.vk + G1, 1)?[0],
        beta_g2: g2(img.vk + 2 * G1, 1)?[0],
        gamma_g2: g2(img.vk + 2 * G1 + G2, 1)?[0],
        delta_g1: g1(img.vk + 2 * G1 + 2 * G2, 1)?[0],
        delta_g2: g2(img.vk + 3 * G1 + 2 * G2, 1)?[0],
        ic: g1(img.vectors[0], counts[0])?.to_vec(),
    };
    Ok(SrsView {
        vk,
        h: g1(img.vectors[1], counts[1])?,
        l: g1(img.vectors[2], counts[2])?,
        a: g1(img.vectors[3], counts[3])?,
        b_g1: g1(img.vectors[4], counts[4])?,
        b_g2: g2(img.vectors[5], counts[5])?,
    })
}
