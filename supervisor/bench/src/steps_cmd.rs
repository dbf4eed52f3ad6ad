//! `cuzk-bench steps LOG --row TEXT --floor NAME=MS ...`: a partition's GPU steps from a
//! `cuzk-gpu-check scale` log against their floors, as a table and a picture.

use std::path::PathBuf;

use anyhow::{Context, Result};
use cuzk_bench::steps;

#[derive(Debug, clap::Args)]
pub struct StepsArgs {
    /// The scale log (`cuzk-gpu-check scale` output, or the lines grepped from it).
    pub log: PathBuf,
    /// The row to draw: its last line containing this text.
    #[arg(long, default_value = "32GiB prove_ahead() + B_G2")]
    pub row: String,
    /// A step's floor in ms, e.g. `--floor msm_h=602`; only steps with a floor are drawn.
    #[arg(long = "floor", value_parser = parse_floor, required = true)]
    pub floors: Vec<(String, f64)>,
    /// The sum's target in ms, marked on the sum row (e.g. 1000 for a partition in 1.0 s).
    #[arg(long)]
    pub target: Option<f64>,
    /// Where to write the picture (default: next to the log, `<log>.steps.svg`).
    #[arg(long)]
    pub svg: Option<PathBuf>,
    /// Print the steps as JSON (with the sum and the picture's path) instead of a table.
    #[arg(long)]
    pub json: bool,
    /// The picture's title.
    #[arg(long, default_value = "GPU time by step against its floor")]
    pub title: String,
}

fn parse_floor(s: &str) -> Result<(String, f64)> {
    let (name, ms) = s.split_once('=').context("expected NAME=MS")?;
    Ok((name.to_string(), ms.parse().context("floor in ms")?))
}

pub fn run(args: &StepsArgs) -> Result<()> {
    let log = std::fs::read_to_string(&args.log)
        .with_context(|| format!("reading {}", args.log.display()))?;
    let steps = steps::steps_from_log(&log, &args.row, &args.floors)
        .with_context(|| format!("{}", args.log.display()))?;
    let (sum, floor) = steps::totals(&steps);
    let out = args
        .svg
        .clone()
        .unwrap_or_else(|| crate::timeline_cmd::beside(&args.log, ".steps.svg"));
    steps::write_svg(&steps, args.target, &out, &args.title)?;
    if args.json {
        let doc = serde_json::json!({
            "steps": steps,
            "sum_ms": sum,
            "sum_floor_ms": floor,
            "target_ms": args.target,
            "svg": out,
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(());
    }
    println!(
        "{:<12} {:>10} {:>10} {:>7}",
        "step", "ms", "floor ms", "ratio"
    );
    for s in &steps {
        println!(
            "{:<12} {:>10.1} {:>10.1} {:>6.2}x",
            s.name,
            s.ms,
            s.floor_ms,
            s.ms / s.floor_ms
        );
    }
    println!(
        "{:<12} {:>10.1} {:>10.1} {:>6.2}x",
        "sum",
        sum,
        floor,
        sum / floor
    );
    println!("picture: {}", out.display());
    Ok(())
}
