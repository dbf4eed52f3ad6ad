//! `cuzk-bench synth`: synthetic partitions (a 32 GiB PoRep partition's shape, random
//! witness, synthetic SRS) through the real stage processes, to measure the pipeline at
//! full scale where no sealed 32 GiB sector exists. It starts `cuzk run --synthetic SHAPE`
//! on a data directory of its own, drops the synthetic job files in, shows progress while
//! the partitions go through, and analyses the run's timeline when the supervisor exits.
//! Nothing it proves is a proof: synthetic jobs write a result record, never a proof.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use cuzk_bench::analysis::pairing::Stage;
use cuzk_bench::analysis::Options;
use cuzk_shm_layout::timeline::{names, read_log};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::timeline_cmd::analyze_log;

#[derive(Debug, clap::Args)]
pub struct SynthArgs {
    /// Synthetic partition shape: "32GiB" (a 32 GiB PoRep partition: domain 2^27,
    /// 130,169,893 aux) or "tiny" (the same statistics at test size).
    #[arg(long, default_value = "32GiB")]
    pub shape: String,
    /// Jobs to run, all dropped in at the start.
    #[arg(long, default_value_t = 1)]
    pub jobs: u32,
    /// Partitions per job (a 32 GiB PoRep proof has 10).
    #[arg(long, default_value_t = 10)]
    pub partitions: u32,
    /// A data directory for this run (created; the supervisor's instance lock keeps two
    /// runs apart). Job files, result records, the run's log and timeline go there.
    #[arg(long)]
    pub data_dir: PathBuf,
    /// The `cuzk` binary (default: the one beside cuzk-bench).
    #[arg(long)]
    pub cuzk: Option<PathBuf>,
    /// Give up (SIGTERM to the supervisor) after this many seconds.
    #[arg(long)]
    pub timeout: Option<f64>,
    /// Host-prep leaves out the CPU B_G2 MSM: the run then measures the GPU stage alone
    /// (how it scales over devices) where the host's cores could not keep up with B_G2.
    #[arg(long)]
    pub skip_b_g2: bool,
    /// Print the summary and the analysis as JSON.
    #[arg(long)]
    pub json: bool,
    /// Further arguments for `cuzk run`, after `--` (e.g. `-- --config cuzk.toml --slots 4
    /// --gpu-count 2 --host-prep-count 3`).
    #[arg(last = true)]
    pub run_args: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct SynthSummary {
    pub shape: String,
    pub jobs: u32,
    pub partitions_per_job: u32,
    /// Jobs whose result record is in done/.
    pub jobs_done: usize,
    pub partitions_proved: usize,
    pub wall_s: f64,
    /// The gpu stage's steady time per partition, all processes together (see `steady_rates`).
    pub steady_s_per_partition: Option<f64>,
    /// Each gpu process's own steady time per partition (pid, s); a process restarted
    /// mid-run appears under both pids.
    pub steady_per_gpu_process: Vec<(u32, f64)>,
    pub gpu_processes: usize,
    /// The gpu stage's time per partition (GPU_START to GPU_END).
    pub gpu_p50_ms: Option<f64>,
    pub supervisor_exit: Option<i32>,
}

fn cuzk_binary(args: &SynthArgs) -> Result<PathBuf> {
    if let Some(p) = &args.cuzk {
        return Ok(p.clone());
    }
    let me = std::env::current_exe().context("locating cuzk-bench")?;
    let beside = me.with_file_name("cuzk");
    if !beside.exists() {
        bail!(
            "{}: no cuzk binary beside cuzk-bench (build it: cargo build --release -p cuzk-supervisor, or pass --cuzk)",
            beside.display()
        );
    }
    Ok(beside)
}

/// Writes a job file the way writers must: a dot-name first, then a rename.
fn drop_job(incoming: &Path, name: &str, args: &SynthArgs, seed: u64) -> Result<()> {
    let body = serde_json::json!({
        "synthetic": args.shape,
        "partitions": args.partitions,
        "seed": seed,
        "skip_b_g2": args.skip_b_g2,
    });
    let tmp = incoming.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, serde_json::to_vec(&body)?)
        .with_context(|| format!("{}: writing", tmp.display()))?;
    std::fs::rename(&tmp, incoming.join(name))?;
    Ok(())
}

/// (pid, mono time) of the GPU_END events in the log so far (the log grows while we read
/// it; a torn last line is skipped by `read_log`).
fn gpu_ends(log: &Path) -> Vec<(u32, u64)> {
    read_log(log)
        .map(|(events, _)| {
            events
                .iter()
                .filter(|e| e.event == names::GPU_END)
                .map(|e| (e.pid, e.mono_ns))
                .collect()
        })
        .unwrap_or_default()
}

/// Steady time per partition of the gpu stage as a whole: each gpu process's rate from its
/// first to its last GPU_END ((n − 1) partitions over that time, so its first partition,
/// which carries the start-up, is left out), summed over processes. Per process too.
fn steady_rates(ends: &[(u32, u64)]) -> (Option<f64>, Vec<(u32, f64)>) {
    let mut by_pid: std::collections::BTreeMap<u32, Vec<u64>> = Default::default();
    for &(pid, t) in ends {
        by_pid.entry(pid).or_default().push(t);
    }
    let per: Vec<(u32, f64)> = by_pid
        .into_iter()
        .filter(|(_, t)| t.len() > 1)
        .map(|(pid, t)| {
            let (first, last) = (t.iter().min().unwrap(), t.iter().max().unwrap());
            (pid, (last - first) as f64 / 1e9 / (t.len() - 1) as f64)
        })
        .collect();
    let rate: f64 = per.iter().map(|(_, s)| 1.0 / s).sum();
    ((rate > 0.0).then(|| 1.0 / rate), per)
}

pub fn run(args: &SynthArgs) -> Result<ExitCode> {
    let cuzk = cuzk_binary(args)?;
    let incoming = args.data_dir.join("incoming");
    std::fs::create_dir_all(&incoming)
        .with_context(|| format!("{}: creating", incoming.display()))?;
    let run_id = format!(
        "{:x}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .as_secs()
    );
    let log = args.data_dir.join(format!("synth-{run_id}.timeline.jsonl"));
    let run_log = args.data_dir.join(format!("synth-{run_id}.run.log"));
    let names: Vec<String> = (0..args.jobs)
        .map(|i| format!("synth-{run_id}-{i}.json"))
        .collect();
    for (i, name) in names.iter().enumerate() {
        drop_job(&incoming, name, args, i as u64 + 1)?;
    }
    let total = (args.jobs * args.partitions) as u64;
    let out = std::fs::File::create(&run_log)?;
    let started = Instant::now();
    let mut child = Command::new(&cuzk)
        .arg("run")
        .args(["--synthetic", &args.shape, "--exit-when-idle"])
        .arg("--data-dir")
        .arg(&args.data_dir)
        .arg("--timeline")
        .arg(&log)
        .args(&args.run_args)
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .spawn()
        .with_context(|| format!("starting {}", cuzk.display()))?;

    let bar = ProgressBar::new(total).with_style(
        ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30}] {pos}/{len} partitions on the GPU stage, {per_sec}, ETA {eta}",
        )
        .expect("template")
        .progress_chars("=> "),
    );
    if args.json {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        bar.set_position(gpu_ends(&log).len() as u64);
        if args
            .timeout
            .is_some_and(|t| started.elapsed().as_secs_f64() > t)
        {
            // SIGTERM: the supervisor drains (up to its drain timeout) and stops its stages.
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(child.id() as i32),
                nix::sys::signal::Signal::SIGTERM,
            );
            break child.wait()?;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    let wall_s = started.elapsed().as_secs_f64();
    let ends = gpu_ends(&log);
    bar.set_position(ends.len() as u64);
    bar.finish_and_clear();

    let done = args.data_dir.join("done");
    let jobs_done = names
        .iter()
        .filter(|n| {
            let stem = n.trim_end_matches(".json");
            done.join(format!("{stem}.synthetic.json")).exists()
        })
        .count();
    let analysed = analyze_log(
        &log,
        None,
        &Options::default(),
        Some(&crate::timeline_cmd::default_svg_path(&log)),
    )?;
    let a = &analysed.analysis;
    let (steady, steady_per_gpu_process) = steady_rates(&ends);
    let gpu_p50_ms = a
        .stages
        .iter()
        .find(|s| s.phase == cuzk_bench::analysis::pairing::Phase::Work(Stage::Gpu))
        .and_then(|s| s.durations.as_ref())
        .map(|d| d.p50_ms);
    let summary = SynthSummary {
        shape: args.shape.clone(),
        jobs: args.jobs,
        partitions_per_job: args.partitions,
        jobs_done,
        partitions_proved: ends.len(),
        wall_s,
        steady_s_per_partition: steady,
        steady_per_gpu_process,
        gpu_processes: a.gpus.len(),
        gpu_p50_ms,
        supervisor_exit: status.code(),
    };
    if args.json {
        let mut v = analysed.to_json()?;
        v["synth"] = serde_json::to_value(&summary)?;
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", analysed.text());
        println!(
            "\nsynthetic {}: {}/{} jobs done, {} partitions through the gpu stage in {:.1} s (supervisor start and drain included); steady {} per partition over {} gpu process(es); gpu stage p50 {}",
            summary.shape,
            summary.jobs_done,
            summary.jobs,
            summary.partitions_proved,
            wall_s,
            steady.map_or("-".into(), |s| format!("{s:.3} s")),
            summary.gpu_processes,
            gpu_p50_ms.map_or("-".into(), |m| format!("{m:.1} ms")),
        );
        println!("supervisor log: {}", run_log.display());
    }
    if !status.success() || jobs_done < args.jobs as usize {
        eprintln!(
            "cuzk-bench synth: supervisor {status}, {jobs_done}/{} jobs done; see {}",
            args.jobs,
            run_log.display()
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::steady_rates;

    #[test]
    fn steady_rate_sums_the_processes_and_leaves_out_each_first_partition() {
        let s = 1_000_000_000u64;
        // One process: ends at 10, 13, 16 s -> 3 s per partition.
        let (all, per) = steady_rates(&[(1, 10 * s), (1, 13 * s), (1, 16 * s)]);
        assert_eq!(per, vec![(1, 3.0)]);
        assert!((all.unwrap() - 3.0).abs() < 1e-9);
        // Two processes at 3 s and 6 s per partition: 1/(1/3 + 1/6) = 2 s per partition,
        // however their first ends are offset.
        let ends = [
            (1, 10 * s),
            (1, 13 * s),
            (1, 16 * s),
            (2, 40 * s),
            (2, 46 * s),
        ];
        let (all, per) = steady_rates(&ends);
        assert_eq!(per, vec![(1, 3.0), (2, 6.0)]);
        assert!((all.unwrap() - 2.0).abs() < 1e-9);
        // A process with a single partition has no steady rate.
        assert_eq!(steady_rates(&[(3, s)]), (None, vec![]));
    }
}
