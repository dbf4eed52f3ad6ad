//! A partition's GPU time by step against each step's floor, as a picture: one pair of
//! horizontal bars a step (measured, floor) with the ratio at its end. The steps come from a
//! row of `cuzk-gpu-check scale` (e.g. `32GiB prove_ahead() + B_G2 run 2 ok 1463.10 - a
//! ahead true, upload 245 ntt 246 msm_h 824 ...`): its `name value` pairs, device ms each.
//! The floors are the caller's (docs/perf.md counts them: field products at the H200's
//! multiply-add rate), so the picture says how far each step is from what its arithmetic needs.

use std::path::Path;

use anyhow::{anyhow, bail, Result};
use plotters::prelude::*;

use crate::bar_chart::{draw_legend, row_label, Area};

pub const WIDTH: u32 = 1000;
const ROW_PX: u32 = 46;

/// One step: its name in the log, its device ms and the floor it is compared to.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Step {
    pub name: String,
    pub ms: f64,
    pub floor_ms: f64,
}

/// The `name value` pairs of a scale row after its timing columns (`a ahead true` and other
/// non-numeric pairs are skipped), in the row's order.
pub fn row_fields(row: &str) -> Vec<(String, f64)> {
    // The fields follow the row's " - " separator (label, ok, ms, CPU ms, then the note).
    note_fields(row.split_once(" - ").map_or(row, |(_, n)| n))
}

/// The `name value` pairs of a row's note (the text after its timing columns).
pub fn note_fields(note: &str) -> Vec<(String, f64)> {
    let words: Vec<&str> = note
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(2)
        .filter_map(|w| {
            let name_ok = w[0].chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && w[0].chars().next().is_some_and(|c| c.is_ascii_alphabetic());
            match (name_ok, w[1].parse::<f64>()) {
                (true, Ok(v)) => Some((w[0].to_string(), v)),
                _ => None,
            }
        })
        .collect()
}

/// The last line of `log` containing `row`, as steps: the fields that have a floor, in the
/// row's order. Every floor must name a field of the row.
pub fn steps_from_log(log: &str, row: &str, floors: &[(String, f64)]) -> Result<Vec<Step>> {
    let Some(line) = log.lines().rev().find(|l| l.contains(row)) else {
        bail!("no line contains {row:?}");
    };
    let fields = row_fields(line);
    for (name, _) in floors {
        if !fields.iter().any(|(f, _)| f == name) {
            bail!("the row has no field {name:?} (it has: {fields:?})");
        }
    }
    Ok(fields
        .into_iter()
        .filter_map(|(name, ms)| {
            let floor_ms = floors.iter().find(|(f, _)| *f == name)?.1;
            Some(Step { name, ms, floor_ms })
        })
        .collect())
}

/// (Σ ms, Σ floor ms) of the steps: the picture's last row and the table's.
pub fn totals(steps: &[Step]) -> (f64, f64) {
    steps
        .iter()
        .fold((0.0, 0.0), |(a, b), s| (a + s.ms, b + s.floor_ms))
}

pub fn height_for(steps: usize) -> u32 {
    90 + ROW_PX * (steps as u32 + 1)
}

const MEASURED: RGBColor = RGBColor(44, 160, 44);
const FLOOR: RGBColor = RGBColor(170, 170, 170);

/// Writes the picture (SVG) of `steps` and their sum to `out`, with the sum's target marked
/// when given. Returns (width, height).
pub fn write_svg(
    steps: &[Step],
    target_ms: Option<f64>,
    out: &Path,
    title: &str,
) -> Result<(u32, u32)> {
    if steps.is_empty() {
        bail!("no steps to draw");
    }
    let size = (WIDTH, height_for(steps.len()));
    let root = SVGBackend::new(out, size).into_drawing_area();
    draw(&root, steps, target_ms, title).map_err(|e| anyhow!("drawing {}: {e}", out.display()))?;
    root.present()
        .map_err(|e| anyhow!("writing {}: {e}", out.display()))?;
    Ok(size)
}

fn draw(
    root: &Area,
    steps: &[Step],
    target_ms: Option<f64>,
    title: &str,
) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
    root.fill(&WHITE)?;
    let (legend, area) = root.split_vertically(34);
    let mut items = vec![
        ("measured (device ms)".to_string(), MEASURED),
        ("floor".to_string(), FLOOR),
    ];
    if let Some(t) = target_ms {
        items.push((format!("target of the sum: {:.3} s", t / 1e3), RED));
    }
    draw_legend(&legend, &items, 160, 220)?;
    // The last row is the sum, on its own scale (its bars would dwarf the steps').
    let max = steps
        .iter()
        .map(|s| s.ms.max(s.floor_ms))
        .fold(0.0, f64::max)
        * 1.25;
    let n = steps.len();
    let mut labels: Vec<String> = steps.iter().map(|s| s.name.clone()).collect();
    labels.push("sum".into());
    let mut chart = ChartBuilder::on(&area)
        .caption(title, ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(90)
        .build_cartesian_2d(0f64..max, (n as f64 + 0.5)..-0.5f64)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc("ms (the sum row: s, its own scale)")
        .y_labels(n + 1)
        .y_label_formatter(&|y| row_label(&labels, *y))
        .label_style(("sans-serif", 12))
        .draw()?;
    let (sum, sum_floor) = totals(steps);
    let scale_sum = max / 1.25 / sum.max(sum_floor).max(target_ms.unwrap_or(0.0));
    let rows = steps
        .iter()
        .map(|s| (s.ms, s.floor_ms, s.ms, s.floor_ms, "ms"))
        .chain(std::iter::once((
            sum * scale_sum,
            sum_floor * scale_sum,
            sum / 1e3,
            sum_floor / 1e3,
            "s",
        )));
    // (bar length, floor bar length, the values printed, unit)
    for (row, (bar, floor, value, floor_value, unit)) in rows.enumerate() {
        let y = row as f64;
        chart.draw_series(std::iter::once(Rectangle::new(
            [(0.0, y - 0.38), (bar, y - 0.02)],
            MEASURED.filled(),
        )))?;
        chart.draw_series(std::iter::once(Rectangle::new(
            [(0.0, y + 0.02), (floor, y + 0.38)],
            FLOOR.filled(),
        )))?;
        let ratio = if floor_value > 0.0 {
            value / floor_value
        } else {
            f64::NAN
        };
        let digits = if unit == "s" { 3 } else { 0 };
        chart.draw_series(std::iter::once(Text::new(
            format!("{value:.digits$} {unit} ({ratio:.2}x)"),
            (bar + max * 0.01, y - 0.34),
            ("sans-serif", 12),
        )))?;
        chart.draw_series(std::iter::once(Text::new(
            format!("{floor_value:.digits$} {unit}"),
            (floor + max * 0.01, y + 0.06),
            ("sans-serif", 12).into_font().color(&RGBColor(90, 90, 90)),
        )))?;
    }
    if let Some(t) = target_ms {
        let (x, y) = (t * scale_sum, n as f64);
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x, y - 0.48), (x, y + 0.48)],
            RED.stroke_width(2),
        )))?;
    }
    Ok(())
}
