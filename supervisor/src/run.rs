//! `cuzk run`: the supervisor. Creates the arena, starts and watches the stage processes,
//! feeds jobs from the drop directory, recovers the slots of a crashed stage, drains on
//! SIGTERM, rescales on SIGHUP, and tells systemd when it is ready.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use cuzk_c1::proof_type::{format_sector_size, is_production_sector_size, proof_type_name};
use cuzk_dropdir::DropDir;
use cuzk_kernels::synthetic::SyntheticShape;
use cuzk_shm_layout::timeline::names;
use cuzk_shm_layout::{
    iceoryx_config, reap_dead_nodes, Arena, ArenaConfig, At, ControlPlane, PartitionShape,
    SlotState, StageSender, Timeline,
};

use crate::admission::{admit, retire_failed, wants_job, Admitted, Terms};
use crate::children::Children;
use crate::config::{Config, Overrides, StageKind};
use crate::instance::{shape_of_params, InstanceLock, InstanceNames};
use crate::shm_room::{self, Need};
use crate::stalled::{StallWatch, STALLED_AFTER};
use crate::status::{Snapshot, Status, Throughput};
use crate::topology::Topology;
use crate::trouble::Trouble;
use crate::waiting::Waiting;
use crate::{params, sd_notify};

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// TOML configuration (see systemd/cuzk.toml for every key and its default).
    #[arg(long, env = "CUZK_CONFIG")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub overrides: Overrides,
    /// Copy these C1 files into incoming/ at start (as a writer would: temp name, rename).
    #[arg(long)]
    pub submit: Vec<PathBuf>,
    /// Drain and exit once no job is in flight and incoming/ is empty (working/ is
    /// requeued at start, so that covers it), or holds only files that wait for what this
    /// machine lacks (their parameters): then the exit status is 4 and they stay there.
    #[arg(long)]
    pub exit_when_idle: bool,
    /// Longest a drain waits for jobs in flight before stopping the stages (their work
    /// stays in working/ and is redone at the next start).
    /// (Below the unit's TimeoutStopSec=10min, so the stages still get their SIGTERM.)
    #[arg(long, default_value_t = 540)]
    pub drain_timeout_s: u64,
    /// Speed measurement only: slots sized for this synthetic partition shape ("32GiB",
    /// "tiny"), and only synthetic job files admitted (`cuzk-bench synth` writes them); no
    /// parameter files needed, no proof written.
    #[arg(long, value_parser = parse_synthetic_shape)]
    pub synthetic: Option<SyntheticShape>,
    /// Keep the synthetic SRS segment in shared memory at exit (47 GB for 32GiB), for a
    /// next synthetic run; removed by default.
    #[arg(long, requires = "synthetic")]
    pub keep_synthetic_srs: bool,
}

fn parse_synthetic_shape(name: &str) -> Result<SyntheticShape, String> {
    SyntheticShape::by_name(name).ok_or_else(|| {
        let known: Vec<&str> = SyntheticShape::ALL.iter().map(|s| s.name).collect();
        format!(
            "unknown synthetic shape {name:?} (known: {})",
            known.join(", ")
        )
    })
}

/// The senders the supervisor announces recovered slots on.
struct Announcers([StageSender; 4]);

impl Announcers {
    fn new(control: &ControlPlane) -> Result<Self> {
        Ok(Announcers([
            control.sender(SlotState::Free)?,
            control.sender(SlotState::Synthesized)?,
            control.sender(SlotState::Prepped)?,
            control.sender(SlotState::Proved)?,
        ]))
    }

    fn announce(&self, d: cuzk_shm_layout::SlotDescriptor) {
        let i = match d.state() {
            Some(SlotState::Free) => 0,
            Some(SlotState::Synthesized) => 1,
            Some(SlotState::Prepped) => 2,
            Some(SlotState::Proved) => 3,
            _ => return,
        };
        // A lost announcement only delays: consumers also scan the slot words.
        let _ = self.0[i].announce(d);
    }
}

/// `cuzk run`'s exit status when it stopped (`--exit-when-idle`) with files left waiting
/// in incoming/ for what this machine lacks.
pub const LEFT_WAITING: u8 = 4;

pub fn run(args: &RunArgs) -> Result<ExitCode> {
    let env = |k: &str| std::env::var(k).ok();
    let mut config = Config::load(args.config.as_deref(), &env, &args.overrides)?;
    // filecoin-proofs reads the cache location once, at first use: set it first.
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &config.param_cache);
    std::fs::create_dir_all(&config.data_dir)
        .with_context(|| format!("{}: creating the data directory", config.data_dir.display()))?;
    let _lock = InstanceLock::take(&config.data_dir)?;
    let names = InstanceNames::for_data_dir(&config.data_dir)?;
    let mut drop_dir = DropDir::open(&config.data_dir)?;
    let requeued = drop_dir.requeue_working()?;
    if !requeued.requeued.is_empty() || !requeued.dropped.is_empty() {
        eprintln!(
            "cuzk: requeued {} unfinished job(s) from working/, dropped {} already proved",
            requeued.requeued.len(),
            requeued.dropped.len()
        );
    }
    for file in &args.submit {
        submit(file, &drop_dir.incoming)?;
    }

    // a and b left to the prover (`CUZK_SYNTHESIS_AB=prover`, the default, which the
    // stages read from the same environment): slots without room for them, about half the bytes. Synthetic
    // partitions bring theirs (no R1CS behind them), so their slots keep the room.
    let by_prover = cuzk_synthesis::slot_evals_from_env().map_err(anyhow::Error::msg)?
        == cuzk_kernels::witness::Evaluated::ByProver;
    let (shape, params) = match args.synthetic {
        Some(s) => (
            PartitionShape::new(1 << s.domain_log2, s.num_inputs as u64, s.num_aux as u64),
            None,
        ),
        None => {
            let params = ensure_params(config.sector_size)?;
            let shape = shape_of_params(&params)?;
            let shape = if by_prover {
                shape.with_evals_by_prover()
            } else {
                shape
            };
            (shape, Some(params))
        }
    };
    let topology =
        Topology::read(Path::new("/sys")).context("reading the CPU/NUMA/GPU topology")?;
    std::fs::create_dir_all(&config.arena_dir)?;
    let arena_path = names.arena_path(&config.arena_dir);
    // An arena left by a supervisor that died: its stages died with it (PDEATHSIG), so
    // nothing in it is in use; its jobs are back in incoming/.
    let _ = std::fs::remove_file(&arena_path);
    let iox = iceoryx_config(&names.iox_prefix)?;
    let _ = reap_dead_nodes(&iox, None);
    let mut arena_config = ArenaConfig::new(&names.arena, shape, config.slots);
    arena_config.dir = config.arena_dir.clone();
    let arena = Arena::create(&arena_config).context("creating the arena")?;
    if let Err(e) = check_arena_dir_room(&config, &arena_path, args.synthetic, params.as_deref()) {
        let _ = arena.remove();
        return Err(e);
    }
    let control = ControlPlane::new(&names.arena, &iox)?;
    let announcers = Announcers::new(&control)?;
    let timeline = Timeline::open(Some(&config.timeline), "supervisor")?;
    eprintln!(
        "cuzk: serving {} — {} slot(s) sized for {} (domain 2^{}{}), {} MiB of shared memory at {}; B_G2 in {}",
        config.data_dir.display(),
        config.slots,
        match args.synthetic {
            Some(s) => format!("synthetic {} partitions", s.name),
            None => format_sector_size(config.sector_size),
        },
        shape.domain_log2,
        if shape.leaves_evals_to_prover() {
            "; no a and b: the prover makes them"
        } else {
            ""
        },
        arena.len() >> 20,
        arena_path.display(),
        config.b_g2_msm.as_str()
    );

    let env_for_stages = stage_env(&config, &arena_path, &names.iox_prefix);
    let mut children = Children::new(env_for_stages)?;
    // At start a stage that cannot be started is a broken installation: say so and stop.
    if let Some(e) = children.scale(&config, &topology).into_iter().next() {
        stop_children(&mut children, &config);
        return Err(e.context("starting the stages"));
    }

    let term = Arc::new(AtomicBool::new(false));
    let hup = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(sig, Arc::clone(&term))?;
    }
    signal_hook::flag::register(signal_hook::consts::SIGHUP, Arc::clone(&hup))?;
    let _ = sd_notify::notify_ready();

    let mut throughput = Throughput::default();
    // Jobs this run published: id, file name, when.
    let mut known_jobs: Vec<(u64, String, Instant)> = Vec::new();
    let mut last_progress = Instant::now();
    let mut drain_started: Option<Instant> = None;
    let mut last_status = Instant::now() - Duration::from_secs(10);
    let watchdog = sd_notify::watchdog_interval();
    let mut last_watchdog = Instant::now();
    let mut trouble = Trouble::default();
    // What every admitted job carries; a reload (SIGHUP) changes only the process counts.
    let data_dir = config.data_dir.clone();
    let terms = Terms {
        data_dir: &data_dir,
        synthetic: args.synthetic,
        b_g2: config.b_g2_msm,
        miner_id: config.miner_id,
        sector_size: config.sector_size,
        aggregation_srs_at_start: cuzk_epilogue::aggregation_srs_path().is_file(),
    };
    let mut stall_watch = StallWatch::default();
    // Refused files failed/ could not take yet: their working/ path and reason.
    let mut unmoved: Vec<(PathBuf, String)> = Vec::new();
    // Files this machine cannot admit now (their parameters missing), back in incoming/.
    let mut waiting = Waiting::default();
    loop {
        let draining = drain_started.is_some();
        // Children: reap, recover what a crashed one held, restart after back-off (during a
        // drain too: the jobs in flight still need every stage).
        // Recovery runs before the reap, while the dead pid cannot belong to anyone else.
        let reaped = children.reap(&config, false, |pid| {
            arena.recover_dead_owner(pid).unwrap_or_else(|e| {
                // Slots it held stay busy: say so (it should not happen to a zombie).
                eprintln!("cuzk: recovering what pid {pid} held failed: {e}");
                Default::default()
            })
        });
        for (exited, report) in reaped {
            let pid = exited.pid;
            for d in &report.returned {
                announcers.announce(*d);
            }
            let _ = reap_dead_nodes(&iox, Some(pid));
            let detail = format!(
                "{} #{} pid {pid} exited ({}), {} slot(s) recovered{}",
                exited.kind.as_str(),
                exited.index,
                exited.status,
                report.returned.len(),
                if exited.expected {
                    ""
                } else {
                    ", restart scheduled"
                }
            );
            if !exited.expected {
                eprintln!("cuzk: {detail}");
            }
            timeline.emit_full(names::STAGE_EXIT, At::default(), None, &[], Some(&detail));
        }
        let not_started = children.start_due(&config, &topology);
        report_start_errors(&mut trouble, &children, not_started);
        match children.crash_looping(config.restart.reset_after) {
            Some(e) => trouble.persists(CRASH_LOOPING, &e),
            None => trouble.cleared(CRASH_LOOPING),
        }
        if hup.swap(false, Ordering::Relaxed) {
            match Config::load(args.config.as_deref(), &env, &args.overrides) {
                Ok(new) => {
                    for kind in StageKind::ALL {
                        config.stage_mut(kind).count = new.stage(kind).count;
                    }
                    eprintln!(
                        "cuzk: SIGHUP: stage counts now {}",
                        StageKind::ALL
                            .iter()
                            .map(|k| format!("{} {}", k.as_str(), config.stage(*k).count))
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                    let not_started = children.scale(&config, &topology);
                    report_start_errors(&mut trouble, &children, not_started);
                }
                Err(e) => eprintln!("cuzk: SIGHUP: configuration not reloaded: {e}"),
            }
        }

        // Jobs: finished and failed ones out, new ones in while the pipeline wants them.
        // The drop directory failing (a full disk) is logged and tried again each round;
        // the jobs in flight go on meanwhile (see trouble.rs).
        let mut failed = Vec::new();
        if trouble.due(RETIRING) {
            let retired = retire_failed(&arena, &drop_dir, &timeline);
            failed = retired.ids;
            let mut retire_error = retired.unmoved;
            unmoved.retain(|(working, reason)| {
                // Gone (an operator's hand, or an earlier move whose fsync failed): nothing
                // left to move.
                let moved = !working.exists() || {
                    match drop_dir.fail(working, reason) {
                        Ok(_) => true,
                        Err(e) => {
                            retire_error = Some(e.into());
                            false
                        }
                    }
                };
                if moved {
                    throughput.record(false);
                }
                !moved
            });
            match retire_error {
                Some(e) => trouble.report(RETIRING, &e),
                None => trouble.cleared(RETIRING),
            }
        }
        known_jobs.retain(|(id, name, since)| {
            let gone = arena.job(*id).is_err();
            if gone {
                // Gone from the table: retired here as failed, or by an epilogue as done.
                let ok = !failed.contains(id);
                throughput.record(ok);
                if ok && args.synthetic.is_some() {
                    eprintln!(
                        "cuzk: synthetic job {id} ({name}) done in {:.1} s (no proof: speed only)",
                        since.elapsed().as_secs_f64()
                    );
                } else if ok {
                    let (proof, _) = drop_dir.done_paths(&drop_dir.working.join(name));
                    eprintln!(
                        "cuzk: job {id} ({name}) proved and verified in {:.1} s: {}",
                        since.elapsed().as_secs_f64(),
                        proof.display()
                    );
                }
            }
            !gone
        });
        // One scan a round serves admission, the status and the idle check: a scan stats
        // every file, and a backlog of hundreds of C1 files is ordinary.
        let (incoming, scanned) = match drop_dir.scan_incoming() {
            Ok(files) => {
                trouble.cleared(SCANNING);
                if files.is_empty() {
                    trouble.cleared(CLAIMING);
                }
                (files, true)
            }
            Err(e) => {
                trouble.report(SCANNING, &e.into());
                (Vec::new(), false)
            }
        };
        // Files of this scan still in incoming/ after admission.
        let mut queued = incoming.len();
        if scanned {
            waiting.forget_all_but(&incoming);
        }
        // While claiming fails, it is tried once a second, like the moves into failed/.
        // Each file is parsed here, on the loop that also reaps, recovers and reports:
        // a round admits for at most ADMITTING_FOR, and the next goes on after that.
        let admitting = Instant::now();
        if !draining && trouble.due(CLAIMING) {
            // The files that do not wait first, in queue order; then at most one waiting
            // file that is due to be checked again (waiting.rs).
            let order: Vec<&PathBuf> = match wants_job(&arena) {
                true => {
                    // The one due keeps its place in the queue: behind a steady stream of
                    // new files it would otherwise never come.
                    let due = waiting.next_due(&incoming);
                    incoming
                        .iter()
                        .filter(|f| !waiting.is_waiting(f) || Some(*f) == due)
                        .collect()
                }
                false => Vec::new(),
            };
            for file in order {
                if !wants_job(&arena) || admitting.elapsed() > ADMITTING_FOR {
                    break;
                }
                let admitted = admit(&arena, &drop_dir, file, &terms, &timeline);
                if !matches!(admitted, Ok(Admitted::Waiting { .. }) | Err(_)) {
                    waiting.forget(file);
                }
                match admitted {
                    Err(e) => {
                        // The file stays in incoming/ for the next round; the files after
                        // it are still tried (its own trouble may be its name's).
                        trouble.report(CLAIMING, &e);
                        continue;
                    }
                    Ok(Admitted::RefusedUnmoved {
                        working,
                        reason,
                        error,
                    }) => {
                        // Moved to failed/ by the next rounds.
                        trouble.report(RETIRING, &error);
                        unmoved.push((working, reason));
                    }
                    Ok(Admitted::Published(id)) => {
                        trouble.cleared(CLAIMING);
                        let name = file.file_name().unwrap_or_default().to_string_lossy();
                        eprintln!("cuzk: job {id} ({name}) claimed");
                        known_jobs.push((id, name.into_owned(), Instant::now()));
                    }
                    Ok(Admitted::Refused) => {
                        trouble.cleared(CLAIMING);
                        throughput.record(false);
                    }
                    Ok(Admitted::Vanished) => {}
                    Ok(Admitted::Waiting {
                        incoming,
                        reason,
                        watch,
                        seen,
                    }) => {
                        trouble.cleared(CLAIMING);
                        waiting.rest(incoming, reason, watch, seen);
                        continue;
                    }
                }
                queued -= 1;
            }
        }
        match waiting.trouble() {
            Some(e) => trouble.persists(WAITING, &e),
            None => trouble.cleared(WAITING),
        }

        if last_status.elapsed() >= Duration::from_secs(1) {
            last_status = Instant::now();
            let stalled = stall_watch.check(
                &arena,
                cuzk_shm_layout::clock::monotonic_ns(),
                STALLED_AFTER,
            );
            let said: Vec<String> = trouble
                .summary()
                .into_iter()
                .chain(stalled.iter().map(|s| format!("{s}: hung?")))
                .collect();
            let status = Status::collect(
                Snapshot {
                    arena: &arena,
                    children: &children,
                    data_dir: &config.data_dir,
                    queued,
                    draining,
                    trouble: (!said.is_empty()).then(|| said.join("; ")),
                },
                &mut throughput,
            );
            let _ = status.write(&names.status_file);
            // A line every 10 s while there is work, for people watching a terminal or
            // the journal (`cuzk status` has the full picture).
            if !status.jobs.is_empty() && last_progress.elapsed() >= Duration::from_secs(10) {
                last_progress = Instant::now();
                let jobs: Vec<String> = status
                    .jobs
                    .iter()
                    .map(|j| format!("{} [{}] {:.0} s", j.name, j.states_line(), j.age_s))
                    .collect();
                eprintln!(
                    "cuzk: {} queued; {}; {} done, {} failed, {:.2} proofs/min",
                    status.queued,
                    jobs.join("; "),
                    status.done_total,
                    status.failed_total,
                    status.throughput_per_min
                );
            }
            let _ = sd_notify::notify_status(&format!(
                "{} queued, {} active, {} done, {} failed{}",
                status.queued,
                status.jobs.len(),
                status.done_total,
                status.failed_total,
                status
                    .trouble
                    .as_ref()
                    .map_or(String::new(), |t| format!("; {t}"))
            ));
        }

        // Files that wait for what this machine lacks are not work it can do: with
        // --exit-when-idle it stops and leaves them in incoming/, saying why.
        let idle = arena.active_jobs().next().is_none()
            && unmoved.is_empty()
            && scanned
            && queued == waiting.len();
        if drain_started.is_none()
            && (term.load(Ordering::Relaxed) || (args.exit_when_idle && idle))
        {
            eprintln!("cuzk: draining: no new jobs; waiting for the jobs in flight");
            let _ = sd_notify::notify_stopping();
            drain_started = Some(Instant::now());
        }
        if let Some(t) = drain_started {
            let overran = t.elapsed() > Duration::from_secs(args.drain_timeout_s);
            if arena.active_jobs().next().is_none() || overran {
                if overran {
                    eprintln!("cuzk: drain timed out; unfinished jobs stay in working/ for the next start");
                }
                stop_children(&mut children, &config);
                let _ = arena.remove();
                if let Some(shape) = args.synthetic.filter(|_| !args.keep_synthetic_srs) {
                    let key = cuzk_stage_common::SrsCache::synthetic_key(shape);
                    let _ = cuzk_shm_layout::SrsSegment::remove(&config.arena_dir, &key);
                }
                let _ = reap_dead_nodes(&iox, None);
                remove_iceoryx_leftovers(&names.iox_prefix);
                let left = waiting.trouble();
                if let Some(e) = &left {
                    eprintln!("cuzk: left in incoming/: {e:#}");
                }
                eprintln!(
                    "cuzk: stopped ({} done, {} failed)",
                    throughput.done_total, throughput.failed_total
                );
                // Only a batch run (--exit-when-idle) says so by its status: a stop asked
                // for (systemd's) with files waiting is still a clean stop.
                return Ok(match left {
                    Some(_) if args.exit_when_idle => ExitCode::from(LEFT_WAITING),
                    _ => ExitCode::SUCCESS,
                });
            }
        }
        if watchdog.is_some_and(|every| last_watchdog.elapsed() >= every / 2) {
            last_watchdog = Instant::now();
            let _ = sd_notify::notify_watchdog();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// What [`Trouble`] calls the steps that can fail for the supervisor's own reasons.
const SCANNING: &str = "scanning incoming/";
const CLAIMING: &str = "claiming from incoming/";
const RETIRING: &str = "moving failed jobs to failed/";
const WAITING: &str = "admitting from incoming/";

/// The longest a round of the main loop spends admitting files (parsing each C1: ~1 s at
/// 32 GiB) before it goes on to reaping, recovery and the status.
const ADMITTING_FOR: Duration = Duration::from_secs(2);
const STARTING: &str = "starting a stage process";
const CRASH_LOOPING: &str = "stage processes";

/// A stage process that could not be started is tried again after its back-off; the
/// trouble ends once every such position has started.
fn report_start_errors(trouble: &mut Trouble, children: &Children, errors: Vec<anyhow::Error>) {
    match errors.into_iter().next() {
        Some(e) => trouble.report(STARTING, &e),
        None if !children.start_failing() => trouble.cleared(STARTING),
        None => {}
    }
}

/// SIGTERM to the stages, then up to 30 s for them to finish their slot, then SIGKILL.
fn stop_children(children: &mut Children, config: &Config) {
    children.terminate_all();
    let until = Instant::now() + Duration::from_secs(30);
    while children.running() > 0 && Instant::now() < until {
        children.reap(config, true, |_| ());
        std::thread::sleep(Duration::from_millis(50));
    }
    if children.running() > 0 {
        children.kill_all();
        children.reap(config, true, |_| ());
    }
}

/// Puts a C1 file into incoming/ the way writers must: a dot-name first, then a rename.
fn submit(file: &Path, incoming: &Path) -> Result<()> {
    let name = file
        .file_name()
        .with_context(|| format!("{}: not a file name", file.display()))?;
    let tmp = incoming.join(format!(".{}.submit", name.to_string_lossy()));
    std::fs::copy(file, &tmp)
        .with_context(|| format!("{}: copying into incoming/", file.display()))?;
    std::fs::rename(&tmp, incoming.join(name))?;
    Ok(())
}

/// The parameter file the slots are sized from; generated on first use for a test sector
/// size (minutes), refused for a production size (download them).
fn ensure_params(sector_size: u64) -> Result<PathBuf> {
    let (proof, files) = params::files_for_sector_size(sector_size)?;
    if files.params.exists() && files.vk.exists() {
        params::check_vk_matches_params(&files)?;
        return Ok(files.params);
    }
    if is_production_sector_size(sector_size) {
        bail!(
            "{}: parameters for {} not found: fetch the production parameters into the parameter cache",
            files.params.display(),
            proof_type_name(proof)
        );
    }
    eprintln!(
        "cuzk: no parameters for {} yet: generating random test parameters (first use only)",
        proof_type_name(proof)
    );
    // Under systemd this runs before READY=1: minutes the unit's start timeout must allow.
    sd_notify::extending_start(Duration::from_secs(30), || {
        params::run(&params::GenerateArgs {
            sector_size: format_sector_size(sector_size),
            proof_type: None,
            param_cache: None,
            allow_large: false,
        })
    })?;
    Ok(files.params)
}

/// Refuses to start when the arena directory cannot hold the arena's slots and the
/// decoded parameters of `params` (or of the synthetic shape) once written (shm_room.rs).
fn check_arena_dir_room(
    config: &Config,
    arena_path: &Path,
    synthetic: Option<SyntheticShape>,
    params: Option<&Path>,
) -> Result<()> {
    let srs = cuzk_stage_common::SrsCache::new(&config.arena_dir, config.trust_params);
    let (srs_what, srs_bytes) = match (synthetic, params) {
        (Some(shape), _) => (
            format!("the synthetic {} SRS", shape.name),
            srs.synthetic_bytes_to_load(shape),
        ),
        (None, Some(p)) => (
            format!("the decoded {}", p.display()),
            srs.bytes_to_load(p)?,
        ),
        (None, None) => (String::new(), 0),
    };
    shm_room::check_room(
        &config.arena_dir,
        &[
            Need {
                what: format!("the arena's {} slot(s)", config.slots),
                bytes: shm_room::unwritten_bytes(arena_path)?,
            },
            Need {
                what: srs_what,
                bytes: srs_bytes,
            },
        ],
    )
}

/// iceoryx2 keeps one management file per prefix after its last node is gone; the
/// prefix is this instance's own, and every node of it has stopped.
fn remove_iceoryx_leftovers(prefix: &str) {
    if let Ok(entries) = std::fs::read_dir("/dev/shm") {
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().starts_with(prefix) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// What the supervisor tells every stage process through its environment.
fn stage_env(config: &Config, arena_path: &Path, iox_prefix: &str) -> Vec<(String, String)> {
    vec![
        ("CUZK_ARENA".to_string(), arena_path.display().to_string()),
        ("CUZK_IOX_PREFIX".to_string(), iox_prefix.to_string()),
        (
            "CUZK_TIMELINE".to_string(),
            config.timeline.display().to_string(),
        ),
        (
            "CUZK_SRS_DIR".to_string(),
            config.arena_dir.display().to_string(),
        ),
        (
            "FIL_PROOFS_PARAMETER_CACHE".to_string(),
            config.param_cache.display().to_string(),
        ),
        // Set either way: a unit's CUZK_TRUST_PARAMS=true that the configuration or a
        // flag overrides to false would otherwise reach the stages through inheritance.
        (
            "CUZK_TRUST_PARAMS".to_string(),
            config.trust_params.to_string(),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Overrides;

    /// The stages hear the supervisor's trust_params either way, so a
    /// `CUZK_TRUST_PARAMS=true` in the supervisor's own environment (a unit file) that the
    /// configuration overrides cannot reach them by inheritance.
    #[test]
    fn stages_are_told_trust_params_either_way() {
        let mut config =
            Config::load_with_gpus(None, &|_: &str| None, &Overrides::default(), 0).unwrap();
        for trust in [false, true] {
            config.trust_params = trust;
            let env = stage_env(&config, Path::new("/dev/shm/cuzk-arena"), "cuzk-t");
            let told: Vec<_> = env
                .iter()
                .filter(|(k, _)| k == "CUZK_TRUST_PARAMS")
                .collect();
            assert_eq!(
                told,
                [&("CUZK_TRUST_PARAMS".to_string(), trust.to_string())]
            );
        }
    }
}
