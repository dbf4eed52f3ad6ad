//! Test harness: unique names per run, real child processes, and cleanup of every file
//! the run created in /dev/shm and under iceoryx2's root.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use cuzk_shm_layout::{Arena, ArenaConfig, PartitionShape};

pub const ROLE: &str = "CUZK_SHM_TEST_ROLE";

/// Names and paths of one test run. Dropping it removes what the run left behind.
pub struct TestEnv {
    /// Unique token: arena name and iceoryx2 prefix derive from it.
    pub name: String,
    pub dir: PathBuf,
    pub scratch: PathBuf,
}

impl TestEnv {
    pub fn new(tag: &str) -> Self {
        static N: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let name = format!(
            "t{}-{}-{nanos}-{}",
            std::process::id(),
            tag,
            N.fetch_add(1, Ordering::Relaxed)
        );
        let scratch = std::env::temp_dir().join(format!("cuzk-shm-{name}"));
        std::fs::create_dir_all(&scratch).unwrap();
        Self {
            name,
            dir: PathBuf::from("/dev/shm"),
            scratch,
        }
    }

    pub fn iox_prefix(&self) -> String {
        format!("cuzk{}_", self.name.replace('-', "_"))
    }

    pub fn arena_config(&self, shape: PartitionShape, slots: u32) -> ArenaConfig {
        let mut cfg = ArenaConfig::new(&self.name, shape, slots);
        cfg.dir = self.dir.clone();
        cfg
    }

    pub fn create_arena(&self, shape: PartitionShape, slots: u32) -> Arena {
        Arena::create(&self.arena_config(shape, slots)).unwrap()
    }

    pub fn out(&self, name: &str) -> PathBuf {
        self.scratch.join(name)
    }

    /// Starts this test binary again in `role`, with the run's names in the environment.
    pub fn spawn(&self, role: &str, arena: &Path, extra: &[(&str, String)]) -> Child {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args([
            "role_entry",
            "--exact",
            "--nocapture",
            "--test-threads=1",
            "-q",
        ])
        .env(ROLE, role)
        .env("CUZK_ARENA", arena)
        .env("CUZK_IOX_PREFIX", self.iox_prefix())
        .env("CUZK_NAME", &self.name)
        .env("CUZK_SCRATCH", &self.scratch);
        for (k, v) in extra {
            cmd.env(k, v);
        }
        // The child's libtest chatter would bury the parent's; its panics still reach stderr.
        cmd.stdout(std::process::Stdio::null());
        cmd.spawn().unwrap()
    }

    /// Files iceoryx2 created for this run (its prefix is unique to the run), except the
    /// per-prefix `global_mgmt` segment, which iceoryx2 keeps by design (Drop removes it).
    pub fn leaked_iceoryx_files(&self) -> Vec<PathBuf> {
        let mut files = self.iceoryx_files();
        files.retain(|f| !f.to_string_lossy().ends_with("global_mgmt"));
        files
    }

    /// Every file iceoryx2 created for this run.
    pub fn iceoryx_files(&self) -> Vec<PathBuf> {
        let prefix = self.iox_prefix();
        let mut found = vec![];
        let mut stack = vec![PathBuf::from("/dev/shm"), PathBuf::from("/tmp/iceoryx2")];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if e.file_name().to_string_lossy().starts_with(&prefix) {
                    found.push(p);
                }
            }
        }
        found
    }
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.scratch);
        if let Ok(entries) = std::fs::read_dir(&self.dir) {
            for e in entries.flatten() {
                if e.file_name().to_string_lossy().contains(&self.name) {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        for f in self.iceoryx_files() {
            let _ = std::fs::remove_file(f);
        }
    }
}

/// What a child role reads from its environment.
pub struct RoleEnv {
    pub arena: PathBuf,
    pub iox_prefix: String,
    pub name: String,
    pub scratch: PathBuf,
}

impl RoleEnv {
    pub fn from_env() -> Self {
        let var = |k: &str| std::env::var(k).unwrap_or_else(|_| panic!("{k} unset"));
        Self {
            arena: var("CUZK_ARENA").into(),
            iox_prefix: var("CUZK_IOX_PREFIX"),
            name: var("CUZK_NAME"),
            scratch: var("CUZK_SCRATCH").into(),
        }
    }

    pub fn num(&self, k: &str) -> u64 {
        std::env::var(k).unwrap().parse().unwrap()
    }
}

/// Polls `cond` until it holds or `timeout` passes.
pub fn wait_until(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + timeout;
    while Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    cond()
}

/// The bytes a producer writes for partition `p`: a cheap, position-dependent pattern.
pub fn fill_pattern(buf: &mut [u8], p: u64) {
    let mut x = p.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    for chunk in buf.chunks_exact_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        chunk.copy_from_slice(&x.to_le_bytes());
    }
}

/// Checksum computed in place over the mapped bytes.
pub fn checksum(buf: &[u8]) -> u64 {
    buf.chunks_exact(8).fold(0xcbf2_9ce4_8422_2325u64, |h, c| {
        (h ^ u64::from_le_bytes(c.try_into().unwrap())).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Parses lines of whitespace-separated u64s.
pub fn read_records(path: &Path) -> Vec<Vec<u64>> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| l.split_whitespace().map(|w| w.parse().unwrap()).collect())
        .collect()
}
