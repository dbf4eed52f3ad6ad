//! `cuzk-bench variants`: report rows parsed from `cuzk-gpu-check` output (check.sh's, as
//! it came back from the H200), rounds folded into the best time, steps as rows, ratios to
//! the first variant, failed checks counted.

use cuzk_bench::variants::{compare, parse_row, report_rows, table};

/// check.sh's output for one msm-once run: the rows as printed during the run, then the
/// report again after the `== cuzk-gpu-check` line.
const ONCE_BASE_1: &str = "\
libnvrtc: /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.13
name, driver_version, memory.total [MiB], clocks.current.sm [MHz], clocks.max.sm [MHz]
NVIDIA H200, 580.159.04, 143771 MiB, 345 MHz, 1980 MHz
16
MSM 2^27  c=0                                    -     804.85          - digits 0.0, scatter 0.0, accumulate 0.0, fixup 0.0, reduce 0.0
failures: 0

== cuzk-gpu-check msm-once (seed 1796191525864902260, 7.9 s)
check                                           ok     gpu ms     cpu ms note
MSM 2^27  c=0                                    -     804.85          - digits 0.0, scatter 0.0, accumulate 0.0, fixup 0.0, reduce 0.0
failures: 0
";

const ONCE_BASE_2: &str = "\
== cuzk-gpu-check msm-once (seed 1, 7.9 s)
check                                           ok     gpu ms     cpu ms note
MSM 2^27  c=0                                    -     804.63          - digits 20.0, scatter 78.2, accumulate 695.2, fixup 4.4, reduce 8.7
failures: 0
";

const ONCE_NEW: &str = "\
== cuzk-gpu-check msm-once (seed 2, 7.9 s)
check                                           ok     gpu ms     cpu ms note
MSM 2^27  c=0                                    -     846.08          - digits 0.0, scatter 0.0, accumulate 0.0, fixup 0.0, reduce 0.0
failures: 0
";

const SCALE_NEW: &str = "\
== cuzk-gpu-check scale (seed 3, 40.1 s)
check                                           ok     gpu ms     cpu ms note
synthetic points on curve (1024)                ok       0.00          - 
32GiB prove_ahead() + B_G2 run 2                ok    1489.88          - a ahead true, upload 246 ntt 246 msm_h 846 msm_l 126 msm_a 125 msm_b_g1 36 msm_b_g2 98 upload_ahead 78 finish 1
MSM 2^20 dense vs CPU                         FAIL       0.00          - 
failures: 1
";

fn logs(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(v, l)| (v.to_string(), l.to_string()))
        .collect()
}

#[test]
fn a_report_row_is_label_status_gpu_cpu_and_note() {
    let r = parse_row(
        "NTT 2^27 r9 fwd (best of 3) + round trip        ok      37.73          - forward equal to shared's",
    )
    .unwrap();
    assert_eq!(r.what, "NTT 2^27 r9 fwd (best of 3) + round trip");
    assert_eq!(r.ok, Some(true));
    assert_eq!(r.gpu_ms, 37.73);
    assert_eq!(r.note, "forward equal to shared's");
    // A CPU time in its column; a label with a dash inside a word.
    let r = parse_row("MSM 2^27-1 wide c=20        ok     807.11     18230.50 first/this 1.000x")
        .unwrap();
    assert_eq!(
        (r.what.as_str(), r.gpu_ms),
        ("MSM 2^27-1 wide c=20", 807.11)
    );
    for other in [
        "check                                           ok     gpu ms     cpu ms note",
        "failures: 0",
        "NVIDIA H200, 580.159.04, 143771 MiB, 345 MHz, 1980 MHz",
        "16",
        "",
    ] {
        assert_eq!(parse_row(other), None, "{other:?}");
    }
}

#[test]
fn rows_printed_during_the_run_and_again_in_the_report_count_once() {
    let rows = report_rows(ONCE_BASE_1);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].what, "MSM 2^27 c=0");
    // Without the report's header every row line is read.
    let during = ONCE_BASE_1.split("\n== ").next().unwrap();
    assert_eq!(report_rows(during).len(), 1);
}

#[test]
fn rounds_fold_into_the_best_time_and_ratios_are_first_over_this() {
    let c = compare(&logs(&[
        ("base", ONCE_BASE_1),
        ("new", ONCE_NEW),
        ("base", ONCE_BASE_2),
    ]));
    assert_eq!(c.variants, ["base", "new"]);
    let msm = c.rows.iter().find(|r| r.what == "MSM 2^27 c=0").unwrap();
    assert_eq!(msm.best_ms, [Some(804.63), Some(846.08)]);
    assert_eq!(msm.values, [2, 1]);
    let q = msm.ratios();
    assert_eq!(q[0], Some(1.0));
    assert!((q[1].unwrap() - 804.63 / 846.08).abs() < 1e-12);
    // The profiled round's phases are rows of their own; the zero ones are not.
    let acc = c
        .rows
        .iter()
        .find(|r| r.what == "MSM 2^27 c=0 · accumulate")
        .unwrap();
    assert_eq!(acc.best_ms, [Some(695.2), None]);
    assert_eq!(acc.ratios()[1], None);
    let t = table(&c);
    assert!(t.contains("base/new"), "{t}");
    assert!(t.contains("804.63 (2)"), "{t}");
    assert!(t.contains("0.951x"), "{t}");
}

#[test]
fn a_scale_rows_steps_become_rows_and_failed_checks_are_named() {
    let c = compare(&logs(&[("base", ONCE_BASE_2), ("new", SCALE_NEW)]));
    let whats: Vec<&str> = c.rows.iter().map(|r| r.what.as_str()).collect();
    assert!(
        whats.contains(&"32GiB prove_ahead() + B_G2 run 2 · msm_h"),
        "{whats:?}"
    );
    assert!(whats.contains(&"32GiB prove_ahead() + B_G2 run 2 · upload_ahead"));
    // "a ahead true" is no step; checks without a time are no rows.
    assert!(!whats
        .iter()
        .any(|w| w.ends_with("· a") || w.ends_with("· ahead")));
    assert!(!whats.iter().any(|w| w.starts_with("synthetic points")));
    let h = c
        .rows
        .iter()
        .find(|r| r.what == "32GiB prove_ahead() + B_G2 run 2 · msm_h")
        .unwrap();
    assert_eq!(h.best_ms, [None, Some(846.0)]);
    assert_eq!(
        c.failures,
        [
            Vec::<String>::new(),
            vec!["MSM 2^20 dense vs CPU".to_string()]
        ]
    );
    assert!(table(&c).contains("new: 1 failed checks (MSM 2^20 dense vs CPU)"));
}

#[test]
fn a_run_stopped_by_an_error_counts_as_failed() {
    let stopped = "\
MSM 2^10 dense vs blst                          ok       0.50     3.20 
ERROR: no CUDA driver on this machine (libcuda not found) (context usable: true)
failures: 0 (stopped by the error above)
";
    let c = compare(&logs(&[("base", ONCE_BASE_2), ("new", stopped)]));
    assert_eq!(c.failures[0], Vec::<String>::new());
    assert_eq!(c.failures[1].len(), 1);
    assert!(c.failures[1][0].contains("no CUDA driver"));
}
