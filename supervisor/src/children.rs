//! The stage processes: started pinned and with the instance's environment, watched,
//! restarted with back-off when they crash, scaled up and down live, stopped on drain.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitid, Id, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

use crate::config::{Config, StageKind};
use crate::placement::Placement;
use crate::topology::Topology;

/// One process position of a stage (stage kind, index): the process in it now, if any,
/// and its restart state.
pub struct Position {
    pub kind: StageKind,
    pub index: usize,
    pub child: Option<Child>,
    pub started: Instant,
    pub restarts: u32,
    backoff: Duration,
    restart_at: Option<Instant>,
    /// Being stopped for a scale-down (not restarted when it exits).
    retiring: bool,
    /// Its last start failed (tried again after the back-off).
    start_failed: bool,
    /// Unexpected exits in a row, each before the process had run `reset_after`, and
    /// the last one's status: a crash loop (a bad environment, a device that cannot be
    /// set up), which holds no slot for the stall watch to see.
    quick_exits: u32,
    last_exit: String,
}

/// A process that exited, for recovery and the log.
pub struct Exited {
    pub kind: StageKind,
    pub index: usize,
    pub pid: u32,
    pub status: std::process::ExitStatus,
    pub expected: bool,
}

pub struct Children {
    positions: Vec<Position>,
    bin_dir: PathBuf,
    env: Vec<(String, String)>,
}

impl Children {
    /// `env`: what every stage gets (arena, iceoryx prefix, timeline, parameter cache).
    pub fn new(env: Vec<(String, String)>) -> Result<Self> {
        let exe = std::env::current_exe().context("locating the cuzk binary")?;
        let bin_dir = exe.parent().map(PathBuf::from).unwrap_or_default();
        Ok(Children {
            positions: Vec::new(),
            bin_dir,
            env,
        })
    }

    /// Stage binaries from `bin_dir` instead of beside this executable (tests).
    #[cfg(test)]
    pub fn with_bin_dir(bin_dir: &std::path::Path, env: Vec<(String, String)>) -> Self {
        Children {
            positions: Vec::new(),
            bin_dir: bin_dir.to_path_buf(),
            env,
        }
    }

    pub fn positions(&self) -> &[Position] {
        &self.positions
    }

    /// Makes the process count of each stage what `config` says: starts the missing ones,
    /// asks the extra ones to finish their slot and exit (SIGTERM). Returns what could not
    /// be started (see [`Self::start_due`]).
    pub fn scale(&mut self, config: &Config, topology: &Topology) -> Vec<anyhow::Error> {
        for kind in StageKind::ALL {
            let want = config.stage(kind).count as usize;
            for index in 0..want {
                if !self
                    .positions
                    .iter()
                    .any(|p| p.kind == kind && p.index == index)
                {
                    self.positions.push(Position {
                        kind,
                        index,
                        child: None,
                        started: Instant::now(),
                        restarts: 0,
                        quick_exits: 0,
                        last_exit: String::new(),
                        backoff: config.restart.initial_backoff,
                        restart_at: Some(Instant::now()),
                        retiring: false,
                        start_failed: false,
                    });
                }
            }
            for p in self.positions.iter_mut().filter(|p| p.kind == kind) {
                p.retiring = p.index >= want;
                if p.retiring {
                    p.restart_at = None;
                    if let Some(child) = &p.child {
                        let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM);
                    }
                }
            }
        }
        self.positions
            .retain(|p| !(p.retiring && p.child.is_none()));
        self.start_due(config, topology)
    }

    /// Starts every position whose (re)start time has come. One that cannot be started
    /// (fork refused under memory pressure, a binary missing in the middle of an upgrade)
    /// is tried again after its back-off, as if it had crashed; the errors come back for
    /// the log.
    pub fn start_due(&mut self, config: &Config, topology: &Topology) -> Vec<anyhow::Error> {
        let now = Instant::now();
        let mut errors = Vec::new();
        for p in &mut self.positions {
            if p.child.is_some() || p.retiring || p.restart_at.is_none_or(|t| t > now) {
                continue;
            }
            match spawn(&self.bin_dir, &self.env, config, topology, p.kind, p.index) {
                Ok(child) => {
                    p.child = Some(child);
                    p.started = now;
                    p.restart_at = None;
                    p.start_failed = false;
                }
                Err(e) => {
                    p.start_failed = true;
                    p.restart_at = Some(now + p.backoff);
                    p.backoff = (p.backoff * 2).min(config.restart.max_backoff);
                    errors.push(e);
                }
            }
        }
        errors
    }

    /// Reaps every exited process and schedules restarts for the unexpected exits.
    ///
    /// `before_reaping` runs for each exited process while it is still a zombie, and its
    /// result comes back beside the exit. A zombie keeps its pid, so what it does by pid
    /// (recovering the slots the process owned, which refuses a live owner) cannot meet
    /// a newcomer that the kernel gave the same pid once it was reaped.
    pub fn reap<R>(
        &mut self,
        config: &Config,
        draining: bool,
        mut before_reaping: impl FnMut(u32) -> R,
    ) -> Vec<(Exited, R)> {
        let mut exited = Vec::new();
        for p in &mut self.positions {
            let Some(child) = &mut p.child else { continue };
            let pid = child.id();
            // Exited? Asked with WNOWAIT, so the answer leaves the zombie in place.
            let probe = waitid(
                Id::Pid(Pid::from_raw(pid as i32)),
                WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT,
            );
            if matches!(probe, Ok(WaitStatus::StillAlive)) {
                continue;
            }
            let before = before_reaping(pid);
            let Ok(Some(status)) = child.try_wait() else {
                continue;
            };
            p.child = None;
            let expected = p.retiring || draining;
            if !expected {
                // Back-off doubles for a process that keeps crashing; one that ran a
                // while starts again from the initial delay.
                if p.started.elapsed() >= config.restart.reset_after {
                    p.backoff = config.restart.initial_backoff;
                    p.quick_exits = 0;
                } else {
                    p.quick_exits += 1;
                }
                p.last_exit = status.to_string();
                p.restart_at = Some(Instant::now() + p.backoff);
                p.backoff = (p.backoff * 2).min(config.restart.max_backoff);
                p.restarts += 1;
            }
            exited.push((
                Exited {
                    kind: p.kind,
                    index: p.index,
                    pid,
                    status,
                    expected,
                },
                before,
            ));
        }
        self.positions
            .retain(|p| !(p.retiring && p.child.is_none()));
        exited
    }

    /// SIGTERM to every process: each finishes the slot it holds and exits.
    pub fn terminate_all(&mut self) {
        for p in &mut self.positions {
            p.restart_at = None;
            if let Some(child) = &p.child {
                let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM);
            }
        }
    }

    /// SIGKILL to every process still running (a drain that overran its time).
    pub fn kill_all(&mut self) {
        for p in &mut self.positions {
            if let Some(child) = &mut p.child {
                let _ = child.kill();
            }
        }
    }

    /// The positions whose processes keep exiting soon after they start (`QUICK_EXITS` in
    /// a row, each within `reset_after`), as a trouble for the status: nothing else shows
    /// a stage that crash-loops while holding no slot.
    pub fn crash_looping(&self, reset_after: Duration) -> Option<anyhow::Error> {
        const QUICK_EXITS: u32 = 3;
        let looping: Vec<String> = self
            .positions
            .iter()
            .filter(|p| p.quick_exits >= QUICK_EXITS && !p.retiring)
            // One that has now run long enough is out of the loop.
            .filter(|p| p.child.is_none() || p.started.elapsed() < reset_after)
            .map(|p| {
                format!(
                    "{} #{} exited {} times in a row within {} s of starting (last: {}; its log says why)",
                    p.kind.as_str(),
                    p.index,
                    p.quick_exits,
                    reset_after.as_secs(),
                    p.last_exit
                )
            })
            .collect();
        (!looping.is_empty()).then(|| anyhow::anyhow!("{}", looping.join("; ")))
    }

    /// Whether a position waits to be started again after its start failed.
    pub fn start_failing(&self) -> bool {
        self.positions.iter().any(|p| p.start_failed && !p.retiring)
    }

    pub fn running(&self) -> usize {
        self.positions.iter().filter(|p| p.child.is_some()).count()
    }
}

fn spawn(
    bin_dir: &std::path::Path,
    env: &[(String, String)],
    config: &Config,
    topology: &Topology,
    kind: StageKind,
    index: usize,
) -> Result<Child> {
    let exe = bin_dir.join(format!("cuzk-{}", kind.as_str()));
    let stage = config.stage(kind);
    let gpu_index = (kind == StageKind::Gpu && !topology.gpus.is_empty()).then_some(index);
    let placement = Placement::for_stage(stage, topology, gpu_index)
        .with_context(|| format!("placing {} {index}", kind.as_str()))?;
    let prepared = placement.prepare()?;
    let mut cmd = Command::new(&exe);
    cmd.envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    if let Some(t) = stage
        .threads
        .or((!placement.cpus.is_empty()).then_some(placement.cpus.len()))
    {
        cmd.env("CUZK_THREADS", t.to_string());
    } else {
        // Not a key of the configuration (`stages.<stage>.threads` is): one in the
        // supervisor's own environment must not reach the stages by inheritance.
        cmd.env_remove("CUZK_THREADS");
    }
    if let Some(i) = gpu_index {
        // The topology lists GPUs by PCI address; CUDA numbers them the same way only
        // with this set.
        cmd.env("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
        cmd.env("CUZK_GPU_DEVICE", i.to_string());
    }
    let supervisor = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs in the child between fork and exec; it only makes
    // async-signal-safe system calls (prctl, getppid, sched_setaffinity, set_mempolicy)
    // on data prepared before the fork, and allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            // A stage never outlives its supervisor: if the supervisor dies (even by
            // SIGKILL) its children die too, and a restarted supervisor starts clean.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Died between the fork and the prctl: no signal will come, and the stage
            // would attach to the next supervisor's arena (the same path) unsupervised.
            // (ESRCH, "no such process": an error that allocates nothing.)
            if libc::getppid() != supervisor {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            prepared.apply()
        });
    }
    cmd.spawn()
        .with_context(|| format!("starting {} (is it built beside cuzk?)", exe.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Overrides;
    use crate::topology::{CpuList, Gpu, NumaNode};

    /// Writes an executable script through a child `sh`, so that no write descriptor of it
    /// is ever open in this process. Tests run side by side in threads: a script written
    /// here could have its descriptor inherited by another test's fork for the moment
    /// before that child execs, and exec of the script then fails with ETXTBSY ("text
    /// file busy"), which made these tests fail now and then in CI.
    fn write_script(path: &std::path::Path, text: &str) {
        let status = Command::new("sh")
            .args([
                "-c",
                "printf '%s' \"$1\" > \"$2\" && chmod 755 \"$2\"",
                "sh",
            ])
            .arg(text)
            .arg(path)
            .status()
            .unwrap();
        assert!(status.success(), "writing {}", path.display());
    }

    /// One NUMA node of one CPU, no GPU.
    fn one_cpu() -> Topology {
        Topology {
            nodes: vec![NumaNode {
                id: 0,
                cpus: "0".parse().unwrap(),
            }],
            gpus: vec![],
        }
    }

    /// The default configuration with one process of each of `kinds` and none of the rest.
    fn only(kinds: &[StageKind]) -> Config {
        let mut config = Config::load_with_gpus(None, &|_| None, &Overrides::default(), 0).unwrap();
        for kind in StageKind::ALL {
            config.stage_mut(kind).count = u32::from(kinds.contains(&kind));
        }
        config
    }

    /// Two GPUs, one on node 0 (one CPU) and one whose node the firmware does not report:
    /// each gpu process gets its own device; the first is pinned to its GPU's node, the
    /// second is not pinned; both get CUDA's device order set to the PCI order the topology
    /// uses. (A GPU on a second node getting that node's CPUs is covered by placement's
    /// tests: a memory policy for a node this machine lacks cannot be applied here.)
    #[test]
    fn one_gpu_process_per_device_pinned_to_its_node() {
        let dir = tempfile::tempdir().unwrap();
        let report = dir.path().join("report");
        std::fs::create_dir_all(&report).unwrap();
        let script = dir.path().join("cuzk-gpu");
        write_script(
            &script,
            &format!(
                "#!/bin/sh\nprintf '%s %s %s\\n' \"$CUDA_DEVICE_ORDER\" \"$(grep Cpus_allowed_list /proc/self/status | cut -f2)\" \"$CUZK_TEST_TAG\" > {}/$CUZK_GPU_DEVICE\n",
                report.display()
            ),
        );
        // Node 0's one CPU: the first this test may run on (a CI cpuset may lack CPU 0).
        let allowed = crate::topology::own_allowed_cpus();
        let cpu = allowed.cpus()[0];
        let topology = Topology {
            nodes: vec![NumaNode {
                id: 0,
                cpus: CpuList::from_iter([cpu]),
            }],
            gpus: vec![
                Gpu {
                    pci_addr: "0000:17:00.0".into(),
                    numa_node: Some(0),
                },
                Gpu {
                    pci_addr: "0000:ca:00.0".into(),
                    numa_node: None,
                },
            ],
        };
        let mut config = Config::load_with_gpus(None, &|_| None, &Overrides::default(), 2).unwrap();
        assert_eq!(
            config.stage(StageKind::Gpu).count,
            2,
            "one gpu process per device by default"
        );
        for kind in [
            StageKind::Synthesis,
            StageKind::HostPrep,
            StageKind::Epilogue,
        ] {
            config.stage_mut(kind).count = 0;
        }
        let env = vec![("CUZK_TEST_TAG".to_string(), "shared-env".to_string())];
        let mut children = Children::with_bin_dir(dir.path(), env);
        let errors = children.scale(&config, &topology);
        assert!(errors.is_empty(), "{errors:?}");
        let until = Instant::now() + Duration::from_secs(10);
        while children.running() > 0 && Instant::now() < until {
            children.reap(&config, true, |_| ());
            std::thread::sleep(Duration::from_millis(20));
        }
        // Each stub wrote: CUDA_DEVICE_ORDER, its allowed CPUs, the shared variable.
        let read = |d: &str| -> (String, CpuList, String) {
            let line = std::fs::read_to_string(report.join(d)).unwrap();
            let f: Vec<&str> = line.split_whitespace().collect();
            (f[0].into(), f[1].parse().unwrap(), f[2].into())
        };
        let expect = |cpus| ("PCI_BUS_ID".to_string(), cpus, "shared-env".to_string());
        assert_eq!(read("0"), expect(CpuList::from_iter([cpu])));
        assert_eq!(read("1"), expect(allowed), "not pinned");
        assert_eq!(
            std::fs::read_dir(&report).unwrap().count(),
            2,
            "never two on one device"
        );
    }

    /// Recovery by pid runs while the exited process is still a zombie: the kernel gives
    /// its pid to no other process before the reap, so a dead slot owner is never taken
    /// for a live newcomer (recovery refuses live owners and would leave its slots busy).
    #[test]
    fn before_reaping_runs_while_the_exited_process_is_a_zombie() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("cuzk-epilogue");
        write_script(&script, "#!/bin/sh\nexit 7\n");
        let topology = one_cpu();
        let config = only(&[StageKind::Epilogue]);
        let mut children = Children::with_bin_dir(dir.path(), vec![]);
        let errors = children.scale(&config, &topology);
        assert!(errors.is_empty(), "{errors:?}");
        let until = Instant::now() + Duration::from_secs(10);
        let mut seen = Vec::new();
        while seen.is_empty() && Instant::now() < until {
            seen = children.reap(&config, true, |pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
                let state = stat.rsplit_once(") ").unwrap().1.chars().next();
                (state, cuzk_shm_layout::recovery::pid_is_dead(pid))
            });
            std::thread::sleep(Duration::from_millis(20));
        }
        let [(exited, (state, dead))] = &seen[..] else {
            panic!("one exit expected, saw {}", seen.len());
        };
        assert_eq!(exited.status.code(), Some(7));
        assert_eq!(*state, Some('Z'), "still a zombie when recovery runs");
        assert!(dead, "recovery must see it dead");
        assert!(
            !std::path::Path::new(&format!("/proc/{}", exited.pid)).exists(),
            "reaped afterwards"
        );
    }

    /// A stage that exits soon after every start is reported while it loops (nothing
    /// else shows it: it holds no slot), naming it and its last exit; one position's loop
    /// is not another's.
    #[test]
    fn a_stage_that_keeps_exiting_at_start_is_reported_as_crash_looping() {
        let dir = tempfile::tempdir().unwrap();
        // Its first process runs past reset_after before exiting; every later one exits
        // at once. The run that lasted starts no loop: three quick exits after it do.
        write_script(
            &dir.path().join("cuzk-epilogue"),
            &format!(
                "#!/bin/sh\n[ -e {0}/ran ] || {{ touch {0}/ran; sleep 1; }}\nexit 7\n",
                dir.path().display()
            ),
        );
        write_script(&dir.path().join("cuzk-synthesis"), "#!/bin/sh\nsleep 30\n");
        let topology = one_cpu();
        let mut config = only(&[StageKind::Epilogue, StageKind::Synthesis]);
        config.restart.initial_backoff = Duration::from_millis(10);
        config.restart.max_backoff = Duration::from_millis(20);
        config.restart.reset_after = Duration::from_millis(500);
        let mut children = Children::with_bin_dir(dir.path(), vec![]);
        assert!(children.scale(&config, &topology).is_empty());
        let until = Instant::now() + Duration::from_secs(20);
        let (mut said, mut exits) = (None, 0);
        while said.is_none() && Instant::now() < until {
            exits += children.reap(&config, false, |_| ()).len();
            children.start_due(&config, &topology);
            said = children.crash_looping(config.restart.reset_after);
            std::thread::sleep(Duration::from_millis(20));
        }
        let said = said.expect("reported within 20 s").to_string();
        assert_eq!(exits, 4, "the long run and three quick exits: {said}");
        assert!(
            said.starts_with("epilogue #0 exited 3 times in a row"),
            "{said}"
        );
        assert!(said.contains("exit status: 7"), "{said}");
        assert!(!said.contains("synthesis"), "{said}");
        children.kill_all();
        children.reap(&config, true, |_| ());
    }
}
