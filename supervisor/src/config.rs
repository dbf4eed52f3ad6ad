//! The `cuzk run` configuration: one TOML file, environment variables, command-line flags.
//!
//! Every key has a default; a key set in the file overrides the default, an environment
//! variable overrides the file, a flag overrides the environment. The names follow one rule:
//!
//! | file key                      | environment variable           | flag                          |
//! |-------------------------------|--------------------------------|-------------------------------|
//! | `slots`                       | `CUZK_SLOTS`                   | `--slots`                     |
//! | `stages.host_prep.count`      | `CUZK_HOST_PREP_COUNT`         | `--host-prep-count`           |
//! | `restart.max_backoff_ms`      | `CUZK_RESTART_MAX_BACKOFF_MS`  | `--restart-max-backoff-ms`    |
//!
//! (`CUZK_` + the key without `stages.`, upper case, `.` as `_`; the flag is the same in
//! lower case with `-`). [`KEYS`] lists every key; `systemd/cuzk.toml` shows each with its
//! default. Relative paths are relative to the supervisor's working directory (`/` under
//! systemd: use absolute paths there).
//!
//! Top-level keys:
//! - `data_dir` (`./cuzk-data`): holds incoming/, working/, done/, failed/ and the timeline.
//! - `param_cache` (`$FIL_PROOFS_PARAMETER_CACHE`, else `/var/tmp/filecoin-proof-parameters`):
//!   the Groth16 parameter files.
//! - `arena_dir` (`/dev/shm`): where the shared-memory arena file is created.
//! - `slots` (2): partition slots in the arena, the bound on partitions in flight.
//! - `sector_size` (`2KiB`): the largest sector size the slots are sized for; a slot sized
//!   for a larger size fits the smaller ones. One of 2KiB, 8MiB, 512MiB, 32GiB, 64GiB.
//! - `trust_params` (false): skip the full parameter file check (subgroup checks).
//! - `timeline` (`<data_dir>/timeline.jsonl`): the JSON-lines timeline log.
//! - `miner_id` (none): the miner actor id (the number of `f01234`) whose sectors this
//!   machine proves, for C1 files whose envelope has no `MinerID` (lotus writes none); a
//!   file's own `MinerID` wins. Without either a file cannot be proved (no prover id).
//! - `b_g2_msm` (`auto`): which stage computes B_G2, the one G2 sum: `gpu` (beside the G1
//!   sums, B_G2 bases resident on the device), `host_prep` (CPU threads of host-prep), or
//!   `auto`: `gpu` when this machine has GPUs, else `host_prep`.
//!
//! `[stages.synthesis]`, `[stages.host_prep]`, `[stages.gpu]`, `[stages.epilogue]`: see
//! [`StageConfig`]. `[restart]`: see [`RestartPolicy`].

mod layer;
mod overrides;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cuzk_c1::proof_type::format_sector_size;
use cuzk_stage_common::BG2Stage;

use crate::placement::MemoryPolicy;
use crate::topology::{CpuList, Topology};
use layer::{Layer, Layers};
pub use overrides::Overrides;

/// The four kinds of stage process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StageKind {
    Synthesis,
    HostPrep,
    Gpu,
    Epilogue,
}

impl StageKind {
    /// In pipeline order.
    pub const ALL: [StageKind; 4] = [
        StageKind::Synthesis,
        StageKind::HostPrep,
        StageKind::Gpu,
        StageKind::Epilogue,
    ];

    /// The name in logs, status and binary names: `synthesis`, `host-prep`, `gpu`, `epilogue`.
    pub fn as_str(self) -> &'static str {
        match self {
            StageKind::Synthesis => "synthesis",
            StageKind::HostPrep => "host-prep",
            StageKind::Gpu => "gpu",
            StageKind::Epilogue => "epilogue",
        }
    }

    /// The name in the configuration file: `[stages.host_prep]`.
    pub fn key(self) -> &'static str {
        match self {
            StageKind::HostPrep => "host_prep",
            other => other.as_str(),
        }
    }
}

/// One stage's processes (`[stages.<name>]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageConfig {
    /// Processes of this stage (default 1; for gpu: one per GPU found, 1 CPU worker when
    /// there is none). At least 1. The gpu stage runs at most one process per GPU.
    pub count: u32,
    /// CPUs its processes may run on, a Linux CPU list (`"0-7,16"`). Default: the CPUs of
    /// `numa_node` when set (for gpu: of its GPU's node), else no pinning.
    pub cpus: Option<CpuList>,
    /// NUMA node its memory comes from. Default: none (for gpu: the GPU's node, when the
    /// firmware reports one).
    pub numa_node: Option<u32>,
    /// `"bind"` (only that node) or `"preferred"` (that node first; default). Used only
    /// with a node.
    pub memory_policy: MemoryPolicy,
    /// Worker threads (rayon) in each process. Default: one per CPU it may run on.
    pub threads: Option<usize>,
}

impl Default for StageConfig {
    fn default() -> Self {
        StageConfig {
            count: 1,
            cpus: None,
            numa_node: None,
            memory_policy: MemoryPolicy::Preferred,
            threads: None,
        }
    }
}

/// How crashed stage processes are restarted (`[restart]`): the first restart waits
/// `initial_backoff`, each further one twice as long up to `max_backoff`; a process that
/// has run for `reset_after` starts again from `initial_backoff` at its next crash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RestartPolicy {
    /// `initial_backoff_ms`, default 500.
    pub initial_backoff: Duration,
    /// `max_backoff_ms`, default 30000; not below `initial_backoff_ms`.
    pub max_backoff: Duration,
    /// `reset_after_s`, default 60.
    pub reset_after: Duration,
}

/// The resolved configuration of `cuzk run`. See the module documentation for each key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub data_dir: PathBuf,
    pub param_cache: PathBuf,
    pub arena_dir: PathBuf,
    pub slots: u32,
    /// Bytes (2048 for 2KiB).
    pub sector_size: u64,
    pub trust_params: bool,
    /// The prover's miner actor id for C1 files that do not carry one.
    pub miner_id: Option<u64>,
    pub timeline: PathBuf,
    /// `b_g2_msm`, `auto` resolved.
    pub b_g2_msm: BG2Stage,
    /// In [`StageKind::ALL`] order; read with [`Config::stage`].
    pub stages: [StageConfig; 4],
    pub restart: RestartPolicy,
}

impl Config {
    pub fn stage(&self, kind: StageKind) -> &StageConfig {
        &self.stages[kind as usize]
    }

    pub fn stage_mut(&mut self, kind: StageKind) -> &mut StageConfig {
        &mut self.stages[kind as usize]
    }

    /// Loads the configuration: defaults < `file` < environment (`env`, e.g.
    /// `&|name| std::env::var(name).ok()`) < `overrides`. The gpu stage's default count
    /// comes from the GPUs in `/sys`.
    pub fn load(
        file: Option<&Path>,
        env: &dyn Fn(&str) -> Option<String>,
        overrides: &Overrides,
    ) -> Result<Config, ConfigError> {
        let gpus_found = Topology::read(Path::new("/sys")).map_or(0, |t| t.gpus.len());
        Config::load_with_gpus(file, env, overrides, gpus_found)
    }

    /// [`Config::load`] with the number of GPUs given (tests; callers that read the
    /// topology themselves).
    pub fn load_with_gpus(
        file: Option<&Path>,
        env: &dyn Fn(&str) -> Option<String>,
        overrides: &Overrides,
        gpus_found: usize,
    ) -> Result<Config, ConfigError> {
        let mut layers = Layers::default();
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                path: path.to_path_buf(),
                source,
            })?;
            let layer: Layer = toml::from_str(&text).map_err(|source| ConfigError::Parse {
                path: path.to_path_buf(),
                source,
            })?;
            layers.merge(layer, |_| Origin::File(path.to_path_buf()));
        }
        layers.merge(Layer::from_env(env)?, |key| Origin::Env(env_var(key)));
        layers.merge(overrides.to_layer(), |key| Origin::Flag(flag(key)));
        layers.resolve(env, gpus_found)
    }
}

/// Where a value came from, for error messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    Default,
    File(PathBuf),
    Env(String),
    Flag(String),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Default => write!(f, "default"),
            Origin::File(path) => write!(f, "config file {}", path.display()),
            Origin::Env(var) => write!(f, "environment variable {var}"),
            Origin::Flag(flag) => write!(f, "flag {flag}"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("read config file {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Syntax, an unknown key, a value of the wrong type: toml's message quotes the line.
    #[error("config file {}: {source}", path.display())]
    Parse {
        path: PathBuf,
        #[source]
        source: toml::de::Error,
    },
    #[error("{origin}: {key} = {value:?}: {reason}")]
    Invalid {
        origin: Origin,
        key: String,
        value: String,
        reason: String,
    },
}

/// Every configuration key, as written in the file.
pub const KEYS: [&str; 32] = [
    "data_dir",
    "param_cache",
    "arena_dir",
    "slots",
    "sector_size",
    "trust_params",
    "miner_id",
    "timeline",
    "b_g2_msm",
    "stages.synthesis.count",
    "stages.synthesis.cpus",
    "stages.synthesis.numa_node",
    "stages.synthesis.memory_policy",
    "stages.synthesis.threads",
    "stages.host_prep.count",
    "stages.host_prep.cpus",
    "stages.host_prep.numa_node",
    "stages.host_prep.memory_policy",
    "stages.host_prep.threads",
    "stages.gpu.count",
    "stages.gpu.cpus",
    "stages.gpu.numa_node",
    "stages.gpu.memory_policy",
    "stages.gpu.threads",
    "stages.epilogue.count",
    "stages.epilogue.cpus",
    "stages.epilogue.numa_node",
    "stages.epilogue.memory_policy",
    "stages.epilogue.threads",
    "restart.initial_backoff_ms",
    "restart.max_backoff_ms",
    "restart.reset_after_s",
];

/// The environment variable of a key: `stages.host_prep.count` → `CUZK_HOST_PREP_COUNT`.
pub fn env_var(key: &str) -> String {
    format!(
        "CUZK_{}",
        key.trim_start_matches("stages.")
            .replace('.', "_")
            .to_uppercase()
    )
}

/// The flag of a key: `stages.host_prep.count` → `--host-prep-count`.
pub fn flag(key: &str) -> String {
    format!(
        "--{}",
        key.trim_start_matches("stages.").replace(['.', '_'], "-")
    )
}

const DEFAULT_PARAM_CACHE: &str = "/var/tmp/filecoin-proof-parameters";

/// `b_g2_msm` as written: a stage, or `auto` (resolved against the GPUs found).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BG2Choice {
    Auto,
    Stage(BG2Stage),
}

impl std::str::FromStr for BG2Choice {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim() {
            "auto" => Ok(BG2Choice::Auto),
            "gpu" => Ok(BG2Choice::Stage(BG2Stage::Gpu)),
            "host_prep" | "host-prep" => Ok(BG2Choice::Stage(BG2Stage::HostPrep)),
            _ => Err("not a B_G2 stage (auto, gpu or host_prep)".to_owned()),
        }
    }
}

impl BG2Choice {
    /// `auto`: on the GPUs when there are any (0.3 s there against 22 s of 6 CPU threads
    /// per 32 GiB partition), else in host-prep (a process of its own beside the CPU
    /// device's G1 work).
    pub fn resolve(self, gpus_found: usize) -> BG2Stage {
        match self {
            BG2Choice::Stage(s) => s,
            BG2Choice::Auto if gpus_found > 0 => BG2Stage::Gpu,
            BG2Choice::Auto => BG2Stage::HostPrep,
        }
    }
}
impl fmt::Display for Config {
    /// The resolved configuration as TOML (for logs and `cuzk status`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "data_dir = {:?}", self.data_dir.display().to_string())?;
        writeln!(
            f,
            "param_cache = {:?}",
            self.param_cache.display().to_string()
        )?;
        writeln!(f, "arena_dir = {:?}", self.arena_dir.display().to_string())?;
        writeln!(f, "slots = {}", self.slots)?;
        writeln!(
            f,
            "sector_size = {:?}",
            format_sector_size(self.sector_size)
        )?;
        writeln!(f, "trust_params = {}", self.trust_params)?;
        if let Some(id) = self.miner_id {
            writeln!(f, "miner_id = {id}")?;
        }
        writeln!(f, "timeline = {:?}", self.timeline.display().to_string())?;
        writeln!(f, "b_g2_msm = {:?}", self.b_g2_msm.as_str())?;
        for kind in StageKind::ALL {
            let stage = self.stage(kind);
            writeln!(f, "\n[stages.{}]\ncount = {}", kind.key(), stage.count)?;
            if let Some(cpus) = &stage.cpus {
                writeln!(f, "cpus = \"{cpus}\"")?;
            }
            if let Some(node) = stage.numa_node {
                writeln!(f, "numa_node = {node}")?;
            }
            writeln!(f, "memory_policy = \"{}\"", stage.memory_policy.as_str())?;
            if let Some(threads) = stage.threads {
                writeln!(f, "threads = {threads}")?;
            }
        }
        writeln!(f, "\n[restart]")?;
        writeln!(
            f,
            "initial_backoff_ms = {}",
            self.restart.initial_backoff.as_millis()
        )?;
        writeln!(
            f,
            "max_backoff_ms = {}",
            self.restart.max_backoff.as_millis()
        )?;
        write!(f, "reset_after_s = {}", self.restart.reset_after.as_secs())
    }
}

#[cfg(test)]
mod tests;
