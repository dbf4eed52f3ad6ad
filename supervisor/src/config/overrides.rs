//! `cuzk run` flags: one optional flag per configuration key.

use std::path::PathBuf;

use cuzk_c1::proof_type::parse_sector_size;

use super::layer::{Layer, RestartLayer, SectorSize, StageLayer, StagesLayer};
use super::BG2Choice;
use crate::placement::MemoryPolicy;
use crate::topology::CpuList;

/// Command-line overrides, one optional flag per key (see the module documentation).
#[derive(Clone, Debug, Default, clap::Args)]
#[command(next_help_heading = "Configuration (overrides the file and CUZK_* variables)")]
pub struct Overrides {
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    #[arg(long, value_name = "DIR")]
    pub param_cache: Option<PathBuf>,
    #[arg(long, value_name = "DIR")]
    pub arena_dir: Option<PathBuf>,
    #[arg(long, value_name = "N")]
    pub slots: Option<u32>,
    /// 2KiB, 8MiB, 512MiB, 32GiB or 64GiB.
    #[arg(long, value_name = "SIZE", value_parser = sector_size_arg)]
    pub sector_size: Option<u64>,
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub trust_params: Option<bool>,
    /// The miner actor id for C1 files without a MinerID (1234 for f01234).
    #[arg(long, value_name = "ID")]
    pub miner_id: Option<u64>,
    #[arg(long, value_name = "FILE")]
    pub timeline: Option<PathBuf>,
    /// auto, gpu or host_prep.
    #[arg(long, value_name = "STAGE")]
    pub b_g2_msm: Option<BG2Choice>,

    #[arg(long, value_name = "N")]
    pub synthesis_count: Option<u32>,
    #[arg(long, value_name = "CPUS")]
    pub synthesis_cpus: Option<CpuList>,
    #[arg(long, value_name = "NODE")]
    pub synthesis_numa_node: Option<u32>,
    #[arg(long, value_name = "POLICY")]
    pub synthesis_memory_policy: Option<MemoryPolicy>,
    #[arg(long, value_name = "N")]
    pub synthesis_threads: Option<usize>,

    #[arg(long, value_name = "N")]
    pub host_prep_count: Option<u32>,
    #[arg(long, value_name = "CPUS")]
    pub host_prep_cpus: Option<CpuList>,
    #[arg(long, value_name = "NODE")]
    pub host_prep_numa_node: Option<u32>,
    #[arg(long, value_name = "POLICY")]
    pub host_prep_memory_policy: Option<MemoryPolicy>,
    #[arg(long, value_name = "N")]
    pub host_prep_threads: Option<usize>,

    #[arg(long, value_name = "N")]
    pub gpu_count: Option<u32>,
    #[arg(long, value_name = "CPUS")]
    pub gpu_cpus: Option<CpuList>,
    #[arg(long, value_name = "NODE")]
    pub gpu_numa_node: Option<u32>,
    #[arg(long, value_name = "POLICY")]
    pub gpu_memory_policy: Option<MemoryPolicy>,
    #[arg(long, value_name = "N")]
    pub gpu_threads: Option<usize>,

    #[arg(long, value_name = "N")]
    pub epilogue_count: Option<u32>,
    #[arg(long, value_name = "CPUS")]
    pub epilogue_cpus: Option<CpuList>,
    #[arg(long, value_name = "NODE")]
    pub epilogue_numa_node: Option<u32>,
    #[arg(long, value_name = "POLICY")]
    pub epilogue_memory_policy: Option<MemoryPolicy>,
    #[arg(long, value_name = "N")]
    pub epilogue_threads: Option<usize>,

    #[arg(long, value_name = "MS")]
    pub restart_initial_backoff_ms: Option<u64>,
    #[arg(long, value_name = "MS")]
    pub restart_max_backoff_ms: Option<u64>,
    #[arg(long, value_name = "S")]
    pub restart_reset_after_s: Option<u64>,
}

pub(super) fn sector_size_arg(text: &str) -> Result<u64, String> {
    parse_sector_size(text).ok_or_else(|| SECTOR_SIZES.to_owned())
}

pub(super) const SECTOR_SIZES: &str =
    "not a supported sector size (2KiB, 8MiB, 512MiB, 32GiB, 64GiB)";

impl Overrides {
    pub(super) fn to_layer(&self) -> Layer {
        let o = self.clone();
        let stage = |count, cpus, numa_node, memory_policy, threads| StageLayer {
            count,
            cpus,
            numa_node,
            memory_policy,
            threads,
        };
        Layer {
            data_dir: o.data_dir,
            param_cache: o.param_cache,
            arena_dir: o.arena_dir,
            slots: o.slots,
            sector_size: o.sector_size.map(SectorSize),
            trust_params: o.trust_params,
            miner_id: o.miner_id,
            timeline: o.timeline,
            b_g2_msm: o.b_g2_msm,
            stages: StagesLayer {
                synthesis: stage(
                    o.synthesis_count,
                    o.synthesis_cpus,
                    o.synthesis_numa_node,
                    o.synthesis_memory_policy,
                    o.synthesis_threads,
                ),
                host_prep: stage(
                    o.host_prep_count,
                    o.host_prep_cpus,
                    o.host_prep_numa_node,
                    o.host_prep_memory_policy,
                    o.host_prep_threads,
                ),
                gpu: stage(
                    o.gpu_count,
                    o.gpu_cpus,
                    o.gpu_numa_node,
                    o.gpu_memory_policy,
                    o.gpu_threads,
                ),
                epilogue: stage(
                    o.epilogue_count,
                    o.epilogue_cpus,
                    o.epilogue_numa_node,
                    o.epilogue_memory_policy,
                    o.epilogue_threads,
                ),
            },
            restart: RestartLayer {
                initial_backoff_ms: o.restart_initial_backoff_ms,
                max_backoff_ms: o.restart_max_backoff_ms,
                reset_after_s: o.restart_reset_after_s,
            },
        }
    }
}
