//! `cuzk-bench steps`: a scale row's fields read, the floors matched to them, and the picture
//! written as well-formed SVG with a bar pair, a label and a ratio a step.

mod common;

use common::svg::Svg;
use cuzk_bench::steps::{self, row_fields, steps_from_log, Step};

const LOG: &str = "\
32GiB prove_ahead() + B_G2 run 1                ok    1462.93          - a ahead true, upload 245 ntt 246 msm_h 824 msm_l 120 msm_a 119 msm_b_g1 34 msm_b_g2 108 upload_ahead 78 finish 1
32GiB prove_ahead() + B_G2 run 2                ok    1463.10          - a ahead true, upload 245 ntt 246 msm_h 824 msm_l 120 msm_a 120 msm_b_g1 34 msm_b_g2 108 upload_ahead 78 finish 1
";

fn floors() -> Vec<(String, f64)> {
    [("ntt", 178.0), ("msm_h", 602.0), ("msm_a", 78.0)]
        .map(|(n, f)| (n.to_string(), f))
        .to_vec()
}

#[test]
fn a_rows_fields_are_its_name_value_pairs_after_the_separator() {
    let f = row_fields(LOG.lines().next().unwrap());
    let names: Vec<&str> = f.iter().map(|(n, _)| n.as_str()).collect();
    // "ahead true" is not a number; "run 1" and "ok 1462.93" lie before " - ".
    assert_eq!(
        names,
        [
            "upload",
            "ntt",
            "msm_h",
            "msm_l",
            "msm_a",
            "msm_b_g1",
            "msm_b_g2",
            "upload_ahead",
            "finish"
        ]
    );
    assert_eq!(f[2], ("msm_h".to_string(), 824.0));
}

#[test]
fn the_last_matching_row_gives_the_steps_with_floors_in_its_order() {
    let s = steps_from_log(LOG, "prove_ahead() + B_G2", &floors()).unwrap();
    assert_eq!(
        s,
        [
            Step {
                name: "ntt".into(),
                ms: 246.0,
                floor_ms: 178.0
            },
            Step {
                name: "msm_h".into(),
                ms: 824.0,
                floor_ms: 602.0
            },
            // run 2's value, not run 1's
            Step {
                name: "msm_a".into(),
                ms: 120.0,
                floor_ms: 78.0
            },
        ]
    );
    let e = steps_from_log(LOG, "prove() run", &floors()).unwrap_err();
    assert!(e.to_string().contains("no line contains"), "{e}");
    let mut bad = floors();
    bad.push(("msm_x".into(), 1.0));
    let e = steps_from_log(LOG, "prove_ahead()", &bad).unwrap_err();
    assert!(e.to_string().contains("msm_x"), "{e}");
}

#[test]
fn the_picture_has_a_bar_pair_label_and_ratio_a_step_and_the_target() {
    let s = steps_from_log(LOG, "prove_ahead() + B_G2", &floors()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.svg");
    let (w, h) = steps::write_svg(&s, Some(1000.0), &out, "test").unwrap();
    assert_eq!((w, h), (steps::WIDTH, steps::height_for(3)));
    let svg = Svg::read(&out);
    // A measured and a floor bar for each step and the sum (and one swatch each in the
    // legend; the target's swatch is red).
    assert_eq!(svg.rects_filled("#2CA02C"), 3 + 1 + 1);
    assert_eq!(svg.rects_filled("#AAAAAA"), 3 + 1 + 1);
    assert_eq!(svg.rects_filled("#FF0000"), 1);
    svg.assert_texts(&[
        "ntt",
        "msm_h",
        "msm_a",
        "sum",
        "246 ms (1.38x)",
        "824 ms (1.37x)",
        "1.190 s (1.39x)",
        "target of the sum: 1.000 s",
    ]);
}
