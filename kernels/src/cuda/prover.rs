//! `GpuProver`: one per device. Owns every device allocation (made once, in `new`), keeps
//! the four G1 base vectors (and, when given, the B_G2 bases) resident, and computes a
//! partition's H, L, A, B_G1 sums and, when asked, its one G2 sum:
//!   B_G2 = Σ_{j ∈ B} z_j·[v_j(τ)]₂
//! with the plan of B_G1 (B_G1 and B_G2 have one base per B-variable, in the same order).

mod allocate;
use allocate::{BeforeAlloc, PairBufs};
mod ceilings;
mod check;
mod describe;
mod host_register;
mod inputs;
mod lagrange_sums;
mod made;
use made::{or_coefficient_form, Made};
mod partition;
use partition::Preloaded;
pub use partition::{Evals, GpuPartition, Preload, ResidentBases};
mod steps;
mod sums;
mod timings;

use std::time::{Duration, Instant};

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar as Fr};
use group::Group;

use super::device::{DevBuf, Device, Event};
use super::host_pin::HostPin;
use super::lagrange::{self, CKinds};
use super::layout::{Xyzz, Xyzz2, G2_AFFINE_BYTES};
use super::memory_plan::{LagrangeBases, MemoryPlan, SLOT};
use super::msm::{MsmWork, PairSums};
use super::ntt::{self, NttTables};
use super::r1cs_eval::{self, ResidentForm};
use super::staged_upload::Staging;
use super::stream::StreamBuffers;
use super::GpuError;
use crate::groth16::folded::inputs_q_sum;
pub use ceilings::{Ceiling, FLOOR_RATE};
use sums::{combine_pieces, enqueue_sum, SumSpec};
pub use timings::GpuTimings;

/// ΣH, ΣL, ΣA, ΣB_G1 of one partition, and ΣB_G2 when it was asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuResults {
    pub h: G1Projective,
    pub l: G1Projective,
    pub a: G1Projective,
    pub b_g1: G1Projective,
    pub b_g2: Option<G2Projective>,
}

/// The base vectors, in the order of `GpuProver::new`'s arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseSet {
    H = 0,
    L = 1,
    A = 2,
    BG1 = 3,
}

/// What [`GpuProver::layer_check`] returns: Fr products, Fp products, G1 sums.
pub type LayerOutputs = (Vec<Fr>, Vec<blstrs::Fp>, Vec<G1Projective>);

/// The B_G2 part of a prover: the G2 bases (resident, or empty when streamed), a G2
/// workspace (its buckets are twice the G1 size, so it is not shared with the G1 one) and
/// its result slots.
struct G2Part {
    bases: DevBuf,
    /// The B_G2 bases' pair sums (empty when the plan has none).
    pairs: PairBufs,
    work: MsmWork,
    results: DevBuf,
}

/// H's bases in Lagrange form (`lagrange.rs`; LC lies where H would): LD' and c's kinds'
/// counts, or, with C folded into L (L' where L would lie), the inputs' Q on the host.
pub(crate) struct LagrangeBufs {
    c_part: Option<CPart>,
    q_inputs: Vec<G1Affine>,
}

/// The form of H a partition is proved in: None the coefficient form; Some(Some((LD',
/// c's kinds' counts))) H in Lagrange form; Some(None) C folded into L.
type LagrangeHere = Option<Option<(DevBuf, DevBuf)>>;

/// LD', and where h_c_kinds counts c's kinds for the host.
pub(crate) struct CPart {
    ld: DevBuf,
    counts: DevBuf,
}

pub struct GpuProver {
    plan: MemoryPlan,
    /// H, L, A, B_G1 on the device (empty when the plan streams them).
    bases: [DevBuf; 4],
    /// The staging buffers when the plan streams the bases.
    stream: Option<StreamBuffers>,
    /// The pair sums P_{2i} + P_{2i+1} of the L, A, B_G1 bases, indexed as `bases` (H's, and
    /// all when the plan has none, empty).
    pairs: [PairBufs; 4],
    /// a, b, c and the scratch buffer of the NTTs.
    abc: [DevBuf; 4],
    /// Where the next partition's `a` (and `b`) upload ahead (swapped with `abc[0]`, `abc[1]`
    /// when used).
    spares: Vec<DevBuf>,
    preloaded: Option<Preloaded>,
    scalars: DevBuf,
    /// Per plan (L, A, B): terms then ones.
    plans: [DevBuf; 3],
    tables: NttTables,
    work: MsmWork,
    /// The G1 MSMs' result slots, SLOT per piece.
    results: DevBuf,
    g2: Option<G2Part>,
    /// Some: H's MSM in Lagrange form (partitions of H's own domain, 2^plan.max_log).
    lagrange: Option<LagrangeBufs>,
    /// The recorded R1CS `Evals::FromR1cs` partitions' a and b are made from.
    r1cs: Option<ResidentForm>,
    ev: [Event; 23],
    /// Host ranges page-locked for this prover's uploads (`register_host`), unregistered
    /// as it drops, after the streams' last copies (every `prove` ends synced or drained).
    pins: Vec<HostPin>,
    /// Last: dropped after the events (fields drop in declaration order).
    dev: Device,
}

// SAFETY: the prover owns its CUDA handles (context, module, streams, events, one device
// allocation) and nothing else holds them; CUDA driver handles may be used from any thread
// once the context is current, and every entry point binds it first. `&mut self` methods
// keep one thread at a time.
unsafe impl Send for GpuProver {}

/// Bytes the device needs for these sizes with every base vector resident (everything
/// `new` allocates when they fit); `g2_count` B_G2 bases (0: B_G2 stays on the CPU).
pub fn plan_bytes(
    max_log: u32,
    max_scalars: usize,
    base_counts: [usize; 4],
    g2_count: usize,
) -> usize {
    MemoryPlan::resident(max_log, max_scalars, base_counts, g2_count).bytes()
}

/// How `allocate` plans: the resident plan when it fits (in `limit` bytes, if given) else
/// streaming with the largest buffers that fit; or streaming through buffers of this size.
/// `r1cs_bytes`: a recorded R1CS to hold (`set_r1cs_form`), taken before anything else.
pub(crate) enum Planning {
    /// `lagrange`: H's bases in Lagrange form when they fit (`lagrange::wanted`).
    Fit {
        limit: Option<usize>,
        lagrange: Option<LagrangeBases>,
        r1cs_bytes: usize,
    },
    Stream {
        bytes: usize,
        r1cs_bytes: usize,
    },
}

impl Planning {
    fn r1cs_bytes(&self) -> usize {
        match self {
            Planning::Fit { r1cs_bytes, .. } | Planning::Stream { r1cs_bytes, .. } => *r1cs_bytes,
        }
    }
}

impl GpuProver {
    /// Opens device `ordinal`, compiles the kernels, plans and allocates every buffer for
    /// partitions up to 2^max_domain_log2 / max_scalars, and uploads the base vectors once
    /// (resident) when they fit; otherwise plans to stream them (`GpuPartition::bases`).
    pub fn new(
        ordinal: usize,
        max_domain_log2: u32,
        max_scalars: usize,
        bases: ResidentBases<'_>,
    ) -> Result<Self, GpuError> {
        Self::with_memory_limit(ordinal, max_domain_log2, max_scalars, bases, None)
    }

    /// A prover that streams its bases through two buffers of `stream_bytes` whatever the
    /// device holds (checks of the streaming path on small sizes and many pieces).
    pub fn streaming(
        ordinal: usize,
        max_domain_log2: u32,
        max_scalars: usize,
        bases: ResidentBases<'_>,
        stream_bytes: usize,
    ) -> Result<Self, GpuError> {
        Self::build(
            ordinal,
            max_domain_log2,
            max_scalars,
            bases,
            None,
            Some(stream_bytes),
        )
    }

    /// `new` using at most `limit` bytes of device memory (None: what is free less 512 MiB):
    /// leaves room for other users of the device, and lets a device that holds the whole
    /// proving key check and time the streaming path.
    pub fn with_memory_limit(
        ordinal: usize,
        max_domain_log2: u32,
        max_scalars: usize,
        bases: ResidentBases<'_>,
        limit: Option<usize>,
    ) -> Result<Self, GpuError> {
        Self::build(ordinal, max_domain_log2, max_scalars, bases, limit, None)
    }

    fn build(
        ordinal: usize,
        max_domain_log2: u32,
        max_scalars: usize,
        bases: ResidentBases<'_>,
        limit: Option<usize>,
        stream_bytes: Option<usize>,
    ) -> Result<Self, GpuError> {
        let g2_count = match bases.b_g2 {
            Some(g2) if g2.len() != bases.b_g1.len() => {
                return Err(GpuError::Input(format!(
                    "{} B_G2 bases for {} B_G1 bases (one of each per B-variable)",
                    g2.len(),
                    bases.b_g1.len()
                )))
            }
            Some(g2) => g2.len(),
            None => 0,
        };
        // C to fold into L, read once: the plan and the fold see the same one.
        let folded_c = lagrange::folded_c();
        // The recorded R1CS a and b are made from, read once: the plan and the upload see
        // the same one.
        let form = r1cs_eval::r1cs_form();
        let r1cs_bytes = form.as_deref().map_or(0, ResidentForm::bytes);
        let how = |lagrange| match stream_bytes {
            Some(bytes) => Planning::Stream { bytes, r1cs_bytes },
            None => Planning::Fit {
                limit,
                lagrange,
                r1cs_bytes,
            },
        };
        let wanted = lagrange::wanted(
            bases.h.len(),
            bases.l.len(),
            max_domain_log2,
            folded_c.as_deref(),
        );
        // H's bases in Lagrange form, made on the device once the plan has room for them
        // and before its allocation (the transform needs memory of its own).
        let mut made: Option<Made> = None;
        let counts = bases.g1_counts();
        let plan_for = |lagrange, before: &mut BeforeAlloc<'_>| {
            Self::allocate(
                ordinal,
                max_domain_log2,
                max_scalars,
                counts,
                g2_count,
                how(lagrange),
                before,
            )
        };
        let mut p = or_coefficient_form(
            |make_failed| {
                plan_for(wanted, &mut |dev, plan| {
                    if let Some(kind) = plan.lagrange {
                        let m = Made::make(dev, kind, folded_c.as_deref(), bases.h, bases.l);
                        *make_failed = m.is_err();
                        made = Some(m?);
                    }
                    Ok(())
                })
            },
            || plan_for(None, &mut |_, _| Ok(())),
        )?;
        if let (Some(lb), Some((_, q_in))) = (
            p.lagrange.as_mut(),
            made.as_mut().and_then(|m| m.folded.as_mut()),
        ) {
            lb.q_inputs = std::mem::take(q_in);
        }
        if p.stream.is_none() {
            p.upload_resident(ordinal, &bases, made.as_ref())?;
        }
        if let Some(form) = &form {
            p.r1cs = Some(ResidentForm::upload(&mut p.dev, form)?);
        }
        Ok(p)
    }

    /// Whether the bases stream from the host on every partition (they did not fit).
    pub fn streams_bases(&self) -> bool {
        self.stream.is_some()
    }

    /// The recorded R1CS this prover makes a and b from, as (inputs, aux) variables of its
    /// circuit; None when it holds none (partitions must bring them).
    pub fn r1cs_vars(&self) -> Option<(usize, usize)> {
        self.r1cs.as_ref().map(ResidentForm::vars)
    }

    /// Whether this prover holds B_G2 bases (can compute B_G2).
    pub fn has_b_g2(&self) -> bool {
        self.g2.is_some()
    }

    pub(crate) fn device(&self) -> &Device {
        &self.dev
    }

    /// A copy of the first `count` points of a resident base vector (tests build CPU
    /// references from synthetic bases this way).
    pub fn download_bases(
        &mut self,
        set: BaseSet,
        count: usize,
    ) -> Result<Vec<G1Affine>, GpuError> {
        use super::error::Step;
        use group::prime::PrimeCurveAffine;
        if self.stream.is_some() {
            return Err(GpuError::Input(
                "this prover streams its bases: none resident".into(),
            ));
        }
        let count = count.min(self.plan.counts[set as usize]);
        self.dev.ctx.bind_to_thread().step("bind context")?;
        let mut v = vec![G1Affine::identity(); count];
        self.dev
            .download(&mut v, self.bases[set as usize].ptr, self.dev.compute)?;
        self.dev.sync(self.dev.compute)?;
        Ok(v)
    }

    /// The NTT buffers (4 × 2^max_log Fr) as one scratch region, for setup work.
    pub(crate) fn scratch(&self) -> DevBuf {
        DevBuf {
            ptr: self.abc[0].ptr,
            bytes: self.abc[0].bytes,
        }
    }

    pub(crate) fn base_buf(&self, set: BaseSet) -> DevBuf {
        self.bases[set as usize]
    }

    /// A copy of the resident B_G2 bases (checks build streamed provers from synthetic ones).
    pub fn download_b_g2(&mut self) -> Result<Vec<G2Affine>, GpuError> {
        use super::error::Step;
        use group::prime::PrimeCurveAffine;
        let Some(g) = &self.g2 else {
            return Ok(Vec::new());
        };
        self.dev.ctx.bind_to_thread().step("bind context")?;
        let mut v = vec![G2Affine::identity(); g.bases.bytes / G2_AFFINE_BYTES];
        self.dev.download(&mut v, g.bases.ptr, self.dev.compute)?;
        self.dev.sync(self.dev.compute)?;
        Ok(v)
    }

    /// The B_G2 base buffer, when the prover holds one.
    pub(crate) fn g2_base_buf(&self) -> Option<DevBuf> {
        self.g2.as_ref().map(|g| g.bases)
    }

    /// H, L, A, B_G1 (and B_G2 when `p.b_g2`) of one partition; equal to the CPU path
    /// (`groth16::prove`) exactly.
    pub fn prove(&mut self, p: &GpuPartition<'_>) -> Result<(GpuResults, GpuTimings), GpuError> {
        self.prove_ahead(p, None, || None)
    }

    /// [`Self::prove`] of the partition the caller names `key`, using its `a` (and `b`) if the
    /// previous call uploaded them ahead under that key, and uploading the next partition's
    /// ahead: once this partition's H MSM is near its end (its last window and bucket
    /// reduction left, then the L, A, B MSMs: at 32 GiB on an H200 ~63 + 142 ms, the two
    /// uploads 156), `ahead` is asked for the next partition, and its `a` (and `b`, with two
    /// spare buffers) copy into the spare buffers on the copy stream while the rest runs.
    /// With `a` ahead the NTTs start at once; with `b` too they no longer wait for the
    /// uploads (`c`'s lands first, under the transforms of `a` and `b`). Asking late keeps a
    /// caller that claims work in `ahead` from taking a partition another device could
    /// start sooner. Without a spare buffer (the plan had no room) `ahead` is not called.
    ///
    /// The caller must leave the next partition's `a` and `b` unchanged until the call that
    /// uses them (the key tells the prover which partition it is; an error forgets the
    /// upload).
    pub fn prove_ahead<'n>(
        &mut self,
        p: &GpuPartition<'_>,
        key: Option<u64>,
        ahead: impl FnOnce() -> Option<Preload<'n>>,
    ) -> Result<(GpuResults, GpuTimings), GpuError> {
        let preloaded = self.preloaded.take();
        let r = self.prove_inner(p, key, preloaded, ahead);
        if let Err(e) = r {
            self.preloaded = None;
            return Err(self.drained(e));
        }
        r
    }

    /// After a failed call: waits for what the call left queued on both streams, so that a
    /// retry's uploads do not land under its last transforms (the next call's copies do not
    /// wait for the compute stream). A wait that fails says the context is lost, whatever
    /// the first error said: not every lost context comes with an error CUDA calls sticky.
    fn drained(&self, e: GpuError) -> GpuError {
        if !e.context_usable() {
            return e; // nothing to wait on
        }
        let waited = self
            .dev
            .sync(self.dev.compute)
            .and_then(|()| self.dev.sync(self.dev.copy));
        let lost = |step, driver| GpuError::Cuda {
            step,
            driver,
            context_usable: false,
        };
        match (e, waited) {
            (e, Ok(())) => e,
            (GpuError::Cuda { step, driver, .. }, Err(_)) => lost(step, driver),
            (_, Err(GpuError::Cuda { step, driver, .. })) => lost(step, driver),
            (_, Err(other)) => other,
        }
    }

    fn prove_inner<'n>(
        &mut self,
        p: &GpuPartition<'_>,
        key: Option<u64>,
        preloaded: Option<Preloaded>,
        ahead: impl FnOnce() -> Option<Preload<'n>>,
    ) -> Result<(GpuResults, GpuTimings), GpuError> {
        use super::error::Step;
        let wall = Instant::now();
        self.check_shape(p)?;
        // How many of a, b are on the device already (uploaded ahead for this partition).
        let inputs = p.evals.given();
        let from_r1cs = matches!(p.evals, Evals::FromR1cs);
        // Or, for a and b made on the device, whether its scalars are.
        let (ahead_n, scalars_ahead) = match (key, preloaded) {
            (Some(key), Some(pre)) if pre.scalars => {
                (0, from_r1cs && pre == Preloaded::scalars_of(key, p.scalars))
            }
            (Some(key), Some(pre))
                if !from_r1cs && pre == Preloaded::of(key, &inputs[..pre.inputs.len()]) =>
            {
                (pre.inputs.len(), false)
            }
            _ => (0, false),
        };
        if scalars_ahead {
            // As for a and b below: the copy stream is in order, the upload has landed
            // before anything enqueued on it from here.
            std::mem::swap(&mut self.scalars, &mut self.spares[0]);
        }
        for i in 0..ahead_n {
            // The copy stream is in order: the uploads ahead end before anything enqueued
            // on it below, so the events after the (skipped) uploads still cover them.
            std::mem::swap(&mut self.abc[i], &mut self.spares[i]);
        }
        self.dev.ctx.bind_to_thread().step("bind context")?;
        let log_n = p.domain_log2;
        let n = 1usize << log_n;
        self.tables.prepare(&self.dev, log_n)?;
        let d = &self.dev;
        let (cs, ks) = (d.copy, d.compute);
        let [e_up0, _, _, _, e_rest, e_k0, e_ntt, e_h, e_l, e_a2, e_b2, e_g2, e_next0, e_next, e_lt, e_at, e_bt, e_g2t, e_h_near, e_kinds, e_c_sum, e_ab0, e_ab1] =
            &self.ev;

        // Uploads go on the copy stream, each followed by an event the compute stream waits
        // on, and are enqueued in the order compute needs them (prover/inputs.rs): a copy
        // from memory that is not page-locked blocks this thread while it stages, so with c
        // brought the NTTs of `a` are already queued while `b` is copied (without, c = a∘b
        // needs both first), and the scalars and plans copy under the H-MSM.
        e_up0.record(cs)?;
        e_k0.record(ks)?;
        let [a, b, c, s] = self.abc.map(|x| x.ptr);
        // H's MSM in Lagrange form when this prover holds LC and LD' (lagrange.rs; only for
        // partitions of H's domain): A and B to the coset, C's values to scalars listed by
        // kind; else the coefficient form (`ntt::quotient`).
        // Some(None): C folded into L (no c, no sums over its values).
        let lagrange = self
            .lagrange
            .as_ref()
            .map(|lb| lb.c_part.as_ref().map(|c| (c.ld, c.counts)));
        let folded = matches!(lagrange, Some(None));
        if lagrange.is_some() && log_n != self.plan.max_log {
            // It holds LC where H would lie: the coefficient form would read the wrong bases.
            return Err(GpuError::Input(format!(
                "this prover holds H's bases in Lagrange form for 2^{}; the partition's domain is 2^{log_n}",
                self.plan.max_log
            )));
        }
        let kinds = CKinds::at(self.abc[3], n);
        // (With a and b made on the device: whether the scalars are there.)
        let cc = self.enqueue_inputs(
            p,
            if from_r1cs {
                scalars_ahead as usize
            } else {
                ahead_n
            },
            lagrange,
            kinds,
        )?;
        let h = if lagrange.is_some() {
            a
        } else {
            let free = if cc == c { s } else { c };
            ntt::coefficients(d, &self.tables, log_n, a, b, cc, free)?
        };
        e_ntt.record(ks)?;

        let host = p.bases;
        if self.stream.is_some() && host.is_none() {
            return Err(GpuError::Input(
                "this prover streams its bases: the partition must bring them".into(),
            ));
        }
        let h_spec = SumSpec {
            bases: self.bases[0],
            pairs: PairSums::default(),
            // LC has n points (LC_{n−1} is not O); H has n − 1.
            count: if lagrange.is_some() { n } else { n - 1 },
            plan: None,
            scalars: h,
            host: host.map(|b| b.h),
            terms_done: None,
            near_end: Some(e_h_near),
            sorted_in: None,
        };
        let mut first = 0;
        let win_h = enqueue_sum(
            d,
            &self.work,
            &mut self.stream,
            &h_spec,
            self.results,
            first,
        )?;
        first += win_h.len();
        // Lagrange form: Σ_j c_j·LD'_j in two result slots (prover/lagrange_sums.rs),
        // subtracted from LC's sum below.
        let mut c_sum_at = None;
        if let Some(Some((ld, counts))) = lagrange {
            e_c_sum.record(ks)?;
            let w = self.enqueue_c_sums(ld, counts, kinds, c, first, e_kinds)?;
            c_sum_at = Some((first, w));
            first += 2;
        }
        e_h.record(ks)?;
        // The plans' entries are scanned here, under the transforms and H's MSM queued
        // above (which read only a, b, c), not before them (prover/check.rs). A bad plan
        // fails the partition before anything reads it; what is queued is left to finish
        // first, so no copy from the caller's memory is still running when it gets the error.
        if let Err(e) = self.check_plans(p) {
            d.sync(ks)?;
            d.sync(cs)?;
            return Err(e);
        }
        if !from_r1cs {
            // (Made from the recorded R1CS, a and b needed the scalars first.)
            d.upload(self.scalars.ptr, self.scalars.bytes, p.scalars, cs)?;
        }
        let mut plan_ptrs = [(0, 0); 3];
        for (i, plan) in [p.l, p.a_plan, p.b_plan].iter().enumerate() {
            let buf = self.plans[i];
            let ones_at = plan.terms.len() * 8;
            d.upload(buf.ptr, buf.bytes, plan.terms, cs)?;
            d.upload(buf.at(ones_at), buf.bytes - ones_at, plan.ones, cs)?;
            plan_ptrs[i] = (buf.ptr, buf.at(ones_at));
        }
        e_rest.record(cs)?;
        e_rest.wait_on(ks)?;
        let mut wins = vec![(0, win_h)];
        let host_g1 = host.map(|b| [b.l, b.a, b.b_g1]);
        for (i, plan) in [p.l, p.a_plan, p.b_plan].into_iter().enumerate() {
            let (terms, ones) = plan_ptrs[i];
            let spec = SumSpec {
                bases: self.bases[i + 1],
                pairs: self.pairs[i + 1].sums(),
                count: self.plan.counts[i + 1],
                plan: Some((plan, terms, ones)),
                scalars: self.scalars.ptr,
                host: host_g1.map(|h| h[i]),
                terms_done: Some([e_lt, e_at, e_bt][i]),
                near_end: None,
                sorted_in: None,
            };
            let w = enqueue_sum(d, &self.work, &mut self.stream, &spec, self.results, first)?;
            wins.push((first, w));
            first += wins.last().expect("just pushed").1.len();
            [e_l, e_a2, e_b2][i].record(ks)?;
        }
        // B_G2 last, on the same stream: it reuses B's plan and the scalars already on the
        // device, its own workspace for buckets and partials, and the entries B_G1's MSM
        // just sorted by bucket in the G1 workspace (same terms, same base indices).
        let g2 = match (&self.g2, p.b_g2) {
            (Some(g), true) => {
                let (terms, ones) = plan_ptrs[2];
                let spec = SumSpec {
                    bases: g.bases,
                    pairs: g.pairs.sums(),
                    count: self.plan.g2_count,
                    plan: Some((p.b_plan, terms, ones)),
                    scalars: self.scalars.ptr,
                    host: host.and_then(|b| b.b_g2),
                    terms_done: Some(e_g2t),
                    near_end: None,
                    sorted_in: g2_reuses_sort().then_some(&self.work),
                };
                let w = enqueue_sum(d, &g.work, &mut self.stream, &spec, g.results, 0)?;
                e_g2.record(ks)?;
                Some((w, g.results.ptr))
            }
            _ => None,
        };
        // The next partition's `a` (and `b`), once H's MSM is near its end (see
        // `prove_ahead`).
        let mut uploaded_ahead = false;
        if !self.spares.is_empty() {
            e_h_near.synchronize()?;
            // This partition's scalars are in `self.scalars` (swapped there if they came
            // ahead), so the first spare is free for the next one's.
            if let Some(next) = ahead() {
                let next_inputs = [next.a, next.b];
                let up = &next_inputs[..self.spares.len()];
                if let Some(z) = next.scalars {
                    if size_of_val(z) <= self.spares[0].bytes {
                        e_next0.record(cs)?;
                        d.upload(self.spares[0].ptr, self.spares[0].bytes, z, cs)?;
                        e_next.record(cs)?;
                        self.preloaded = Some(Preloaded::scalars_of(next.key, z));
                        uploaded_ahead = true;
                    }
                } else if up.iter().all(|v| size_of_val(*v) <= self.spares[0].bytes) {
                    e_next0.record(cs)?;
                    for (v, spare) in up.iter().zip(&self.spares) {
                        d.upload(spare.ptr, spare.bytes, v, cs)?;
                    }
                    e_next.record(cs)?;
                    self.preloaded = Some(Preloaded::of(next.key, up));
                    uploaded_ahead = true;
                }
            }
        }
        let mut out = vec![Xyzz::default(); first * SLOT];
        d.download(&mut out, self.results.ptr, ks)?;
        let g2_slots = g2.as_ref().map_or(0, |(w, _)| w.len() * SLOT);
        let mut out2 = vec![Xyzz2::default(); g2_slots];
        if let Some((_, at)) = &g2 {
            d.download(&mut out2, *at, ks)?;
        }
        // C folded into L: the inputs' part of Σ c_j·LD'_j, Σ_in z_k·Q_k, on the host (a
        // few hundred terms, after the blocking reads above; groth16::folded).
        let q_inputs_sum = match &self.lagrange {
            Some(lb) if folded => inputs_q_sum(&lb.q_inputs, p.scalars).map_err(GpuError::Input)?,
            _ => G1Projective::identity(),
        };
        d.sync(ks)?;
        d.sync(cs)?;
        if let (true, Some(r1cs)) = (from_r1cs, &self.r1cs) {
            // c was taken as a∘b: valid only if every row holds.
            if let Some(row) = r1cs.unsatisfied(d, ks)? {
                return Err(GpuError::Input(format!(
                    "the partition's assignment does not satisfy the recorded R1CS: row {row} has a·b ≠ C·z (a and b made on the device)"
                )));
            }
        }
        let t_fin = Instant::now();
        let mut sums: Vec<G1Projective> = wins
            .iter()
            .map(|(first, w)| combine_pieces(w, &out[first * SLOT..]))
            .collect();
        if let Some((at, w)) = c_sum_at {
            sums[0] -= lagrange_sums::c_sum(w, &out[at * SLOT..]);
        }
        sums[1] -= q_inputs_sum;
        let b_g2 = g2.map(|(w, _)| combine_pieces(&w, &out2));
        let ms = |a: &Event, b: &Event| a.ms_to(b).map(|v| Duration::from_secs_f64(v as f64 / 1e3));
        // msm_l counts from the end of H, so it includes any wait for the plan uploads.
        let t = GpuTimings {
            upload: ms(e_up0, e_rest)?,
            ntt: ms(e_k0, e_ntt)?,
            r1cs: if from_r1cs {
                ms(e_ab0, e_ab1)?
            } else {
                Duration::ZERO
            },
            msm_h: if c_sum_at.is_some() {
                ms(e_ntt, e_c_sum)?
            } else {
                ms(e_ntt, e_h)?
            },
            msm_c: if c_sum_at.is_some() {
                ms(e_c_sum, e_h)?
            } else {
                Duration::ZERO
            },
            msm_l: ms(e_h, e_l)?,
            msm_a: ms(e_l, e_a2)?,
            msm_b_g1: ms(e_a2, e_b2)?,
            msm_b_g2: if b_g2.is_some() {
                ms(e_b2, e_g2)?
            } else {
                Duration::ZERO
            },
            ones: if self.stream.is_some() {
                [Duration::ZERO; 4]
            } else {
                [
                    ms(e_lt, e_l)?,
                    ms(e_at, e_a2)?,
                    ms(e_bt, e_b2)?,
                    if b_g2.is_some() {
                        ms(e_g2t, e_g2)?
                    } else {
                        Duration::ZERO
                    },
                ]
            },
            finish: t_fin.elapsed(),
            a_ahead: ahead_n >= 1,
            b_ahead: ahead_n >= 2,
            scalars_ahead,
            upload_ahead: if uploaded_ahead {
                ms(e_next0, e_next)?
            } else {
                Duration::ZERO
            },
            total: wall.elapsed(),
        };
        let r = GpuResults {
            h: sums[0],
            l: sums[1],
            a: sums[2],
            b_g1: sums[3],
            b_g2,
        };
        Ok((r, t))
    }
}

/// Whether B_G2 accumulates from the entries B_G1's MSM sorted (`CUZK_G2_SORT=own`: it
/// sorts its own, as before 2026-12-04; for side-by-side measurement).
fn g2_reuses_sort() -> bool {
    std::env::var("CUZK_G2_SORT").map_or(true, |v| v != "own")
}

/// `CUZK_UPLOAD_STAGING=0` uploads resident bases straight from pageable memory (the
/// driver's own staging, one thread): to compare, or if page-locking 512 MiB is unwelcome.
fn staging_wanted() -> bool {
    std::env::var("CUZK_UPLOAD_STAGING").map_or(true, |v| v != "0")
}

/// One resident base vector to the device on the copy stream: through `staging` when there
/// is one.
fn upload_bases<T: Copy>(
    dev: &Device,
    staging: Option<&mut Staging>,
    dst: cudarc::driver::sys::CUdeviceptr,
    cap: usize,
    v: &[T],
) -> Result<(), GpuError> {
    match staging {
        Some(s) => s.upload(dev, dst, cap, v),
        None => dev.upload(dst, cap, v, dev.copy),
    }
}
