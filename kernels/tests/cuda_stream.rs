//! CPU tests of base streaming's host side (no GPU needed): how an MSM is cut into pieces
//! by base index, that the pieces' sums add up to the whole MSM, and the memory plan that
//! decides between resident and streamed bases. (The device path is checked on the H200:
//! `cuzk-gpu-check correctness` and `scale` compare streamed provers with the CPU and with
//! the resident prover.)

use blstrs::{G1Affine, G1Projective};
use cuzk_kernels::cuda::memory_plan::{LagrangeBases, MemoryPlan, MIN_STREAM_BYTES};
use cuzk_kernels::cuda::stream::{piece_count, pieces, sorted_by_base};
use cuzk_kernels::cuda::synthetic::{
    b_g2_count, ScalarMix, SyntheticPartition, PORE_32G_AUX, PORE_32G_A_DENSITY, PORE_32G_INPUTS,
};
use cuzk_kernels::msm::PlanRef;
use group::{Curve, Group};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn small_partition(seed: u64) -> SyntheticPartition {
    SyntheticPartition::new(12, 9, 4000, (0.997, 0.254), ScalarMix::ASSUMED_45_45, seed)
}

/// Every plan entry lands in exactly one piece, inside its base range; pieces tile the
/// bases in order.
#[test]
fn pieces_tile_the_bases_and_split_the_plan() {
    let part = small_partition(1);
    for plan in [part.l.as_ref(), part.a_plan.as_ref(), part.b_plan.as_ref()] {
        assert!(sorted_by_base(plan));
        let count = part.base_counts[1];
        for per in [1, 7, 100, 1000, count, count + 5, usize::MAX] {
            let ps = pieces(count, per, Some(plan));
            assert_eq!(ps.len(), piece_count(count, per), "per {per}");
            assert_eq!(ps[0].lo, 0);
            assert_eq!(ps.last().unwrap().hi, count);
            let (mut terms, mut ones) = (0, 0);
            for (k, p) in ps.iter().enumerate() {
                if k > 0 {
                    assert_eq!(p.lo, ps[k - 1].hi);
                    assert_eq!(p.terms.start, ps[k - 1].terms.end);
                    assert_eq!(p.ones.start, ps[k - 1].ones.end);
                }
                assert!(p.hi - p.lo <= per);
                assert!(plan.terms[p.terms.clone()]
                    .iter()
                    .all(|t| (p.lo..p.hi).contains(&(t[0] as usize))));
                assert!(plan.ones[p.ones.clone()]
                    .iter()
                    .all(|&b| (p.lo..p.hi).contains(&(b as usize))));
                terms += p.terms.len();
                ones += p.ones.len();
            }
            assert_eq!((terms, ones), (plan.terms.len(), plan.ones.len()));
        }
    }
    // Dense: the terms are the bases themselves.
    let ps = pieces(10, 4, None);
    let ranges: Vec<_> = ps.iter().map(|p| (p.lo, p.hi, p.terms.clone())).collect();
    assert_eq!(ranges, [(0, 4, 0..4), (4, 8, 4..8), (8, 10, 8..10)]);
    // An unsorted plan is refused (the prover checks before enqueueing anything).
    let terms = [[5u32, 0], [2, 1]];
    assert!(!sorted_by_base(PlanRef {
        ones: &[],
        terms: &terms
    }));
}

/// Σ over the pieces of each piece's MSM (its bases re-indexed from lo, as the device reads
/// them from the staging buffer) equals the whole MSM: what `prove` adds up on the host.
#[test]
fn pieces_sum_to_the_whole_msm() {
    let part = small_partition(2);
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let count = part.base_counts[1];
    let bases: Vec<G1Affine> = (0..count)
        .map(|_| G1Projective::random(&mut rng).to_affine())
        .collect();
    let plan = part.l.as_ref();
    let whole = plan.execute(&bases, &part.scalars);
    for per in [97, 1024, 3000] {
        let mut sum = G1Projective::identity();
        for p in pieces(count, per, Some(plan)) {
            let terms: Vec<[u32; 2]> = plan.terms[p.terms.clone()]
                .iter()
                .map(|&[b, s]| [b - p.lo as u32, s])
                .collect();
            let ones: Vec<u32> = plan.ones[p.ones.clone()]
                .iter()
                .map(|&b| b - p.lo as u32)
                .collect();
            let local = PlanRef {
                ones: &ones,
                terms: &terms,
            };
            sum += local.execute(&bases[p.lo..p.hi], &part.scalars);
        }
        assert_eq!(sum, whole, "per {per}");
    }
}

/// The plan keeps everything resident when it fits (with the spare buffers and the NTT's
/// full tables when they fit too), else the largest staging buffers that
/// fit (2 MiB steps), else an error naming what it needs; at the 32 GiB shape a 40 GiB
/// device streams through two buffers of 3886 MiB (3906 in the H200 run of 2026-11-29,
/// before the NTT's two 8 MiB direct twiddle tables took their share; 3902 before the MSM
/// workspaces' sorted arrays took room for every window of a small MSM, 2026-12-04).
#[test]
fn memory_plan_streams_only_when_the_key_does_not_fit() {
    let (resident, choose_for) = shape_32g();
    let (counts, g2) = (resident.counts, resident.g2_count);
    let choose = |budget| choose_for(budget, None);
    // An H200 holds the 32 GiB key, the spare buffers for the next partition's `a` and `b`,
    // the bases' aligned and odd pair sums and the NTT's three full tables (136.3 GiB in
    // all); a device with just less room goes without the odd pair sums, then without the
    // tables, then without any pair sums (with the tables again where they fit), then
    // without the spare for `b`, then without both spares.
    let spare_a = resident.with_spares(1);
    let spares = resident.with_spares(2);
    let tables = spares.with_ntt_full();
    let pairs = spares.with_pairs();
    let all = pairs.with_ntt_full();
    let odd = spares.with_odd_pairs().with_ntt_full();
    assert_eq!(choose(139 << 30).unwrap(), odd);
    assert!(
        odd.bytes() < 137 << 30,
        "an H200 holds the 32 GiB key, both spares, the pair sums and the tables"
    );
    // A pair sum for every two L, A, B_G1 and B_G2 bases (the H MSM has no ones), and an
    // odd one for every two from the second on.
    let pair_bytes = |first: usize| {
        counts[1..]
            .iter()
            .map(|c| (c - first) / 2 * 96)
            .sum::<usize>()
            + (g2 - first) / 2 * 192
    };
    assert_eq!(odd.bytes() - all.bytes(), pair_bytes(1) + 4 * 256);
    assert_eq!(choose(odd.bytes() - 1).unwrap(), all);
    assert_eq!(all.bytes() - tables.bytes(), pair_bytes(0) + 4 * 256);
    assert_eq!(choose(all.bytes() - 1).unwrap(), pairs);
    assert_eq!(choose(all.bytes()).unwrap(), all);
    assert!(pairs.bytes() > tables.bytes());
    assert_eq!(choose(pairs.bytes() - 1).unwrap(), tables);
    assert_eq!(choose(tables.bytes() - 1).unwrap(), spares);
    let buffer = (32 << 27) + 256;
    assert_eq!(tables.bytes() - spares.bytes(), 3 * (32 << 27) + 256);
    assert_eq!(spares.bytes() - spare_a.bytes(), buffer);
    assert_eq!(choose(spares.bytes() - 1).unwrap(), spare_a);
    assert_eq!(choose(spares.bytes()).unwrap(), spares);
    assert_eq!(spare_a.bytes() - resident.bytes(), buffer);
    assert_eq!(choose(spare_a.bytes() - 1).unwrap(), resident);
    assert_eq!(choose(spare_a.bytes()).unwrap(), spare_a);

    let budget = 40usize << 30;
    let plan = choose(budget).unwrap();
    let s = plan.stream_bytes.expect("streams at 40 GiB");
    assert!(plan.bytes() <= budget);
    let bigger = plan.streaming(s + (2 << 20));
    assert!(bigger.bytes() > budget, "the largest buffers that fit");
    assert_eq!(s >> 20, 3886);
    // H (2^27 − 1 bases) in 4 pieces of 3886 MiB / 96 B; B_G2 in 2 (192 B points).
    assert_eq!(plan.pieces(), [4, 4, 4, 1, 2]);

    let err = choose(20 << 30).unwrap_err();
    assert!(
        err.contains("even streaming") && err.contains("GiB"),
        "{err}"
    );
    // Below the minimum buffer it refuses rather than cutting MSMs into slivers.
    let tight = resident.streaming(MIN_STREAM_BYTES);
    assert!(choose(tight.bytes() - 1).is_err());
    assert!(choose(tight.bytes()).is_ok());
}

/// With H's bases in Lagrange form wanted, an H200 at 32 GiB takes it before the odd pair
/// sums (LC's one point more and LD': 12 GiB, worth more a partition than those 16 GiB),
/// keeping the spares, the aligned pair sums and the tables; with less room it keeps the
/// form and gives up the extras, then, below the form with both spares, takes the plain
/// plans in their order; a streaming plan never has it.
#[test]
fn memory_plan_takes_the_lagrange_form_before_the_odd_pair_sums() {
    let (resident, choose_for) = shape_32g();
    let choose = |budget| choose_for(budget, Some(LagrangeBases::WithLd));
    let spares = resident.with_spares(2);
    let lag = spares.with_lagrange(LagrangeBases::WithLd);
    // LD' (n points) and LC's one point more than H, and two more result slots.
    let more = lag.bytes() - spares.bytes();
    assert!(
        (((1 << 27) + 2) * 96..((1 << 27) + 2) * 96 + (64 << 10)).contains(&more),
        "{more}"
    );
    let h200 = lag.with_pairs().with_ntt_full();
    assert_eq!(choose(139 << 30).unwrap(), h200);
    assert!(h200.bytes() < 137 << 30, "{} GiB", h200.bytes() >> 30);
    assert_eq!(choose(h200.bytes() - 1).unwrap(), lag.with_pairs());
    assert_eq!(choose(lag.with_ntt_full().bytes() - 1).unwrap(), lag);
    // Just below it: the plain plans in their order (the tables are a little smaller).
    assert_eq!(choose(lag.bytes() - 1).unwrap(), spares.with_ntt_full());
    let plan = choose(40 << 30).unwrap();
    assert!(plan.stream_bytes.is_some() && plan.lagrange.is_none());
}

/// With C folded into L the Lagrange form holds LC alone (one point more than H, no LD',
/// no result slots for c's sums): the H200's plan keeps the odd pair sums and the tables.
#[test]
fn memory_plan_with_c_folded_holds_one_point_more() {
    let (resident, choose_for) = shape_32g();
    let spares = resident.with_spares(2);
    let folded = spares.with_lagrange(LagrangeBases::Folded);
    let more = folded.bytes() - spares.bytes();
    assert!((96..96 + 1024).contains(&more), "{more}");
    let h200 = folded.with_odd_pairs().with_ntt_full();
    assert_eq!(
        choose_for(139 << 30, Some(LagrangeBases::Folded)).unwrap(),
        h200
    );
    assert_eq!(
        h200.g1_slots(),
        spares.with_odd_pairs().with_ntt_full().g1_slots()
    );
    let plan = choose_for(40 << 30, Some(LagrangeBases::Folded)).unwrap();
    assert!(plan.stream_bytes.is_some() && plan.lagrange.is_none());
}

/// The 32 GiB shape's resident plan, and `MemoryPlan::choose` for it (budget, Lagrange form
/// wanted).
fn shape_32g() -> (
    MemoryPlan,
    impl Fn(usize, Option<LagrangeBases>) -> Result<MemoryPlan, String>,
) {
    let scalars = (PORE_32G_INPUTS + PORE_32G_AUX).max(1 << 27);
    let a = PORE_32G_INPUTS + (PORE_32G_AUX as f64 * PORE_32G_A_DENSITY) as usize;
    let g2 = b_g2_count(1.0);
    let counts = [(1 << 27) - 1, PORE_32G_AUX, a, g2];
    (
        MemoryPlan::resident(27, scalars, counts, g2),
        move |budget, lagrange| MemoryPlan::choose(27, scalars, counts, g2, budget, lagrange),
    )
}

/// The buffers `prove` swaps after an upload ahead (a spare with `a`, `b`, or the scalars)
/// are of one size when there are spares, so a swap never leaves a smaller buffer in a
/// larger one's place: at the 32 GiB shape the scalars (130,170,221) take the domain's
/// 2^27, and a partition with more scalars than the domain makes every one that large.
/// Without spares nothing is swapped and the scalars keep their own count.
#[test]
fn the_buffers_an_upload_ahead_swaps_are_of_one_size() {
    let counts = [(1 << 27) - 1, PORE_32G_AUX, 1000, 1000];
    let scalars = PORE_32G_INPUTS + PORE_32G_AUX;
    let plan = MemoryPlan::resident(27, scalars, counts, 0);
    assert_eq!(plan.buffer_lens(), (1 << 27, scalars));
    assert_eq!(plan.with_spares(2).buffer_lens(), (1 << 27, 1 << 27));
    assert_eq!(
        plan.with_spares(2).bytes() - plan.bytes(),
        2 * ((1 << 27) * 32 + 256) + ((1 << 27) - scalars) * 32,
        "two spares, and the scalars' buffer grown to the domain"
    );
    let wide = MemoryPlan::resident(20, (1 << 20) + 5, counts, 0).with_spares(1);
    assert_eq!(wide.buffer_lens(), ((1 << 20) + 5, (1 << 20) + 5));
    assert_eq!(
        wide.bytes() - MemoryPlan::resident(20, (1 << 20) + 5, counts, 0).bytes(),
        ((1 << 20) + 5) * 32 + 256 + 4 * 5 * 32,
        "the spare, and 5 more elements in each of a, b, c and the scratch"
    );
}
