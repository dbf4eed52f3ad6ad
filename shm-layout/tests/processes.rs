//! The stage protocol across real processes: this test binary re-executes itself in a
//! child role (`role_entry` with `CUZK_SHM_TEST_ROLE` set) for producers and consumers.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use common::*;
use cuzk_shm_layout::{
    iceoryx_config, reap_dead_nodes, Arena, ControlPlane, JobView, PartitionShape, Region,
    SlotClaim, SlotDescriptor, SlotState, SrsKey, SrsSegment, Stage, StageSender,
};

/// The iceoryx2 nodes of `pid` under `config`'s prefix, alive or dead.
fn nodes_of(config: &iceoryx2::config::Config, pid: u32) -> usize {
    use iceoryx2::node::{NodeState, NodeView};
    use iceoryx2::prelude::*;
    let mut found = 0;
    Node::<ipc::Service>::list(config, |state| {
        let owner = match &state {
            NodeState::Alive(v) => v.details().as_ref().map(|d| d.process_id().value()),
            NodeState::Dead(v) => v.details().as_ref().map(|d| d.process_id().value()),
            _ => None,
        };
        if owner == Some(pid as _) {
            found += 1;
        }
        CallbackProgression::Continue
    })
    .unwrap();
    found
}

fn tiny_shape() -> PartitionShape {
    // 1000 constraints -> 1024-element domain: 32 KiB per evaluation region.
    PartitionShape::new(1000, 4, 900)
}

fn control(env: &RoleEnv) -> ControlPlane {
    let arena_name = env.name.clone();
    ControlPlane::new(&arena_name, &iceoryx_config(&env.iox_prefix).unwrap()).unwrap()
}

/// Runs a claimed slot (host-prep claim) through the rest of the pipeline back to Free,
/// the way the later stages would, and announces it free.
fn finish_chain(arena: &Arena, claim: SlotClaim<'_>, free_tx: &StageSender) {
    let mut d = claim.complete().unwrap();
    for from in [SlotState::Prepped, SlotState::Proved] {
        d = arena
            .try_claim(d.slot, from, Some(d.generation))
            .unwrap()
            .complete()
            .unwrap();
    }
    assert_eq!(d.state(), Some(SlotState::Free));
    free_tx.announce(d).unwrap();
}

fn append(path: &Path, line: &str) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    writeln!(f, "{line}").unwrap();
}

/// Writes a file in one step (rename), so a polling parent never reads half of it.
fn publish_file(path: &Path, body: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, body).unwrap();
    std::fs::rename(tmp, path).unwrap();
}

fn wait_child(child: &mut Child, timeout: Duration) -> std::process::ExitStatus {
    let end = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > end {
            let _ = child.kill();
            let _ = child.wait();
            panic!("child {} did not finish within {timeout:?}", child.id());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

// ---------------------------------------------------------------- child roles

#[test]
fn role_entry() {
    let Ok(role) = std::env::var(ROLE) else {
        return; // an ordinary test run: nothing to do
    };
    let env = RoleEnv::from_env();
    match role.as_str() {
        "producer" => role_producer(&env),
        "consumer" => role_consumer(&env),
        "holder" => role_holder(&env),
        "releaser" => role_releaser(&env),
        "srs" => role_srs(&env),
        "job-reader" => role_job_reader(&env),
        other => panic!("unknown role {other}"),
    }
}

/// Fills N partitions into free slots: pattern into EvalA, record, announce synthesized.
fn role_producer(env: &RoleEnv) {
    let arena = Arena::attach(&env.arena).unwrap();
    let cp = control(env);
    let free_rx = cp.receiver(Stage::Synthesis).unwrap();
    let tx = cp.sender(SlotState::Synthesized).unwrap();
    let (first, n) = (env.num("CUZK_FIRST"), env.num("CUZK_N"));
    let mut log = String::new();
    for p in first..first + n {
        let mut claim = free_rx
            .claim_next(&arena, Duration::from_secs(20))
            .unwrap()
            .expect("a free slot within 20 s")
            .claim;
        claim.set_partition(7, p as u32);
        fill_pattern(claim.region_mut(Region::EvalA), p);
        let sum = checksum(claim.region(Region::EvalA));
        log += &format!(
            "{p} {} {} {sum}\n",
            claim.slot(),
            claim.region_offset(Region::EvalA)
        );
        tx.announce(claim.complete().unwrap()).unwrap();
    }
    publish_file(&env.scratch.join(format!("produced-{first}")), &log);
}

/// Claims synthesized slots, verifies them in place, records, and frees them; exits once
/// the stop file exists and nothing is left to claim.
fn role_consumer(env: &RoleEnv) {
    let arena = Arena::attach(&env.arena).unwrap();
    let cp = control(env);
    let rx = cp.receiver(Stage::HostPrep).unwrap();
    let free_tx = cp.sender(SlotState::Free).unwrap();
    let pid = std::process::id();
    publish_file(&env.scratch.join(format!("ready-{pid}")), "");
    let mut log = String::new();
    let stop = env.scratch.join("stop");
    loop {
        match rx.claim_next(&arena, Duration::from_millis(50)).unwrap() {
            Some(h) => {
                let c = h.claim;
                let p = u64::from(c.partition());
                // Verify in place: the checksum is computed over the mapped bytes.
                let bytes = c.region(Region::EvalA);
                let mut expect = vec![0u8; bytes.len()];
                fill_pattern(&mut expect, p);
                assert!(bytes == expect.as_slice(), "partition {p} corrupted");
                log += &format!(
                    "{p} {} {} {}\n",
                    c.slot(),
                    c.region_offset(Region::EvalA),
                    checksum(bytes)
                );
                finish_chain(&arena, c, &free_tx);
            }
            None if stop.exists() => break,
            None => {}
        }
    }
    let s = &rx.stats;
    publish_file(&env.scratch.join(format!("consumed-{pid}")), &log);
    publish_file(
        &env.scratch.join(format!("stats-{pid}")),
        &format!(
            "{} {} {}\n",
            s.via_descriptor.get(),
            s.via_scan.get(),
            s.passed_over.get()
        ),
    );
}

/// Claims K synthesized slots, reports them, and hangs on to them until killed.
fn role_holder(env: &RoleEnv) {
    let arena = Arena::attach(&env.arena).unwrap();
    let cp = control(env);
    let rx = cp.receiver(Stage::HostPrep).unwrap();
    let mut held = vec![];
    let mut log = String::new();
    while held.len() < env.num("CUZK_K") as usize {
        let c = rx
            .claim_next(&arena, Duration::from_secs(10))
            .unwrap()
            .expect("slots to hold")
            .claim;
        log += &format!("{} {} {}\n", c.slot(), c.generation(), c.partition());
        if let Ok(job) = arena.job(c.job_id()) {
            if std::env::var_os("CUZK_TAKE_FINISH").is_some() {
                assert!(job.take_finish());
            }
            if std::env::var_os("CUZK_LEAVE_UNWRITTEN").is_some() {
                job.leave_unwritten();
            }
        }
        held.push(c);
    }
    publish_file(&env.scratch.join("held"), &log);
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// After a delay, frees one synthesized slot (the consumer the blocked producer waits for).
fn role_releaser(env: &RoleEnv) {
    let arena = Arena::attach(&env.arena).unwrap();
    let cp = control(env);
    let free_tx = cp.sender(SlotState::Free).unwrap();
    std::thread::sleep(Duration::from_millis(env.num("CUZK_DELAY_MS")));
    let claim = arena
        .claim_any(Stage::HostPrep)
        .expect("a synthesized slot");
    finish_chain(&arena, claim, &free_tx);
}

fn role_srs(env: &RoleEnv) {
    let key = SrsKey::new(format!("{}.params:4194304:1", env.name));
    let fills = env.scratch.join("fills");
    let (seg, filled) = SrsSegment::open_or_load(Path::new("/dev/shm"), &key, 1 << 22, |buf| {
        append(&fills, &std::process::id().to_string());
        std::thread::sleep(Duration::from_millis(300)); // a slow load: the race window
        fill_pattern(buf, 42);
        Ok(())
    })
    .unwrap();
    publish_file(
        &env.scratch.join(format!("srs-{}", std::process::id())),
        &format!("{} {}\n", u64::from(filled), checksum(seg.bytes())),
    );
}

#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct TestPartition {
    index: u32,
    challenges: Vec<u64>,
}

fn role_job_reader(env: &RoleEnv) {
    let arena = Arena::attach(&env.arena).unwrap();
    let job = arena.job(env.num("CUZK_JOB")).unwrap();
    let part: TestPartition = job.decode_partition(2).unwrap();
    let meta: String = job.decode_job().unwrap();
    assert!(!job.mark_partition_done(2).unwrap());
    publish_file(
        &env.scratch.join("job-read"),
        &format!(
            "{} {} {} {}\n",
            part.index,
            part.challenges.len(),
            meta.len(),
            job.num_partitions()
        ),
    );
}

// ---------------------------------------------------------------- tests

#[test]
fn two_consumers_process_each_slot_once_in_place() {
    const N: u64 = 3000;
    let env = TestEnv::new("zc");
    let arena = env.create_arena(tiny_shape(), 16);
    let mut consumers: Vec<Child> = (0..2)
        .map(|_| env.spawn("consumer", arena.path(), &[]))
        .collect();
    let ids: Vec<u32> = consumers.iter().map(|c| c.id()).collect();
    assert!(wait_until(Duration::from_secs(20), || ids
        .iter()
        .all(|id| env.out(&format!("ready-{id}")).exists())));
    let started = Instant::now();
    let mut producer = env.spawn(
        "producer",
        arena.path(),
        &[("CUZK_FIRST", "0".into()), ("CUZK_N", N.to_string())],
    );
    assert!(wait_child(&mut producer, Duration::from_secs(60)).success());
    assert!(wait_until(Duration::from_secs(20), || arena.census()[0] == 16));
    let elapsed = started.elapsed();
    std::fs::write(env.out("stop"), "").unwrap();
    for c in &mut consumers {
        assert!(wait_child(c, Duration::from_secs(20)).success());
    }

    let produced = read_records(&env.out("produced-0"));
    assert_eq!(produced.len() as u64, N);
    let mut seen = vec![0u32; N as usize];
    let mut per_consumer = vec![];
    for id in &ids {
        let recs = read_records(&env.out(&format!("consumed-{id}")));
        per_consumer.push(recs.len());
        for r in recs {
            let p = r[0] as usize;
            seen[p] += 1;
            // Same slot, same offset into the one mapping, same bytes: read where written.
            assert_eq!(r[1..], produced[p][1..], "partition {p}");
            assert_eq!(r[2], arena.region_offset(r[1] as u32, Region::EvalA));
        }
    }
    assert!(seen.iter().all(|&n| n == 1), "every partition exactly once");
    assert!(
        per_consumer.iter().all(|&n| n > 0),
        "both consumers competed: {per_consumer:?}"
    );
    assert_eq!(arena.bytes_copied(), 0, "nothing copied between stages");
    println!("{N} slots through 2 consumers in {elapsed:?}, split {per_consumer:?}");
    for id in &ids {
        println!(
            "consumer stats {:?}",
            read_records(&env.out(&format!("stats-{id}")))
        );
    }
    arena.remove().unwrap();
    drop(arena);
    assert!(
        env.leaked_iceoryx_files().is_empty(),
        "{:?}",
        env.leaked_iceoryx_files()
    );
}

#[test]
fn killed_consumer_slots_are_redone_once_after_recovery() {
    let env = TestEnv::new("kill");
    let arena = env.create_arena(tiny_shape(), 8);
    let config = iceoryx_config(&env.iox_prefix()).unwrap();
    let cp = ControlPlane::new(&env.name, &config).unwrap();
    let tx = cp.sender(SlotState::Synthesized).unwrap();
    let free_rx = cp.receiver(Stage::Synthesis).unwrap();
    let mut produced = vec![];
    let mut produce = |p: u64| {
        let mut c = free_rx
            .claim_next(&arena, Duration::from_secs(20))
            .unwrap()
            .expect("free slot")
            .claim;
        c.set_partition(7, p as u32);
        fill_pattern(c.region_mut(Region::EvalA), p);
        produced.push(checksum(c.region(Region::EvalA)));
        tx.announce(c.complete().unwrap()).unwrap();
    };
    for p in 0..8 {
        produce(p);
    }

    // A consumer takes three slots and is killed while holding them.
    let mut holder = env.spawn("holder", arena.path(), &[("CUZK_K", "3".into())]);
    assert!(wait_until(Duration::from_secs(20), || env
        .out("held")
        .exists()));
    let held = read_records(&env.out("held"));
    assert_eq!(arena.census()[SlotState::Prepping as usize], 3);
    holder.kill().unwrap(); // SIGKILL
    holder.wait().unwrap();

    // Recovery: back to Synthesized with a new generation; iceoryx2 resources reaped.
    let report = arena.recover_dead_owner(holder.id()).unwrap();
    assert_eq!(report.returned.len(), 3);
    for d in &report.returned {
        let h = held.iter().find(|h| h[0] == u64::from(d.slot)).unwrap();
        assert_eq!(d.state(), Some(SlotState::Synthesized));
        assert_eq!(
            u64::from(d.generation),
            h[1] + 1,
            "claim +1 then recovery +1"
        );
    }
    // Reaped here, or by another process cleaning dead nodes at the same time (iceoryx2
    // does as a node is created, and other tests run beside this one: then the reap here
    // can find the node taken and leave it to that cleaner): soon none of the holder's is
    // left, either way.
    assert!(
        wait_until(Duration::from_secs(10), || {
            reap_dead_nodes(&config, Some(holder.id())).unwrap();
            nodes_of(&config, holder.id()) == 0
        }),
        "the holder's node is left"
    );
    assert!(matches!(
        arena.recover_dead_owner(std::process::id()),
        Err(cuzk_shm_layout::ShmError::OwnerAlive { .. })
    ));

    let mut consumer = env.spawn("consumer", arena.path(), &[]);
    let cid = consumer.id();
    assert!(wait_until(Duration::from_secs(20), || env
        .out(&format!("ready-{cid}"))
        .exists()));
    for d in &report.returned {
        tx.announce(*d).unwrap();
        // The dead holder's view of the slot: must be ignored as stale.
        let stale = held.iter().find(|h| h[0] == u64::from(d.slot)).unwrap();
        let mut old = *d;
        old.generation = stale[1] as u32 - 1;
        tx.announce(old).unwrap();
    }
    for p in 8..12 {
        produce(p); // waits for slots the consumer frees
    }
    assert!(wait_until(Duration::from_secs(20), || arena.census()[0] == 8));
    std::fs::write(env.out("stop"), "").unwrap();
    assert!(wait_child(&mut consumer, Duration::from_secs(20)).success());

    let recs = read_records(&env.out(&format!("consumed-{cid}")));
    let mut seen = [0u32; 12];
    for r in &recs {
        seen[r[0] as usize] += 1;
        assert_eq!(r[3], produced[r[0] as usize]);
    }
    assert_eq!(seen, [1; 12], "each partition processed exactly once");
    let stats = &read_records(&env.out(&format!("stats-{cid}")))[0];
    assert!(stats[2] >= 3, "stale descriptors passed over: {stats:?}");
    assert_eq!(arena.census(), [8, 0, 0, 0, 0, 0, 0, 0], "no slot leaked");
    drop((tx, free_rx, cp));
    arena.remove().unwrap();
    assert!(
        env.leaked_iceoryx_files().is_empty(),
        "{:?}",
        env.leaked_iceoryx_files()
    );
}

#[test]
fn producer_waits_without_growing_when_all_slots_are_busy() {
    let env = TestEnv::new("bp");
    let arena = env.create_arena(tiny_shape(), 2);
    let len_before = std::fs::metadata(arena.path()).unwrap().len();
    let cp = ControlPlane::new(&env.name, &iceoryx_config(&env.iox_prefix()).unwrap()).unwrap();
    let free_rx = cp.receiver(Stage::Synthesis).unwrap();
    // Fill both slots; nobody consumes them.
    for p in 0..2 {
        let mut c = free_rx
            .claim_next(&arena, Duration::ZERO)
            .unwrap()
            .unwrap()
            .claim;
        c.set_partition(1, p);
        c.complete().unwrap();
    }
    let t = Instant::now();
    assert!(free_rx
        .claim_next(&arena, Duration::from_millis(200))
        .unwrap()
        .is_none());
    assert!(t.elapsed() >= Duration::from_millis(200));

    let mut releaser = env.spawn("releaser", arena.path(), &[("CUZK_DELAY_MS", "300".into())]);
    let t = Instant::now();
    let h = free_rx
        .claim_next(&arena, Duration::from_secs(20))
        .unwrap()
        .expect("resumes when a slot frees");
    let waited = t.elapsed();
    assert!(waited >= Duration::from_millis(250), "{waited:?}");
    // Woken by the Free announcement, or by a scan right after the releaser's CAS: either
    // way only after the slot was freed.
    assert!(wait_child(&mut releaser, Duration::from_secs(20)).success());
    assert_eq!(std::fs::metadata(arena.path()).unwrap().len(), len_before);
    assert_eq!(arena.slot_count(), 2);
    drop(h);
    println!("producer blocked {waited:?}, resumed on the freed slot");
    drop((free_rx, cp));
    arena.remove().unwrap();
}

#[test]
fn srs_segment_is_filled_once_by_racing_loaders() {
    let env = TestEnv::new("srs");
    let arena_path = env.scratch.join("unused");
    let mut a = env.spawn("srs", &arena_path, &[]);
    let mut b = env.spawn("srs", &arena_path, &[]);
    assert!(wait_child(&mut a, Duration::from_secs(30)).success());
    assert!(wait_child(&mut b, Duration::from_secs(30)).success());
    assert_eq!(read_records(&env.out("fills")).len(), 1, "exactly one fill");
    let mut expect = vec![0u8; 1 << 22];
    fill_pattern(&mut expect, 42);
    let results: Vec<Vec<u64>> = [a.id(), b.id()]
        .iter()
        .map(|id| read_records(&env.out(&format!("srs-{id}")))[0].clone())
        .collect();
    assert_eq!(
        results.iter().map(|r| r[0]).sum::<u64>(),
        1,
        "one filler, one reader"
    );
    assert!(results.iter().all(|r| r[1] == checksum(&expect)));
    let key = SrsKey::new(format!("{}.params:4194304:1", env.name));
    SrsSegment::remove(Path::new("/dev/shm"), &key).unwrap();
}

#[test]
fn job_record_is_one_truth_across_processes() {
    let env = TestEnv::new("job");
    let arena = env.create_arena(tiny_shape(), 1);
    let parts: Vec<TestPartition> = (0..10)
        .map(|i| TestPartition {
            index: i,
            challenges: (0..100 * u64::from(i)).collect(),
        })
        .collect();
    let job = arena
        .publish_job("sector-1.json", &"job-level metadata".to_string(), &parts)
        .unwrap();
    assert_eq!(job.name(), "sector-1.json");
    let mut reader = env.spawn(
        "job-reader",
        arena.path(),
        &[("CUZK_JOB", job.job_id().to_string())],
    );
    assert!(wait_child(&mut reader, Duration::from_secs(20)).success());
    assert_eq!(read_records(&env.out("job-read"))[0], vec![2, 200, 18, 10]);
    // The child's mark is visible here; a second mark is refused.
    assert_eq!(job.done_bits().partitions().collect::<Vec<_>>(), [2]);
    assert!(job.mark_partition_done(2).is_err());
    for p in (0..10).filter(|&p| p != 2) {
        assert_eq!(job.mark_partition_done(p).unwrap(), p == 9);
    }
    assert!(job.is_complete());
    let back: TestPartition = job.decode_partition(7).unwrap();
    assert_eq!(back, parts[7]);
    job.retire();
    assert!(arena.active_jobs().next().is_none());
    arena.remove().unwrap();
}

/// A job's partition `p` in a synthesized slot, and the sender that announces it to
/// host-prep (where the killed holders below claim it), with the control plane it lives on.
fn synthesized_partition<'a>(
    env: &TestEnv,
    arena: &'a Arena,
    name: &str,
    partitions: usize,
    p: u32,
) -> (JobView<'a>, (ControlPlane, StageSender), SlotDescriptor) {
    let job = arena.publish_job(name, &(), &vec![(); partitions]).unwrap();
    let config = iceoryx_config(&env.iox_prefix()).unwrap();
    let cp = ControlPlane::new(&env.name, &config).unwrap();
    let tx = cp.sender(SlotState::Synthesized).unwrap();
    let mut c = arena.claim_any(Stage::Synthesis).expect("a free slot");
    c.set_partition(job.job_id(), p);
    (job, (cp, tx), c.complete().unwrap())
}

/// One loss: announces `d`, a holder process (`vars`) claims it and is killed with
/// SIGKILL while holding it; `before_recovery(pid)` runs between the kill and the
/// supervisor's recovery. Returns the recovered slot's descriptor.
fn lose_to_a_killed_holder(
    env: &TestEnv,
    arena: &Arena,
    tx: &StageSender,
    d: SlotDescriptor,
    vars: &[(&str, String)],
    before_recovery: impl FnOnce(u32),
) -> SlotDescriptor {
    tx.announce(d).unwrap();
    let _ = std::fs::remove_file(env.out("held"));
    let mut holder = env.spawn("holder", arena.path(), vars);
    assert!(wait_until(Duration::from_secs(20), || env
        .out("held")
        .exists()));
    holder.kill().unwrap();
    holder.wait().unwrap();
    before_recovery(holder.id());
    let report = arena.recover_dead_owner(holder.id()).unwrap();
    assert_eq!(report.returned.len(), 1);
    let config = iceoryx_config(&env.iox_prefix()).unwrap();
    let _ = reap_dead_nodes(&config, Some(holder.id()));
    report.returned[0]
}

/// A partition whose holder dies again and again (data that crashes the stage reading it)
/// fails its job at the `LOST_ATTEMPTS_BEFORE_FAILING`-th loss, with a reason naming the
/// partition and the stage; each loss before it only returns the slot for a redo.
#[test]
fn a_partition_lost_again_and_again_fails_its_job() {
    use cuzk_shm_layout::job::LOST_ATTEMPTS_BEFORE_FAILING;
    let env = TestEnv::new("lost");
    let arena = env.create_arena(tiny_shape(), 2);
    let (job, (_cp, tx), mut d) = synthesized_partition(&env, &arena, "poison.json", 2, 1);
    for loss in 1..=LOST_ATTEMPTS_BEFORE_FAILING {
        // The first holder also takes the job's finish, as an epilogue finishing it would.
        let mut vars = vec![("CUZK_K", "1".to_string())];
        if loss == 1 {
            vars.push(("CUZK_TAKE_FINISH", "1".into()));
        }
        d = lose_to_a_killed_holder(&env, &arena, &tx, d, &vars, |pid| {
            if loss == 1 {
                assert_eq!(job.finisher(), pid);
            }
        });
        // Its finish duty is freed with its slots: a new process given its pid later
        // must not hold the job's finish.
        assert_eq!(job.finisher(), 0);
        assert_eq!(d.state(), Some(SlotState::Synthesized));
        assert_eq!(
            job.is_failed(),
            loss == LOST_ATTEMPTS_BEFORE_FAILING,
            "after loss {loss}: {}",
            job.failure_reason()
        );
    }
    let reason = job.failure_reason();
    assert!(
        reason.contains(&format!(
            "partition 1: lost {LOST_ATTEMPTS_BEFORE_FAILING} times"
        )) && reason.contains("a host-prep process"),
        "{reason}"
    );
    arena.remove().unwrap();
}

/// A holder killed after its partition's proof is in (an epilogue waiting to write the
/// job's proof, OOM-killed or killed by hand) lost no attempt: with earlier losses on that
/// partition, counting it would fail a job whose every proof is in.
#[test]
fn a_holder_killed_after_its_partition_is_done_is_no_lost_attempt() {
    use cuzk_shm_layout::job::LOST_ATTEMPTS_BEFORE_FAILING;
    let env = TestEnv::new("donekill");
    let arena = env.create_arena(tiny_shape(), 1);
    let (job, (_cp, tx), mut d) = synthesized_partition(&env, &arena, "done.json", 1, 0);
    for _ in 1..LOST_ATTEMPTS_BEFORE_FAILING {
        d = lose_to_a_killed_holder(&env, &arena, &tx, d, &[("CUZK_K", "1".into())], |_| {});
    }
    assert_eq!(
        job.lost_attempts(0).unwrap(),
        LOST_ATTEMPTS_BEFORE_FAILING - 1
    );
    lose_to_a_killed_holder(&env, &arena, &tx, d, &[("CUZK_K", "1".into())], |_| {
        assert!(job.mark_partition_done(0).unwrap());
    });
    assert_eq!(
        job.lost_attempts(0).unwrap(),
        LOST_ATTEMPTS_BEFORE_FAILING - 1
    );
    assert!(!job.is_failed(), "{:?}", job.failure_reason());
    arena.remove().unwrap();
}

/// A finisher that dies again and again after its partition is in (an aggregation that
/// the OOM killer ends every time) loses the job's finish each time: no partition's
/// attempt, so the job with earlier CUDA errors is not failed by one such death, but the
/// `LOST_ATTEMPTS_BEFORE_FAILING`-th lost finish fails it, naming the finish, instead of
/// handing it to the next epilogue for ever. A holder killed before it took the finish
/// lost none.
#[test]
fn a_finish_lost_again_and_again_fails_its_job() {
    use cuzk_shm_layout::job::LOST_ATTEMPTS_BEFORE_FAILING;
    let env = TestEnv::new("finishkill");
    let arena = env.create_arena(tiny_shape(), 1);
    let (job, (_cp, tx), mut d) = synthesized_partition(&env, &arena, "finish.json", 1, 0);
    assert!(job.mark_partition_done(0).unwrap());
    let finisher = vec![
        ("CUZK_K", "1".to_string()),
        ("CUZK_TAKE_FINISH", "1".into()),
    ];
    // A holder that had not taken the finish yet lost none.
    d = lose_to_a_killed_holder(&env, &arena, &tx, d, &[("CUZK_K", "1".into())], |_| {});
    assert_eq!(job.lost_finishes(), 0);
    for loss in 1..=u32::from(LOST_ATTEMPTS_BEFORE_FAILING) {
        d = lose_to_a_killed_holder(&env, &arena, &tx, d, &finisher, |pid| {
            assert_eq!(
                job.finisher(),
                pid,
                "loss {loss}: the holder took the finish"
            );
        });
        assert_eq!(job.lost_finishes(), loss);
        assert_eq!(job.lost_attempts(0).unwrap(), 0, "no partition's attempt");
        assert_eq!(
            job.is_failed(),
            loss == u32::from(LOST_ATTEMPTS_BEFORE_FAILING),
            "loss {loss}: {:?}",
            job.failure_reason()
        );
    }
    let reason = job.failure_reason();
    assert!(
        reason
            .contains("its finish (assembling, verifying and writing the proof) was lost 4 times")
            && reason.contains("process (pid"),
        "{reason}"
    );
    arena.remove().unwrap();
}

/// An epilogue that stops with its job's verified proof unwritten (a scale-down while
/// `done/` is full) leaves its slot to recovery on purpose: that is no lost attempt, so a
/// partition with earlier CUDA errors cannot fail a proved job that way. The mark is
/// used once: the next holder that dies counts as usual, and so does one whose finish
/// another epilogue took over before its recovery.
#[test]
fn a_slot_left_with_its_proof_unwritten_is_no_lost_attempt() {
    let env = TestEnv::new("unwritten");
    let arena = env.create_arena(tiny_shape(), 1);
    let (job, (_cp, tx), mut d) = synthesized_partition(&env, &arena, "proved.json", 1, 0);
    // Round 3: another epilogue (here this process) takes the finish over from the dead
    // holder before its recovery; the mark was not the taker's, so the loss counts and
    // the mark is not left behind to hide a later one.
    for (round, leave) in [(1, true), (2, false), (3, true)] {
        let mut vars = vec![("CUZK_K", "1".to_string())];
        vars.push(("CUZK_TAKE_FINISH", "1".into()));
        if leave {
            vars.push(("CUZK_LEAVE_UNWRITTEN", "1".into()));
        }
        d = lose_to_a_killed_holder(&env, &arena, &tx, d, &vars, |_| {
            assert_eq!(job.is_left_unwritten(), leave, "round {round}: marked");
            if round == 3 {
                assert!(job.take_finish(), "a dead finisher's duty passes on");
                assert!(
                    !job.is_left_unwritten(),
                    "the taker drops the dead one's mark"
                );
            }
        });
        if round < 3 {
            assert_eq!(job.finisher(), 0, "round {round}: finish freed");
        }
        let expected = [0, 1, 2][round - 1];
        assert_eq!(job.lost_attempts(0).unwrap(), expected, "round {round}");
        assert!(
            !job.is_left_unwritten(),
            "round {round}: no mark left behind"
        );
    }
    assert!(!job.is_failed());
    arena.remove().unwrap();
}
