//! Hand-off latency and claim rate between processes.
//!
//! `cargo bench -p cuzk-shm-layout --bench handoff`
//!
//! The bench binary re-executes itself as the consumer process(es) (`CUZK_BENCH_ROLE`).
//! Hand-off latency = CLOCK_MONOTONIC from the producer stamping a descriptor (just before
//! `send` + `notify`) to the consumer holding the slot after its claim CAS.
//! 1. Unloaded: one slot, one consumer, one descriptor in flight at a time.
//! 2. Loaded: 64 slots, two consumers, the producer pushes as fast as slots free up.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cuzk_shm_layout::clock::monotonic_ns;
use cuzk_shm_layout::{
    iceoryx_config, Arena, ArenaConfig, ControlPlane, PartitionShape, SlotState, Stage,
};

const ROLE: &str = "CUZK_BENCH_ROLE";

fn main() {
    if std::env::var(ROLE).is_ok() {
        consumer();
        return;
    }
    let iters: u64 = std::env::var("CUZK_BENCH_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let run = Run::new();
    println!(
        "hand-off bench: {} cpus, {iters} hand-offs per phase",
        num_cpus()
    );

    let (lat, rate) = run.phase("unloaded", 1, 1, iters);
    report("unloaded (1 slot, 1 consumer)", &lat, rate);
    let (lat, rate) = run.phase("loaded", 64, 2, iters * 5);
    report("loaded (64 slots, 2 consumers)", &lat, rate);
}

fn num_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

struct Run {
    name: String,
    scratch: PathBuf,
}

impl Run {
    fn new() -> Self {
        let name = format!("bench{}", std::process::id());
        let scratch = std::env::temp_dir().join(format!("cuzk-shm-{name}"));
        std::fs::create_dir_all(&scratch).unwrap();
        Run { name, scratch }
    }

    fn prefix(&self) -> String {
        format!("cuzk{}_", self.name)
    }

    /// Producer side of one phase; returns the consumers' latencies (ns) and claims/s.
    fn phase(&self, tag: &str, slots: u32, consumers: usize, n: u64) -> (Vec<u64>, f64) {
        let arena_name = format!("{}-{tag}", self.name);
        let mut cfg = ArenaConfig::new(&arena_name, PartitionShape::new(1000, 4, 900), slots);
        cfg.job_capacity = 1;
        let arena = Arena::create(&cfg).unwrap();
        let cp = ControlPlane::new(&arena_name, &iceoryx_config(&self.prefix()).unwrap()).unwrap();
        let free_rx = cp.receiver(Stage::Synthesis).unwrap();
        let tx = cp.sender(SlotState::Synthesized).unwrap();
        let dir = self.scratch.join(tag);
        std::fs::create_dir_all(&dir).unwrap();
        let children: Vec<Child> = (0..consumers)
            .map(|_| {
                Command::new(std::env::current_exe().unwrap())
                    .env(ROLE, "consumer")
                    .env("CUZK_ARENA", arena.path())
                    .env("CUZK_ARENA_NAME", &arena_name)
                    .env("CUZK_IOX_PREFIX", self.prefix())
                    .env("CUZK_DIR", &dir)
                    .stdout(Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        while children
            .iter()
            .any(|c| !dir.join(format!("ready-{}", c.id())).exists())
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        let start = Instant::now();
        for _ in 0..n {
            let claim = free_rx
                .claim_next(&arena, Duration::from_secs(10))
                .unwrap()
                .expect("consumers free slots")
                .claim;
            tx.announce(claim.complete().unwrap()).unwrap();
        }
        while arena.census()[SlotState::Free as usize] != slots {
            std::hint::spin_loop();
        }
        let elapsed = start.elapsed();
        std::fs::write(dir.join("stop"), "").unwrap();
        let mut lat = vec![];
        for mut c in children {
            assert!(c.wait().unwrap().success());
            lat.extend(read_u64s(&dir.join(format!("lat-{}", c.id()))));
        }
        assert_eq!(lat.len() as u64, n, "every hand-off claimed exactly once");
        assert_eq!(arena.bytes_copied(), 0);
        arena.remove().unwrap();
        (lat, n as f64 / elapsed.as_secs_f64())
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.scratch);
        // iceoryx2 keeps a per-prefix management segment; this run's prefix is its own.
        if let Ok(entries) = std::fs::read_dir("/dev/shm") {
            for e in entries.flatten() {
                if e.file_name().to_string_lossy().starts_with(&self.prefix()) {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }
}

/// The consumer process: claim, note latency, run the slot back to Free, announce it.
fn consumer() {
    let var = |k: &str| std::env::var(k).unwrap();
    let arena = Arena::attach(Path::new(&var("CUZK_ARENA"))).unwrap();
    let cp = ControlPlane::new(
        &var("CUZK_ARENA_NAME"),
        &iceoryx_config(&var("CUZK_IOX_PREFIX")).unwrap(),
    )
    .unwrap();
    let rx = cp.receiver(Stage::HostPrep).unwrap();
    let free_tx = cp.sender(SlotState::Free).unwrap();
    let dir = PathBuf::from(var("CUZK_DIR"));
    let pid = std::process::id();
    std::fs::write(dir.join(format!("ready-{pid}")), "").unwrap();
    let mut lat = Vec::with_capacity(1 << 20);
    loop {
        match rx.claim_next(&arena, Duration::from_millis(20)).unwrap() {
            Some(h) => {
                let now = monotonic_ns();
                // Scan claims have no send time; count them with the latency of "now".
                let sent = h.descriptor.map_or(now, |d| d.sent_mono_ns);
                lat.push(now.saturating_sub(sent));
                let mut d = h.claim.complete().unwrap();
                for from in [SlotState::Prepped, SlotState::Proved] {
                    d = arena
                        .try_claim(d.slot, from, Some(d.generation))
                        .unwrap()
                        .complete()
                        .unwrap();
                }
                free_tx.announce(d).unwrap();
            }
            None if dir.join("stop").exists() => break,
            None => {}
        }
    }
    let body: String = lat.iter().map(|v| format!("{v}\n")).collect();
    std::fs::write(dir.join(format!("lat-{pid}")), body).unwrap();
    eprintln!(
        "consumer {pid}: {} claims ({} via descriptor, {} via scan, {} descriptors passed over)",
        lat.len(),
        rx.stats.via_descriptor.get(),
        rx.stats.via_scan.get(),
        rx.stats.passed_over.get()
    );
}

fn read_u64s(path: &Path) -> Vec<u64> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

/// `rate`: hand-offs per second, i.e. consumer claims of announced slots (each also costs
/// the producer's claim of a free slot and two more claim/complete pairs in the consumer).
fn report(what: &str, lat: &[u64], rate: f64) {
    let mut v = lat.to_vec();
    v.sort_unstable();
    let pct = |p: f64| v[((v.len() - 1) as f64 * p) as usize] as f64 / 1000.0;
    println!(
        "{what}: hand-off p50 {:.1} us, p99 {:.1} us, p99.9 {:.1} us, max {:.1} us; \
         {rate:.0} hand-offs (claims) per second",
        pct(0.50),
        pct(0.99),
        pct(0.999),
        pct(1.0)
    );
}
