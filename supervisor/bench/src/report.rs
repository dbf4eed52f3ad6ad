//! The timeline analysis as text for people.

use std::fmt::Write;

use crate::analysis::bottleneck::STARVED_BELOW;
use crate::analysis::stats::Summary;
use crate::analysis::{Analysis, PhaseStats};

pub fn render(a: &Analysis) -> String {
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(
        w,
        "{} events over {:.3} s ({} unreadable lines, {} ends without a start)",
        a.events, a.span_s, a.bad_lines, a.orphan_ends
    );
    if a.out_of_order > 0 {
        let _ = writeln!(
            w,
            "{} hand-off event(s) written after the next stage had started (END or GPU_QUEUE emitted after the slot was passed on): no wait counted for those",
            a.out_of_order
        );
    }
    let _ = writeln!(w, "\nstage durations (completed partitions; ms)");
    header(w);
    for s in a.stages.iter().chain(&a.waits) {
        phase_line(w, s);
    }
    if !a.steps.is_empty() {
        let _ = writeln!(w, "\nsteps inside stages (ms)");
        header(w);
        for s in &a.steps {
            summary_line(
                w,
                &format!("{} {}", s.event, s.step),
                Some(&s.durations),
                "",
            );
        }
    }
    let _ = writeln!(w, "\nGPU processes (span {:.3} s)", a.span_s);
    if a.gpus.is_empty() {
        let _ = writeln!(w, "  no GPU work in the log");
    }
    for g in &a.gpus {
        let _ = writeln!(
            w,
            "  pid {}: {} partitions, busy {:.1} ms = {:.1} % of the span; fill {:.1} ms, drain {:.1} ms",
            g.pid,
            g.partitions,
            g.busy_ms,
            100.0 * g.busy_fraction,
            g.lead_in_ms,
            g.tail_ms
        );
        match &g.gaps {
            Some(gaps) => {
                let largest: Vec<String> = g
                    .largest_gaps
                    .iter()
                    .map(|gap| format!("{:.1} ms at {:.3} s", gap.length_ms, gap.start_s))
                    .collect();
                let _ = writeln!(
                    w,
                    "    idle gaps between work: {} totalling {:.1} ms, p50 {:.1} ms, max {:.1} ms; largest: {}",
                    gaps.count,
                    gaps.total_ms,
                    gaps.p50_ms,
                    gaps.max_ms,
                    largest.join(", ")
                );
            }
            None => {
                let _ = writeln!(w, "    no idle gaps between work");
            }
        }
    }
    let o = &a.slots;
    let _ = writeln!(
        w,
        "\nslots: {}; busy on average {:.2}, at most {}; all busy {:.1} % of the span; {} still held at the end",
        o.slots,
        o.mean_busy,
        o.max_busy,
        100.0 * o.all_busy_fraction,
        o.unfinished
    );
    let tenths: Vec<String> = o.by_tenth.iter().map(|b| format!("{b:.1}")).collect();
    let _ = writeln!(w, "  busy slots by tenth of the span: {}", tenths.join(" "));
    let t = &a.jobs.throughput;
    let _ = writeln!(
        w,
        "\njobs: {} done, {} failed, {} unfinished",
        t.done, t.failed, t.unfinished
    );
    for j in &a.jobs.jobs {
        let wall = j.wall_ms.map_or("-".into(), |ms| format!("{:.1} ms", ms));
        let _ = writeln!(
            w,
            "  job {} {}: {}, {} partition(s), claimed at {:.3} s, wall {}",
            j.job,
            j.name.as_deref().unwrap_or(""),
            j.outcome.name(),
            j.partitions,
            j.claimed_s,
            wall
        );
    }
    if let Some(s) = &a.jobs.wall {
        let _ = writeln!(
            w,
            "  wall of done jobs: mean {:.1} ms, p50 {:.1}, max {:.1}",
            s.mean_ms, s.p50_ms, s.max_ms
        );
    }
    let _ = write!(
        w,
        "throughput: {:.3} proofs/min over the span",
        t.proofs_per_min
    );
    if let Some(s) = t.s_per_proof {
        let _ = write!(w, " ({s:.2} s/proof)");
    }
    if let Some(steady) = t.steady_proofs_per_min {
        let _ = write!(
            w,
            "; steady {steady:.3} proofs/min (first to last JOB_DONE)"
        );
    }
    if let Some(first) = t.first_proof_s {
        let _ = write!(w, "; first proof at {first:.2} s");
    }
    let _ = writeln!(w);
    bottleneck(w, a);
    out
}

fn bottleneck(w: &mut String, a: &Analysis) {
    let b = &a.bottleneck;
    let _ = writeln!(w, "\nstage loads (utilisation = busy / (processes x span))");
    for l in &b.loads {
        let _ = writeln!(
            w,
            "  {:<10} {} process(es), busy {:>10.1} ms, utilisation {:>5.1} %, {} done, mean {}, capacity {}",
            l.stage.name(),
            l.processes,
            l.busy_ms,
            100.0 * l.utilisation,
            l.completed,
            l.mean_ms.map_or("-".into(), |m| format!("{m:.1} ms")),
            l.capacity_per_min
                .map_or("-".into(), |c| format!("{c:.2} partitions/min")),
        );
    }
    slot_note(w, a);
    startup_note(w, a);
    match b.stage {
        None => {
            let _ = writeln!(w, "bottleneck: none (no stage work in the log)");
        }
        Some(stage) if b.starved => {
            // Starved by what: slots all held (admission) or too little input.
            let fed_by = if a.slots.all_busy_fraction >= STARVED_BELOW {
                format!(
                    "slot-bound: every slot was busy {:.1} % of the time; more slots would admit more work",
                    100.0 * a.slots.all_busy_fraction
                )
            } else {
                "input-bound: slots were free too; keep more jobs in flight".to_string()
            };
            let _ = writeln!(
                w,
                "bottleneck: none: the busiest stage, {}, is busy only {:.1} % of the time (< {:.0} %): the pipeline is starved, {fed_by}",
                stage.name(),
                100.0 * b.utilisation,
                100.0 * STARVED_BELOW
            );
        }
        Some(stage) => {
            let _ = writeln!(
                w,
                "bottleneck: {} (utilisation {:.1} %, the highest){}",
                stage.name(),
                100.0 * b.utilisation,
                match b.lowest_capacity {
                    Some(c) if c != stage => format!(
                        "; by mean duration the lowest capacity is {} (the two views differ: a short run, or uneven durations)",
                        c.name()
                    ),
                    _ => String::new(),
                }
            );
        }
    }
}

/// Stages whose first partition per process carried start-up work: in a short run it
/// weighs on the utilisation as much as the steady state does.
fn startup_note(w: &mut String, a: &Analysis) {
    for l in &a.bottleneck.loads {
        if l.startup_ms >= 0.05 * a.span_s * 1e3 {
            let _ = writeln!(
                w,
                "note: {}'s first partition per process ran {:.1} s over its median (start-up inside it: parameters loaded, kernels compiled); without that its utilisation would be {:.1} %",
                l.stage.name(),
                l.startup_ms / 1e3,
                100.0 * l.utilisation_without_startup
            );
        }
    }
}

/// Slots that were all held while a GPU sat idle between partitions: the admission bound
/// kept the next partition from being ready in time.
fn slot_note(w: &mut String, a: &Analysis) {
    let idle_ms: f64 = a
        .gpus
        .iter()
        .filter_map(|g| g.gaps.as_ref())
        .map(|g| g.total_ms)
        .sum();
    if a.slots.all_busy_fraction >= 0.9 && idle_ms >= 0.01 * a.span_s * 1e3 {
        let _ = writeln!(
            w,
            "note: every slot was busy {:.1} % of the span while the GPU idled {:.1} s between partitions: more slots would let the next partition be ready sooner",
            100.0 * a.slots.all_busy_fraction,
            idle_ms / 1e3
        );
    }
}

fn header(w: &mut String) {
    let _ = writeln!(
        w,
        "  {:<28} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "", "count", "p50", "p90", "p99", "max", "mean"
    );
}

fn phase_line(w: &mut String, s: &PhaseStats) {
    let mut extra = String::new();
    if s.returned > 0 {
        let _ = write!(extra, " returned {}", s.returned);
    }
    if s.interrupted > 0 {
        let _ = write!(extra, " interrupted {}", s.interrupted);
    }
    summary_line(w, &s.label, s.durations.as_ref(), &extra);
}

fn summary_line(w: &mut String, label: &str, s: Option<&Summary>, extra: &str) {
    match s {
        Some(s) => {
            let _ = writeln!(
                w,
                "  {:<28} {:>6} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1}{extra}",
                label, s.count, s.p50_ms, s.p90_ms, s.p99_ms, s.max_ms, s.mean_ms
            );
        }
        None => {
            let _ = writeln!(w, "  {:<28} {:>6}{extra}", label, 0);
        }
    }
}
