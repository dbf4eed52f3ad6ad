//! The waterfall picture: drawn from a simulated log, read back as SVG, and checked for its
//! size, a bar per interval, a row label per partition and the legend.

mod common;

use std::process::Command;

use common::sim::Pipeline;
use cuzk_bench::analysis::{analyze, Options};
use cuzk_bench::waterfall;

fn pipeline() -> Pipeline {
    Pipeline {
        durations_ms: [100.0, 20.0, 50.0, 5.0],
        processes: [1, 1, 1, 1],
        slots: 4,
        jobs: 3,
        partitions: 2,
        claim_every_ms: 30.0,
    }
}

#[test]
fn waterfall_svg_has_the_size_bars_labels_and_legend() {
    let log = pipeline().run();
    let (a, paired) = analyze(&log.events, 0, &Options::default());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("w.svg");
    let (w, h, rows) = waterfall::write_svg(&paired, Some(&a.slots), &out, "test").unwrap();
    // The slot row, 1 GPU process, 6 partitions.
    assert_eq!(rows, 8);
    assert_eq!((w, h), (waterfall::WIDTH, waterfall::height_for(8)));

    let text = std::fs::read_to_string(&out).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("the waterfall is well-formed SVG");
    let svg = doc.root_element();
    assert_eq!(svg.tag_name().name(), "svg");
    assert_eq!(svg.attribute("width"), Some(w.to_string().as_str()));
    assert_eq!(svg.attribute("height"), Some(h.to_string().as_str()));
    let rects: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("rect"))
        .collect();
    // Per partition 4 stage bars and up to 4 waits; the GPU row's busy spans; the legend's
    // 7 swatches; the background.
    let stage_bars = paired.intervals.len();
    assert!(
        rects.len() > stage_bars,
        "{} rects for {stage_bars} intervals",
        rects.len()
    );
    let green = rects
        .iter()
        .filter(|r| r.attribute("fill") == Some("#2CA02C"))
        .count();
    assert!(green >= 6, "a green (gpu) bar per partition: {green}");
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .map(str::trim)
        .collect();
    for label in [
        "synthesis",
        "host-prep",
        "gpu",
        "epilogue",
        "job 0 p0",
        "job 2 p1",
    ] {
        assert!(texts.contains(&label), "{label:?} missing from {texts:?}");
    }
    assert!(texts.iter().any(|t| t.starts_with("GPU pid")));
    assert!(texts.contains(&"slots busy (of 4)"), "{texts:?}");
    let slot_bars = rects
        .iter()
        .filter(|r| r.attribute("fill") == Some("#5A5A5A"))
        .count();
    assert_eq!(
        slot_bars,
        a.slots.series.len(),
        "a slot bar per change of occupancy"
    );
}

#[test]
fn timeline_command_writes_the_picture_next_to_the_log_and_json_to_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("run.jsonl");
    std::fs::write(&log, pipeline().run().to_jsonl()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cuzk-bench"))
        .args(["timeline", "--json"])
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let svg = dir.path().join("run.jsonl.waterfall.svg");
    assert_eq!(json["waterfall"], serde_json::json!(svg));
    assert!(std::fs::metadata(&svg).unwrap().len() > 1000);
    assert_eq!(json["jobs"]["throughput"]["done"], 3);
    assert_eq!(json["bottleneck"]["stage"], "synthesis");

    // And as text, to a chosen path.
    let chosen = dir.path().join("chosen.svg");
    let out = Command::new(env!("CARGO_BIN_EXE_cuzk-bench"))
        .args(["timeline", "--procs", "gpu=1", "--svg"])
        .arg(&chosen)
        .arg(&log)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    assert!(text.contains("bottleneck: synthesis"), "{text}");
    assert!(text.contains("waterfall: "), "{text}");
    assert!(chosen.exists());
}
