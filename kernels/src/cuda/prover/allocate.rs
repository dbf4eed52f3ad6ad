//! What `GpuProver` allocates at start: the device opened, the memory plan chosen from its
//! free memory (memory_plan.rs), every buffer carved from the one allocation, and the pair
//! sums made once the bases are on the device.

use super::super::device::{self, DevBuf};
use super::super::layout::{AFFINE_BYTES, FR_BYTES, G2_AFFINE_BYTES, XYZZ2_BYTES, XYZZ_BYTES};
use super::super::memory_plan::{gib, LagrangeBases, MemoryPlan, SLOT};
use super::super::msm::{self, Curve, MsmWork, PairSums};
use super::super::ntt::{self, NttTables};
use super::super::staged_upload::{self, Staging};
use super::super::stream::StreamBuffers;
use super::super::GpuError;
use super::made::Made;
use super::{
    staging_wanted, upload_bases, CPart, G2Part, GpuProver, LagrangeBufs, Planning, ResidentBases,
};

/// Start-time work `allocate` runs once the plan is chosen and before its one allocation
/// (H's bases put in Lagrange form), on the device the plan is for.
pub(crate) type BeforeAlloc<'a> =
    dyn FnMut(&mut device::Device, &MemoryPlan) -> Result<(), GpuError> + 'a;

impl GpuProver {
    /// Opens the device and carves every buffer (the bases are uploaded by the caller, or
    /// made on the device by `new_synthetic`, or streamed).
    pub(crate) fn allocate(
        ordinal: usize,
        max_log: u32,
        max_scalars: usize,
        counts: [usize; 4],
        g2_count: usize,
        how: Planning,
        before_alloc: &mut BeforeAlloc<'_>,
    ) -> Result<Self, GpuError> {
        if max_log > 31 || counts.iter().any(|&c| c >= 1 << 31) {
            return Err(GpuError::TooLarge("indices are 31-bit".into()));
        }
        let mut dev = device::open(ordinal)?;
        let (free, total) = dev.mem_info()?;
        // Keep 512 MiB for the driver, the module and the kernels' local memory.
        let budget = free.saturating_sub(512 << 20);
        // The recorded R1CS (when held) first: the plan's choices share what is left.
        let r1cs_bytes = how.r1cs_bytes();
        let with_r1cs = |plan: MemoryPlan| MemoryPlan { r1cs_bytes, ..plan };
        let plan = match how {
            Planning::Fit {
                limit, lagrange, ..
            } => {
                let budget = budget.min(limit.unwrap_or(usize::MAX));
                let left = budget.checked_sub(r1cs_bytes).ok_or_else(|| {
                    format!(
                        "the recorded R1CS alone takes {:.1} GiB",
                        gib(r1cs_bytes)
                    )
                });
                left.and_then(|left| {
                    MemoryPlan::choose(max_log, max_scalars, counts, g2_count, left, lagrange)
                })
                .map(with_r1cs)
            }
            Planning::Stream { bytes, .. } => {
                let plan = with_r1cs(
                    MemoryPlan::resident(max_log, max_scalars, counts, g2_count).streaming(bytes),
                );
                if plan.bytes() <= budget {
                    Ok(plan)
                } else {
                    Err(format!("need {:.1} GiB", gib(plan.bytes())))
                }
            }
        }
        .map_err(|why| {
            GpuError::OutOfMemory(format!(
                "2^{max_log} domain, {max_scalars} scalars, {g2_count} B_G2 bases: {why} ({:.1} GiB free of {:.1})",
                gib(free),
                gib(total)
            ))
        })?;
        // Start-time work that needs the plan and memory of its own (LC and LD' made from H).
        before_alloc(&mut dev, &plan)?;
        dev.allocate(plan.bytes())?;
        let empty = DevBuf { ptr: 0, bytes: 0 };
        // In Lagrange form the first vector is LC: n points, one more than H.
        let first_extra = usize::from(plan.lagrange.is_some());
        let (bases, stream) = match plan.stream_bytes {
            None => {
                let mut i = 0;
                let b = counts.map(|c| {
                    let extra = if i == 0 { first_extra } else { 0 };
                    i += 1;
                    dev.carve((c + extra) * AFFINE_BYTES)
                });
                (b, None)
            }
            Some(s) => {
                let bufs = [dev.carve(s), dev.carve(s)];
                ([empty; 4], Some(StreamBuffers::new(&dev, bufs)?))
            }
        };
        // One size for the buffers `prove` swaps (MemoryPlan::buffer_lens).
        let (evals_len, scalars_len) = plan.buffer_lens();
        let abc = [0; 4].map(|_| dev.carve(evals_len * FR_BYTES));
        let spares = (0..plan.spares)
            .map(|_| dev.carve(evals_len * FR_BYTES))
            .collect();
        let scalars = dev.carve(scalars_len * FR_BYTES);
        let plans = [counts[1], counts[2], counts[3]].map(|c| dev.carve(c * 12));
        let full = plan
            .ntt_full
            .then(|| (dev.carve(ntt::full_tables_bytes(max_log)), max_log));
        let tables = NttTables::new(dev.carve(ntt::tables_bytes(max_log)), full);
        // H's MSM is dense: no ones, no pair sums.
        let pairs: [PairBufs; 4] = std::array::from_fn(|i| {
            let n = if i > 0 { counts[i] } else { 0 };
            PairBufs::carve(&mut dev, &plan, n, AFFINE_BYTES)
        });
        let (g1_terms, g2_terms) = plan.max_terms();
        let work = MsmWork::carve(&mut dev, g1_terms);
        let results = dev.carve(plan.g1_slots() * XYZZ_BYTES);
        let lagrange = plan.lagrange.map(|kind| LagrangeBufs {
            c_part: (kind == LagrangeBases::WithLd).then(|| CPart {
                ld: dev.carve((counts[0] + 1) * AFFINE_BYTES),
                counts: dev.carve(16),
            }),
            // Filled by `build` once C is folded (on the host, from LD').
            q_inputs: Vec::new(),
        });
        let g2 = (g2_count > 0).then(|| G2Part {
            bases: if stream.is_some() {
                empty
            } else {
                dev.carve(g2_count * G2_AFFINE_BYTES)
            },
            pairs: PairBufs::carve(&mut dev, &plan, g2_count, G2_AFFINE_BYTES),
            work: MsmWork::carve_for(&mut dev, Curve::G2, g2_terms),
            results: dev.carve(plan.pieces()[4] * SLOT * XYZZ2_BYTES),
        });
        let ev = [(); 23].map(|_| dev.event());
        let ev = ev
            .into_iter()
            .collect::<Result<Vec<_>, _>>()?
            .try_into()
            .ok()
            .unwrap();
        Ok(GpuProver {
            dev,
            plan,
            bases,
            stream,
            pairs,
            abc,
            spares,
            preloaded: None,
            scalars,
            plans,
            tables,
            work,
            results,
            g2,
            lagrange,
            r1cs: None,
            ev,
            pins: Vec::new(),
        })
    }

    /// Uploads the resident bases (in Lagrange form LC in H's place, LD' beside it or L' in
    /// L's place, as `made` holds them) and makes their pair sums.
    pub(super) fn upload_resident(
        &mut self,
        ordinal: usize,
        bases: &ResidentBases<'_>,
        made: Option<&Made>,
    ) -> Result<(), GpuError> {
        // Large resident uploads (the SRS) go through page-locked staging buffers; small
        // ones, or where the staging cannot be page-locked, copy from pageable memory.
        // In Lagrange form LC goes where H would, LD' beside (or L' where L would).
        let first = made.map_or(bases.h, |m| &m.lc[..]);
        let ld = made.and_then(|m| m.ld.as_deref());
        let l = made
            .and_then(|m| m.folded.as_ref())
            .map_or(bases.l, |(l, _)| &l[..]);
        let g1 = [first, l, bases.a, bases.b_g1];
        let total = g1.iter().map(|v| std::mem::size_of_val(*v)).sum::<usize>()
            + bases.b_g2.map_or(0, std::mem::size_of_val)
            + ld.map_or(0, std::mem::size_of_val);
        let mut staging = (total >= staged_upload::MIN_BYTES && staging_wanted())
            .then(|| Staging::new(&self.dev, ordinal).ok())
            .flatten();
        for (buf, v) in self.bases.iter().zip(g1) {
            upload_bases(&self.dev, staging.as_mut(), buf.ptr, buf.bytes, v)?;
        }
        if let (Some(cp), Some(ld)) = (self.lagrange.as_ref().and_then(|l| l.c_part.as_ref()), ld) {
            upload_bases(&self.dev, staging.as_mut(), cp.ld.ptr, cp.ld.bytes, ld)?;
        }
        if let (Some(part), Some(g2)) = (&self.g2, bases.b_g2) {
            upload_bases(
                &self.dev,
                staging.as_mut(),
                part.bases.ptr,
                part.bases.bytes,
                g2,
            )?;
        }
        // On the device before the staging buffers go (end of this function), and before
        // the pair sums read them.
        self.dev.sync(self.dev.copy)?;
        self.make_pair_sums()?;
        self.dev.sync(self.dev.compute)?;
        Ok(())
    }

    /// Enqueues the pair sums of every base vector that has them (the plan's `pairs` and
    /// `odd_pairs`), on the compute stream, once the bases are on the device.
    pub(crate) fn make_pair_sums(&self) -> Result<(), GpuError> {
        for (i, pairs) in self.pairs.iter().enumerate() {
            let (bases, n) = (self.bases[i].ptr, self.plan.counts[i]);
            pairs.make(&self.dev, Curve::G1, bases, n)?;
        }
        if let Some(g) = &self.g2 {
            g.pairs
                .make(&self.dev, Curve::G2, g.bases.ptr, self.plan.g2_count)?;
        }
        Ok(())
    }
}

/// One base vector's pair sums on the device (empty where the plan holds none).
#[derive(Clone, Copy)]
pub(super) struct PairBufs {
    aligned: DevBuf,
    odd: DevBuf,
}

impl PairBufs {
    /// The pair sums the plan holds for a vector of n points of `point` bytes.
    fn carve(dev: &mut device::Device, plan: &MemoryPlan, n: usize, point: usize) -> Self {
        let empty = DevBuf { ptr: 0, bytes: 0 };
        let mut take = |held: bool, first: usize| match (held, msm::pair_count(n, first)) {
            (true, np) if np > 0 => dev.carve(np * point),
            _ => empty,
        };
        PairBufs {
            aligned: take(plan.pairs, 0),
            odd: take(plan.odd_pairs, 1),
        }
    }

    /// Enqueues both kinds from the vector's n points at `bases`.
    fn make(
        &self,
        dev: &device::Device,
        curve: Curve,
        bases: u64,
        n: usize,
    ) -> Result<(), GpuError> {
        for (buf, first) in [(self.aligned, 0), (self.odd, 1)] {
            if buf.bytes > 0 {
                msm::enqueue_pair_sums(dev, curve, bases, n, first, buf.ptr)?;
            }
        }
        Ok(())
    }

    /// Their device pointers for `msm::enqueue_batch_add` (0 where not held).
    pub(super) fn sums(&self) -> PairSums {
        PairSums {
            aligned: self.aligned.ptr,
            odd: self.odd.ptr,
        }
    }
}
