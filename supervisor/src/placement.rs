//! Where a stage process runs: its CPUs and the NUMA node its memory comes from.
//!
//! Resolved in the supervisor from the stage's configuration and the machine's topology
//! ([`Placement::for_stage`]), turned into fixed-size kernel masks ([`Placement::prepare`])
//! and applied in the child between fork and exec ([`PreparedPlacement::apply`], from a
//! `pre_exec` hook): affinity and memory policy are inherited across exec, so the stage's
//! first allocation already lands on its node.

#![deny(unsafe_op_in_unsafe_fn)]

use std::io;

use nix::sched::{sched_setaffinity, CpuSet};
use nix::unistd::Pid;
use serde::Deserialize;

use crate::config::StageConfig;
use crate::topology::{CpuList, Topology};

/// How strictly a stage's memory stays on its node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum MemoryPolicy {
    /// Only the node: an allocation the node cannot satisfy fails (the OOM killer).
    Bind,
    /// The node first, other nodes when it is full.
    #[default]
    Preferred,
}

impl MemoryPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryPolicy::Bind => "bind",
            MemoryPolicy::Preferred => "preferred",
        }
    }
}

/// A stage process's placement. Empty `cpus`: no affinity is set (the process inherits the
/// supervisor's); no `numa_node`: no memory policy is set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    pub cpus: Vec<usize>,
    pub numa_node: Option<u32>,
    pub policy: MemoryPolicy,
}

#[derive(Debug, thiserror::Error)]
pub enum PlacementError {
    #[error("NUMA node {node} does not exist (nodes here: {known})")]
    NoSuchNode { node: u32, known: String },
    #[error("CPU {cpu} is not on this machine (CPUs here: {known})")]
    NoSuchCpu { cpu: usize, known: CpuList },
    #[error("GPU index {index}, but {count} GPUs were found")]
    NoSuchGpu { index: usize, count: usize },
    #[error("CPU {cpu} is beyond the {max} CPUs an affinity mask holds")]
    CpuBeyondMask { cpu: usize, max: usize },
    #[error("NUMA node {node} is beyond the {max} nodes a memory policy mask holds")]
    NodeBeyondMask { node: u32, max: usize },
}

impl Placement {
    /// The placement of one process of a stage:
    /// - node: the stage's `numa_node`; else, for a gpu process (`gpu_index`), the node of
    ///   that GPU (`None` when the firmware does not say, or when the machine has no GPU and
    ///   the gpu stage runs on the CPU);
    /// - CPUs: the stage's `cpus`; else all CPUs of the node; else none (no pinning);
    /// - policy: the stage's `memory_policy`, used only when there is a node.
    ///
    /// Every node and CPU named must exist in `topology`.
    pub fn for_stage(
        stage: &StageConfig,
        topology: &Topology,
        gpu_index: Option<usize>,
    ) -> Result<Placement, PlacementError> {
        let gpu_node = match gpu_index {
            Some(index) if !topology.gpus.is_empty() => {
                let gpu = topology.gpus.get(index).ok_or(PlacementError::NoSuchGpu {
                    index,
                    count: topology.gpus.len(),
                })?;
                gpu.numa_node
            }
            _ => None,
        };
        let numa_node = stage.numa_node.or(gpu_node);
        let node_cpus = match numa_node {
            Some(id) => match topology.node(id) {
                Some(node) => Some(node.cpus.cpus().to_vec()),
                None => {
                    let ids: Vec<String> =
                        topology.nodes.iter().map(|n| n.id.to_string()).collect();
                    return Err(PlacementError::NoSuchNode {
                        node: id,
                        known: ids.join(","),
                    });
                }
            },
            None => None,
        };
        let cpus = match &stage.cpus {
            Some(list) => {
                let known = topology.all_cpus();
                if let Some(&cpu) = list.cpus().iter().find(|cpu| !known.cpus().contains(cpu)) {
                    return Err(PlacementError::NoSuchCpu { cpu, known });
                }
                list.cpus().to_vec()
            }
            None => node_cpus.unwrap_or_default(),
        };
        Ok(Placement {
            cpus,
            numa_node,
            policy: stage.memory_policy,
        })
    }

    /// The kernel masks, built here (allocation allowed) so that applying them after fork
    /// allocates nothing.
    pub fn prepare(&self) -> Result<PreparedPlacement, PlacementError> {
        let cpus = if self.cpus.is_empty() {
            None
        } else {
            let mut set = CpuSet::new();
            for &cpu in &self.cpus {
                set.set(cpu).map_err(|_| PlacementError::CpuBeyondMask {
                    cpu,
                    max: CpuSet::count(),
                })?;
            }
            Some(set)
        };
        let memory = match self.numa_node {
            None => None,
            Some(node) => {
                let mut mask = [0 as libc::c_ulong; NODE_MASK_WORDS];
                let (word, bit) = (node as usize / WORD_BITS, node as usize % WORD_BITS);
                let slot = mask.get_mut(word).ok_or(PlacementError::NodeBeyondMask {
                    node,
                    max: MAX_NODES,
                })?;
                *slot |= 1 << bit;
                let mode = match self.policy {
                    MemoryPolicy::Bind => MPOL_BIND,
                    MemoryPolicy::Preferred => MPOL_PREFERRED,
                };
                Some((mode, mask))
            }
        };
        Ok(PreparedPlacement { cpus, memory })
    }
}

// From <linux/mempolicy.h>; the libc crate does not export them.
const MPOL_PREFERRED: libc::c_int = 1;
const MPOL_BIND: libc::c_int = 2;
const WORD_BITS: usize = libc::c_ulong::BITS as usize;
/// Nodes a mask holds: the kernel's largest MAX_NUMNODES (NODES_SHIFT 10).
const MAX_NODES: usize = 1024;
const NODE_MASK_WORDS: usize = MAX_NODES / WORD_BITS;

/// A [`Placement`] as fixed-size masks: `Copy`, no heap, ready for a `pre_exec` hook.
#[derive(Clone, Copy, Debug)]
pub struct PreparedPlacement {
    cpus: Option<CpuSet>,
    memory: Option<(libc::c_int, [libc::c_ulong; NODE_MASK_WORDS])>,
}

impl PreparedPlacement {
    /// Sets the calling thread's CPU affinity and memory policy. Between fork and exec the
    /// child has one thread, so that is the whole process, and exec keeps both.
    /// Async-signal-safe: two system calls, no allocation, no lock.
    pub fn apply(&self) -> io::Result<()> {
        if let Some(set) = &self.cpus {
            sched_setaffinity(Pid::from_raw(0), set)
                .map_err(|errno| io::Error::from_raw_os_error(errno as i32))?;
        }
        if let Some((mode, mask)) = &self.memory {
            // The kernel reads maxnode - 1 bits (numactl passes size + 1 the same way).
            let maxnode = (MAX_NODES + 1) as libc::c_ulong;
            // SAFETY: set_mempolicy(mode, nodemask, maxnode) reads (maxnode - 1) bits from
            // `mask`, which holds exactly MAX_NODES bits and lives across the call.
            let rc =
                unsafe { libc::syscall(libc::SYS_set_mempolicy, *mode, mask.as_ptr(), maxnode) };
            if rc != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{Gpu, NumaNode};
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    fn two_nodes() -> Topology {
        Topology {
            nodes: vec![
                NumaNode {
                    id: 0,
                    cpus: "0-3".parse().unwrap(),
                },
                NumaNode {
                    id: 1,
                    cpus: "4-7".parse().unwrap(),
                },
            ],
            gpus: vec![
                Gpu {
                    pci_addr: "0000:17:00.0".into(),
                    numa_node: Some(0),
                },
                Gpu {
                    pci_addr: "0000:b1:00.0".into(),
                    numa_node: Some(1),
                },
            ],
        }
    }

    fn stage() -> StageConfig {
        StageConfig::default()
    }

    #[test]
    fn nothing_configured_pins_nothing() {
        let placement = Placement::for_stage(&stage(), &two_nodes(), None).unwrap();
        assert_eq!(placement.cpus, [] as [usize; 0]);
        assert_eq!(placement.numa_node, None);
    }

    #[test]
    fn a_node_brings_its_cpus() {
        let config = StageConfig {
            numa_node: Some(1),
            memory_policy: MemoryPolicy::Bind,
            ..stage()
        };
        let placement = Placement::for_stage(&config, &two_nodes(), None).unwrap();
        assert_eq!(
            placement,
            Placement {
                cpus: vec![4, 5, 6, 7],
                numa_node: Some(1),
                policy: MemoryPolicy::Bind
            }
        );
    }

    #[test]
    fn a_gpu_process_follows_its_gpu_unless_told_otherwise() {
        let topology = two_nodes();
        let placement = Placement::for_stage(&stage(), &topology, Some(1)).unwrap();
        assert_eq!(
            (placement.numa_node, placement.cpus.clone()),
            (Some(1), vec![4, 5, 6, 7])
        );
        let config = StageConfig {
            numa_node: Some(0),
            cpus: Some("2".parse().unwrap()),
            ..stage()
        };
        let placement = Placement::for_stage(&config, &topology, Some(1)).unwrap();
        assert_eq!((placement.numa_node, placement.cpus), (Some(0), vec![2]));
        let err = Placement::for_stage(&stage(), &topology, Some(2)).unwrap_err();
        assert!(
            matches!(err, PlacementError::NoSuchGpu { index: 2, count: 2 }),
            "{err}"
        );
    }

    #[test]
    fn without_gpus_the_gpu_stage_is_not_tied_to_a_node() {
        let topology = Topology {
            gpus: vec![],
            ..two_nodes()
        };
        let placement = Placement::for_stage(&stage(), &topology, Some(0)).unwrap();
        assert_eq!(placement.numa_node, None);
    }

    #[test]
    fn unknown_nodes_and_cpus_are_errors() {
        let config = StageConfig {
            numa_node: Some(2),
            ..stage()
        };
        let err = Placement::for_stage(&config, &two_nodes(), None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("node 2") && err.contains("0,1"), "{err}");
        let config = StageConfig {
            cpus: Some("6-9".parse().unwrap()),
            ..stage()
        };
        let err = Placement::for_stage(&config, &two_nodes(), None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("CPU 8") && err.contains("0-7"), "{err}");
    }

    #[test]
    fn masks_beyond_the_kernel_limits_are_errors() {
        let placement = Placement {
            cpus: vec![100_000],
            numa_node: None,
            policy: MemoryPolicy::Bind,
        };
        assert!(matches!(
            placement.prepare(),
            Err(PlacementError::CpuBeyondMask { .. })
        ));
        let placement = Placement {
            cpus: vec![],
            numa_node: Some(5000),
            policy: MemoryPolicy::Bind,
        };
        assert!(matches!(
            placement.prepare(),
            Err(PlacementError::NodeBeyondMask { .. })
        ));
    }

    /// The memory policy of the calling thread, by get_mempolicy(2).
    fn current_policy() -> io::Result<(libc::c_int, libc::c_ulong)> {
        let mut mode: libc::c_int = -1;
        let mut mask = [0 as libc::c_ulong; NODE_MASK_WORDS];
        // SAFETY: get_mempolicy writes one int to `mode` and (maxnode - 1) bits to `mask`,
        // which holds MAX_NODES bits; addr 0 and flags 0 ask for the thread's policy.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_get_mempolicy,
                &mut mode as *mut libc::c_int,
                mask.as_mut_ptr(),
                (MAX_NODES + 1) as libc::c_ulong,
                0usize,
                0usize,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((mode, mask[0]))
    }

    /// Runs `grep Cpus_allowed_list /proc/self/status` in a child placed by `placement`;
    /// the hook also checks the memory policy from inside the child (it fails the spawn
    /// when the policy is not what was asked).
    fn run_placed(placement: &Placement) -> String {
        let prepared = placement.prepare().unwrap();
        let expected = placement.numa_node.map(|node| {
            let mode = match placement.policy {
                MemoryPolicy::Bind => MPOL_BIND,
                MemoryPolicy::Preferred => MPOL_PREFERRED,
            };
            (mode, 1 << node)
        });
        let mut command = Command::new("grep");
        command.args(["Cpus_allowed_list", "/proc/self/status"]);
        // SAFETY: the hook only makes system calls (apply, get_mempolicy) and compares
        // integers: no allocation or lock in the forked child.
        unsafe {
            command.pre_exec(move || {
                prepared.apply()?;
                if let Some(expected) = expected {
                    if current_policy()? != expected {
                        return Err(io::Error::from_raw_os_error(libc::EPROTO));
                    }
                }
                Ok(())
            });
        }
        let output = command.output().unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).unwrap()
    }

    #[test]
    fn a_one_cpu_placement_pins_the_child() {
        let last_cpu = *crate::topology::own_allowed_cpus().cpus().last().unwrap();
        let before = std::fs::read_to_string("/proc/self/status").unwrap();
        for policy in [MemoryPolicy::Bind, MemoryPolicy::Preferred] {
            let placement = Placement {
                cpus: vec![last_cpu],
                numa_node: Some(0),
                policy,
            };
            let status = run_placed(&placement);
            assert_eq!(
                status.trim(),
                format!("Cpus_allowed_list:\t{last_cpu}"),
                "{policy:?}"
            );
        }
        let after = std::fs::read_to_string("/proc/self/status").unwrap();
        let allowed = |status: &str| {
            status
                .lines()
                .find(|l| l.starts_with("Cpus_allowed_list"))
                .map(str::to_owned)
        };
        assert_eq!(
            allowed(&after),
            allowed(&before),
            "the parent is not placed"
        );
    }
}
