//! `cuzk-bench batch`: the command line around [`cuzk_bench::batch`]: a progress bar while
//! it runs, a line per finished job, the summary (or all of it as JSON).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use cuzk_bench::analysis::Options;
use cuzk_bench::batch::{self, BatchConfig, BatchReport, JobResult, MinAvgMax, Observer, Outcome};
use indicatif::{ProgressBar, ProgressStyle};

use crate::timeline_cmd::analyze_log;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ProofType {
    /// PoRep C2 (the only kind the supervisor proves).
    Porep,
}

#[derive(Debug, clap::Args)]
pub struct BatchArgs {
    #[arg(long = "type", value_enum, default_value = "porep")]
    pub proof_type: ProofType,
    /// The C1 file; each job is a copy of it under a unique name.
    #[arg(long)]
    pub c1: PathBuf,
    /// Jobs in all.
    #[arg(long, default_value_t = 1)]
    pub count: usize,
    /// Jobs kept in flight (a new one is dropped in as one finishes).
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// The supervisor's data directory (incoming/, working/, done/, failed/).
    #[arg(long)]
    pub data_dir: PathBuf,
    /// Print the jobs and the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Give up after this many seconds; unfinished jobs count as timed out.
    #[arg(long)]
    pub timeout: Option<f64>,
    /// How often to look at the drop directory, ms (the resolution of the times).
    #[arg(long, default_value_t = 20)]
    pub poll_ms: u64,
    /// Afterwards, analyse this batch's jobs in the supervisor's timeline (as `cuzk-bench
    /// timeline --jobs -b<run-id>-`) and draw their waterfall next to the log.
    #[arg(long)]
    pub timeline: bool,
    /// The timeline log, when not `<data-dir>/timeline.jsonl` (implies --timeline).
    #[arg(long)]
    pub timeline_log: Option<PathBuf>,
}

/// Prints each job as it finishes, above the progress bar.
struct Progress {
    bar: ProgressBar,
    count: usize,
    json: bool,
    done: usize,
    failed: usize,
    started: std::time::Instant,
}

impl Observer for Progress {
    fn finished(&mut self, job: &JobResult) {
        match job.outcome {
            Outcome::Done => self.done += 1,
            _ => self.failed += 1,
        }
        self.bar.inc(1);
        // Rate and ETA from the jobs finished so far (indicatif's own are per second and
        // read 0 until the first job is in; proofs take minutes).
        let finished = self.done + self.failed;
        let elapsed = self.started.elapsed().as_secs_f64();
        let eta = elapsed / finished as f64 * (self.count - finished) as f64;
        self.bar.set_message(format!(
            "{} done, {} failed, {:.2} proofs/min, ETA {:.0} s",
            self.done,
            self.failed,
            self.done as f64 / elapsed * 60.0,
            eta
        ));
        if !self.json {
            // To stdout, with the bar (on stderr) cleared meanwhile; `println` of the bar
            // would drop the line when the bar is hidden (not a terminal).
            let line = job_line(job, self.count);
            self.bar.suspend(|| println!("{line}"));
        }
    }
}

fn job_line(job: &JobResult, count: usize) -> String {
    let secs = |t: Option<f64>| t.map_or("-".into(), |t| format!("{t:.2} s"));
    let head = format!("[{}/{count}] {}", job.index + 1, job.name);
    let times = format!(
        "wall {:.2} s (queue {}, proving {})",
        job.wall_s,
        secs(job.queue_s),
        secs(job.proving_s)
    );
    match job.outcome {
        Outcome::Done => format!("{head}: done, {times}"),
        Outcome::Failed => format!(
            "{head}: FAILED, {times}: {}",
            job.reason.as_deref().unwrap_or("").replace('\n', "; ")
        ),
        Outcome::TimedOut => format!("{head}: timed out, {times}"),
    }
}

pub fn run(args: &BatchArgs) -> Result<ExitCode> {
    let ProofType::Porep = args.proof_type;
    let cfg = BatchConfig {
        c1: args.c1.clone(),
        count: args.count,
        concurrency: args.concurrency,
        data_dir: args.data_dir.clone(),
        timeout: args.timeout.map(Duration::from_secs_f64),
        poll: Duration::from_millis(args.poll_ms.max(1)),
        run_id: BatchConfig::fresh_run_id(),
    };
    if !args.json {
        println!(
            "batch {}: {} x {} through {}, {} in flight",
            cfg.run_id,
            args.count,
            args.c1.display(),
            args.data_dir.display(),
            args.concurrency
        );
    }
    // On stderr, and hidden when stderr is not a terminal: stdout stays clean for --json.
    let bar = ProgressBar::new(args.count as u64);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} jobs: {msg}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar.set_message("rate and ETA after the first job");
    bar.enable_steady_tick(Duration::from_millis(500));
    let mut progress = Progress {
        bar,
        count: args.count,
        json: args.json,
        done: 0,
        failed: 0,
        started: std::time::Instant::now(),
    };
    let report = batch::run(&cfg, &mut progress)?;
    progress.bar.finish_and_clear();
    let timeline = if args.timeline || args.timeline_log.is_some() {
        let log = args
            .timeline_log
            .clone()
            .unwrap_or_else(|| args.data_dir.join("timeline.jsonl"));
        let mut svg = log.file_name().unwrap_or_default().to_os_string();
        svg.push(format!(".b{}.waterfall.svg", cfg.run_id));
        let pattern = format!("-b{}-", cfg.run_id);
        Some(analyze_log(
            &log,
            Some(&pattern),
            &Options::default(),
            Some(&log.with_file_name(svg)),
        )?)
    } else {
        None
    };
    if args.json {
        let mut value = serde_json::to_value(&report)?;
        if let Some(t) = &timeline {
            value["timeline"] = t.to_json()?;
        }
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        print!("{}", summary_text(&report));
        if let Some(t) = &timeline {
            print!("\ntimeline of this batch's jobs\n{}", t.text());
        }
    }
    let all_done = report.summary.done == report.summary.count;
    Ok(if all_done {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

pub fn summary_text(report: &BatchReport) -> String {
    let s = &report.summary;
    let span = |m: Option<MinAvgMax>| {
        m.map_or("-".into(), |m| {
            format!("avg {:.2} s, min {:.2} s, max {:.2} s", m.avg, m.min, m.max)
        })
    };
    let mut out = format!(
        "summary: {} jobs, {} done, {} failed, {} timed out; {} in flight (max seen {})\n",
        s.count, s.done, s.failed, s.timed_out, s.concurrency, s.max_in_flight
    );
    out += &format!("  wall     {}\n", span(s.wall_s));
    out += &format!("  queue    {}\n", span(s.queue_s));
    out += &format!("  proving  {}\n", span(s.proving_s));
    out += &format!(
        "  throughput: {:.3} proofs/min, {} s/proof over {:.2} s\n",
        s.proofs_per_min,
        s.s_per_proof.map_or("-".into(), |t| format!("{t:.2}")),
        s.elapsed_s
    );
    out
}
