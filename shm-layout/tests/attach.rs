//! Attaching refuses arenas this build cannot read; the single-process invariants of slots
//! and jobs.

mod common;

use std::mem::offset_of;
use std::os::unix::fs::{FileExt, PermissionsExt};

use common::TestEnv;
use cuzk_shm_layout::header::{ArenaHeader, FORMAT_VERSION};
use cuzk_shm_layout::{Arena, PartitionShape, Region, ShmError, SlotState, Stage};

fn shape() -> PartitionShape {
    PartitionShape::new(5000, 8, 4000)
}

fn poke(path: &std::path::Path, offset: usize, bytes: &[u8]) {
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.write_all_at(bytes, offset as u64).unwrap();
}

#[test]
fn attach_sees_the_creators_arena() {
    let env = TestEnv::new("ok");
    let a = env.create_arena(shape(), 3);
    let mode = std::fs::metadata(a.path()).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let b = Arena::attach(a.path()).unwrap();
    assert_eq!(b.slot_count(), 3);
    assert_eq!(b.layout(), a.layout());
    assert_eq!(b.header().layout_hash, a.header().layout_hash);
    assert!(matches!(
        Arena::create(&env.arena_config(shape(), 3)),
        Err(ShmError::Io { .. })
    ));
    a.remove().unwrap();
}

#[test]
fn different_format_version_is_refused_by_name() {
    let env = TestEnv::new("ver");
    let a = env.create_arena(shape(), 1);
    poke(
        a.path(),
        offset_of!(ArenaHeader, format_version),
        &(FORMAT_VERSION + 1).to_le_bytes(),
    );
    let err = Arena::attach(a.path()).unwrap_err();
    assert!(
        matches!(err, ShmError::VersionMismatch { found, expected, .. } if found == FORMAT_VERSION + 1 && expected == FORMAT_VERSION),
        "{err}"
    );
    a.remove().unwrap();
}

#[test]
fn different_layout_is_refused_by_name() {
    let env = TestEnv::new("hash");
    let a = env.create_arena(shape(), 1);
    // What a build with another struct layout or region order would have written.
    let other = a.header().layout_hash ^ 0x5a5a;
    poke(
        a.path(),
        offset_of!(ArenaHeader, layout_hash),
        &other.to_le_bytes(),
    );
    let err = Arena::attach(a.path()).unwrap_err();
    assert!(
        matches!(err, ShmError::LayoutMismatch { found, .. } if found == other),
        "{err}"
    );
    println!("{err}");
    a.remove().unwrap();
}

#[test]
fn layout_hash_depends_on_the_shape() {
    let env = TestEnv::new("shape");
    let a = env.create_arena(shape(), 1);
    let env2 = TestEnv::new("shape2");
    let b = env2.create_arena(PartitionShape::new(5000, 8, 4001), 1);
    assert_ne!(a.header().layout_hash, b.header().layout_hash);
    a.remove().unwrap();
    b.remove().unwrap();
}

#[test]
fn truncated_arena_is_refused() {
    let env = TestEnv::new("trunc");
    let a = env.create_arena(shape(), 2);
    let full = a.len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(a.path())
        .unwrap();
    f.set_len(full - 4096).unwrap();
    let err = Arena::attach(a.path()).unwrap_err();
    assert!(
        matches!(err, ShmError::Truncated { expected, actual, .. } if expected == full && actual == full - 4096),
        "{err}"
    );
    f.set_len(100).unwrap();
    assert!(matches!(
        Arena::attach(a.path()),
        Err(ShmError::Truncated { .. })
    ));
    a.remove().unwrap();
}

#[test]
fn foreign_file_is_refused() {
    let env = TestEnv::new("magic");
    let path = env.dir.join(format!("cuzk-{}.arena", env.name));
    std::fs::write(&path, vec![7u8; 8192]).unwrap();
    assert!(matches!(
        Arena::attach(&path),
        Err(ShmError::BadMagic { .. })
    ));
    std::fs::remove_file(path).unwrap();
}

#[test]
fn a_slot_is_claimed_once_and_stale_generations_fail() {
    let env = TestEnv::new("claim");
    let a = env.create_arena(shape(), 1);
    let c = a.try_claim(0, SlotState::Free, Some(0)).unwrap();
    assert_eq!(c.state(), SlotState::Synthesizing);
    let entered = &a.slot_header(0).entered_mono_ns[SlotState::Synthesizing as usize];
    assert!(
        entered.load(std::sync::atomic::Ordering::Relaxed) > 0,
        "per-state timestamp"
    );
    assert_eq!(a.slot_word(0).owner_pid, std::process::id());
    assert!(matches!(
        a.try_claim(0, SlotState::Free, None),
        Err(ShmError::SlotRace {
            found: SlotState::Synthesizing,
            ..
        })
    ));
    assert!(matches!(
        a.try_claim(0, SlotState::Synthesizing, None),
        Err(ShmError::NotClaimable { .. })
    ));
    let d = c.complete().unwrap();
    assert_eq!((d.state(), d.generation), (Some(SlotState::Synthesized), 2));
    assert_eq!(d.stage(), Some(Stage::HostPrep));
    // A descriptor from generation 0 is stale now.
    assert!(a.try_claim(0, SlotState::Synthesized, Some(0)).is_err());
    // Dropping an unfinished claim hands the slot back with a new generation.
    drop(a.try_claim(0, SlotState::Synthesized, Some(2)).unwrap());
    let w = a.slot_word(0);
    assert_eq!(
        (w.state, w.generation, w.owner_pid),
        (SlotState::Synthesized, 4, 0)
    );
    a.remove().unwrap();
}

#[test]
fn the_copy_counter_is_real() {
    let env = TestEnv::new("copy");
    let a = env.create_arena(shape(), 1);
    let c = a.claim_any(Stage::Synthesis).unwrap();
    assert_eq!(a.bytes_copied(), 0);
    let dump = c.copy_region_out(Region::EvalB);
    assert_eq!(a.bytes_copied(), dump.len() as u64);
    assert_eq!(dump.len(), 8192 * 32);
    a.remove().unwrap();
}

#[test]
fn job_table_limits_are_errors() {
    let env = TestEnv::new("jobs");
    let mut cfg = env.arena_config(shape(), 1);
    cfg.job_capacity = 2;
    cfg.job_blob_capacity = 4096;
    let a = Arena::create(&cfg).unwrap();
    let too_many = vec![0u8; cuzk_shm_layout::MAX_PARTITIONS + 1];
    assert!(matches!(
        a.publish_job("x", &(), &too_many),
        Err(ShmError::TooManyPartitions { .. })
    ));
    let big = vec![1u8; 5000];
    assert!(matches!(
        a.publish_job_bytes("x", &big, &[]),
        Err(ShmError::JobBlobTooLarge {
            needed: 5000,
            capacity: 4096
        })
    ));
    let j1 = a.publish_job_bytes("one", b"job", &[b"p0", b"p1"]).unwrap();
    let j2 = a.publish_job_bytes("two", b"job", &[b"p0"]).unwrap();
    assert_ne!(j1.job_id(), j2.job_id());
    assert_eq!(j1.partition_blob(1).unwrap(), b"p1");
    assert!(matches!(
        a.publish_job_bytes("three", b"", &[]),
        Err(ShmError::JobTableFull { capacity: 2 })
    ));
    // A slot still refers to job one after it is retired (a stage redoing a dead one's
    // partition): its record is not reused under the stages until the slot is Free.
    let mut claim = a.try_claim(0, SlotState::Free, None).unwrap();
    claim.set_partition(j1.job_id(), 0);
    let mut d = claim.complete().unwrap();
    j1.retire();
    assert!(!a.has_free_job_record());
    assert!(matches!(
        a.publish_job_bytes("three", b"", &[]),
        Err(ShmError::JobTableFull { capacity: 2 })
    ));
    while d.state() != Some(SlotState::Free) {
        let state = d.state().unwrap();
        d = a
            .try_claim(0, state, Some(d.generation))
            .unwrap()
            .complete()
            .unwrap();
    }
    assert!(a.has_free_job_record());
    // A slot just claimed for synthesis still names job one until it names its new job:
    // that blocks nothing.
    let synthesizing = a.try_claim(0, SlotState::Free, Some(d.generation)).unwrap();
    assert!(a.has_free_job_record());
    let j3 = a.publish_job_bytes("three", b"", &[]).unwrap();
    drop(synthesizing);
    assert!(j3.job_id() > j2.job_id(), "ids are never reused");
    a.remove().unwrap();
}

/// A claim dropped by a panic is not given back: it stays busy under this pid, as a crash
/// leaves it, for recovery to return with a lost attempt counted once the process exits.
#[test]
fn a_claim_dropped_by_a_panic_is_left_to_recovery() {
    let env = TestEnv::new("panic");
    let a = env.create_arena(shape(), 1);
    let d = a
        .try_claim(0, SlotState::Free, None)
        .unwrap()
        .complete()
        .unwrap();
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _claim = a
            .try_claim(0, SlotState::Synthesized, Some(d.generation))
            .unwrap();
        panic!("a stage panicking on its partition");
    }));
    assert!(unwound.is_err());
    let w = a.slot_word(0);
    assert_eq!(
        (w.state, w.owner_pid),
        (SlotState::Prepping, std::process::id())
    );
    a.remove().unwrap();
}

#[test]
fn orphans_of_dead_owners_go_back_one_state() {
    use std::sync::atomic::Ordering;
    let env = TestEnv::new("orphan");
    let a = env.create_arena(shape(), 3);
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let dead = gone.id();
    // As if `dead` had claimed slot 1 for the GPU stage and died.
    let w = cuzk_shm_layout::SlotWord {
        state: SlotState::Proving,
        owner_pid: dead,
        generation: 5,
    };
    a.slot_header(1).word.store(w.pack(), Ordering::Release);
    // A live owner (this process) is left alone.
    let mine = a.try_claim(2, SlotState::Free, None).unwrap();
    let report = a.recover_orphans();
    assert_eq!(report.returned.len(), 1);
    let back = a.slot_word(1);
    assert_eq!(
        (back.state, back.generation, back.owner_pid),
        (SlotState::Prepped, 6, 0)
    );
    assert_eq!(a.slot_word(2).state, SlotState::Synthesizing);
    drop(mine);
    a.remove().unwrap();
}

/// A gpu process that dies holding the partition it proves and the next one, taken
/// ahead: both slots go back, and only the first counts a lost attempt against its
/// partition (the one taken ahead had no part in the death).
#[test]
fn a_dead_gpu_process_counts_only_the_partition_it_was_proving() {
    use std::sync::atomic::Ordering;
    let env = TestEnv::new("ahead");
    let a = env.create_arena(shape(), 3);
    let job = a.publish_job("j.json", &0u8, &[0u8; 2]).unwrap();
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let dead = gone.id();
    // Slot 2 entered Proving first (the current partition, 1), slot 0 later (ahead, 0).
    for (slot, partition, entered) in [(2u32, 1u32, 1_000u64), (0, 0, 2_000)] {
        let h = a.slot_header(slot);
        h.job_id.store(job.job_id(), Ordering::Relaxed);
        h.partition.store(partition, Ordering::Relaxed);
        h.entered_mono_ns[SlotState::Proving as usize].store(entered, Ordering::Relaxed);
        let w = cuzk_shm_layout::SlotWord {
            state: SlotState::Proving,
            owner_pid: dead,
            generation: 5,
        };
        h.word.store(w.pack(), Ordering::Release);
    }
    let report = a.recover_dead_owner(dead).unwrap();
    assert_eq!(report.returned.len(), 2);
    for slot in [0, 2] {
        assert_eq!(a.slot_word(slot).state, SlotState::Prepped);
    }
    assert_eq!(
        job.lost_attempts(1).unwrap(),
        1,
        "the partition it was proving"
    );
    assert_eq!(job.lost_attempts(0).unwrap(), 0, "the one taken ahead");
    a.remove().unwrap();
}

#[test]
fn partitions_are_taken_once_and_released_by_slot() {
    let env = TestEnv::new("take");
    let arena = &env.create_arena(shape(), 2);
    let job = arena.publish_job("j.json", &0u8, &[0u8; 3]).unwrap();
    assert!(job.has_untaken_partition());
    assert_eq!(job.take_partition(0), Some(0));
    assert_eq!(job.take_partition(1), Some(1));
    assert_eq!(job.take_partition(0), Some(2));
    assert_eq!(job.take_partition(1), None);
    assert!(!job.has_untaken_partition());
    // Slot 0's owner died: its unfinished partitions (0 and 2) go back, slot 1's stays.
    let proof = [7u8; cuzk_shm_layout::job::PROOF_BYTES];
    job.set_partition_proof(0, &proof).unwrap();
    assert!(!job.mark_partition_done(0).unwrap());
    assert_eq!(job.release_partitions_of_slot(0), vec![2]);
    assert_eq!(job.take_partition(1), Some(2));
    assert_eq!(job.partition_proof(0).unwrap(), proof);
    // One finisher at a time; a failed job hands out no partitions.
    assert!(job.take_finish());
    job.mark_failed("first reason");
    job.mark_failed("second reason");
    assert!(job.is_failed());
    assert_eq!(job.failure_reason(), "first reason");
    assert_eq!(job.release_partitions_of_slot(1), vec![1, 2]);
    assert_eq!(job.take_partition(1), None);
    arena.remove().unwrap();
}

/// A NonInteractivePoRep job at 32/64 GiB has 126 partitions, past one done word: marks
/// made together in both words still complete the job exactly once, every bit reads back
/// and the proofs with them. (The interleavings threads on two cores rarely hit, both
/// last bits set before either mark looks and a mark dying between its bit and its claim,
/// are forced step by step in job.rs's unit test.)
#[test]
fn a_job_of_126_partitions_completes_exactly_once() {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Barrier;
    let env = TestEnv::new("ni");
    let arena = &env.create_arena(shape(), 1);
    let parts = vec![0u8; 126];
    // The last mark of each word, made together: each could see the other word full.
    let last = [63u32, 125];
    for round in 0..500u32 {
        let job = arena.publish_job("ni.json", &round, &parts).unwrap();
        let completions = AtomicU32::new(0);
        let mark = |p: u32| {
            let proof = [(p + round) as u8; cuzk_shm_layout::job::PROOF_BYTES];
            job.set_partition_proof(p, &proof).unwrap();
            if job.mark_partition_done(p).unwrap() {
                completions.fetch_add(1, Ordering::Relaxed);
            }
        };
        std::thread::scope(|scope| {
            for t in 0..2u32 {
                let mark = &mark;
                scope.spawn(move || {
                    for p in (t..126).step_by(2).filter(|p| !last.contains(p)) {
                        mark(p);
                    }
                });
            }
        });
        assert!(!job.is_complete());
        let together = Barrier::new(2);
        std::thread::scope(|scope| {
            for p in last {
                let (mark, together) = (&mark, &together);
                scope.spawn(move || {
                    together.wait();
                    mark(p);
                });
            }
        });
        assert_eq!(completions.load(Ordering::Relaxed), 1, "round {round}");
        assert!(job.is_complete());
        assert_eq!(job.done_count(), 126);
        assert_eq!(
            job.done_bits().partitions().collect::<Vec<_>>(),
            (0..126).collect::<Vec<_>>()
        );
        assert_eq!(job.partition_proof(125).unwrap()[0], (125 + round) as u8);
        assert!(matches!(
            job.mark_partition_done(100),
            Err(ShmError::PartitionAlreadyDone { partition: 100, .. })
        ));
        assert!(matches!(
            job.mark_partition_done(126),
            Err(ShmError::NoSuchPartition { .. })
        ));
        job.retire();
    }
    arena.remove().unwrap();
}

/// A view of a job retired since it was listed, whose record went to the next job, is no
/// longer current: synthesis checks that after naming the job in its slot, so it never
/// synthesizes the next job's partition under the retired one's id.
#[test]
fn a_view_of_a_retired_job_is_not_current_once_its_record_is_reused() {
    let env = TestEnv::new("current");
    let mut cfg = env.arena_config(shape(), 1);
    cfg.job_capacity = 1;
    let a = Arena::create(&cfg).unwrap();
    let one = a.publish_job_bytes("one", b"job", &[b"p0"]).unwrap();
    let listed = a.job(one.job_id()).unwrap();
    assert!(listed.is_current());
    one.retire();
    assert!(!listed.is_current(), "retired");
    let two = a.publish_job_bytes("two", b"job", &[b"p0"]).unwrap();
    assert!(two.is_current());
    assert!(!listed.is_current(), "its record now holds job two");
    a.remove().unwrap();
}
