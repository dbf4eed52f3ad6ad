//! `cuzk-bench timeline LOG`: the analysis printed (or as JSON) and the waterfall written.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use cuzk_bench::analysis::pairing::Stage;
use cuzk_bench::analysis::{analyze, select, Analysis, Options};
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
    /// Only the jobs whose name contains this (e.g. a batch's `-b<run-id>-`).
    #[arg(long)]
    pub jobs: Option<String>,
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
    beside(log, ".waterfall.svg")
}

/// `<log><suffix>` beside the log (the pictures' default paths).
pub fn beside(log: &Path, suffix: &str) -> PathBuf {
    let mut name = log.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    log.with_file_name(name)
}

pub fn run(args: &TimelineArgs) -> Result<()> {
    let svg = (!args.no_svg).then(|| {
        args.svg
            .clone()
            .unwrap_or_else(|| default_svg_path(&args.log))
    });
    let opts = Options {
        processes: args.procs.iter().copied().collect(),
        slots: args.slots,
    };
    let done = analyze_log(&args.log, args.jobs.as_deref(), &opts, svg.as_deref())?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&done.to_json()?)?);
    } else {
        print!("{}", done.text());
    }
    Ok(())
}

/// An analysis and where its picture went.
pub struct Analysed {
    pub analysis: Analysis,
    /// (path, width, height, rows).
    pub picture: Option<(PathBuf, u32, u32, usize)>,
}

impl Analysed {
    pub fn to_json(&self) -> Result<serde_json::Value> {
        let mut value = serde_json::to_value(&self.analysis)?;
        if let Some((out, ..)) = &self.picture {
            value["waterfall"] = serde_json::json!(out);
        }
        Ok(value)
    }

    pub fn text(&self) -> String {
        let mut text = report::render(&self.analysis);
        if let Some((out, w, h, rows)) = &self.picture {
            text += &format!("\nwaterfall: {} ({w}x{h}, {rows} rows)\n", out.display());
        }
        text
    }
}

/// Reads `log`, keeps the jobs whose name contains `jobs` (all when `None`), analyses them
/// and draws the waterfall to `svg` (none when `None` or nothing is left).
pub fn analyze_log(
    log: &Path,
    jobs: Option<&str>,
    opts: &Options,
    svg: Option<&Path>,
) -> Result<Analysed> {
    let (mut events, bad) = read_log(log).with_context(|| format!("reading {}", log.display()))?;
    if let Some(pattern) = jobs {
        events = select::jobs_named(&events, pattern);
    }
    let (analysis, paired) = analyze(&events, bad, opts);
    let picture = match svg {
        Some(out) if !events.is_empty() => {
            let title = format!("cuzk timeline: {}", log.display());
            let (w, h, rows) = waterfall::write_svg(&paired, Some(&analysis.slots), out, &title)?;
            Some((out.to_path_buf(), w, h, rows))
        }
        _ => None,
    };
    Ok(Analysed { analysis, picture })
}
