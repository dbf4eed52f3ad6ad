//! `cuzk-bench ceilings`: the rows of a `cuzk-gpu-check ceilings` log read into kernels
//! and occupancies, and the picture written as well-formed SVG with a bar an occupancy a
//! kernel, a bar a workload and their percentages.

mod common;

use common::svg::Svg;
use cuzk_bench::ceilings::{self, ceilings_from_log, Ceiling, Workload};

// Rows as `cuzk-gpu-check ceilings` prints them (H200, 2026-12-03), with the table's
// header and a line of another kind between them.
const LOG: &str = "\
== cuzk-gpu-check ceilings (seed 1796306657919159688, 5.5 s)
check                                           ok     gpu ms     cpu ms note
IMAD.WIDE, 8 independent chains [full]          ok     110.60          - 0.0001 ns a unit, 90.4 % of the floor rate (2 counted multiply-adds a unit; 270336 threads x 24169 iterations)
Fp product (fp_mul), one chain [full]           ok     113.00          - 0.0357 ns a unit, 88.5 % of the floor rate (528 counted multiply-adds a unit; 118272 threads x 26785 iterations)
IMAD.WIDE, 8 independent chains [4/SM]          ok     113.13          - 0.0001 ns a unit, 88.4 % of the floor rate (2 counted multiply-adds a unit; 67584 threads x 96679 iterations)
G1 madd, ZZ/ZZZ in shared (xyzz_madd_sh) [4/SM]    ok     127.97          - 0.3709 ns a unit, 78.1 % of the floor rate (4848 counted multiply-adds a unit; 67584 threads x 5105 iterations)
failures: 0
";

fn rates(r: &[(&str, f64)]) -> Vec<(String, f64)> {
    r.iter().map(|(t, p)| (t.to_string(), *p)).collect()
}

#[test]
fn each_kernel_gets_its_rate_at_each_occupancy_in_the_logs_order() {
    let c = ceilings_from_log(LOG).unwrap();
    assert_eq!(
        c,
        [
            Ceiling {
                kernel: "IMAD.WIDE, 8 independent chains".into(),
                rates: rates(&[("full", 90.4), ("4/SM", 88.4)]),
            },
            Ceiling {
                kernel: "Fp product (fp_mul), one chain".into(),
                rates: rates(&[("full", 88.5)]),
            },
            Ceiling {
                kernel: "G1 madd, ZZ/ZZZ in shared (xyzz_madd_sh)".into(),
                rates: rates(&[("4/SM", 78.1)]),
            },
        ]
    );
    assert_eq!(ceilings::tags(&c), ["full", "4/SM"]);
    // A later row of the same kernel and occupancy (a second run) replaces the first.
    let again = format!(
        "{LOG}Fp product (fp_mul), one chain [full]   ok  1.0  - 0.0357 ns a unit, 87.0 % of the floor rate (...)\n"
    );
    let c = ceilings_from_log(&again).unwrap();
    assert_eq!(c[1].rates, rates(&[("full", 87.0)]));
}

#[test]
fn a_log_without_ceilings_a_broken_row_or_a_failed_check_is_an_error() {
    let e = ceilings_from_log("failures: 0\n").unwrap_err();
    assert!(e.to_string().contains("no ceilings row"), "{e}");
    let e =
        ceilings_from_log("Fp product [full]  ok  1.0  - n/a % of the floor rate\n").unwrap_err();
    assert!(e.to_string().contains("no fraction"), "{e}");
    let e =
        ceilings_from_log("Fp product  ok  1.0  - 0.1 ns, 88.5 % of the floor rate\n").unwrap_err();
    assert!(e.to_string().contains("no [occupancy] tag"), "{e}");
    // A rate whose device result differed from the CPU's is not drawn.
    let e = ceilings_from_log(
        "Fp square [4/SM]  FAIL  1.0  - 0.03 ns a unit, 89.4 % of the floor rate\n",
    )
    .unwrap_err();
    assert!(e.to_string().contains("failed its check"), "{e}");
}

#[test]
fn the_picture_has_a_bar_and_percentage_an_occupancy_a_kernel_and_a_workload() {
    let c = ceilings_from_log(LOG).unwrap();
    let w = [Workload {
        name: "NTT 2^27: whole".into(),
        percent: 62.4,
    }];
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.svg");
    let (width, height) = ceilings::write_svg(&c, &w, &out, "test").unwrap();
    assert_eq!(
        (width, height),
        (ceilings::WIDTH, ceilings::height_for(3, 1))
    );
    let svg = Svg::read(&out);
    // Bars (and one legend swatch each): 2 kernels have a `full` rate, 2 a `4/SM` one, 1
    // workload.
    assert_eq!(svg.rects_filled("#1F77B4"), 2 + 1);
    assert_eq!(svg.rects_filled("#FF7F0E"), 2 + 1);
    assert_eq!(svg.rects_filled("#2CA02C"), 1 + 1);
    svg.assert_texts(&[
        "IMAD.WIDE, 8 independent chains",
        "G1 madd, ZZ/ZZZ in shared (xyzz_madd_sh)",
        "NTT 2^27: whole",
        "90.4 %",
        "88.4 %",
        "78.1 %",
        "62.4 %",
        "alone, as many blocks an SM as fit",
        "alone, 4 blocks an SM",
    ]);
}

#[test]
fn a_workload_is_floor_over_measured_or_a_percent() {
    let w = Workload::parse("MSM 2^27: whole=507/749.3").unwrap();
    assert_eq!(w.name, "MSM 2^27: whole");
    assert!((w.percent - 67.66).abs() < 0.01, "{}", w.percent);
    assert_eq!(Workload::parse("x = 62.4").unwrap().percent, 62.4);
    assert!(Workload::parse("no value").is_err());
    assert!(Workload::parse("x=5/0").is_err());
    assert!(Workload::parse("x=a/2").is_err());
}
