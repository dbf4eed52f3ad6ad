//! `cuzk-bench ceilings LOG [--workload NAME=FLOOR/MEASURED ...]`: the kernels of a
//! `cuzk-gpu-check ceilings` log against the floors' multiply-add rate, with whole workloads
//! beside them, as a table and a picture.

use std::path::PathBuf;

use anyhow::{Context, Result};
use cuzk_bench::ceilings::{self, Workload};

#[derive(Debug, clap::Args)]
pub struct CeilingsArgs {
    /// The ceilings log (`cuzk-gpu-check ceilings` output, or the lines grepped from it).
    pub log: PathBuf,
    /// A whole workload drawn beside the kernels: `NAME=FLOOR/MEASURED` (both in ms, e.g.
    /// `"MSM 2^27 accumulation=507/665.6"`) or `NAME=PERCENT`.
    #[arg(long = "workload", value_parser = Workload::parse)]
    pub workloads: Vec<Workload>,
    /// Where to write the picture (default: next to the log, `<log>.ceilings.svg`).
    #[arg(long)]
    pub svg: Option<PathBuf>,
    /// The picture's title.
    #[arg(
        long,
        default_value = "The multiplier's ceilings: each kernel alone and whole workloads"
    )]
    pub title: String,
}

pub fn run(args: &CeilingsArgs) -> Result<()> {
    let log = std::fs::read_to_string(&args.log)
        .with_context(|| format!("reading {}", args.log.display()))?;
    let found =
        ceilings::ceilings_from_log(&log).with_context(|| format!("{}", args.log.display()))?;
    let out = args
        .svg
        .clone()
        .unwrap_or_else(|| crate::timeline_cmd::beside(&args.log, ".ceilings.svg"));
    ceilings::write_svg(&found, &args.workloads, &out, &args.title)?;
    let tags = ceilings::tags(&found);
    print!("{:<52}", "kernel alone, % of the floor rate");
    for t in &tags {
        print!(" {t:>8}");
    }
    println!();
    for c in &found {
        print!("{:<52}", c.kernel);
        for t in &tags {
            match c.rate(t) {
                Some(pct) => print!(" {pct:>8.1}"),
                None => print!(" {:>8}", "-"),
            }
        }
        println!();
    }
    for w in &args.workloads {
        println!("{:<52} {:>8.1} (whole workload)", w.name, w.percent);
    }
    println!("picture: {}", out.display());
    Ok(())
}
