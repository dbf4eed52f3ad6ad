//! The SRS reader on files bellperson wrote: round trip, and truncated or corrupted copies.

mod common;

use std::path::{Path, PathBuf};

use bellperson::groth16::{self as bp, Parameters};
use blstrs::{Bls12, Fp, G1Affine};
use common::circuits::Booleans;
use cuzk_kernels::srs::{Srs, SrsError, Validation, VerifyingKey};
use ff::Field;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

struct Fixture {
    _dir: tempfile::TempDir,
    params_path: PathBuf,
    vk_path: PathBuf,
    params: Parameters<Bls12>,
    bytes: Vec<u8>,
}

fn fixture() -> Fixture {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let params = bp::generate_random_parameters::<Bls12, _, _>(
        Booleans {
            bits: vec![true; 200],
        },
        &mut rng,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let params_path = dir.path().join("p.params");
    let vk_path = dir.path().join("p.vk");
    let mut bytes = vec![];
    params.write(&mut bytes).unwrap();
    std::fs::write(&params_path, &bytes).unwrap();
    let mut vk = vec![];
    params.vk.write(&mut vk).unwrap();
    std::fs::write(&vk_path, &vk).unwrap();
    Fixture {
        _dir: dir,
        params_path,
        vk_path,
        params,
        bytes,
    }
}

fn write_copy(f: &Fixture, name: &str, bytes: &[u8]) -> PathBuf {
    let p = f.params_path.with_file_name(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn round_trip_equals_bellpersons_parameters() {
    let f = fixture();
    for v in [Validation::Full, Validation::Trusted] {
        let srs = Srs::read(&f.params_path, v).unwrap();
        assert_eq!(srs.h, *f.params.h);
        assert_eq!(srs.l, *f.params.l);
        assert_eq!(srs.a, *f.params.a);
        assert_eq!(srs.b_g1, *f.params.b_g1);
        assert_eq!(srs.b_g2, *f.params.b_g2);
        assert_eq!(srs.vk.ic, f.params.vk.ic);
        assert_eq!(srs.vk.delta_g2, f.params.vk.delta_g2);
        assert_eq!(srs.vk.alpha_g1, f.params.vk.alpha_g1);
    }
    let vk = VerifyingKey::read(&f.vk_path, Validation::Full).unwrap();
    assert_eq!(vk, Srs::read(&f.params_path, Validation::Full).unwrap().vk);
}

fn expect_truncated(path: &Path, vector: &str) {
    match Srs::read(path, Validation::Full) {
        Err(e @ SrsError::Truncated { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains(&path.display().to_string()) && msg.contains(&format!("`{vector}`")),
                "{msg}"
            );
            assert!(msg.contains("offset"), "{msg}");
        }
        other => panic!("expected truncation in {vector}, got {other:?}"),
    }
}

#[test]
fn truncated_copies_name_the_vector_and_offset() {
    let f = fixture();
    let len = f.bytes.len();
    // Cut inside the vk, inside h's points, and one byte short of the end (in b_g2).
    expect_truncated(
        &write_copy(&f, "cut-vk.params", &f.bytes[..200]),
        "vk.beta_g2",
    );
    let h_start = 96 * 3 + 192 * 3 + 4 + 96 * f.params.vk.ic.len() + 4;
    expect_truncated(
        &write_copy(&f, "cut-h.params", &f.bytes[..h_start + 500]),
        "h",
    );
    expect_truncated(
        &write_copy(&f, "cut-end.params", &f.bytes[..len - 1]),
        "b_g2",
    );
    expect_truncated(&write_copy(&f, "empty.params", &[]), "vk.alpha_g1");
}

#[test]
fn trailing_garbage_is_refused() {
    let f = fixture();
    let mut bytes = f.bytes.clone();
    bytes.extend_from_slice(&[0u8; 5]);
    let err = Srs::read(&write_copy(&f, "long.params", &bytes), Validation::Trusted).unwrap_err();
    assert!(
        matches!(err, SrsError::TrailingBytes { extra: 5, .. }),
        "{err}"
    );
}

#[test]
fn corrupted_point_names_vector_index_and_offset() {
    let f = fixture();
    let h_start = 96 * 3 + 192 * 3 + 4 + 96 * f.params.vk.ic.len() + 4;
    let mut bytes = f.bytes.clone();
    // Point 3 of h: flip a bit of its y coordinate, so it leaves the curve.
    let at = h_start + 3 * 96 + 90;
    bytes[at] ^= 0x04;
    let path = write_copy(&f, "flip.params", &bytes);
    for v in [Validation::Full, Validation::Trusted] {
        match Srs::read(&path, v) {
            Err(SrsError::BadPoint {
                vector,
                index,
                offset,
                ..
            }) => {
                assert_eq!((vector, index, offset), ("h", 3, (h_start + 3 * 96) as u64));
            }
            other => panic!("expected a bad point, got {other:?}"),
        }
    }
}

/// A point on the curve y² = x³ + 4 outside the prime-order subgroup: almost every
/// curve point is, since the cofactor is large.
fn off_subgroup_point() -> G1Affine {
    let mut x = Fp::ONE;
    loop {
        let rhs = x.square() * x + Fp::from(4u64);
        if let Some(y) = Option::<Fp>::from(rhs.sqrt()) {
            let p = G1Affine::from_raw_unchecked(x, y, false);
            if !bool::from(p.is_torsion_free()) {
                return p;
            }
        }
        x += Fp::ONE;
    }
}

#[test]
fn subgroup_check_is_on_by_default_and_can_be_trusted_off() {
    let f = fixture();
    let h_start = 96 * 3 + 192 * 3 + 4 + 96 * f.params.vk.ic.len() + 4;
    let mut bytes = f.bytes.clone();
    bytes[h_start..h_start + 96].copy_from_slice(&off_subgroup_point().to_uncompressed());
    let path = write_copy(&f, "torsion.params", &bytes);
    match Srs::read(&path, Validation::Full) {
        Err(e @ SrsError::BadPoint { index: 0, .. }) => {
            assert!(e.to_string().contains("subgroup"), "{e}")
        }
        other => panic!("expected a subgroup failure, got {other:?}"),
    }
    assert!(Srs::read(&path, Validation::Trusted).is_ok());
}

#[test]
fn missing_file_names_it() {
    let err = Srs::read(Path::new("/nonexistent/v28-x.params"), Validation::Full).unwrap_err();
    assert!(
        err.to_string().contains("/nonexistent/v28-x.params"),
        "{err}"
    );
}

#[test]
fn flat_image_holds_the_same_points_and_refuses_an_incomplete_one() {
    use cuzk_kernels::srs::{fill_image, image_len, view_image, ParamsLayout};
    let f = fixture();
    let layout = Srs::layout(&f.params_path).unwrap();
    let _: &ParamsLayout = &layout;
    // u64 backing keeps the buffer 8-byte aligned, as a page of a mapping is.
    let mut backing = vec![0u64; image_len(&layout).div_ceil(8)];
    // SAFETY: u64s viewed as bytes, same allocation, exclusive borrow.
    let bytes = unsafe {
        std::slice::from_raw_parts_mut(backing.as_mut_ptr() as *mut u8, image_len(&layout))
    };
    assert!(view_image(bytes).is_err(), "an unfilled image has no magic");
    fill_image(&f.bytes, &f.params_path, Validation::Full, bytes).unwrap();
    let view = view_image(bytes).unwrap();
    let srs = Srs::read(&f.params_path, Validation::Full).unwrap();
    assert_eq!(view.vk, srs.vk);
    assert_eq!(view.h, &srs.h[..]);
    assert_eq!(view.l, &srs.l[..]);
    assert_eq!(view.a, &srs.a[..]);
    assert_eq!(view.b_g1, &srs.b_g1[..]);
    assert_eq!(view.b_g2, &srs.b_g2[..]);
    assert!(
        view_image(&bytes[..bytes.len() - 64]).is_err(),
        "short image refused"
    );
}
