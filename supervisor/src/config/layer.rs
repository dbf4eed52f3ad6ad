//! One source's keys (the file, the environment, the flags), merged in order of precedence
//! and resolved into a [`Config`] with defaults and range checks.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use super::overrides::{sector_size_arg, SECTOR_SIZES};
use super::{
    env_var, BG2Choice, Config, ConfigError, Origin, RestartPolicy, StageConfig, StageKind,
    DEFAULT_PARAM_CACHE, KEYS,
};
use crate::placement::MemoryPolicy;
use crate::topology::CpuList;
use cuzk_c1::proof_type::parse_sector_size;

/// A sector size in bytes, read from text like `32GiB`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct SectorSize(pub(super) u64);

impl<'de> Deserialize<'de> for SectorSize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        parse_sector_size(&text)
            .map(SectorSize)
            .ok_or_else(|| serde::de::Error::custom(format!("{text:?}: {SECTOR_SIZES}")))
    }
}

impl<'de> Deserialize<'de> for BG2Choice {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse()
            .map_err(|e: String| serde::de::Error::custom(format!("{text:?}: {e}")))
    }
}

impl<'de> Deserialize<'de> for CpuList {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// The keys one source sets: the file's shape, every key optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Layer {
    pub(super) data_dir: Option<PathBuf>,
    pub(super) param_cache: Option<PathBuf>,
    pub(super) arena_dir: Option<PathBuf>,
    pub(super) slots: Option<u32>,
    pub(super) sector_size: Option<SectorSize>,
    pub(super) trust_params: Option<bool>,
    pub(super) miner_id: Option<u64>,
    pub(super) timeline: Option<PathBuf>,
    pub(super) b_g2_msm: Option<BG2Choice>,
    #[serde(default)]
    pub(super) stages: StagesLayer,
    #[serde(default)]
    pub(super) restart: RestartLayer,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct StagesLayer {
    #[serde(default)]
    pub(super) synthesis: StageLayer,
    #[serde(default)]
    pub(super) host_prep: StageLayer,
    #[serde(default)]
    pub(super) gpu: StageLayer,
    #[serde(default)]
    pub(super) epilogue: StageLayer,
}

impl StagesLayer {
    pub(super) fn get_mut(&mut self, kind: StageKind) -> &mut StageLayer {
        match kind {
            StageKind::Synthesis => &mut self.synthesis,
            StageKind::HostPrep => &mut self.host_prep,
            StageKind::Gpu => &mut self.gpu,
            StageKind::Epilogue => &mut self.epilogue,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct StageLayer {
    pub(super) count: Option<u32>,
    pub(super) cpus: Option<CpuList>,
    pub(super) numa_node: Option<u32>,
    pub(super) memory_policy: Option<MemoryPolicy>,
    pub(super) threads: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RestartLayer {
    pub(super) initial_backoff_ms: Option<u64>,
    pub(super) max_backoff_ms: Option<u64>,
    pub(super) reset_after_s: Option<u64>,
}

impl Layer {
    /// The keys set by `CUZK_*` variables; an empty variable counts as unset (as systemd's
    /// `Environment=CUZK_SLOTS=` clears one).
    pub(super) fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<Layer, ConfigError> {
        let mut layer = Layer::default();
        for key in KEYS {
            let var = env_var(key);
            if let Some(value) = env(&var).filter(|v| !v.trim().is_empty()) {
                layer
                    .set(key, &value)
                    .map_err(|reason| ConfigError::Invalid {
                        origin: Origin::Env(var),
                        key: key.to_owned(),
                        value,
                        reason,
                    })?;
            }
        }
        Ok(layer)
    }

    /// Sets `key` from text (environment values).
    pub(super) fn set(&mut self, key: &str, text: &str) -> Result<(), String> {
        fn num<T: std::str::FromStr>(text: &str) -> Result<T, String> {
            text.trim()
                .parse()
                .map_err(|_| "not a non-negative integer".to_owned())
        }
        match key {
            "data_dir" => self.data_dir = Some(text.into()),
            "param_cache" => self.param_cache = Some(text.into()),
            "arena_dir" => self.arena_dir = Some(text.into()),
            "slots" => self.slots = Some(num(text)?),
            "sector_size" => {
                self.sector_size = Some(SectorSize(sector_size_arg(text)?));
            }
            "trust_params" => {
                self.trust_params = Some(match text.trim() {
                    "true" | "1" | "yes" => true,
                    "false" | "0" | "no" | "" => false,
                    _ => return Err("not a boolean (true or false)".to_owned()),
                });
            }
            "miner_id" => self.miner_id = Some(num(text)?),
            "timeline" => self.timeline = Some(text.into()),
            "b_g2_msm" => self.b_g2_msm = Some(text.parse()?),
            "restart.initial_backoff_ms" => self.restart.initial_backoff_ms = Some(num(text)?),
            "restart.max_backoff_ms" => self.restart.max_backoff_ms = Some(num(text)?),
            "restart.reset_after_s" => self.restart.reset_after_s = Some(num(text)?),
            _ => {
                let (stage, field) = key
                    .strip_prefix("stages.")
                    .and_then(|rest| rest.split_once('.'))
                    .ok_or_else(|| format!("unknown key {key}"))?;
                let kind = StageKind::ALL
                    .into_iter()
                    .find(|kind| kind.key() == stage)
                    .ok_or_else(|| format!("unknown stage {stage}"))?;
                let target = self.stages.get_mut(kind);
                match field {
                    "count" => target.count = Some(num(text)?),
                    "cpus" => {
                        target.cpus = Some(
                            text.parse()
                                .map_err(|e: crate::topology::CpuListError| e.reason)?,
                        )
                    }
                    "numa_node" => target.numa_node = Some(num(text)?),
                    "memory_policy" => {
                        target.memory_policy = Some(match text.trim() {
                            "bind" => MemoryPolicy::Bind,
                            "preferred" => MemoryPolicy::Preferred,
                            _ => return Err("not a memory policy (bind or preferred)".to_owned()),
                        });
                    }
                    "threads" => target.threads = Some(num(text)?),
                    _ => return Err(format!("unknown key {key}")),
                }
            }
        }
        Ok(())
    }
}

/// The layers merged so far, and where each key's value came from.
#[derive(Default)]
pub(super) struct Layers {
    pub(super) merged: Layer,
    pub(super) origins: BTreeMap<String, Origin>,
}

/// Copies the keys one source sets over the merged ones, noting where each came from.
struct Overlay<'a> {
    origins: &'a mut BTreeMap<String, Origin>,
    origin: &'a dyn Fn(&str) -> Origin,
}

impl Overlay<'_> {
    /// `*into = from` when `from` is set.
    fn take<T>(&mut self, key: &str, into: &mut Option<T>, from: Option<T>) {
        if from.is_some() {
            self.origins.insert(key.to_owned(), (self.origin)(key));
            *into = from;
        }
    }
}

impl Layers {
    /// Takes every key `layer` sets; `origin` names the source of a key.
    pub(super) fn merge(&mut self, mut layer: Layer, origin: impl Fn(&str) -> Origin) {
        let m = &mut self.merged;
        let mut o = Overlay {
            origins: &mut self.origins,
            origin: &origin,
        };
        o.take("data_dir", &mut m.data_dir, layer.data_dir);
        o.take("param_cache", &mut m.param_cache, layer.param_cache);
        o.take("arena_dir", &mut m.arena_dir, layer.arena_dir);
        o.take("slots", &mut m.slots, layer.slots);
        o.take("sector_size", &mut m.sector_size, layer.sector_size);
        o.take("trust_params", &mut m.trust_params, layer.trust_params);
        o.take("miner_id", &mut m.miner_id, layer.miner_id);
        o.take("timeline", &mut m.timeline, layer.timeline);
        o.take("b_g2_msm", &mut m.b_g2_msm, layer.b_g2_msm);
        let (into, from) = (&mut m.restart, layer.restart);
        o.take(
            "restart.initial_backoff_ms",
            &mut into.initial_backoff_ms,
            from.initial_backoff_ms,
        );
        o.take(
            "restart.max_backoff_ms",
            &mut into.max_backoff_ms,
            from.max_backoff_ms,
        );
        o.take(
            "restart.reset_after_s",
            &mut into.reset_after_s,
            from.reset_after_s,
        );
        for kind in StageKind::ALL {
            let into = m.stages.get_mut(kind);
            let from = std::mem::take(layer.stages.get_mut(kind));
            let key = |field: &str| format!("stages.{}.{field}", kind.key());
            o.take(&key("count"), &mut into.count, from.count);
            o.take(&key("cpus"), &mut into.cpus, from.cpus);
            o.take(&key("numa_node"), &mut into.numa_node, from.numa_node);
            o.take(
                &key("memory_policy"),
                &mut into.memory_policy,
                from.memory_policy,
            );
            o.take(&key("threads"), &mut into.threads, from.threads);
        }
    }

    /// Fills in defaults and checks ranges; an error names the key, its value and source.
    pub(super) fn resolve(
        self,
        env: &dyn Fn(&str) -> Option<String>,
        gpus_found: usize,
    ) -> Result<Config, ConfigError> {
        let Layers { merged: m, origins } = self;
        let invalid = |key: &str, value: String, reason: &str| ConfigError::Invalid {
            origin: origins.get(key).cloned().unwrap_or(Origin::Default),
            key: key.to_owned(),
            value,
            reason: reason.to_owned(),
        };
        let at_least_1 = |key: &str, n: u64| {
            if n == 0 {
                Err(invalid(key, n.to_string(), "must be at least 1"))
            } else {
                Ok(())
            }
        };

        let data_dir = m.data_dir.unwrap_or_else(|| PathBuf::from("./cuzk-data"));
        let param_cache = m
            .param_cache
            .or_else(|| {
                env("FIL_PROOFS_PARAMETER_CACHE")
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
            })
            .unwrap_or_else(|| PathBuf::from(DEFAULT_PARAM_CACHE));
        let slots = m.slots.unwrap_or(2);
        at_least_1("slots", slots.into())?;

        let mut stages: [StageConfig; 4] = Default::default();
        let mut layers = m.stages;
        for kind in StageKind::ALL {
            let layer = std::mem::take(layers.get_mut(kind));
            let key = |field: &str| format!("stages.{}.{field}", kind.key());
            let default_count = match kind {
                StageKind::Gpu => gpus_found.max(1) as u32,
                _ => 1,
            };
            let count = layer.count.unwrap_or(default_count);
            at_least_1(&key("count"), count.into())?;
            if kind == StageKind::Gpu && gpus_found > 0 && count as usize > gpus_found {
                let reason =
                    format!("one gpu process per device, and {gpus_found} GPUs were found");
                return Err(invalid(&key("count"), count.to_string(), &reason));
            }
            if let Some(threads) = layer.threads {
                at_least_1(&key("threads"), threads as u64)?;
            }
            stages[kind as usize] = StageConfig {
                count,
                cpus: layer.cpus,
                numa_node: layer.numa_node,
                memory_policy: layer.memory_policy.unwrap_or_default(),
                threads: layer.threads,
            };
        }

        let initial_ms = m.restart.initial_backoff_ms.unwrap_or(500);
        let max_ms = m.restart.max_backoff_ms.unwrap_or(30_000);
        if max_ms < initial_ms {
            let reason = format!("below restart.initial_backoff_ms ({initial_ms})");
            return Err(invalid(
                "restart.max_backoff_ms",
                max_ms.to_string(),
                &reason,
            ));
        }
        let restart = RestartPolicy {
            initial_backoff: Duration::from_millis(initial_ms),
            max_backoff: Duration::from_millis(max_ms),
            reset_after: Duration::from_secs(m.restart.reset_after_s.unwrap_or(60)),
        };

        Ok(Config {
            timeline: m
                .timeline
                .unwrap_or_else(|| data_dir.join("timeline.jsonl")),
            data_dir,
            param_cache,
            arena_dir: m.arena_dir.unwrap_or_else(|| PathBuf::from("/dev/shm")),
            slots,
            sector_size: m.sector_size.map_or(2048, |s| s.0),
            trust_params: m.trust_params.unwrap_or(false),
            miner_id: m.miner_id,
            b_g2_msm: m.b_g2_msm.unwrap_or(BG2Choice::Auto).resolve(gpus_found),
            stages,
            restart,
        })
    }
}
