//! Reading the real C1 fixtures in both forms, and the typed views synthesis uses.

use std::path::{Path, PathBuf};

use base64::Engine;
use cuzk_c1::{prover_id_from_miner_id, C1Error, C1Format, C1Input, GivenIds, RegisteredSealProof};
use filecoin_proofs::constants::{SectorShape2KiB, SectorShape32GiB, SectorShape8MiB};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

fn bare_bytes(envelope_file: &Path) -> Vec<u8> {
    let envelope: serde_json::Value =
        serde_json::from_slice(&std::fs::read(envelope_file).unwrap()).unwrap();
    base64::engine::general_purpose::STANDARD
        .decode(envelope["Phase1Out"].as_str().unwrap())
        .unwrap()
}

#[test]
fn envelope_fixture_reads_with_its_ids() {
    let file = fixture("porep-2KiB-a.c1.json");
    let c1 = C1Input::read(&file, GivenIds::default()).unwrap();
    assert_eq!(c1.format(), C1Format::Envelope);
    assert_eq!(c1.proof_type(), RegisteredSealProof::StackedDrg2KiBV1_1);
    assert_eq!(c1.sector_size(), 2048);
    assert_eq!(c1.partitions(), 1);
    assert_eq!(c1.miner_id(), Some(1000));
    assert_eq!(c1.prover_id().unwrap(), prover_id_from_miner_id(1000));
    assert_eq!(u64::from(c1.sector_id().unwrap()), 11);
    assert_eq!(
        c1.porep_config().sector_size,
        RegisteredSealProof::StackedDrg2KiBV1_1.sector_size()
    );
    assert_ne!(c1.comm_r(), [0; 32]);
    assert_ne!(c1.seed(), [0; 32]);

    let proofs = c1.vanilla_proofs::<SectorShape2KiB>().unwrap();
    assert_eq!(proofs.len(), 1);
    assert!(!proofs[0].is_empty());
    // The typed copy carries the same commitments and replica id.
    let typed = c1.to_phase1_output::<SectorShape2KiB>().unwrap();
    assert_eq!(typed.comm_d, c1.comm_d());
    assert_eq!(typed.replica_id, c1.replica_id::<SectorShape2KiB>());
}

#[test]
fn vanilla_proofs_of_another_shape_are_refused() {
    let c1 = C1Input::read(&fixture("porep-8MiB-a.c1.json"), GivenIds::default()).unwrap();
    assert_eq!(c1.proof_type(), RegisteredSealProof::StackedDrg8MiBV1_1);
    assert!(c1.vanilla_proofs::<SectorShape8MiB>().is_ok());
    // 32 GiB trees have sub-tree arity 8: another type than the 2 KiB-512 MiB shape.
    let err = c1.vanilla_proofs::<SectorShape32GiB>().unwrap_err();
    assert!(matches!(err, C1Error::VanillaShapeMismatch { .. }), "{err}");
}

#[test]
fn bare_form_is_detected_and_needs_ids_from_flags() {
    let file = PathBuf::from("/virtual/bare.json");
    let bytes = bare_bytes(&fixture("porep-2KiB-a.c1.json"));

    let c1 = C1Input::from_bytes(&file, &bytes, GivenIds::default()).unwrap();
    assert_eq!(c1.format(), C1Format::Bare);
    let err = c1.prover_id().unwrap_err();
    assert!(matches!(err, C1Error::MissingProverId { .. }));
    assert!(
        err.to_string()
            .starts_with("/virtual/bare.json: missing prover id"),
        "{err}"
    );
    assert!(matches!(
        c1.sector_id().unwrap_err(),
        C1Error::MissingSectorNumber { .. }
    ));

    let given = GivenIds {
        miner_id: Some(1000),
        sector_num: Some(11),
    };
    let c1 = C1Input::from_bytes(&file, &bytes, given).unwrap();
    assert_eq!(c1.prover_id().unwrap(), prover_id_from_miner_id(1000));
    assert_eq!(u64::from(c1.sector_id().unwrap()), 11);
}

#[test]
fn flags_that_contradict_the_envelope_are_refused() {
    let given = GivenIds {
        miner_id: None,
        sector_num: Some(12),
    };
    let err = C1Input::read(&fixture("porep-2KiB-a.c1.json"), given).unwrap_err();
    assert!(
        matches!(
            err,
            C1Error::Conflict {
                field: "SectorNum",
                envelope: 11,
                given: 12,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn each_malformation_has_its_own_error() {
    let file = Path::new("/virtual/c1.json");
    let read = |bytes: &[u8]| C1Input::from_bytes(file, bytes, GivenIds::default()).unwrap_err();
    let envelope = std::fs::read(fixture("porep-2KiB-a.c1.json")).unwrap();
    let bare = bare_bytes(&fixture("porep-2KiB-a.c1.json"));

    assert!(matches!(read(&envelope[..1000]), C1Error::Truncated { .. }));
    assert!(matches!(
        read(&bare[..bare.len() - 10]),
        C1Error::Truncated { .. }
    ));
    assert!(matches!(
        read(b"{\"Phase1Out\": 12}"),
        C1Error::MalformedJson { .. }
    ));
    assert!(matches!(read(b"{\"SectorNum\": 1}"), C1Error::NotC1 { .. }));
    assert!(matches!(
        read(b"{\"Phase1Out\": \"%%%\"}"),
        C1Error::BadBase64 { .. }
    ));
    let unsupported = String::from_utf8(bare.clone())
        .unwrap()
        .replace("StackedDrg2KiBV1_1", "StackedDrg2KiBV9");
    assert!(matches!(
        read(unsupported.as_bytes()),
        C1Error::UnsupportedProofType { name, .. } if name == "StackedDrg2KiBV9"
    ));
    // The proof type says 8 MiB but the vanilla proofs are for 2 KiB.
    let mismatched = String::from_utf8(bare)
        .unwrap()
        .replace("\"StackedDrg2KiBV1_1\"", "\"StackedDrg8MiBV1_1\"");
    assert!(matches!(
        read(mismatched.as_bytes()),
        C1Error::VanillaShapeMismatch { .. }
    ));
    for err in [read(b"{"), read(b"[1]")] {
        assert!(err.to_string().starts_with("/virtual/c1.json: "), "{err}");
    }
}

/// What a drop directory can hold under a C1's name besides a C1 (`read_dropped`): each
/// refused by what it is, before a byte is read, naming the file (a FIFO read would block the supervisor's
/// loop; a sparse file of 5 GiB, read whole, would take its memory).
#[test]
fn a_link_a_fifo_an_empty_or_oversized_file_is_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let read = |name: &str| C1Input::read_dropped(&dir.path().join(name), GivenIds::default());

    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(fixture("porep-2KiB-a.c1.json"), &link).unwrap();
    let err = read("link.json").unwrap_err();
    assert!(
        matches!(err, C1Error::NotRegularFile { kind, .. } if kind == "a symbolic link"),
        "{err}"
    );
    assert!(err.to_string().contains("link.json"), "{err}");
    // A path an operator names may be a link (`cuzk prove --c1 latest.json`).
    C1Input::read(&link, GivenIds::default()).expect("followed");

    let fifo = std::ffi::CString::new(dir.path().join("fifo.json").to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path that lives across the call.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let err = read("fifo.json").unwrap_err();
    assert!(
        matches!(err, C1Error::NotRegularFile { kind, .. } if kind == "a FIFO"),
        "{err}"
    );

    std::fs::create_dir(dir.path().join("dir.json")).unwrap();
    let err = read("dir.json").unwrap_err();
    assert!(
        matches!(err, C1Error::NotRegularFile { kind, .. } if kind == "a directory"),
        "{err}"
    );

    std::fs::write(dir.path().join("empty.json"), b"").unwrap();
    assert!(matches!(
        read("empty.json").unwrap_err(),
        C1Error::Empty { .. }
    ));

    let huge = std::fs::File::create(dir.path().join("huge.json")).unwrap();
    huge.set_len(cuzk_c1::open::MAX_C1_BYTES + 1).unwrap();
    let err = read("huge.json").unwrap_err();
    assert!(
        matches!(err, C1Error::TooLarge { bytes, .. } if bytes == cuzk_c1::open::MAX_C1_BYTES + 1),
        "{err}"
    );

    // The fixture itself, copied as a regular file, still reads.
    std::fs::copy(fixture("porep-2KiB-a.c1.json"), dir.path().join("c1.json")).unwrap();
    read("c1.json").unwrap();
}
