//! `cuzk bench witness` on the real C1 fixtures: the scalar mix a witness measures, and the
//! census method that predicts the 32 GiB mix (docs/gpu.md "The scalar mix of a 32 GiB
//! partition") checked where both sides exist: the 8 MiB witness's mix predicted from the
//! 2 KiB witness's gadget classes must equal its measurement. No parameters are needed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(name)
}

fn cuzk(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args(args)
        .output()
        .expect("running cuzk")
}

/// `cuzk bench witness --c1 <fixture> <flag> <path>`.
fn witness(fixture_name: &str, flag: &str, path: &Path) -> Output {
    cuzk(&[
        "bench",
        "witness",
        "--c1",
        fixture(fixture_name).to_str().unwrap(),
        flag,
        path.to_str().unwrap(),
    ])
}

fn ok_stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "cuzk failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The "predicted ... measured ..." line of `query`: (predicted 0/1/other %, measured).
fn predicted_and_measured(stdout: &str, query: &str) -> ([f64; 3], [f64; 3]) {
    let line = stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(query) && l.contains("measured"))
        .unwrap_or_else(|| panic!("no prediction line for {query} in:\n{stdout}"));
    let nums: Vec<f64> = line
        .split(|c: char| c.is_whitespace() || c == '/' || c == '(' || c == ')')
        .filter_map(|t| t.parse().ok())
        .collect();
    // scalars, 3 predicted, unseen, 3 measured
    assert_eq!(nums.len(), 8, "{line}");
    ([nums[1], nums[2], nums[3]], [nums[5], nums[6], nums[7]])
}

#[test]
fn the_8mib_mix_is_predicted_from_the_2kib_census() {
    let dir = tempfile::tempdir().unwrap();
    let census = dir.path().join("2kib.json");
    let out = witness("porep-2KiB-a.c1.json", "--census-out", &census);
    let text = ok_stdout(&out);
    // The 2 KiB witness is mostly bits: L holds 2,685,673 aux scalars, 1-2.5 % of them wide.
    let l = text
        .lines()
        .find(|l| l.trim_start().starts_with("L ") && l.contains('|'))
        .expect("the measured L row");
    let cols: Vec<&str> = l.split_whitespace().collect();
    assert_eq!(cols[1], "2685673", "{l}");
    let other: f64 = cols[4].parse().unwrap();
    assert!((1.0..2.5).contains(&other), "{l}");

    let out = witness("porep-8MiB-a.c1.json", "--learn", &census);
    let text = ok_stdout(&out);
    for q in ["L", "A", "B"] {
        let (p, m) = predicted_and_measured(&text, q);
        for k in 0..3 {
            assert!(
                (p[k] - m[k]).abs() <= 0.1,
                "{q}: predicted {p:?} against measured {m:?}\n{text}"
            );
        }
    }
    // The 8 MiB witness has more wide values than the 2 KiB one (deeper Poseidon trees):
    // the prediction did not just copy the 2 KiB mix.
    let (_, m) = predicted_and_measured(&text, "L");
    assert!(
        m[2] > other + 0.5,
        "8 MiB L other {} vs 2 KiB {other}",
        m[2]
    );
}

#[test]
fn a_census_that_cannot_be_learned_from_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    let out = witness("porep-2KiB-a.c1.json", "--learn", &missing);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("missing.json"), "{err}");

    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{\"not\": \"a census\"}").unwrap();
    let out = cuzk(&["bench", "witness", "--census", junk.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("junk.json") && err.contains("not a census"),
        "{err}"
    );
}
