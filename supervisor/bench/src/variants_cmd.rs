//! `cuzk-bench variants NAME=LOG ...`: builds of the kernels side by side from the
//! `cuzk-gpu-check` reports of one device call (kernels/h200/side-by-side.sh runs them):
//! each row's best time a variant and the first variant's time over it. Exit status 1 when
//! a report has a failed check.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use cuzk_bench::variants;

#[derive(Debug, clap::Args)]
pub struct VariantsArgs {
    /// A variant's report, `NAME=PATH` (a `cuzk-gpu-check` log or the output of
    /// kernels/h200/check.sh); name a variant again for each further round.
    #[arg(value_parser = parse_log, required = true)]
    pub logs: Vec<(String, PathBuf)>,
    /// Keep only the rows whose label contains one of these texts (repeatable), e.g.
    /// `--only 'MSM 2^27' --only 'prove_ahead() + B_G2 run 2'`.
    #[arg(long)]
    pub only: Vec<String>,
    /// Print the comparison as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

fn parse_log(s: &str) -> Result<(String, PathBuf)> {
    let (name, path) = s.split_once('=').context("expected NAME=PATH")?;
    Ok((name.to_string(), PathBuf::from(path)))
}

pub fn run(args: &VariantsArgs) -> Result<ExitCode> {
    let mut logs = Vec::new();
    for (name, path) in &args.logs {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        logs.push((name.clone(), text));
    }
    let mut c = variants::compare(&logs);
    if !args.only.is_empty() {
        c.rows
            .retain(|r| args.only.iter().any(|o| r.what.contains(o.as_str())));
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        print!("{}", variants::table(&c));
    }
    let failed = c.failures.iter().any(|f| !f.is_empty());
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
