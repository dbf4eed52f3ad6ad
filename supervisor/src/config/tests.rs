//! Precedence, defaults, the example file, and errors that name source, key and value.

use super::layer::Layer;
use super::*;
use clap::Parser;

fn no_env(_: &str) -> Option<String> {
    None
}

fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |name| {
        pairs
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    }
}

fn file(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cuzk.toml");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    overrides: Overrides,
}

fn flags(args: &[&str]) -> Overrides {
    Cli::try_parse_from(std::iter::once("cuzk").chain(args.iter().copied()))
        .unwrap()
        .overrides
}

#[test]
fn defaults() {
    let config = Config::load_with_gpus(None, &no_env, &Overrides::default(), 0).unwrap();
    assert_eq!(config.data_dir, Path::new("./cuzk-data"));
    assert_eq!(config.param_cache, Path::new(DEFAULT_PARAM_CACHE));
    assert_eq!(config.arena_dir, Path::new("/dev/shm"));
    assert_eq!(config.slots, 2);
    assert_eq!(config.sector_size, 2048);
    assert!(!config.trust_params);
    assert_eq!(config.timeline, Path::new("./cuzk-data/timeline.jsonl"));
    for kind in StageKind::ALL {
        assert_eq!(config.stage(kind), &StageConfig::default(), "{kind:?}");
    }
    assert_eq!(config.restart.initial_backoff, Duration::from_millis(500));
    assert_eq!(config.restart.max_backoff, Duration::from_secs(30));
    assert_eq!(config.restart.reset_after, Duration::from_secs(60));
}

#[test]
fn gpu_count_defaults_to_the_gpus_found() {
    let config = Config::load_with_gpus(None, &no_env, &Overrides::default(), 4).unwrap();
    assert_eq!(config.stage(StageKind::Gpu).count, 4);
    assert_eq!(config.stage(StageKind::Synthesis).count, 1);
}

#[test]
fn b_g2_goes_to_the_gpus_when_there_are_any() {
    use cuzk_stage_common::BG2Stage;
    let load = |gpus, args: &[&str]| {
        Config::load_with_gpus(None, &no_env, &flags(args), gpus)
            .unwrap()
            .b_g2_msm
    };
    assert_eq!(load(0, &[]), BG2Stage::HostPrep);
    assert_eq!(load(2, &[]), BG2Stage::Gpu);
    assert_eq!(load(2, &["--b-g2-msm", "host_prep"]), BG2Stage::HostPrep);
    assert_eq!(load(0, &["--b-g2-msm", "gpu"]), BG2Stage::Gpu);
    assert_eq!(load(0, &["--b-g2-msm", "auto"]), BG2Stage::HostPrep);
    let env = env_of(&[("CUZK_B_G2_MSM", "cpu")]);
    let err = Config::load_with_gpus(None, &env, &Overrides::default(), 0)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("CUZK_B_G2_MSM") && err.contains("cpu") && err.contains("host_prep"),
        "{err}"
    );
}

#[test]
fn an_empty_variable_is_unset() {
    let env = env_of(&[("CUZK_SLOTS", ""), ("CUZK_DATA_DIR", " ")]);
    let config = Config::load_with_gpus(None, &env, &Overrides::default(), 0).unwrap();
    assert_eq!(
        (config.slots, config.data_dir),
        (2, PathBuf::from("./cuzk-data"))
    );
}

#[test]
fn param_cache_defaults_to_the_filecoin_variable() {
    let env = env_of(&[("FIL_PROOFS_PARAMETER_CACHE", "/srv/params")]);
    let config = Config::load_with_gpus(None, &env, &Overrides::default(), 0).unwrap();
    assert_eq!(config.param_cache, Path::new("/srv/params"));
    let env = env_of(&[
        ("FIL_PROOFS_PARAMETER_CACHE", "/srv/params"),
        ("CUZK_PARAM_CACHE", "/p"),
    ]);
    let config = Config::load_with_gpus(None, &env, &Overrides::default(), 0).unwrap();
    assert_eq!(config.param_cache, Path::new("/p"));
}

#[test]
fn file_then_env_then_flags() {
    let (_dir, path) = file(
        r#"
        data_dir = "/var/lib/cuzk"
        slots = 8
        sector_size = "32GiB"
        [stages.synthesis]
        count = 3
        cpus = "0-3"
        [stages.host_prep]
        count = 2
        numa_node = 0
        memory_policy = "bind"
        threads = 4
        [restart]
        max_backoff_ms = 1000
        "#,
    );
    let env = env_of(&[
        ("CUZK_SLOTS", "6"),
        ("CUZK_SYNTHESIS_COUNT", "5"),
        ("CUZK_HOST_PREP_CPUS", "1,3"),
    ]);
    let overrides = flags(&[
        "--synthesis-count",
        "7",
        "--trust-params",
        "--epilogue-count=2",
    ]);
    let config = Config::load_with_gpus(Some(&path), &env, &overrides, 0).unwrap();
    assert_eq!(config.data_dir, Path::new("/var/lib/cuzk"), "file");
    assert_eq!(
        config.timeline,
        Path::new("/var/lib/cuzk/timeline.jsonl"),
        "follows data_dir"
    );
    assert_eq!(config.slots, 6, "env over file");
    assert_eq!(config.sector_size, 32 << 30, "file");
    assert!(config.trust_params, "flag");
    let synthesis = config.stage(StageKind::Synthesis);
    assert_eq!(synthesis.count, 7, "flag over env over file");
    assert_eq!(synthesis.cpus.as_ref().unwrap().to_string(), "0-3");
    let host_prep = config.stage(StageKind::HostPrep);
    assert_eq!(
        host_prep,
        &StageConfig {
            count: 2,
            cpus: Some("1,3".parse().unwrap()),
            numa_node: Some(0),
            memory_policy: MemoryPolicy::Bind,
            threads: Some(4),
        }
    );
    assert_eq!(config.stage(StageKind::Epilogue).count, 2);
    assert_eq!(config.restart.max_backoff, Duration::from_secs(1));
}

#[test]
fn every_key_has_a_variable_and_a_flag() {
    let cli = <Cli as clap::CommandFactory>::command();
    for key in KEYS {
        let long = flag(key);
        assert!(
            cli.get_arguments()
                .any(|a| a.get_long() == Some(&long[2..])),
            "{key}: no flag {long}"
        );
        let mut layer = Layer::default();
        let sample = match key {
            k if k.ends_with("cpus") => "0",
            k if k.ends_with("memory_policy") => "bind",
            "sector_size" => "2KiB",
            "trust_params" => "true",
            "b_g2_msm" => "host_prep",
            _ => "1",
        };
        layer
            .set(key, sample)
            .unwrap_or_else(|e| panic!("{key}: {e}"));
    }
    assert_eq!(env_var("stages.host_prep.count"), "CUZK_HOST_PREP_COUNT");
    assert_eq!(
        env_var("restart.max_backoff_ms"),
        "CUZK_RESTART_MAX_BACKOFF_MS"
    );
    assert_eq!(flag("stages.host_prep.count"), "--host-prep-count");
}

#[test]
fn the_example_file_holds_every_key_with_its_default() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../systemd/cuzk.toml");
    let text = std::fs::read_to_string(example).unwrap();
    for key in KEYS {
        let leaf = key.rsplit('.').next().unwrap();
        assert!(
            text.contains(&format!("{leaf} =")),
            "{key} missing from systemd/cuzk.toml"
        );
    }
    // Uncommented ("# key = default" lines; "## key = example" lines stay comments), the
    // example is the defaults, with the systemd install's data directory.
    let uncommented: String = text
        .lines()
        .map(|line| match line.strip_prefix("# ") {
            Some(setting) if is_setting(setting) => format!("{setting}\n"),
            _ => format!("{line}\n"),
        })
        .collect();
    let (_dir, path) = file(&uncommented);
    let config = Config::load_with_gpus(Some(&path), &no_env, &Overrides::default(), 0).unwrap();
    let defaults = Config::load_with_gpus(None, &no_env, &Overrides::default(), 0).unwrap();
    let expected = Config {
        data_dir: "/var/lib/cuzk".into(),
        timeline: "/var/lib/cuzk/timeline.jsonl".into(),
        ..defaults
    };
    assert_eq!(config, expected);
}

/// `key = value` or `[table]`, as opposed to prose.
fn is_setting(line: &str) -> bool {
    let is_name = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c == '_' || c == '.')
    };
    match line.split_once(" = ") {
        Some((key, _)) => is_name(key),
        None => line
            .strip_prefix('[')
            .and_then(|l| l.strip_suffix(']'))
            .is_some_and(is_name),
    }
}

#[test]
fn an_unknown_key_is_an_error_naming_it() {
    let (_dir, path) = file("[stages.gpu]\ncount = 1\ncpu = \"0\"\n");
    let err = Config::load_with_gpus(Some(&path), &no_env, &Overrides::default(), 0)
        .unwrap_err()
        .to_string();
    assert!(err.contains("cuzk.toml") && err.contains("cpu"), "{err}");
    let (_dir, path) = file("slot = 3\n");
    let err = Config::load_with_gpus(Some(&path), &no_env, &Overrides::default(), 0)
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown field `slot`"), "{err}");
}

#[test]
fn bad_values_name_source_key_and_value() {
    let cases: [(&str, &[&str]); 5] = [
        (
            "sector_size = \"3KiB\"\n",
            &["cuzk.toml", "sector_size", "3KiB"],
        ),
        ("slots = \"two\"\n", &["cuzk.toml", "slots", "two"]),
        (
            "[stages.synthesis]\ncpus = \"4-2\"\n",
            &["cuzk.toml", "cpus", "4-2", "backwards"],
        ),
        (
            "[stages.gpu]\nmemory_policy = \"interleave\"\n",
            &["cuzk.toml", "memory_policy", "interleave"],
        ),
        (
            "slots = 0\n",
            &["cuzk.toml", "slots", "\"0\"", "at least 1"],
        ),
    ];
    for (text, needles) in cases {
        let (_dir, path) = file(text);
        let err = Config::load_with_gpus(Some(&path), &no_env, &Overrides::default(), 0)
            .unwrap_err()
            .to_string();
        for needle in needles {
            assert!(err.contains(needle), "{text:?}: {needle:?} not in {err}");
        }
    }

    let env = env_of(&[("CUZK_GPU_COUNT", "many")]);
    let err = Config::load_with_gpus(None, &env, &Overrides::default(), 0)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("CUZK_GPU_COUNT") && err.contains("stages.gpu.count") && err.contains("many"),
        "{err}"
    );

    let err = Config::load_with_gpus(None, &no_env, &flags(&["--gpu-count", "3"]), 2)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("--gpu-count") && err.contains("2 GPUs"),
        "{err}"
    );

    let env = env_of(&[("CUZK_RESTART_MAX_BACKOFF_MS", "100")]);
    let err = Config::load_with_gpus(None, &env, &Overrides::default(), 0)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("CUZK_RESTART_MAX_BACKOFF_MS") && err.contains("initial_backoff_ms"),
        "{err}"
    );

    assert!(Cli::try_parse_from(["cuzk", "--sector-size", "1GiB"]).is_err());
    assert!(Cli::try_parse_from(["cuzk", "--host-prep-memory-policy", "all"]).is_err());
}

#[test]
fn display_reads_back_as_the_same_config() {
    let overrides = flags(&[
        "--gpu-cpus",
        "0-1,3",
        "--gpu-numa-node",
        "0",
        "--synthesis-threads",
        "3",
    ]);
    let config = Config::load_with_gpus(None, &no_env, &overrides, 0).unwrap();
    let (_dir, path) = file(&config.to_string());
    let again = Config::load_with_gpus(Some(&path), &no_env, &Overrides::default(), 0).unwrap();
    assert_eq!(again, config);
}
