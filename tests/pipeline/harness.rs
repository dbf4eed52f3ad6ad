//! A real `cuzk run` in a scratch data directory, with its own arena directory under
//! /dev/shm, driven like an operator would: files renamed into incoming/, signals, and
//! `status.json`; the arena is read directly to catch a stage while it holds a slot.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cuzk_shm_layout::{Arena, SlotState};
use serde_json::Value;

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(name)
}

pub fn param_cache() -> PathBuf {
    std::env::var_os("CUZK_TEST_PARAM_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/cuzk-test-params"))
}

/// A parameter cache of its own holding links to the test cache's 2 KiB Groth16 files
/// (`.params`, `.vk`, `.meta`) and nothing else (no inner-product SRS), for tests that
/// take files away from it.
pub fn linked_param_cache() -> tempfile::TempDir {
    let cache = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(param_cache()).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("v28-stacked-proof-of-replication") {
            std::os::unix::fs::symlink(entry.path(), cache.path().join(&name)).unwrap();
        }
    }
    cache
}

pub struct Pipeline {
    pub scratch: tempfile::TempDir,
    pub data: PathBuf,
    pub arena_dir: PathBuf,
    pub config: PathBuf,
    pub child: Option<Child>,
    runs: u32,
}

impl Pipeline {
    /// A scratch instance; `config` is the TOML written to its config file.
    pub fn new(config: &str) -> Pipeline {
        let scratch = tempfile::tempdir().unwrap();
        let data = scratch.path().join("data");
        let arena_dir = PathBuf::from(format!(
            "/dev/shm/cuzk-test-{}-{}",
            std::process::id(),
            scratch.path().file_name().unwrap().to_string_lossy()
        ));
        std::fs::create_dir_all(&arena_dir).unwrap();
        let p = Pipeline {
            config: scratch.path().join("cuzk.toml"),
            scratch,
            data,
            arena_dir,
            child: None,
            runs: 0,
        };
        p.write_config(config);
        p
    }

    pub fn write_config(&self, extra: &str) {
        self.write_config_with_cache(&param_cache(), extra);
    }

    /// `write_config` with another parameter cache (see [`linked_param_cache`]).
    pub fn write_config_with_cache(&self, cache: &Path, extra: &str) {
        let text = format!(
            "data_dir = {:?}\nparam_cache = {:?}\narena_dir = {:?}\ntrust_params = true\n{extra}\n",
            self.data, cache, self.arena_dir
        );
        std::fs::write(&self.config, text).unwrap();
    }

    /// Starts `cuzk run`; its output goes to `run-<n>.log` in the scratch directory.
    pub fn start(&mut self, extra: &[&str]) {
        self.start_with_env(extra, &[]);
    }

    /// `start` with these variables in the environment of `cuzk run` (and so its stages).
    pub fn start_with_env(&mut self, extra: &[&str], env: &[(&str, &str)]) {
        self.runs += 1;
        let log = std::fs::File::create(self.log_path(self.runs)).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_cuzk"))
            .arg("run")
            .arg("--config")
            .arg(&self.config)
            .args(extra)
            .envs(env.iter().copied())
            .env_remove("FIL_PROOFS_PARAMETER_CACHE")
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log))
            .spawn()
            .expect("starting cuzk run");
        self.child = Some(child);
        self.wait_for("status.json from this run", Duration::from_secs(120), |p| {
            p.status()
                .is_some_and(|s| s["pid"].as_u64() == Some(p.pid() as u64))
        });
    }

    pub fn log_path(&self, run: u32) -> PathBuf {
        self.scratch.path().join(format!("run-{run}.log"))
    }

    pub fn logs(&self) -> String {
        (1..=self.runs)
            .map(|r| std::fs::read_to_string(self.log_path(r)).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n----\n")
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    pub fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on our own child's pid.
        assert_eq!(unsafe { libc::kill(self.pid() as i32, sig) }, 0);
    }

    /// Waits for the supervisor to exit; returns its exit code.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<i32> {
        let child = self.child.as_mut().expect("running");
        let until = Instant::now() + timeout;
        while Instant::now() < until {
            if let Some(status) = child.try_wait().unwrap() {
                self.child = None;
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("cuzk run did not exit in {timeout:?}\n{}", self.logs());
    }

    /// Drops a C1 into incoming/ as writers must: temp name, then rename.
    pub fn submit(&self, source: &Path, name: &str) {
        let incoming = self.data.join("incoming");
        std::fs::create_dir_all(&incoming).unwrap();
        let tmp = incoming.join(format!(".{name}.part"));
        std::fs::copy(source, &tmp).unwrap();
        std::fs::rename(&tmp, incoming.join(name)).unwrap();
    }

    pub fn submit_bytes(&self, bytes: &[u8], name: &str) {
        let incoming = self.data.join("incoming");
        std::fs::create_dir_all(&incoming).unwrap();
        let tmp = incoming.join(format!(".{name}.part"));
        std::fs::write(&tmp, bytes).unwrap();
        std::fs::rename(&tmp, incoming.join(name)).unwrap();
    }

    /// `cuzk status --data-dir <data> ARGS`: exit code and stdout.
    pub fn cuzk_status(&self, args: &[&str]) -> (Option<i32>, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_cuzk"))
            .arg("status")
            .arg("--data-dir")
            .arg(&self.data)
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }

    pub fn status(&self) -> Option<Value> {
        let text = std::fs::read_to_string(self.data.join("status.json")).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// The pid of the first running process of `stage`.
    pub fn stage_pid(&self, stage: &str) -> Option<u32> {
        self.status()?["stages"]
            .as_array()?
            .iter()
            .filter(|p| p["stage"] == stage)
            .find_map(|p| p["pid"].as_u64())
            .map(|p| p as u32)
    }

    pub fn files(&self, dir: &str, ext: &str) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.data.join(dir))
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.ends_with(ext) && !n.starts_with('.'))
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }

    pub fn wait_for(&self, what: &str, timeout: Duration, mut cond: impl FnMut(&Self) -> bool) {
        let until = Instant::now() + timeout;
        while Instant::now() < until {
            if cond(self) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!(
            "timed out after {timeout:?} waiting for {what}\n{}",
            self.logs()
        );
    }

    pub fn arena(&self) -> Option<Arena> {
        let entry = std::fs::read_dir(&self.arena_dir)
            .ok()?
            .flatten()
            .find(|e| e.file_name().to_string_lossy().ends_with(".arena"))?;
        Arena::attach(&entry.path()).ok()
    }

    /// Waits until some slot is in `busy` and kills its owner with SIGKILL; returns the pid.
    pub fn kill_owner_of(&self, busy: SlotState, timeout: Duration) -> u32 {
        let until = Instant::now() + timeout;
        while Instant::now() < until {
            if let Some(arena) = self.arena() {
                for s in 0..arena.slot_count() {
                    let w = arena.slot_word(s);
                    if w.state == busy && w.owner_pid != 0 {
                        // SAFETY: kill(2); the pid is a stage of this test's supervisor.
                        unsafe { libc::kill(w.owner_pid as i32, libc::SIGKILL) };
                        return w.owner_pid;
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        panic!("no slot reached {busy:?} in {timeout:?}\n{}", self.logs());
    }

    /// Bytes of every file in the arena directory (arena and SRS segments).
    pub fn shm_bytes(&self) -> u64 {
        std::fs::read_dir(&self.arena_dir)
            .map(|rd| {
                rd.flatten()
                    .filter_map(|e| e.metadata().ok())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0)
    }

    /// `cuzk verify` of a proof in done/ against its C1.
    pub fn verifies(&self, c1: &Path, proof_name: &str) -> bool {
        let out = Command::new(env!("CARGO_BIN_EXE_cuzk"))
            .arg("verify")
            .arg("--c1")
            .arg(c1)
            .arg("--proof")
            .arg(self.data.join("done").join(proof_name))
            .arg("--param-cache")
            .arg(param_cache())
            .env_remove("FIL_PROOFS_PARAMETER_CACHE")
            .output()
            .unwrap();
        out.status.success()
    }

    /// Private resident memory (kB, `RssAnon`) of every running stage process and the
    /// supervisor. Shared memory (the arena, the SRS segment) is left out: every process
    /// that touches it counts it again in its RSS; its size is checked on the files.
    pub fn rss_kb(&self) -> u64 {
        let Some(status) = self.status() else {
            return 0;
        };
        let mut pids: Vec<u64> = status["stages"]
            .as_array()
            .map(|a| a.iter().filter_map(|p| p["pid"].as_u64()).collect())
            .unwrap_or_default();
        pids.push(self.pid() as u64);
        pids.iter()
            .filter_map(|p| std::fs::read_to_string(format!("/proc/{p}/status")).ok())
            .filter_map(|s| {
                s.lines()
                    .find(|l| l.starts_with("RssAnon:"))
                    .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            })
            .sum()
    }
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.arena_dir);
        // The instance's iceoryx2 files are named after its data directory's hash.
        if let Ok(rd) = std::fs::read_dir("/dev/shm") {
            let tag = instance_tag(&self.data);
            for e in rd.flatten() {
                if tag
                    .as_ref()
                    .is_some_and(|t| e.file_name().to_string_lossy().starts_with(t))
                {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }
}

/// The iceoryx2 prefix `cuzk run` derives from the data directory (see instance.rs).
fn instance_tag(data: &Path) -> Option<String> {
    let canonical = data.canonicalize().ok()?;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in canonical.as_os_str().as_encoded_bytes() {
        h = (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
    }
    Some(format!("cuzk{:012x}_", h & 0xffff_ffff_ffff))
}
