//! `cuzk-bench compare`: filecoin-proofs `seal_commit_phase2` against our prover on the same
//! C1 and parameters, in one run. The measuring code is `cuzk bench c2`
//! (supervisor/src/bench_c2.rs): it is run as a child process and its lines are read back,
//! so there is one implementation of the comparison, not two.
//!
//! The lines it prints, parsed here:
//! `run 0: filecoin-proofs seal_commit_phase2 77.17 s | cuzk prove 33.26 s | 2.32x`
//! `best: filecoin-proofs 77.17 s, cuzk 33.26 s, speedup 2.32x (...)`

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareRun {
    pub run: usize,
    /// filecoin-proofs seal_commit_phase2, whole call (parameter load, synthesis, proving,
    /// its own verify).
    pub filecoin_proofs_s: f64,
    /// `cuzk prove`, whole (parameter load, synthesis, proving, verify_seal, write).
    pub cuzk_s: f64,
    /// filecoin_proofs_s / cuzk_s.
    pub speedup: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareReport {
    pub runs: Vec<CompareRun>,
    /// Best of each side, and their ratio.
    pub best_filecoin_proofs_s: f64,
    pub best_cuzk_s: f64,
    pub speedup: f64,
}

/// Parses one `run N: ...` line.
pub fn parse_run_line(line: &str) -> Option<CompareRun> {
    let rest = line.strip_prefix("run ")?;
    let (run, rest) = rest.split_once(':')?;
    let theirs = number_before(rest, "seal_commit_phase2 ", " s")?;
    let ours = number_before(rest, "cuzk prove ", " s")?;
    Some(CompareRun {
        run: run.trim().parse().ok()?,
        filecoin_proofs_s: theirs,
        cuzk_s: ours,
        speedup: theirs / ours,
    })
}

/// The number between `after` and the next `until`.
fn number_before(text: &str, after: &str, until: &str) -> Option<f64> {
    let start = text.find(after)? + after.len();
    let len = text[start..].find(until)?;
    text[start..start + len].trim().parse().ok()
}

/// The report from the runs (best of each side, as `cuzk bench c2` compares them).
pub fn report(runs: Vec<CompareRun>) -> Option<CompareReport> {
    let best = |f: fn(&CompareRun) -> f64| runs.iter().map(f).fold(f64::INFINITY, f64::min);
    let (theirs, ours) = (best(|r| r.filecoin_proofs_s), best(|r| r.cuzk_s));
    (!runs.is_empty()).then(|| CompareReport {
        best_filecoin_proofs_s: theirs,
        best_cuzk_s: ours,
        speedup: theirs / ours,
        runs,
    })
}

/// The `cuzk` binary: the one given, else the one beside this executable (same build),
/// else `cuzk` from PATH.
pub fn find_cuzk(given: Option<&Path>) -> PathBuf {
    if let Some(path) = given {
        return path.to_path_buf();
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.join("cuzk")))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("cuzk"))
}

/// Runs `cuzk bench c2`, passing each line of its output to `echo` as it comes (a run takes
/// minutes; the operator sees it progress), and returns the parsed runs.
pub fn run(
    cuzk: &Path,
    c1: &Path,
    param_cache: &Path,
    runs: usize,
    echo: &mut dyn FnMut(&str),
) -> Result<CompareReport> {
    let mut child = Command::new(cuzk)
        .args(["bench", "c2", "--runs", &runs.to_string()])
        .arg("--c1")
        .arg(c1)
        .arg("--param-cache")
        .arg(param_cache)
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {} bench c2", cuzk.display()))?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut parsed = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.context("reading cuzk bench c2 output")?;
        echo(&line);
        parsed.extend(parse_run_line(&line));
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("{} bench c2 failed ({status})", cuzk.display());
    }
    report(parsed).context("cuzk bench c2 printed no run line")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_lines_bench_c2_prints() {
        let r = parse_run_line(
            "run 1: filecoin-proofs seal_commit_phase2 77.17 s | cuzk prove 33.26 s | 2.32x",
        )
        .unwrap();
        assert_eq!((r.run, r.filecoin_proofs_s, r.cuzk_s), (1, 77.17, 33.26));
        assert!((r.speedup - 77.17 / 33.26).abs() < 1e-12);
        assert!(parse_run_line("best: filecoin-proofs 77.17 s, cuzk 33.26 s").is_none());
        assert!(parse_run_line("C2 of x.json (StackedDrg2KiBV1_1), 2 run(s) each").is_none());
    }

    #[test]
    fn best_of_each_side() {
        let line = |i, a, b| CompareRun {
            run: i,
            filecoin_proofs_s: a,
            cuzk_s: b,
            speedup: a / b,
        };
        let r = report(vec![line(0, 79.85, 37.02), line(1, 77.17, 33.26)]).unwrap();
        assert_eq!((r.best_filecoin_proofs_s, r.best_cuzk_s), (77.17, 33.26));
        assert!(report(vec![]).is_none());
    }
}
