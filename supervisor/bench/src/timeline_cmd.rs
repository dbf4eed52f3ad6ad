//! `cuzk-bench timeline LOG`: the analysis printed (or as JSON) and the waterfall written.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use cuzk_bench::analysis::pairing::Stage;
use cuzk_bench::analysis::{analyze, Options};
use cuzk_bench::{report, waterfall};
use cuzk_shm_layout::timeline::read_log;

#[derive(Debug, clap::Args)]
pub struct TimelineArgs {
    /// The timeline log (JSON lines, as `cuzk run` writes it).
    pub log: PathBuf,
    /// Where to write the waterfall picture (default: next to the log, `<log>.waterfall.svg`).
    #[arg(long)]
    pub svg: Option<PathBuf>,
    /// Do not draw the waterfall.
    #[arg(long, conflicts_with = "svg")]
    pub no_svg: bool,
    /// Print the analysis as JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Process count of a stage, e.g. `--procs synthesis=2` (otherwise counted from the log).
    #[arg(long, value_parser = parse_procs)]
    pub procs: Vec<(Stage, usize)>,
    /// Slot count (otherwise the slot numbers seen in the log).
    #[arg(long)]
    pub slots: Option<usize>,
}

fn parse_procs(s: &str) -> Result<(Stage, usize)> {
    let (name, n) = s.split_once('=').context("expected STAGE=N")?;
    let Some(stage) = Stage::from_name(name) else {
        bail!("unknown stage {name:?} (synthesis, host-prep, gpu, epilogue)");
    };
    Ok((stage, n.parse().context("process count")?))
}

/// `<log>.waterfall.svg` beside the log.
pub fn default_svg_path(log: &Path) -> PathBuf {
    let mut name = log.file_name().unwrap_or_default().to_os_string();
    name.push(".waterfall.svg");
    log.with_file_name(name)
}

pub fn run(args: &TimelineArgs) -> Result<()> {
    let (events, bad) =
        read_log(&args.log).with_context(|| format!("reading {}", args.log.display()))?;
    let opts = Options {
        processes: args.procs.iter().copied().collect(),
        slots: args.slots,
    };
    let (analysis, paired) = analyze(&events, bad, &opts);
    let picture = if args.no_svg || events.is_empty() {
        None
    } else {
        let out = args
            .svg
            .clone()
            .unwrap_or_else(|| default_svg_path(&args.log));
        let title = format!("cuzk timeline: {}", args.log.display());
        let (w, h, rows) = waterfall::write_svg(&paired, Some(&analysis.slots), &out, &title)?;
        Some((out, w, h, rows))
    };
    if args.json {
        let mut value = serde_json::to_value(&analysis)?;
        if let Some((out, ..)) = &picture {
            value["waterfall"] = serde_json::json!(out);
        }
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        print!("{}", report::render(&analysis));
        if let Some((out, w, h, rows)) = &picture {
            println!("\nwaterfall: {} ({w}x{h}, {rows} rows)", out.display());
        }
    }
    Ok(())
}
