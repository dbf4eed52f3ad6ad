//! The CUDA device: our kernels through `cuzk_kernels::cuda::GpuProver`, which owns every
//! allocation on its device (made once, when the first job's parameters are known: while
//! the stage waits for that job's first partition, `prepare`, or at that partition; kept for
//! every partition proved with the same parameters). The bases stay resident
//! (B_G2's too when the jobs put B_G2 here); each partition uploads only a, b, the
//! assignment and the plans (no c: the prover makes it as a∘b), by DMA straight from the
//! arena, which is page-locked once, on a thread started with the process (`HostPin`).
//! The next partition's `a` and `b`, when its slot is ready, upload during this one's L, A, B
//! MSMs (`GpuProver::prove_ahead`, as many as the device plan has spare buffers for), so its
//! NTTs start without waiting for a copy. Where synthesis left a and b to the prover, the
//! assignment uploads first and the prover makes them from the recorded R1CS it holds
//! (`Evals::FromR1cs`, every row checked on the device).

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use blstrs::Scalar as Fr;
use cuzk_kernels::cuda::{
    set_r1cs_form, Evals, GpuError, GpuPartition, GpuProver, HostPin, Preload, ResidentBases,
};
use cuzk_kernels::groth16::steps::{b_g2_msm, G1Sums};
use cuzk_kernels::msm::scalars::Limbs;
use cuzk_kernels::srs::SrsView;
use cuzk_kernels::witness::R1cs;
use cuzk_shm_layout::{Arena, Region, SlotClaim};
use cuzk_stage_common::runtime::Lookahead;
use cuzk_stage_common::slot_view::{
    cast, evals_by_prover, meta, msm_inputs, written_evals, MsmInputs,
};

use crate::held_prover::HeldProver;
use crate::{PartitionDevice, PartitionSums, Steps};

pub struct CudaDevice {
    ordinal: usize,
    max_domain_log2: u32,
    max_scalars: usize,
    /// The prover and the SRS it holds (identified by the address of its h points: one
    /// segment mapping per parameter file, `srs_key`).
    held: HeldProver<GpuProver>,
    /// The arena's page-locking: started on a thread of its own when the process starts
    /// (it takes seconds per 10 GB), waited for before the first partition's uploads, kept
    /// for the life of the process (every prover uploads from it).
    arena_pin: ArenaPin,
    /// Set-up done inside the current call (prover planned and the SRS uploaded; arena
    /// page-locked), reported as steps of that partition, or of the readying ahead of it
    /// (`prepare`), which takes it out of the first partition's time.
    setup: Vec<(&'static str, Duration)>,
}

impl CudaDevice {
    pub fn new(ordinal: usize, arena: &Arena) -> Result<Self> {
        if !cuzk_kernels::cuda::driver_present() {
            anyhow::bail!("device {ordinal}: no CUDA driver on this machine");
        }
        let shape = arena.header().shape;
        let (ptr, len) = arena.mapping();
        let at = ptr as usize;
        let pinning = std::thread::Builder::new()
            .name("pin-arena".into())
            .spawn(move || {
                let started = std::time::Instant::now();
                // SAFETY: the arena mapping lives as long as this process's Arena (the whole
                // stage process, which drops this device first) and is never unmapped while
                // the pin exists.
                let pin = unsafe { HostPin::new(ordinal, at as *mut u8, len, false) };
                pin.map(|p| (p, started.elapsed()))
            })
            .context("starting the arena page-locking thread")?;
        Ok(CudaDevice {
            ordinal,
            max_domain_log2: shape.domain_log2,
            max_scalars: (shape.num_inputs + shape.num_aux) as usize,
            held: HeldProver::new(),
            arena_pin: ArenaPin::Pending(pinning),
            setup: Vec::new(),
        })
    }

    /// The prover for `srs`, holding its B_G2 bases when `b_g2` (unless they did not fit).
    fn prover_for(&mut self, srs: &SrsView<'_>, b_g2: bool) -> Result<&mut GpuProver, GpuError> {
        let key = srs_key(srs);
        let want_g2 = self.held.wants_g2(key, b_g2);
        if self.held.serving(key, b_g2).is_none() {
            // New parameters (or B_G2 now wanted): free the old plan first (one set of
            // buffers at a time).
            self.held.prover = None;
            let started = std::time::Instant::now();
            let bases = |b_g2| ResidentBases {
                h: srs.h,
                l: srs.l,
                a: srs.a,
                b_g1: srs.b_g1,
                b_g2,
            };
            let (d, log, n) = (self.ordinal, self.max_domain_log2, self.max_scalars);
            let mut p = match new_prover(d, log, n, bases(want_g2.then_some(srs.b_g2))) {
                Err(GpuError::OutOfMemory(why)) if want_g2 => {
                    eprintln!(
                        "cuzk-gpu: cuda:{d}: the B_G2 bases do not fit beside the G1 bases ({why}); B_G2 runs on this process's CPU threads"
                    );
                    self.held.b_g2_on_cpu = Some(key);
                    new_prover(d, log, n, bases(None))?
                }
                made => made?,
            };
            self.setup.push(("setup_srs_upload", started.elapsed()));
            // What the memory plan took (resident or streamed bases, the spare buffers, the
            // NTT's full tables), once per proving key: operators size devices by it.
            eprintln!("cuzk-gpu: cuda:{d}: prover ready: {}", p.describe());
            if p.streams_bases() {
                eprintln!(
                    "cuzk-gpu: cuda:{d}: the proving key does not fit the device: its bases stream from the host on every partition ({})",
                    p.describe()
                );
                let started = std::time::Instant::now();
                let g2: &[blstrs::G2Affine] = if p.has_b_g2() { srs.b_g2 } else { &[] };
                // One range over every base vector (they lie in one segment mapping), whole
                // pages: a piece's copy must read wholly page-locked memory or wholly
                // pageable memory. The driver refuses a copy whose host range is partly
                // registered (CUDA_ERROR_INVALID_VALUE, on an H100 2026-12-07), which is
                // what each vector's inner pages alone gave every piece at an edge.
                let spans = [
                    as_bytes(srs.h),
                    as_bytes(srs.l),
                    as_bytes(srs.a),
                    as_bytes(srs.b_g1),
                    as_bytes(g2),
                ]
                .into_iter()
                .filter(|b| !b.is_empty())
                .map(|b| (b.as_ptr() as usize, b.as_ptr() as usize + b.len()));
                let (lo, hi) =
                    spans.fold((usize::MAX, 0), |(lo, hi), (s, e)| (lo.min(s), hi.max(e)));
                // SAFETY: the SRS segment stays mapped while this process serves (SrsCache
                // keeps every segment it opened), so as long as the prover; the pages
                // register_host widens the range to are the segment's own. Read-only: the
                // segment is mapped so.
                let pinned = if hi > lo {
                    unsafe { p.register_host(lo as *mut u8, hi - lo, true) }
                } else {
                    Ok(())
                };
                if let Err(e) = pinned {
                    // Pinning only speeds the copies (a locked-memory limit, a driver that
                    // refuses): the pieces upload from pageable memory as well.
                    eprintln!(
                        "cuzk-gpu: cuda:{d}: the SRS could not be page-locked ({e}); its bases stream from pageable memory, correct but slower"
                    );
                }
                self.setup.push(("setup_pin_srs", started.elapsed()));
            }
            self.wait_for_arena_pin();
            self.held.prover = Some((key, p));
        }
        Ok(&mut self.held.prover.as_mut().expect("just made").1)
    }
}

/// `GpuProver::new`, or with `CUZK_GPU_STREAM_MIB` set a prover that streams its bases
/// through two buffers of that many MiB whatever the device holds: a check of the streaming
/// path (the SRS page-locked read-only, pieces uploaded while the previous ones sum) on a
/// device that holds the key (supervisor/h200/streaming.sh).
fn new_prover(
    ordinal: usize,
    max_domain_log2: u32,
    max_scalars: usize,
    bases: ResidentBases<'_>,
) -> Result<GpuProver, GpuError> {
    let forced = std::env::var("CUZK_GPU_STREAM_MIB")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&mib| mib > 0);
    match forced {
        Some(mib) => GpuProver::streaming(ordinal, max_domain_log2, max_scalars, bases, mib << 20),
        None => GpuProver::new(ordinal, max_domain_log2, max_scalars, bases),
    }
}

/// The key of a parameter file's SRS: the address of its mapped h points (one segment
/// mapping per parameter file, kept while the process serves).
fn srs_key(srs: &SrsView<'_>) -> usize {
    srs.h.as_ptr() as usize
}

/// Where the arena's page-locking stands.
enum ArenaPin {
    /// The thread pinning it: the pin and how long pinning took.
    Pending(std::thread::JoinHandle<Result<(HostPin, Duration), GpuError>>),
    Pinned(#[allow(dead_code)] HostPin),
    /// Failed (logged): uploads copy from pageable memory, correct but slower.
    Unpinned,
}

impl Drop for CudaDevice {
    /// A device dropped while its arena is still being page-locked (a set-up error before
    /// the first partition) waits for that thread: detached, its pin would be unregistered
    /// whenever the thread ended, perhaps after the arena was unmapped.
    fn drop(&mut self) {
        if let ArenaPin::Pending(handle) =
            std::mem::replace(&mut self.arena_pin, ArenaPin::Unpinned)
        {
            let _ = handle.join();
        }
    }
}

impl CudaDevice {
    /// Waits for the arena's page-locking if it is still running (reported as a set-up step
    /// of the partition that waited: how long it waited, and how long pinning took).
    fn wait_for_arena_pin(&mut self) {
        let ArenaPin::Pending(..) = self.arena_pin else {
            return;
        };
        let waited = std::time::Instant::now();
        let ArenaPin::Pending(handle) = std::mem::replace(&mut self.arena_pin, ArenaPin::Unpinned)
        else {
            unreachable!("checked above");
        };
        let d = self.ordinal;
        self.arena_pin = match handle.join() {
            Ok(Ok((pin, took))) => {
                self.setup.push(("setup_pin_arena", took));
                self.setup.push(("setup_pin_arena_wait", waited.elapsed()));
                eprintln!(
                    "cuzk-gpu: cuda:{d}: arena page-locked ({:.1} GB in {:.1} s, since the process started)",
                    pin.len() as f64 / 1e9,
                    took.as_secs_f64()
                );
                ArenaPin::Pinned(pin)
            }
            Ok(Err(e)) => {
                eprintln!(
                    "cuzk-gpu: cuda:{d}: page-locking the arena failed ({e}); uploads copy from pageable memory (slower)"
                );
                ArenaPin::Unpinned
            }
            Err(_) => {
                eprintln!(
                    "cuzk-gpu: cuda:{d}: the arena page-locking thread panicked; uploads copy from pageable memory (slower)"
                );
                ArenaPin::Unpinned
            }
        };
    }
}

impl PartitionDevice for CudaDevice {
    fn describe(&self) -> String {
        match &self.held.prover {
            Some((_, p)) => format!("cuda:{} {}", self.ordinal, p.describe()),
            None => format!(
                "cuda:{} (buffers planned at the first partition)",
                self.ordinal
            ),
        }
    }

    fn hold_r1cs(&mut self, r1cs: Arc<R1cs>) {
        // Provers made from now on hold its device form; the one held now (made without
        // it, or with another proof type's) is made again at the next partition.
        set_r1cs_form(Some(Arc::new(r1cs.device_form())));
        self.held.prover = None;
    }

    fn prepare(&mut self, srs: &SrsView<'_>, b_g2: bool) -> Result<Steps> {
        let ordinal = self.ordinal;
        self.setup.clear();
        self.prover_for(srs, b_g2)
            .map_err(DeviceError)
            .with_context(|| format!("cuda:{ordinal}"))?;
        // Reported with the readying, not with the first partition (which no longer waits
        // for them).
        Ok(std::mem::take(&mut self.setup))
    }

    fn prove(
        &mut self,
        claim: &SlotClaim<'_>,
        srs: &SrsView<'_>,
        b_g2: bool,
        ahead: &mut Lookahead<'_, '_>,
    ) -> Result<(PartitionSums, Steps)> {
        let MsmInputs { shape, z, plans } = msm_inputs(claim, srs)?;
        let [l, a_plan, b_plan] = plans;
        let ordinal = self.ordinal;
        self.setup.clear();
        let prover = self
            .prover_for(srs, b_g2)
            .map_err(DeviceError)
            .with_context(|| format!("cuda:{ordinal}"))?;
        let on_device = b_g2 && prover.has_b_g2();
        let evals = match written_evals(claim)? {
            None => Evals::FromR1cs,
            Some([a, b]) => Evals::Given { a, b },
        };
        let partition = GpuPartition {
            domain_log2: shape.domain_log2(),
            evals,
            // The slot holds no c: the prover makes it as a∘b on the device.
            c: None,
            scalars: z,
            l,
            a_plan,
            b_plan,
            b_g2: on_device,
            // Read only by a prover that streams its bases (they did not fit the device).
            bases: Some(ResidentBases {
                h: srs.h,
                l: srs.l,
                a: srs.a,
                b_g1: srs.b_g1,
                b_g2: on_device.then_some(srs.b_g2),
            }),
        };
        let next_ab = move || {
            let ahead = ahead;
            let next = ahead.next_slot()?;
            let shape = meta(next);
            if evals_by_prover(next) {
                // Its a and b are made on the device from its assignment, which goes ahead.
                let vars = shape.num_inputs + shape.num_aux;
                return Some(Preload {
                    key: claim_key(next),
                    a: &[],
                    b: &[],
                    scalars: Some(cast::<Limbs>(next.region(Region::Assignment)).get(..vars)?),
                });
            }
            let n = 1usize.checked_shl(shape.domain_log2())?;
            Some(Preload {
                key: claim_key(next),
                a: cast::<Fr>(next.region(Region::EvalA)).get(..n)?,
                b: cast::<Fr>(next.region(Region::EvalB)).get(..n)?,
                scalars: None,
            })
        };
        let (r, t) = prover
            .prove_ahead(&partition, Some(claim_key(claim)), next_ab)
            .map_err(DeviceError)
            .with_context(|| format!("cuda:{ordinal}"))?;
        let mut steps = std::mem::take(&mut self.setup);
        steps.extend(t.steps(on_device));
        let b_g2 = if on_device {
            r.b_g2
        } else if b_g2 {
            // The bases did not fit on the device (logged once when the prover was made).
            let started = std::time::Instant::now();
            let sum = b_g2_msm(srs, z, b_plan);
            steps.push(("msm_b_g2_cpu", started.elapsed()));
            Some(sum)
        } else {
            None
        };
        let g1 = G1Sums {
            h: r.h,
            l: r.l,
            a: r.a,
            b_g1: r.b_g1,
        };
        Ok((PartitionSums { g1, b_g2 }, steps))
    }
}

/// Names one claim of a slot for `GpuProver::prove_ahead`: the slot and its generation,
/// which changes with every hand-off, so a slot refilled later never matches an upload made
/// for its earlier contents.
fn claim_key(claim: &SlotClaim<'_>) -> u64 {
    (claim.slot() as u64) << 32 | claim.generation() as u64
}

/// A GPU error, kept as a type so the stage loop can ask whether the context survived.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct DeviceError(pub GpuError);

/// The bytes of a slice of plain points.
fn as_bytes<T>(v: &[T]) -> &[u8] {
    // SAFETY: any initialized memory may be read as bytes; the length is the slice's size.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}
