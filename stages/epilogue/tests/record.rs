//! A partition's proof in the job record: recorded once; a redo after a crash (the slot
//! given back by recovery) keeps the first proof, which a finisher may be reading, and
//! still reports the job complete so the redoing epilogue can finish it.

use cuzk_epilogue::slot::record_partition;
use cuzk_shm_layout::job::PROOF_BYTES;
use cuzk_shm_layout::{Arena, ArenaConfig, PartitionShape};

#[test]
fn a_redone_partition_keeps_the_first_proof_and_reports_the_job_complete() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = ArenaConfig::new("record", PartitionShape::new(5000, 8, 4000), 1);
    cfg.dir = dir.path().to_owned();
    let arena = Arena::create(&cfg).unwrap();
    let job = arena.publish_job("j", &(), &[(), ()]).unwrap();
    let (first, second) = ([1u8; PROOF_BYTES], [2u8; PROOF_BYTES]);

    assert!(!record_partition(&job, 0, &first).unwrap(), "one of two");
    assert!(record_partition(&job, 1, &first).unwrap(), "the last one");
    // Partition 0 redone with another (equally valid) proof: the first stands.
    assert!(record_partition(&job, 0, &second).unwrap());
    assert_eq!(job.partition_proof(0).unwrap(), first);
    assert!(job.is_partition_done(0).unwrap());
    assert!(job.is_partition_done(5).is_err(), "no partition 5");
}
