//! What a `GpuProver` allocates, decided once at start from the sizes and the device's free
//! memory: every base vector resident when they fit (an H200 holds a 32 GiB proving key
//! whole), otherwise two staging buffers the bases stream through (`stream.rs`). A resident
//! plan also takes spare evaluation buffers when they fit: the next partition's `a` and `b`
//! upload into them under the current partition's compute (`GpuProver::prove_ahead`), and
//! then the aligned pair sums of the L, A and B bases (a madd off each pair of ones that
//! sit side by side: `msm::enqueue_batch_add`) and the NTT's full tables
//! (`ntt::full_tables_bytes`: a product off one pass of each transform).

use super::layout::{AFFINE_BYTES, FR_BYTES, G2_AFFINE_BYTES, XYZZ2_BYTES, XYZZ_BYTES};
use super::msm::{pair_count, Curve, MsmWork, MAX_WINDOWS};
use super::ntt;
use super::stream::piece_count;

/// Result slots of one MSM piece: W window sums, then the ones' sum.
pub(crate) const SLOT: usize = MAX_WINDOWS + 1;

/// Below this a staging buffer would cut the MSMs into pieces too small to run well.
pub const MIN_STREAM_BYTES: usize = 64 << 20;

/// The sizes a prover is planned for, and where its bases live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryPlan {
    pub max_log: u32,
    pub max_scalars: usize,
    /// H, L, A, B_G1 base counts.
    pub counts: [usize; 4],
    /// B_G2 bases (0: B_G2 is not computed on the device).
    pub g2_count: usize,
    /// None: every base vector resident. Some(bytes): two staging buffers of this size;
    /// each MSM streams its bases through them.
    pub stream_bytes: Option<usize>,
    /// Spare 2^max_log evaluation buffers, for the next partition's inputs uploaded ahead:
    /// 0, 1 (`a`) or 2 (`a` and `b`).
    pub spares: usize,
    /// The NTT's full tables (three of 2^max_log elements).
    pub ntt_full: bool,
    /// The aligned pair sums P_{2i} + P_{2i+1} of the L, A, B_G1 (and B_G2) bases, for the
    /// ones' batch additions.
    pub pairs: bool,
    /// The odd pair sums P_{2i+1} + P_{2i+2} too (with `pairs` only).
    pub odd_pairs: bool,
    /// H's bases in Lagrange form (`lagrange.rs`), resident bases only: LC in H's place (one
    /// point more, n), and LD' beside it (n points) unless C is folded into L.
    pub lagrange: Option<LagrangeBases>,
    /// A recorded R1CS the prover makes a and b from (`r1cs_eval::ResidentForm::bytes`; 0:
    /// none held, partitions bring their a and b).
    pub r1cs_bytes: usize,
}

/// What a plan in Lagrange form holds besides LC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LagrangeBases {
    /// LD' and the counts of c's kinds: Σ c_j·LD'_j every partition.
    WithLd,
    /// Nothing: C is folded into L (`groth16::folded`; L' lies in L's place).
    Folded,
}

impl MemoryPlan {
    pub fn resident(max_log: u32, max_scalars: usize, counts: [usize; 4], g2_count: usize) -> Self {
        MemoryPlan {
            max_log,
            max_scalars,
            counts,
            g2_count,
            stream_bytes: None,
            spares: 0,
            ntt_full: false,
            pairs: false,
            odd_pairs: false,
            lagrange: None,
            r1cs_bytes: 0,
        }
    }

    /// The same sizes with the bases streamed through two buffers of `bytes` each (and no
    /// spare buffers, full tables or pair sums: their memory is better spent on larger
    /// pieces).
    pub fn streaming(self, bytes: usize) -> Self {
        MemoryPlan {
            stream_bytes: Some(bytes),
            spares: 0,
            ntt_full: false,
            pairs: false,
            odd_pairs: false,
            lagrange: None,
            ..self
        }
    }

    /// The same sizes with `k` spare evaluation buffers for uploads ahead (1: `a`, 2: `a`
    /// and `b`).
    pub fn with_spares(self, k: usize) -> Self {
        assert!(k <= 2, "spare buffers are for a and b");
        MemoryPlan { spares: k, ..self }
    }

    /// The same sizes with the NTT's full tables.
    pub fn with_ntt_full(self) -> Self {
        MemoryPlan {
            ntt_full: true,
            ..self
        }
    }

    /// The same sizes with the bases' aligned pair sums (resident bases only).
    pub fn with_pairs(self) -> Self {
        MemoryPlan {
            pairs: true,
            ..self
        }
    }

    /// The same sizes with H's bases in Lagrange form (resident bases only).
    pub fn with_lagrange(self, kind: LagrangeBases) -> Self {
        MemoryPlan {
            lagrange: Some(kind),
            ..self
        }
    }

    /// Bytes the Lagrange form adds: LC's one point more than H, and LD' (n points) with
    /// the counts of c's kinds unless C is folded into L.
    pub fn lagrange_bytes(&self) -> usize {
        match self.lagrange {
            None => 0,
            Some(LagrangeBases::Folded) => AFFINE_BYTES + 256,
            Some(LagrangeBases::WithLd) => (self.counts[0] + 2) * AFFINE_BYTES + 2 * 256,
        }
    }

    /// The same sizes with the aligned and the odd pair sums.
    pub fn with_odd_pairs(self) -> Self {
        MemoryPlan {
            pairs: true,
            odd_pairs: true,
            ..self
        }
    }

    /// Bytes of the pair sums from point `first` on (0: aligned, 1: odd) of the L, A, B_G1
    /// and B_G2 bases (the H MSM has no ones).
    pub fn pairs_bytes(&self, first: usize) -> usize {
        self.counts[1..]
            .iter()
            .map(|&c| pair_count(c, first) * AFFINE_BYTES)
            .sum::<usize>()
            + pair_count(self.g2_count, first) * G2_AFFINE_BYTES
    }

    /// With `lagrange` (H's bases in Lagrange form wanted, `lagrange::wanted`), first the
    /// plans below with it in the order they come, down to both spares and no extras: at 32
    /// GiB on an H200 it saves ~23 ms a partition for 12 GiB, more than the odd pair sums
    /// it displaces (~6 ms; 17 ms net, docs/perf.md); with C folded into L it holds one
    /// point more than H and nothing else. Then, or without `lagrange`:
    /// the resident plan with both spare buffers, the aligned and odd pair sums and the NTT's
    /// full tables when they fit in `budget` bytes, else without the odd pair sums, else
    /// without the tables, else without any pair sums (with the tables, then without), else
    /// the spare for `a`, else none, else the streaming plan with the largest staging
    /// buffers that fit; an error naming the sizes when none does. The order is what each
    /// saves a partition at 32 GiB on an H200: `a` ahead its upload (78 ms), `b` ahead the
    /// wait for `c`'s upload (the NTTs then run back to back), the aligned pair sums 12 ms
    /// for 16 GiB, the full tables 9 ms for 12 GiB, the odd pair sums 5.5 ms for 16 GiB
    /// more (docs/perf.md). `CUZK_BASE_PAIRS=0` leaves the pair sums out, `=1` the odd ones
    /// (for measurements side by side).
    pub fn choose(
        max_log: u32,
        max_scalars: usize,
        counts: [usize; 4],
        g2_count: usize,
        budget: usize,
        lagrange: Option<LagrangeBases>,
    ) -> Result<Self, String> {
        let resident = Self::resident(max_log, max_scalars, counts, g2_count);
        let spares = resident.with_spares(2);
        let (pairs, odd) = pairs_wanted();
        let plain = [
            (odd, spares.with_odd_pairs().with_ntt_full()),
            (pairs, spares.with_pairs().with_ntt_full()),
            (pairs, spares.with_pairs()),
            (true, spares.with_ntt_full()),
            (true, spares),
        ];
        let with_lagrange = plain.map(|(w, p)| match lagrange {
            Some(kind) => (w, p.with_lagrange(kind)),
            None => (false, p),
        });
        let last = [(true, resident.with_spares(1)), (true, resident)];
        let fits = with_lagrange
            .into_iter()
            .chain(plain)
            .chain(last)
            .filter(|&(wanted, _)| wanted)
            .map(|(_, p)| p)
            .find(|p| p.bytes() <= budget);
        if let Some(p) = fits {
            return Ok(p);
        }
        let with = |s: usize| resident.streaming(s);
        // bytes() grows with the buffer size: the largest size (2 MiB steps) that fits.
        const STEP: usize = 2 << 20;
        let largest = resident.largest_set_bytes().next_multiple_of(STEP);
        let (mut lo, mut hi) = (0usize, largest / STEP);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if with(mid * STEP).bytes() <= budget {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        let s = lo * STEP;
        if s < MIN_STREAM_BYTES {
            return Err(format!(
                "need {:.1} GiB with resident bases, and {:.1} GiB even streaming them through two {} MiB buffers; {:.1} GiB available",
                gib(resident.bytes()),
                gib(with(MIN_STREAM_BYTES).bytes()),
                MIN_STREAM_BYTES >> 20,
                gib(budget)
            ));
        }
        Ok(with(s))
    }

    /// Bytes of the largest base vector (the most a staging buffer ever needs).
    fn largest_set_bytes(&self) -> usize {
        let g1 = self.counts.iter().copied().max().unwrap_or(0) * AFFINE_BYTES;
        g1.max(self.g2_count * G2_AFFINE_BYTES)
    }

    /// Bases a piece holds for points of `point_bytes` (everything when resident).
    pub fn piece_len(&self, point_bytes: usize) -> usize {
        match self.stream_bytes {
            None => usize::MAX,
            Some(s) => s / point_bytes,
        }
    }

    /// Pieces of each MSM: H (n − 1 dense terms), L, A, B_G1, B_G2.
    pub fn pieces(&self) -> [usize; 5] {
        let g1 = self.piece_len(AFFINE_BYTES);
        let [h, l, a, b] = self.counts;
        [
            piece_count(h, g1),
            piece_count(l, g1),
            piece_count(a, g1),
            piece_count(b, g1),
            piece_count(self.g2_count, self.piece_len(G2_AFFINE_BYTES)),
        ]
    }

    /// Terms one MSM launch may have: the whole largest MSM when resident, a piece when
    /// streaming. (G1, G2.)
    pub fn max_terms(&self) -> (usize, usize) {
        let n = 1usize << self.max_log;
        let g1 = n.max(self.counts.iter().copied().max().unwrap_or(0));
        (
            g1.min(self.piece_len(AFFINE_BYTES)),
            self.g2_count.min(self.piece_len(G2_AFFINE_BYTES)),
        )
    }

    /// Elements of the evaluation buffers (a, b, c, the NTT's scratch, the spares) and of
    /// the scalars buffer: with spares, `prove` swaps the buffers an upload ahead filled
    /// into place (a spare with `a`, `b`, or with the scalars), so they must all be of one
    /// size; a smaller one swapped into a larger one's place would later meet a partition
    /// it has no room for. Without spares nothing is swapped and the scalars take their
    /// own count.
    pub fn buffer_lens(&self) -> (usize, usize) {
        let n = 1usize << self.max_log;
        if self.spares == 0 {
            return (n, self.max_scalars);
        }
        let both = n.max(self.max_scalars);
        (both, both)
    }

    /// Result slots of the G1 MSMs (all pieces of H, L, A, B_G1).
    pub fn g1_slots(&self) -> usize {
        // The Lagrange form's two sums over LD' (c's small and wide values) in one piece each.
        let c_sums = if self.lagrange == Some(LagrangeBases::WithLd) {
            2
        } else {
            0
        };
        (self.pieces()[..4].iter().sum::<usize>() + c_sums) * SLOT
    }

    /// Everything the prover allocates, with room to align each buffer to 256 bytes.
    pub fn bytes(&self) -> usize {
        let (g1_terms, g2_terms) = self.max_terms();
        let bases = match self.stream_bytes {
            None => {
                self.counts.iter().sum::<usize>() * AFFINE_BYTES + self.g2_count * G2_AFFINE_BYTES
            }
            Some(s) => 2 * s,
        };
        let g2 = if self.g2_count == 0 {
            0
        } else {
            MsmWork::bytes_for(Curve::G2, g2_terms)
                + self.pieces()[4] * SLOT * XYZZ2_BYTES
                + 3 * 256
        };
        bases
            + (4 + self.spares) * (self.buffer_lens().0 * FR_BYTES + 256)
            + self.buffer_lens().1 * FR_BYTES
            + self.counts[1..].iter().map(|c| c * 12).sum::<usize>()
            + ntt::tables_bytes(self.max_log)
            + if self.ntt_full {
                ntt::full_tables_bytes(self.max_log) + 256
            } else {
                0
            }
            + if self.pairs {
                self.pairs_bytes(0) + 4 * 256
            } else {
                0
            }
            + if self.odd_pairs {
                self.pairs_bytes(1) + 4 * 256
            } else {
                0
            }
            + if self.lagrange.is_some() {
                self.lagrange_bytes() + 256
            } else {
                0
            }
            + MsmWork::bytes(g1_terms)
            + self.g1_slots() * XYZZ_BYTES
            + 30 * 256
            + g2
            + self.r1cs_bytes
    }
}

/// Whether plans may take the aligned pair sums and the odd ones (`CUZK_BASE_PAIRS=0`:
/// neither, `=1`: the aligned ones only; so one binary times the batch additions each way).
fn pairs_wanted() -> (bool, bool) {
    match std::env::var("CUZK_BASE_PAIRS").as_deref() {
        Ok("0") => (false, false),
        Ok("1") => (true, false),
        _ => (true, true),
    }
}

pub(crate) fn gib(b: usize) -> f64 {
    b as f64 / (1u64 << 30) as f64
}
