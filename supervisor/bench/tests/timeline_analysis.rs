//! The timeline analysis on hand-made logs: every number below was worked out by hand from
//! the events written here (times in ms from the first event).

mod common;

use common::sim::Pipeline;
use common::{assert_close, Log};
use cuzk_bench::analysis::pairing::{Ending, JobOutcome, Phase, Stage};
use cuzk_bench::analysis::{analyze, Analysis, Options, PhaseStats};

/// Two jobs of two partitions on two slots. Job 2's partition 1 loses its GPU process
/// (pid 40, killed after GPU_START): the supervisor returns the slot and pid 41 redoes it.
/// Plus an END with no START (the log began mid-run) and a torn line.
fn two_jobs() -> Log {
    let mut log = Log::default();
    let pids = [20, 30, 40, 50];
    log.job(0.0, "JOB_CLAIMED", "supervisor", 10, 1, "a.json");
    log.at(1.0, "EPILOGUE_END", "epilogue", 50, (0, 0, 0)); // orphan end
    log.partition(
        1,
        0,
        0,
        [0.0, 100.0, 110.0, 130.0, 140.0, 190.0, 190.0, 195.0],
        pids,
    );
    log.partition(
        1,
        1,
        1,
        [100.0, 200.0, 200.0, 220.0, 230.0, 280.0, 285.0, 290.0],
        pids,
    );
    log.job(150.0, "JOB_CLAIMED", "supervisor", 10, 2, "b.json");
    log.push(291.0, "VERIFY", "epilogue", 50)
        .steps_ms
        .insert("verify".into(), 1.0);
    log.job(292.0, "JOB_DONE", "epilogue", 50, 1, "a.json");
    log.partition(
        2,
        0,
        0,
        [200.0, 300.0, 300.0, 320.0, 320.0, 370.0, 370.0, 375.0],
        pids,
    );
    log.at(300.0, "SYNTH_START", "synthesis", 20, (2, 1, 1));
    log.at(400.0, "SYNTH_END", "synthesis", 20, (2, 1, 1));
    log.at(400.0, "PREP_START", "host-prep", 30, (2, 1, 1));
    log.at(420.0, "PREP_END", "host-prep", 30, (2, 1, 1));
    log.at(420.0, "GPU_QUEUE", "host-prep", 30, (2, 1, 1));
    log.at(425.0, "GPU_START", "gpu", 40, (2, 1, 1));
    // pid 40 is killed here: no GPU_END. The supervisor notices and returns the slot.
    log.at(500.0, "SLOT_RETURNED", "supervisor", 10, (2, 1, 1));
    log.at(520.0, "GPU_START", "gpu", 41, (2, 1, 1));
    log.at(570.0, "GPU_END", "gpu", 41, (2, 1, 1));
    log.at(570.0, "EPILOGUE_START", "epilogue", 50, (2, 1, 1));
    log.at(580.0, "EPILOGUE_END", "epilogue", 50, (2, 1, 1));
    log.push(581.0, "VERIFY", "epilogue", 50)
        .steps_ms
        .insert("verify".into(), 2.0);
    log.job(585.0, "JOB_DONE", "epilogue", 50, 2, "b.json");
    let steps = [(10.0, 30.0), (12.0, 32.0), (11.0, 31.0), (13.0, 35.0)];
    let mut gpu_ends = log.events.iter_mut().filter(|e| e.event == "GPU_END");
    for (ntt, msm_h) in steps {
        let e = gpu_ends.next().unwrap();
        e.steps_ms.insert("ntt".into(), ntt);
        e.steps_ms.insert("msm_h".into(), msm_h);
    }
    log
}

/// Through the file, as `cuzk-bench timeline` reads it (torn last line included).
fn analyze_two_jobs() -> Analysis {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("timeline.jsonl");
    std::fs::write(&path, two_jobs().to_jsonl() + "{\"mono_ns\": 12").unwrap();
    let (events, bad) = cuzk_shm_layout::timeline::read_log(&path).unwrap();
    analyze(&events, bad, &Options::default()).0
}

fn phase(a: &Analysis, phase: Phase) -> &PhaseStats {
    a.stages
        .iter()
        .chain(&a.waits)
        .find(|s| s.phase == phase)
        .unwrap()
}

#[test]
fn counts_and_span() {
    let a = analyze_two_jobs();
    assert_eq!(a.bad_lines, 1);
    assert_eq!(a.orphan_ends, 1);
    assert_eq!(a.events, two_jobs().events.len());
    assert_close(a.span_s, 0.585);
}

#[test]
fn stage_durations_agree_with_the_events() {
    let a = analyze_two_jobs();
    let synth = phase(&a, Phase::Work(Stage::Synthesis))
        .durations
        .clone()
        .unwrap();
    assert_eq!(synth.count, 4);
    assert_close(synth.p50_ms, 100.0);
    assert_close(synth.max_ms, 100.0);
    let gpu = phase(&a, Phase::Work(Stage::Gpu));
    assert_eq!(gpu.interrupted, 1, "pid 40's lost GPU_START");
    let d = gpu.durations.clone().unwrap();
    assert_eq!(d.count, 4);
    assert_close(d.p50_ms, 50.0);
    let epi = phase(&a, Phase::Work(Stage::Epilogue))
        .durations
        .clone()
        .unwrap();
    // 5, 5, 5, 10: nearest rank p50 = 2nd = 5, p90 = 4th = 10.
    assert_close(epi.p50_ms, 5.0);
    assert_close(epi.p90_ms, 10.0);
    assert_close(epi.mean_ms, 6.25);
}

#[test]
fn waits_between_stages() {
    let a = analyze_two_jobs();
    // Claim to SYNTH_START: 0, 100, 50, 150 -> sorted 0, 50, 100, 150.
    let slot_wait = phase(&a, Phase::Wait(Stage::Synthesis))
        .durations
        .clone()
        .unwrap();
    assert_eq!(slot_wait.count, 4);
    assert_close(slot_wait.p50_ms, 50.0);
    assert_close(slot_wait.p90_ms, 150.0);
    assert_close(slot_wait.mean_ms, 75.0);
    // GPU_QUEUE to GPU_START: 10, 10, 0, 5 (the redo after recovery has no GPU_QUEUE).
    let gpu_wait = phase(&a, Phase::Wait(Stage::Gpu))
        .durations
        .clone()
        .unwrap();
    assert_eq!(gpu_wait.count, 4);
    assert_close(gpu_wait.total_ms, 25.0);
    assert_close(gpu_wait.max_ms, 10.0);
    // SYNTH_END to PREP_START: 10, 0, 0, 0.
    let prep_wait = phase(&a, Phase::Wait(Stage::HostPrep))
        .durations
        .clone()
        .unwrap();
    assert_close(prep_wait.total_ms, 10.0);
    // GPU_END to EPILOGUE_START: 0, 5, 0, 0.
    let epi_wait = phase(&a, Phase::Wait(Stage::Epilogue))
        .durations
        .clone()
        .unwrap();
    assert_close(epi_wait.total_ms, 5.0);
}

#[test]
fn gpu_busy_and_idle_gaps() {
    let a = analyze_two_jobs();
    assert_eq!(a.gpus.len(), 2);
    let g = &a.gpus[0];
    assert_eq!((g.pid, g.partitions), (40, 3));
    // [140,190] [230,280] [320,370]; the interrupted one counts nothing.
    assert_close(g.busy_ms, 150.0);
    assert_close(g.busy_fraction, 150.0 / 585.0);
    assert_close(g.lead_in_ms, 140.0);
    assert_close(g.tail_ms, 215.0);
    let gaps = g.gaps.clone().unwrap();
    assert_eq!(gaps.count, 2);
    assert_close(gaps.total_ms, 80.0);
    assert_close(g.largest_gaps[0].length_ms, 40.0);
    assert_close(g.largest_gaps[0].start_s, 0.190);
    let g = &a.gpus[1];
    assert_eq!((g.pid, g.partitions), (41, 1));
    assert_close(g.busy_ms, 50.0);
    assert!(g.gaps.is_none());
}

#[test]
fn steps_inside_stages() {
    let a = analyze_two_jobs();
    let msm_h = a
        .steps
        .iter()
        .find(|s| s.event == "GPU_END" && s.step == "msm_h")
        .unwrap();
    assert_eq!(msm_h.durations.count, 4);
    assert_close(msm_h.durations.total_ms, 128.0);
    assert_close(msm_h.durations.p50_ms, 31.0);
    let verify = a.steps.iter().find(|s| s.event == "VERIFY").unwrap();
    assert_close(verify.durations.max_ms, 2.0);
}

#[test]
fn slot_occupancy() {
    let a = analyze_two_jobs();
    let o = &a.slots;
    assert_eq!((o.slots, o.max_busy, o.unfinished), (2, 2, 0));
    // Holds: [0,195] [100,290] [200,375] [300,580] (the supervisor's SLOT_RETURNED is
    // followed by the redo, so it does not end the hold).
    // Busy slots: 1 for 100, 2 for 95, 1 for 5, 2 for 90, 1 for 10, 2 for 75, 1 for 205, 0 for 5.
    assert_close(o.mean_busy, 840.0 / 585.0);
    assert_close(o.all_busy_fraction, 260.0 / 585.0);
    assert_eq!(o.series.first(), Some(&(0.0, 1)));
    assert_eq!(o.series.last(), Some(&(0.58, 0)));
}

#[test]
fn jobs_and_throughput() {
    let a = analyze_two_jobs();
    let j = &a.jobs;
    assert_eq!(j.jobs.len(), 2);
    assert_eq!(j.jobs[0].name.as_deref(), Some("a.json"));
    assert_eq!(j.jobs[0].outcome, JobOutcome::Done);
    assert_close(j.jobs[0].wall_ms.unwrap(), 292.0);
    assert_close(j.jobs[1].wall_ms.unwrap(), 435.0);
    assert_eq!(j.jobs[1].partitions, 2);
    let t = &j.throughput;
    assert_eq!((t.done, t.failed, t.unfinished), (2, 0, 0));
    assert_close(t.proofs_per_min, 2.0 / 0.585 * 60.0);
    assert_close(t.s_per_proof.unwrap(), 0.2925);
    assert_close(t.steady_proofs_per_min.unwrap(), 1.0 / 0.293 * 60.0);
    // Job 1's JOB_DONE at 292 ms, the log's first event at 0.
    assert_close(t.first_proof_s.unwrap(), 0.292);
}

#[test]
fn gpu_readyings_are_drawn_from_their_total() {
    let mut log = two_jobs();
    // pid 40 readied for job 1 from 20 to 80 ms; an event without its total (an older
    // log) is left out, one that began before the log is cut at its first event.
    for (at, total) in [(80.0, Some(60.0)), (90.0, None), (5.0, Some(30.0))] {
        let e = log.push(at, "GPU_READIED", "gpu", 40);
        e.job = Some(1);
        if let Some(ms) = total {
            e.steps_ms.insert("total".into(), ms);
        }
        e.steps_ms.insert("setup_srs_upload".into(), 10.0);
    }
    let events: Vec<_> = log.events.clone();
    let p = cuzk_bench::analysis::pairing::pair(&events);
    let ms = |ns: u64| (ns - p.first_ns) as f64 / 1e6;
    let spans: Vec<_> = p
        .readied
        .iter()
        .map(|r| (r.pid, r.job, ms(r.start_ns), ms(r.end_ns)))
        .collect();
    assert_eq!(spans, [(40, Some(1), 0.0, 5.0), (40, Some(1), 20.0, 80.0)]);
    // The picture: the GPU rows are pid 40 and 41, however the readyings lie.
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("w.svg");
    let (_, _, rows) = cuzk_bench::waterfall::write_svg(&p, None, &svg, "t").unwrap();
    assert_eq!(rows, 2 + 4, "two GPU processes, four partitions");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("gpu readying"));
}

#[test]
fn bottleneck_of_the_hand_made_log() {
    let a = analyze_two_jobs();
    let b = &a.bottleneck;
    // Busy: synthesis 400, host-prep 80, gpu 150 + 50, epilogue 25, one process each
    // (pid 41 replaces pid 40: their lifetimes do not overlap).
    let load = |s| b.loads.iter().find(|l| l.stage == s).unwrap();
    assert_eq!(load(Stage::Gpu).processes, 1);
    assert_close(load(Stage::Synthesis).utilisation, 400.0 / 585.0);
    assert_close(load(Stage::Gpu).utilisation, 200.0 / 585.0);
    assert_close(load(Stage::Epilogue).busy_ms, 25.0);
    assert_eq!(b.stage, Some(Stage::Synthesis));
    assert!(!b.starved);
}

#[test]
fn killed_stage_without_any_recovery_is_tolerated() {
    // A log cut off while work is open everywhere: nothing panics, open work is interrupted.
    let mut log = Log::default();
    log.job(0.0, "JOB_CLAIMED", "supervisor", 10, 7, "c.json");
    log.at(1.0, "SYNTH_START", "synthesis", 20, (7, 0, 0));
    log.at(5.0, "SYNTH_END", "synthesis", 20, (7, 0, 0));
    log.at(6.0, "PREP_START", "host-prep", 30, (7, 0, 0));
    log.at(7.0, "SYNTH_START", "synthesis", 20, (7, 1, 1));
    let (a, paired) = analyze(&log.events, 0, &Options::default());
    assert_eq!(phase(&a, Phase::Work(Stage::HostPrep)).interrupted, 1);
    assert_eq!(phase(&a, Phase::Work(Stage::Synthesis)).interrupted, 1);
    assert_eq!(a.jobs.throughput.unfinished, 1);
    assert_eq!(a.slots.unfinished, 2);
    let cut = paired
        .intervals
        .iter()
        .find(|i| i.phase == Phase::Work(Stage::HostPrep))
        .unwrap();
    assert_eq!(
        (cut.ending, cut.end_ns - cut.start_ns),
        (Ending::Interrupted, 1_000_000)
    );
    // And an empty log.
    let (a, _) = analyze(&[], 0, &Options::default());
    assert_eq!((a.events, a.bottleneck.stage), (0, None));
}

#[test]
fn a_stage_that_returns_its_slot_counts_busy_but_not_as_a_duration() {
    let mut log = Log::default();
    log.at(0.0, "GPU_START", "gpu", 40, (1, 0, 0));
    log.at(30.0, "SLOT_RETURNED", "gpu", 40, (1, 0, 0));
    log.at(40.0, "GPU_START", "gpu", 40, (1, 0, 0));
    log.at(100.0, "GPU_END", "gpu", 40, (1, 0, 0));
    let (a, _) = analyze(&log.events, 0, &Options::default());
    let gpu = phase(&a, Phase::Work(Stage::Gpu));
    assert_eq!(
        (gpu.returned, gpu.durations.as_ref().unwrap().count),
        (1, 1)
    );
    assert_close(a.gpus[0].busy_ms, 90.0);
}

/// The rule checked against deliberately throttled stage counts: the same work with one
/// stage short of processes moves the bottleneck to that stage.
#[test]
fn throttled_stage_is_named_the_bottleneck() {
    let base = Pipeline {
        durations_ms: [100.0, 20.0, 50.0, 5.0],
        processes: [2, 1, 1, 1],
        slots: 8,
        jobs: 6,
        partitions: 4,
        claim_every_ms: 0.0,
    };
    let bottleneck = |p: &Pipeline| {
        let a = analyze(&p.run().events, 0, &Options::default()).0;
        let b = a.bottleneck;
        let load = b.loads.iter().find(|l| Some(l.stage) == b.stage).unwrap();
        assert_eq!(
            b.lowest_capacity, b.stage,
            "both views agree on a steady pipeline"
        );
        assert!(!b.starved);
        (b.stage.unwrap(), load.processes, b.utilisation)
    };
    // Synthesis 100 ms on 3 processes = 33 ms per partition; the GPU's 50 ms on its one
    // process is the bound.
    let gpu_bound = Pipeline {
        processes: [3, 1, 1, 1],
        ..base
    };
    let (stage, procs, util) = bottleneck(&gpu_bound);
    assert_eq!((stage, procs), (Stage::Gpu, 1));
    assert!(util > 0.9, "the GPU is busy almost all the time: {util}");
    // Throttle synthesis to one process: 100 ms per partition, twice the GPU's.
    let synth_bound = Pipeline {
        processes: [1, 1, 1, 1],
        ..base
    };
    let (stage, procs, util) = bottleneck(&synth_bound);
    assert_eq!((stage, procs), (Stage::Synthesis, 1));
    assert!(util > 0.9, "{util}");
    // Host-prep slowed to 80 ms on its one process, synthesis given 4.
    let prep_bound = Pipeline {
        durations_ms: [100.0, 80.0, 50.0, 5.0],
        processes: [4, 1, 1, 1],
        ..base
    };
    assert_eq!(bottleneck(&prep_bound).0, Stage::HostPrep);
}

#[test]
fn a_pipeline_fed_slowly_is_starved_not_stage_bound() {
    let p = Pipeline {
        durations_ms: [100.0, 20.0, 50.0, 5.0],
        processes: [1, 1, 1, 1],
        slots: 4,
        jobs: 4,
        partitions: 1,
        claim_every_ms: 1000.0,
    };
    let a = analyze(&p.run().events, 0, &Options::default()).0;
    assert!(a.bottleneck.starved);
    assert_eq!(
        a.bottleneck.stage,
        Some(Stage::Synthesis),
        "still the busiest"
    );
    // Process counts from the command line override what the log shows.
    let mut opts = Options::default();
    opts.processes.insert(Stage::Synthesis, 4);
    let a = analyze(&p.run().events, 0, &opts).0;
    let synth = a
        .bottleneck
        .loads
        .iter()
        .find(|l| l.stage == Stage::Synthesis)
        .unwrap();
    assert_eq!(synth.processes, 4);
}

#[test]
fn an_end_written_after_the_hand_off_is_counted_not_left_waiting() {
    // Seen in a real run: the GPU stage's GPU_END landed after the epilogue had already
    // started (and finished) the partition.
    let mut log = Log::default();
    log.at(0.0, "GPU_START", "gpu", 40, (1, 0, 0));
    log.at(50.0, "EPILOGUE_START", "epilogue", 50, (1, 0, 0));
    log.at(51.0, "EPILOGUE_END", "epilogue", 50, (1, 0, 0));
    log.at(53.0, "GPU_END", "gpu", 40, (1, 0, 0));
    let (a, _) = analyze(&log.events, 0, &Options::default());
    assert_eq!(a.out_of_order, 1);
    assert!(a.waits.iter().all(|w| w.interrupted == 0));
    assert_eq!(
        phase(&a, Phase::Work(Stage::Gpu))
            .durations
            .as_ref()
            .unwrap()
            .count,
        1
    );
}

#[test]
fn process_start_and_exit_lie_outside_the_span() {
    // A supervisor started 10 s before the first job and stopped 20 s after the last: the
    // idle time around the jobs is not pipeline time.
    let mut log = two_jobs();
    log.push(-10_000.0, "STAGE_START", "gpu", 40);
    log.push(20_585.0, "STAGE_EXIT", "gpu", 41);
    let (a, _) = analyze(&log.events, 0, &Options::default());
    assert_close(a.span_s, 0.585);
    assert_close(a.gpus[0].busy_fraction, 150.0 / 585.0);
    assert_close(a.slots.mean_busy, 840.0 / 585.0);
    assert_eq!(a.bottleneck.stage, Some(Stage::Synthesis));
}

#[test]
fn a_job_claimed_again_after_a_supervisor_restart() {
    // The supervisor died mid-job (its synthesis with it); the next one requeued and
    // claimed the job again, and it was proved from the start.
    let mut log = Log::default();
    log.job(0.0, "JOB_CLAIMED", "supervisor", 10, 4, "d.json");
    log.at(1.0, "SYNTH_START", "synthesis", 20, (4, 0, 0));
    log.job(100.0, "JOB_CLAIMED", "supervisor", 11, 4, "d.json");
    log.partition(
        4,
        0,
        0,
        [110.0, 150.0, 150.0, 160.0, 160.0, 200.0, 200.0, 201.0],
        [21, 31, 41, 51],
    );
    log.job(202.0, "JOB_DONE", "epilogue", 51, 4, "d.json");
    let (a, _) = analyze(&log.events, 0, &Options::default());
    let jobs = &a.jobs.jobs;
    assert_eq!(jobs.len(), 2);
    assert_eq!(
        (jobs[0].outcome, jobs[0].wall_ms),
        (JobOutcome::Unfinished, None)
    );
    assert_eq!(jobs[1].outcome, JobOutcome::Done);
    assert_close(jobs[1].wall_ms.unwrap(), 102.0);
    let synth = phase(&a, Phase::Work(Stage::Synthesis));
    assert_eq!(
        (synth.interrupted, synth.durations.as_ref().unwrap().count),
        (1, 1)
    );
    assert_eq!(a.jobs.throughput.unfinished, 1);
}

#[test]
fn too_few_slots_are_pointed_out_when_the_gpu_waits() {
    let run = |slots| {
        let p = Pipeline {
            durations_ms: [30.0, 20.0, 100.0, 5.0],
            processes: [1, 1, 1, 1],
            slots,
            jobs: 5,
            partitions: 1,
            claim_every_ms: 0.0,
        };
        let a = analyze(&p.run().events, 0, &Options::default()).0;
        (cuzk_bench::report::render(&a), a)
    };
    // One slot: each partition is synthesized and prepped only once the last one is out of
    // the epilogue, so the GPU idles 50 ms between partitions.
    let (text, a) = run(1);
    assert_close(a.gpus[0].gaps.as_ref().unwrap().total_ms, 4.0 * 55.0);
    assert!(text.contains("note: every slot was busy 100.0 %"), "{text}");
    assert_eq!(a.bottleneck.stage, Some(Stage::Gpu));
    // Three: the next partition is ready before the GPU is free.
    let (text, a) = run(3);
    assert!(a.gpus[0].gaps.is_none());
    assert!(!text.contains("note: every slot"), "{text}");
}

#[test]
fn start_up_inside_the_first_partition_is_measured() {
    // The GPU's first partition also compiled its kernels: 1000 ms against 50 ms after.
    let mut log = Log::default();
    let mut t = 0.0;
    for (partition, ms) in [1000.0, 50.0, 50.0, 50.0].into_iter().enumerate() {
        log.at(t, "GPU_START", "gpu", 40, (1, partition as u32, 0));
        log.at(t + ms, "GPU_END", "gpu", 40, (1, partition as u32, 0));
        t += ms;
    }
    let (a, _) = analyze(&log.events, 0, &Options::default());
    let gpu = &a.bottleneck.loads[0];
    assert_close(gpu.startup_ms, 950.0);
    assert_close(gpu.utilisation, 1.0);
    assert_close(gpu.utilisation_without_startup, 200.0 / 1150.0);
    let text = cuzk_bench::report::render(&a);
    assert!(
        text.contains("note: gpu's first partition per process ran 0.9 s over its median"),
        "{text}"
    );
}
