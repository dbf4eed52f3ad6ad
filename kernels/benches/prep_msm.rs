//! prep_msm on a 32 GiB partition's shape (the synthetic one: 328 inputs, 130,169,893 aux,
//! the densities and scalar mix of `synthetic::PORE_32GIB`): `plan_msms`, which reads the
//! aux scalars once for L, A and B (`MsmPlan::extend_all`), against the three scans it
//! replaced (`MsmPlan::build` a plan, each scan reading all 4.2 GB), alternating in one run,
//! plans compared every run; then host-prep's way into a slot: the scan's pieces copied
//! into the three prep regions once (as `slot_view::write_plan` does), from buffers kept
//! from the partition before (`PlanPieces::scan`) and from fresh ones (`plan_pieces`),
//! against the plans gathered into vectors first and then copied (`plan_msms`, what
//! host-prep did), the regions compared every run:
//!
//!     cargo bench -p cuzk-kernels --bench prep_msm [-- LOG2_AUX]
//!
//! LOG2_AUX (optional) scales the aux count down to 2^LOG2_AUX for a quick run; the
//! default is the whole 32 GiB partition (~9 GB of memory).

use std::time::Instant;

use blstrs::Scalar as Fr;
use cuzk_kernels::groth16::steps::{
    assignment_to_limbs, plan_msms, plan_pieces, Densities, MsmPlans,
};
use cuzk_kernels::msm::{MsmPlan, Query, Term};
use cuzk_kernels::synthetic::{SyntheticShape, PORE_32GIB};
use cuzk_kernels::witness::{density_count, WitnessBuffers};
use ff::Field;

/// The plans as prep_msm made them before: one `build` (one scan of the aux) a plan.
fn scan_each(z: &[cuzk_kernels::msm::scalars::Limbs], n_in: usize, d: &Densities<'_>) -> MsmPlans {
    let (z_in, z_aux) = z.split_at(n_in);
    let q = |scalars, scalar_start, base_start, density| Query {
        scalars,
        scalar_start,
        base_start,
        density,
    };
    MsmPlans {
        l: MsmPlan::build(&[q(z_aux, n_in, 0, None)]),
        a: MsmPlan::build(&[q(z_in, 0, 0, None), q(z_aux, n_in, n_in, Some(d.a_aux))]),
        b: MsmPlan::build(&[
            q(z_in, 0, 0, Some(d.b_input)),
            q(z_aux, n_in, density_count(d.b_input, n_in), Some(d.b_aux)),
        ]),
    }
}

fn same(x: &MsmPlans, y: &MsmPlans) -> bool {
    [(&x.l, &y.l), (&x.a, &y.a), (&x.b, &y.b)]
        .iter()
        .all(|(p, q)| p.ones == q.ones && p.terms == q.terms && p.zeros == q.zeros)
}

/// Stand-ins for a slot's L, A and B prep regions (the ones, the terms), written through
/// once before timing as a reused slot's pages are.
#[derive(PartialEq)]
struct Regions {
    ones: [Vec<u32>; 3],
    terms: [Vec<Term>; 3],
}

impl Regions {
    fn sized(plans: &MsmPlans) -> Self {
        let each = [&plans.l, &plans.a, &plans.b];
        Regions {
            ones: each.map(|p| vec![u32::MAX; p.ones.len()]),
            terms: each.map(|p| vec![[u32::MAX; 2]; p.terms.len()]),
        }
    }

    /// What `slot_view::write_plan` copies: each plan's pieces, one after another.
    fn write(&mut self, plans: [Vec<&MsmPlan>; 3]) {
        for (k, pieces) in plans.iter().enumerate() {
            MsmPlan::gather_into(pieces, &mut self.ones[k], &mut self.terms[k]);
        }
    }
}

/// The smallest and the median (the upper middle one) of the times.
fn best_and_median(t: &mut [f64]) -> (f64, f64) {
    t.sort_by(f64::total_cmp);
    (t[0], t[t.len() / 2])
}

fn main() {
    let log2_aux: Option<u32> = std::env::args().skip(1).find_map(|a| a.parse().ok());
    let shape = SyntheticShape {
        num_aux: log2_aux.map_or(PORE_32GIB.num_aux, |l| 1 << l),
        ..PORE_32GIB
    };
    let (n_in, n_aux) = (shape.num_inputs, shape.num_aux);
    let t = Instant::now();
    let mut inputs = vec![Fr::ZERO; n_in];
    let mut aux = vec![Fr::ZERO; n_aux];
    let mut a_aux = vec![0u64; n_aux.div_ceil(64)];
    let mut b_aux = vec![0u64; n_aux.div_ceil(64)];
    let mut b_input = vec![0u64; n_in.div_ceil(64)];
    shape.fill_witness(
        1,
        WitnessBuffers {
            a: &mut [],
            b: &mut [],
            c: &mut [],
            inputs: &mut inputs,
            aux: &mut aux,
            a_aux_density: &mut a_aux,
            b_input_density: &mut b_input,
            b_aux_density: &mut b_aux,
        },
    );
    let mut z = inputs;
    z.append(&mut aux);
    let z = assignment_to_limbs(&mut z);
    let d = Densities {
        a_aux: &a_aux,
        b_input: &b_input,
        b_aux: &b_aux,
    };
    println!(
        "{n_in} inputs, {n_aux} aux ({} mix), threads {}; made in {:.1} s",
        shape.name,
        rayon::current_num_threads(),
        t.elapsed().as_secs_f64()
    );
    let (mut best_each, mut best_once) = (f64::MAX, f64::MAX);
    for run in 0..3 {
        let t = Instant::now();
        let each = scan_each(z, n_in, &d);
        let t_each = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let once = plan_msms(z, n_in, d);
        let t_once = t.elapsed().as_secs_f64();
        assert!(same(&each, &once), "the plans differ (run {run})");
        println!(
            "run {run}: a scan a plan {t_each:.3} s, one scan for three {t_once:.3} s \
             (plans equal: L {}+{} A {}+{} B {}+{} ones+terms)",
            once.l.ones.len(),
            once.l.terms.len(),
            once.a.ones.len(),
            once.a.terms.len(),
            once.b.ones.len(),
            once.b.terms.len()
        );
        best_each = best_each.min(t_each);
        best_once = best_once.min(t_once);
    }
    // Into the slot, three ways: the plans gathered then copied (host-prep before), the
    // scan's pieces copied once from fresh buffers, and from buffers kept from the run
    // before (host-prep now: `PlanPieces::scan`). Six runs, the ways rotating which goes
    // first (this VM's memory state after a large free shifts the next allocation's
    // cost): best and median of each.
    let sized = plan_msms(z, n_in, d);
    let mut regions: [Regions; 3] = std::array::from_fn(|_| Regions::sized(&sized));
    drop(sized);
    let mut kept = plan_pieces(z, n_in, d);
    let mut way = |w: usize, r: &mut Regions| {
        let t = Instant::now();
        match w {
            0 => {
                let plans = plan_msms(z, n_in, d);
                r.write([vec![&plans.l], vec![&plans.a], vec![&plans.b]]);
            }
            1 => r.write(plan_pieces(z, n_in, d).each()),
            _ => {
                kept.scan(z, n_in, d);
                r.write(kept.each());
            }
        }
        t.elapsed().as_secs_f64()
    };
    const WAYS: [&str; 3] = [
        "plans gathered, then copied (before)",
        "the scan's pieces copied once, fresh buffers (`plan_pieces`)",
        "the scan's pieces copied once, buffers kept (`PlanPieces::scan`, host-prep now)",
    ];
    let mut times: [Vec<f64>; 3] = Default::default();
    for run in 0..6 {
        let mut line = format!("run {run}:");
        for i in 0..3 {
            let w = (run + i) % 3;
            let t = way(w, &mut regions[w]);
            times[w].push(t);
            line += &format!(
                " {} {t:.3} s;",
                ["gathered", "fresh pieces", "kept pieces"][w]
            );
        }
        assert!(
            regions[0] == regions[1] && regions[0] == regions[2],
            "the regions differ (run {run})"
        );
        println!("{line} regions equal");
    }
    let stats = times.map(|mut t| best_and_median(&mut t));
    println!("\n| prep_msm (L, A, B plans) | best of 3 | ratio |\n|---|---|---|");
    println!("| a scan a plan (before) | {best_each:.3} s | 1.00x |");
    println!(
        "| one scan for the three (`plan_msms`) | {best_once:.3} s | **{:.2}x** |",
        best_each / best_once
    );
    println!(
        "\n| prep_msm into a slot's prep regions | best of 6 | ratio | median of 6 | ratio |\n\
         |---|---|---|---|---|"
    );
    for (name, (best, median)) in WAYS.iter().zip(stats) {
        println!(
            "| {name} | {best:.3} s | {:.2}x | {median:.3} s | {:.2}x |",
            stats[0].0 / best,
            stats[0].1 / median
        );
    }
}
