//! The loop every stage process runs: attach to the supervisor's arena, claim a slot for
//! this stage, do the work in place, publish it to the next stage; finish the slot in hand
//! and exit 0 on SIGTERM.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use cuzk_shm_layout::timeline::names;
use cuzk_shm_layout::{
    iceoryx_config, Arena, At, ControlPlane, ShmError, SlotClaim, Stage, Timeline,
};

/// The arguments the supervisor passes every stage (flags or environment).
#[derive(clap::Args, Debug, Clone)]
pub struct StageArgs {
    /// The arena file the supervisor created.
    #[arg(long, env = "CUZK_ARENA")]
    pub arena: PathBuf,
    /// Prefix of this supervisor instance's iceoryx2 resources.
    #[arg(long, env = "CUZK_IOX_PREFIX")]
    pub iox_prefix: String,
    /// JSON-lines timeline log to append events to.
    #[arg(long, env = "CUZK_TIMELINE")]
    pub timeline: Option<PathBuf>,
    /// Directory of the shared SRS segments (default: the arena's directory).
    #[arg(long, env = "CUZK_SRS_DIR")]
    pub srs_dir: Option<PathBuf>,
    /// Skip the subgroup check of parameter points on first use.
    #[arg(long, env = "CUZK_TRUST_PARAMS")]
    pub trust_params: bool,
    /// Worker threads for this process (rayon); default: the CPUs it is pinned to.
    #[arg(long, env = "CUZK_THREADS")]
    pub threads: Option<usize>,
}

pub struct StageRuntime {
    pub arena: Arena,
    pub control: ControlPlane,
    pub timeline: Timeline,
    pub args: StageArgs,
    stop: Arc<AtomicBool>,
}

/// How long a claim waits before the loop looks at the stop flag again.
const POLL: Duration = Duration::from_millis(200);

impl StageRuntime {
    pub fn start(args: StageArgs, stage: Stage) -> Result<Self> {
        if let Some(n) = args.threads {
            // Ignored if a pool exists already (only in tests that run stages in-process).
            let _ = rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build_global();
        }
        let stop = Arc::new(AtomicBool::new(false));
        for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
            signal_hook::flag::register(sig, Arc::clone(&stop))
                .context("installing the SIGTERM handler")?;
        }
        let arena = Arena::attach(&args.arena)
            .with_context(|| format!("attaching arena {}", args.arena.display()))?;
        let name = arena_name(&args.arena);
        let control = ControlPlane::new(&name, &iceoryx_config(&args.iox_prefix)?)
            .context("joining the control plane")?;
        let timeline = Timeline::open(args.timeline.as_deref(), stage.name())
            .with_context(|| format!("opening timeline {:?}", args.timeline))?;
        timeline.emit(names::STAGE_START, At::default());
        Ok(StageRuntime {
            arena,
            control,
            timeline,
            args,
            stop,
        })
    }

    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    pub fn srs_dir(&self) -> PathBuf {
        self.args.srs_dir.clone().unwrap_or_else(|| {
            self.args
                .arena
                .parent()
                .map_or_else(|| PathBuf::from("/dev/shm"), PathBuf::from)
        })
    }

    /// Claims slots ready for `stage` until SIGTERM and hands each to `work`, which
    /// completes it (and announces it) or returns an error for the job.
    pub fn serve(
        &self,
        stage: Stage,
        mut work: impl FnMut(SlotClaim<'_>) -> Result<()>,
    ) -> Result<()> {
        let inbox = self.control.receiver(stage)?;
        while !self.stopping() {
            match inbox.claim_next(&self.arena, POLL) {
                Ok(Some(handoff)) => work(handoff.claim)?,
                Ok(None) => {}
                // SIGTERM interrupts the wait: that is the stop, not a failure.
                Err(_) if self.stopping() => break,
                Err(e) => return Err(e.into()),
            }
        }
        self.timeline.emit(names::STAGE_EXIT, At::default());
        Ok(())
    }

    /// As [`Self::serve`], and `work` may take the next ready slot ahead of time through its
    /// [`Lookahead`] (claimed without waiting, only when one is ready): that slot is the
    /// next one worked on. The gpu stage uploads the next partition's first input under the
    /// current one's compute this way. When a wait for a slot ends with none, `work` gets
    /// [`Turn::Idle`]: the gpu stage readies itself for the jobs admitted then, before their
    /// first partition comes. On stop a slot taken ahead is given back undone.
    pub fn serve_ahead(
        &self,
        stage: Stage,
        mut work: impl FnMut(Turn<'_, '_, '_>) -> Result<()>,
    ) -> Result<()> {
        let inbox = self.control.receiver(stage)?;
        let mut next: Option<SlotClaim<'_>> = None;
        let mut claim_ready = || {
            inbox
                .claim_next(&self.arena, Duration::ZERO)
                .map(|h| h.map(|h| h.claim))
        };
        while !self.stopping() {
            let claim = match next.take() {
                Some(claim) => claim,
                None => match inbox.claim_next(&self.arena, POLL) {
                    Ok(Some(handoff)) => handoff.claim,
                    Ok(None) => {
                        work(Turn::Idle)?;
                        continue;
                    }
                    Err(_) if self.stopping() => break,
                    Err(e) => return Err(e.into()),
                },
            };
            let mut ahead = Lookahead::new(&mut next, &mut claim_ready);
            work(Turn::Slot(claim, &mut ahead))?;
        }
        if let Some(claim) = next {
            // Another process of this stage (or this one, restarted) takes it.
            claim.abandon()?;
        }
        self.timeline.emit(names::STAGE_EXIT, At::default());
        Ok(())
    }
}

/// What [`StageRuntime::serve_ahead`] hands its work each time round.
pub enum Turn<'t, 'l, 'a> {
    /// A slot to work on, and the one after it if the work wants it early.
    Slot(SlotClaim<'a>, &'t mut Lookahead<'l, 'a>),
    /// A wait of one poll (200 ms) found no slot ready.
    Idle,
}

/// The next slot a stage may start on before it finishes the current one
/// ([`StageRuntime::serve_ahead`]).
pub struct Lookahead<'l, 'a> {
    next: &'l mut Option<SlotClaim<'a>>,
    /// Claims a ready slot without waiting; None: never looks (outside a stage loop).
    claim: Option<&'l mut dyn FnMut() -> Result<Option<SlotClaim<'a>>, ShmError>>,
}

impl<'l, 'a> Lookahead<'l, 'a> {
    /// The slot this stage works on next: the one already taken ahead, else one claimed now
    /// if it is ready (no waiting; None when nothing is, or the claim failed: the slot is
    /// then found again by the next ordinary claim).
    pub fn next_slot(&mut self) -> Option<&SlotClaim<'a>> {
        if self.next.is_none() {
            if let Some(claim) = self.claim.as_mut() {
                *self.next = claim().ok().flatten();
            }
        }
        self.next.as_ref()
    }

    /// A lookahead that keeps the slot it takes in `next` and takes one with `claim` (which
    /// must not wait), as [`StageRuntime::serve_ahead`] makes it.
    pub fn new(
        next: &'l mut Option<SlotClaim<'a>>,
        claim: &'l mut dyn FnMut() -> Result<Option<SlotClaim<'a>>, ShmError>,
    ) -> Self {
        Lookahead {
            next,
            claim: Some(claim),
        }
    }

    /// A lookahead that never finds a slot (callers outside a stage loop: benches, tests).
    pub fn none(slot: &'l mut Option<SlotClaim<'a>>) -> Self {
        Lookahead {
            next: slot,
            claim: None,
        }
    }
}
/// The arena's name as the supervisor gave it: the file is `cuzk-<name>.arena`.
pub fn arena_name(path: &std::path::Path) -> String {
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    file.strip_prefix("cuzk-")
        .and_then(|f| f.strip_suffix(".arena"))
        .unwrap_or(&file)
        .to_string()
}

/// A stage binary's exit: 0, or 1 with the error on stderr after the binary's name (the
/// supervisor restarts it; the journal shows why).
pub fn exit_code(binary: &str, result: Result<()>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{binary}: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
