//! The machine's NUMA nodes, their CPUs and its NVIDIA GPUs, read from sysfs.
//!
//! The sysfs root is a parameter so that tests can describe machines we do not have (two
//! nodes, GPUs on different nodes) as a tree of files in a temp directory.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// A set of CPU numbers, written as Linux writes it (`0-7,16`; empty for no CPU).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuList(Vec<usize>);

#[derive(Debug, thiserror::Error)]
#[error("invalid CPU list {text:?}: {reason}")]
pub struct CpuListError {
    pub text: String,
    pub reason: String,
}

impl CpuList {
    /// The CPUs, ascending, each once.
    pub fn cpus(&self) -> &[usize] {
        &self.0
    }
}

impl FromIterator<usize> for CpuList {
    fn from_iter<I: IntoIterator<Item = usize>>(iter: I) -> Self {
        let mut cpus: Vec<usize> = iter.into_iter().collect();
        cpus.sort_unstable();
        cpus.dedup();
        CpuList(cpus)
    }
}

/// A CPU number no machine we run on reaches (the kernel's own limit, CONFIG_NR_CPUS, is
/// at most 8192): it keeps a typo like `0-99999999` from allocating a huge list.
const MAX_CPU: usize = 8191;

impl FromStr for CpuList {
    type Err = CpuListError;

    /// Comma-separated CPU numbers and inclusive ranges `a-b`; blanks around items are
    /// allowed, an empty string is the empty list.
    fn from_str(text: &str) -> Result<Self, CpuListError> {
        let err = |reason: String| CpuListError {
            text: text.to_owned(),
            reason,
        };
        let number = |s: &str| -> Result<usize, CpuListError> {
            let n: usize = s
                .trim()
                .parse()
                .map_err(|_| err(format!("{:?} is not a CPU number", s.trim())))?;
            if n > MAX_CPU {
                return Err(err(format!("CPU {n} is above {MAX_CPU}")));
            }
            Ok(n)
        };
        let mut cpus = Vec::new();
        for item in text
            .trim()
            .split(',')
            .filter(|item| !item.trim().is_empty())
        {
            match item.split_once('-') {
                Some((first, last)) => {
                    let (first, last) = (number(first)?, number(last)?);
                    if first > last {
                        return Err(err(format!("range {first}-{last} runs backwards")));
                    }
                    cpus.extend(first..=last);
                }
                None => cpus.push(number(item)?),
            }
        }
        Ok(cpus.into_iter().collect())
    }
}

impl fmt::Display for CpuList {
    /// The compact form (`0-3,8`), which parses back to the same list.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0.iter().copied().peekable();
        let mut first_item = true;
        while let Some(start) = rest.next() {
            let mut end = start;
            while rest.peek() == Some(&(end + 1)) {
                end = rest.next().unwrap_or(end);
            }
            let sep = if first_item { "" } else { "," };
            first_item = false;
            if end == start {
                write!(f, "{sep}{start}")?;
            } else {
                write!(f, "{sep}{start}-{end}")?;
            }
        }
        Ok(())
    }
}

/// A NUMA node and the CPUs on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumaNode {
    pub id: u32,
    pub cpus: CpuList,
}

/// An NVIDIA GPU (PCI vendor 0x10de, class VGA 0x0300 or 3D controller 0x0302).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gpu {
    /// `0000:17:00.0`: domain, bus, device, function.
    pub pci_addr: String,
    /// The node its PCI slot hangs off; `None` when the firmware does not say (`-1`).
    pub numa_node: Option<u32>,
}

/// What placement needs to know about the machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    /// Ascending by id.
    pub nodes: Vec<NumaNode>,
    /// Ascending by PCI address. That is CUDA's device order when CUDA_DEVICE_ORDER is
    /// PCI_BUS_ID (and CUDA_VISIBLE_DEVICES is unset), so `gpus[i]` is CUDA device `i`
    /// for a gpu process started that way; CUDA's default order (fastest first) differs.
    pub gpus: Vec<Gpu>,
}

#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    #[error("read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    CpuList {
        path: PathBuf,
        #[source]
        source: CpuListError,
    },
}

const NVIDIA_VENDOR: &str = "0x10de";
/// PCI class codes (base class 03, display) for a VGA-compatible controller and a 3D
/// controller; datacenter GPUs are the latter.
const GPU_CLASSES: [&str; 2] = ["0x0300", "0x0302"];

impl Topology {
    /// Reads `<sysfs_root>/devices/system/node/node*/cpulist` (without NUMA support in the
    /// kernel there is no such directory: then one node 0 holds every CPU of
    /// `<sysfs_root>/devices/system/cpu/online`), and the NVIDIA GPUs among
    /// `<sysfs_root>/bus/pci/devices/*` (none when that directory is absent).
    /// `sysfs_root` is `/sys` on a real machine.
    pub fn read(sysfs_root: &Path) -> Result<Topology, TopologyError> {
        let mut nodes = read_nodes(&sysfs_root.join("devices/system/node"))?;
        if nodes.is_empty() {
            let online = sysfs_root.join("devices/system/cpu/online");
            nodes.push(NumaNode {
                id: 0,
                cpus: read_cpulist(&online)?,
            });
        }
        let gpus = read_gpus(&sysfs_root.join("bus/pci/devices"))?;
        Ok(Topology { nodes, gpus })
    }

    pub fn node(&self, id: u32) -> Option<&NumaNode> {
        self.nodes.iter().find(|node| node.id == id)
    }

    /// Every CPU of every node, ascending.
    pub fn all_cpus(&self) -> CpuList {
        self.nodes
            .iter()
            .flat_map(|node| node.cpus.cpus().iter().copied())
            .collect()
    }
}

fn read_nodes(dir: &Path) -> Result<Vec<NumaNode>, TopologyError> {
    let mut nodes = Vec::new();
    for (name, path) in list_dir(dir)? {
        let Some(id) = name
            .strip_prefix("node")
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue; // online, possible, has_cpu, ...: masks, not nodes
        };
        nodes.push(NumaNode {
            id,
            cpus: read_cpulist(&path.join("cpulist"))?,
        });
    }
    nodes.sort_by_key(|node| node.id);
    Ok(nodes)
}

fn read_gpus(dir: &Path) -> Result<Vec<Gpu>, TopologyError> {
    let mut gpus = Vec::new();
    for (pci_addr, path) in list_dir(dir)? {
        // Unreadable attributes (a device going away) make it not a GPU rather than an error.
        let attr = |file: &str| std::fs::read_to_string(path.join(file)).unwrap_or_default();
        let class = attr("class");
        if attr("vendor").trim() != NVIDIA_VENDOR
            || !GPU_CLASSES.iter().any(|c| class.trim().starts_with(c))
        {
            continue;
        }
        let numa_node = attr("numa_node").trim().parse::<u32>().ok(); // -1: unknown
        gpus.push(Gpu {
            pci_addr,
            numa_node,
        });
    }
    // Fixed-width lowercase hex fields: string order is numeric order.
    gpus.sort_by(|a, b| a.pci_addr.cmp(&b.pci_addr));
    Ok(gpus)
}

/// The entries of `dir` as (name, path); none when `dir` does not exist.
fn list_dir(dir: &Path) -> Result<Vec<(String, PathBuf)>, TopologyError> {
    let read_err = |source| TopologyError::Read {
        path: dir.to_path_buf(),
        source,
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(read_err(err)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(read_err)?;
        out.push((
            entry.file_name().to_string_lossy().into_owned(),
            entry.path(),
        ));
    }
    Ok(out)
}

fn read_cpulist(path: &Path) -> Result<CpuList, TopologyError> {
    let text = std::fs::read_to_string(path).map_err(|source| TopologyError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    text.parse().map_err(|source| TopologyError::CpuList {
        path: path.to_path_buf(),
        source,
    })
}

/// The CPUs this test process may run on (`Cpus_allowed_list`): a container's cpuset can
/// be narrower than what /sys lists.
#[cfg(test)]
pub(crate) fn own_allowed_cpus() -> CpuList {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn pci(root: &Path, addr: &str, vendor: &str, class: &str, node: &str) {
        let dir = format!("bus/pci/devices/{addr}");
        write(root, &format!("{dir}/vendor"), &format!("{vendor}\n"));
        write(root, &format!("{dir}/class"), &format!("{class}\n"));
        write(root, &format!("{dir}/numa_node"), &format!("{node}\n"));
    }

    fn list(text: &str) -> CpuList {
        text.parse().unwrap()
    }

    #[test]
    fn cpu_lists_parse_and_print() {
        assert_eq!(list("0-3,8").cpus(), [0, 1, 2, 3, 8]);
        assert_eq!(list(" 8, 0-1 ,1\n").cpus(), [0, 1, 8]);
        assert_eq!(list("").cpus(), [] as [usize; 0]);
        assert_eq!(list("\n").to_string(), "");
        assert_eq!(list("0-7,16,18-19").to_string(), "0-7,16,18-19");
        assert_eq!(list("5").to_string(), "5");
    }

    #[test]
    fn bad_cpu_lists_say_why() {
        for (text, why) in [
            ("0-", "\"\" is not a CPU number"),
            ("a", "\"a\" is not a CPU number"),
            ("7-3", "runs backwards"),
            ("0-99999999", "above"),
            ("-1", "is not a CPU number"),
        ] {
            let err = text.parse::<CpuList>().unwrap_err().to_string();
            assert!(err.contains(why) && err.contains(text), "{text}: {err}");
        }
    }

    #[test]
    fn two_nodes_with_a_gpu_on_each() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        write(root, "devices/system/node/node0/cpulist", "0-3,8-11\n");
        write(root, "devices/system/node/node1/cpulist", "4-7,12-15\n");
        write(root, "devices/system/node/online", "0-1\n");
        write(root, "devices/system/cpu/online", "0-15\n");
        // Listed out of order on purpose; a NIC and an NVIDIA audio function are not GPUs.
        pci(root, "0000:b1:00.0", "0x10de", "0x030200", "1");
        pci(root, "0000:17:00.0", "0x10de", "0x030000", "0");
        pci(root, "0000:17:00.1", "0x10de", "0x040300", "0");
        pci(root, "0000:3b:00.0", "0x15b3", "0x020000", "0");

        let topology = Topology::read(root).unwrap();
        assert_eq!(
            topology.nodes,
            [
                NumaNode {
                    id: 0,
                    cpus: list("0-3,8-11")
                },
                NumaNode {
                    id: 1,
                    cpus: list("4-7,12-15")
                },
            ]
        );
        assert_eq!(
            topology.gpus,
            [
                Gpu {
                    pci_addr: "0000:17:00.0".into(),
                    numa_node: Some(0)
                },
                Gpu {
                    pci_addr: "0000:b1:00.0".into(),
                    numa_node: Some(1)
                },
            ]
        );
        assert_eq!(topology.all_cpus(), list("0-15"));
        assert_eq!(topology.node(1).unwrap().cpus, list("4-7,12-15"));
        assert!(topology.node(2).is_none());
    }

    #[test]
    fn without_node_directories_one_node_holds_the_online_cpus() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        write(root, "devices/system/cpu/online", "0-5\n");
        pci(root, "0000:01:00.0", "0x10de", "0x030200", "-1");
        let topology = Topology::read(root).unwrap();
        assert_eq!(
            topology.nodes,
            [NumaNode {
                id: 0,
                cpus: list("0-5")
            }]
        );
        assert_eq!(
            topology.gpus,
            [Gpu {
                pci_addr: "0000:01:00.0".into(),
                numa_node: None
            }]
        );
    }

    #[test]
    fn a_bad_cpulist_names_the_file() {
        let root = tempfile::tempdir().unwrap();
        write(root.path(), "devices/system/node/node0/cpulist", "0-x\n");
        let err = Topology::read(root.path()).unwrap_err().to_string();
        assert!(
            err.contains("node0/cpulist") && err.contains("\"x\""),
            "{err}"
        );
    }

    #[test]
    fn this_machine_has_at_least_one_node_with_cpus() {
        let topology = Topology::read(Path::new("/sys")).unwrap();
        assert!(!topology.nodes.is_empty());
        assert!(!topology.all_cpus().cpus().is_empty());
    }
}
