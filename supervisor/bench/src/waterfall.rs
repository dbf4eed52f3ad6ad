//! The waterfall picture: one row per partition (job, partition), stages as coloured bars
//! along time, waits as thin grey bars; above them one row per GPU process with its busy
//! time, so idle gaps show as holes, and its readyings for a job before the job's first
//! partition (light green, `GPU_READIED`), and on top the slots in use (bar height = busy share). SVG (plotters), which carries its text as text: no
//! font files are needed to draw it.
//!
//! An interrupted interval (no end seen) is drawn as an outline; a returned one (the stage
//! gave the slot back) hatched lighter.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{anyhow, Result};
use plotters::prelude::*;

use crate::analysis::busy::busy_spans;
use crate::analysis::occupancy::SlotOccupancy;
use crate::analysis::pairing::{Ending, Paired, Phase, Stage};

pub const WIDTH: u32 = 1400;
const LEGEND_H: u32 = 36;
/// Rows taller than this waste space; shorter than the minimum they stop being readable.
const ROW_MAX_PX: u32 = 18;
const ROW_MIN_PX: u32 = 3;
/// Beyond this many rows the rows shrink instead of the picture growing.
const MAX_ROWS_AREA_PX: u32 = 2400;

pub fn stage_colour(stage: Stage) -> RGBColor {
    match stage {
        Stage::Synthesis => RGBColor(31, 119, 180),
        Stage::HostPrep => RGBColor(255, 127, 14),
        Stage::Gpu => RGBColor(44, 160, 44),
        Stage::Epilogue => RGBColor(148, 103, 189),
    }
}

const WAIT_COLOUR: RGBColor = RGBColor(190, 190, 190);
/// The gpu stage's green, lighter: set-up, not a partition's work.
const READYING_COLOUR: RGBColor = RGBColor(166, 216, 166);
const SLOTS_COLOUR: RGBColor = RGBColor(90, 90, 90);

/// A row of the picture and what is drawn in it.
struct Row {
    label: String,
    bars: Vec<Bar>,
}

/// Drawn as a bar of `fraction` of the row's height.
struct Level {
    start_s: f64,
    end_s: f64,
    fraction: f64,
}

/// What a bar shows: a partition's stage work or wait, or a gpu process readying itself.
#[derive(Clone, Copy)]
enum Shows {
    Phase(Phase),
    Readying,
}

struct Bar {
    shows: Shows,
    start_s: f64,
    end_s: f64,
    ending: Ending,
}

type PartitionKey = (Option<u64>, Option<u32>);

/// Picture height for `rows` rows.
pub fn height_for(rows: usize) -> u32 {
    let row_px = (MAX_ROWS_AREA_PX / rows.max(1) as u32).clamp(ROW_MIN_PX, ROW_MAX_PX);
    LEGEND_H + 90 + rows.max(1) as u32 * row_px
}

/// Writes the waterfall of `paired` to `out` (SVG), with a slot row when `slots` is given.
/// Returns (width, height, rows).
pub fn write_svg(
    paired: &Paired,
    slots: Option<&SlotOccupancy>,
    out: &Path,
    title: &str,
) -> Result<(u32, u32, usize)> {
    let mut rows = rows(paired);
    let levels = slots.filter(|o| o.slots > 0).map(|o| {
        let span_s = (paired.last_ns - paired.first_ns) as f64 / 1e9;
        let levels: Vec<Level> = o
            .series
            .iter()
            .enumerate()
            .map(|(i, &(t, busy))| Level {
                start_s: t,
                end_s: o.series.get(i + 1).map_or(span_s, |n| n.0),
                fraction: (busy as f64 / o.slots as f64).min(1.0),
            })
            .collect();
        rows.insert(
            0,
            Row {
                label: format!("slots busy (of {})", o.slots),
                bars: Vec::new(),
            },
        );
        levels
    });
    let size = (WIDTH, height_for(rows.len()));
    let root = SVGBackend::new(out, size).into_drawing_area();
    draw(&root, &rows, levels.as_deref(), paired, title)
        .map_err(|e| anyhow!("drawing {}: {e}", out.display()))?;
    root.present()
        .map_err(|e| anyhow!("writing {}: {e}", out.display()))?;
    Ok((size.0, size.1, rows.len()))
}

fn rows(p: &Paired) -> Vec<Row> {
    let t = |ns: u64| (ns - p.first_ns) as f64 / 1e9;
    let mut rows = Vec::new();
    let mut gpu_pids: Vec<u32> = p
        .intervals
        .iter()
        .filter(|i| i.phase == Phase::Work(Stage::Gpu))
        .map(|i| i.pid)
        .chain(p.readied.iter().map(|r| r.pid))
        .collect();
    gpu_pids.sort_unstable();
    gpu_pids.dedup();
    for pid in gpu_pids {
        let readyings = p.readied.iter().filter(|r| r.pid == pid).map(|r| Bar {
            shows: Shows::Readying,
            start_s: t(r.start_ns),
            end_s: t(r.end_ns),
            ending: Ending::Complete,
        });
        let bars = busy_spans(&p.intervals, Stage::Gpu, pid)
            .into_iter()
            .map(|(s, e)| Bar {
                shows: Shows::Phase(Phase::Work(Stage::Gpu)),
                start_s: t(s),
                end_s: t(e),
                ending: Ending::Complete,
            })
            .chain(readyings)
            .collect();
        rows.push(Row {
            label: format!("GPU pid {pid}"),
            bars,
        });
    }
    // Partitions in the order they first appear.
    // (job, partition) -> (first start, bars)
    let mut partitions: BTreeMap<PartitionKey, (u64, Vec<Bar>)> = BTreeMap::new();
    for i in &p.intervals {
        let entry = partitions
            .entry((i.job, i.partition))
            .or_insert((i.start_ns, Vec::new()));
        entry.0 = entry.0.min(i.start_ns);
        entry.1.push(Bar {
            shows: Shows::Phase(i.phase),
            start_s: t(i.start_ns),
            end_s: t(i.end_ns),
            ending: i.ending,
        });
    }
    let mut partitions: Vec<_> = partitions.into_iter().collect();
    partitions.sort_by_key(|(key, (first, _))| (*first, *key));
    for ((job, partition), (_, bars)) in partitions {
        let show = |v: Option<String>| v.unwrap_or_else(|| "?".into());
        rows.push(Row {
            label: format!(
                "job {} p{}",
                show(job.map(|j| j.to_string())),
                show(partition.map(|p| p.to_string()))
            ),
            bars,
        });
    }
    rows
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

fn draw(
    root: &Area,
    rows: &[Row],
    levels: Option<&[Level]>,
    p: &Paired,
    title: &str,
) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
    root.fill(&WHITE)?;
    let (legend, chart_area) = root.split_vertically(LEGEND_H);
    draw_legend(&legend)?;
    let span_s = ((p.last_ns - p.first_ns) as f64 / 1e9).max(1e-3);
    let n = rows.len().max(1);
    // Row 0 at the top: the y range runs downwards.
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(title, ("sans-serif", 16))
        .margin(8)
        .x_label_area_size(30)
        .y_label_area_size(110)
        .build_cartesian_2d(0f64..span_s, (n as f64 - 0.5)..-0.5f64)?;
    let labels: Vec<&str> = rows.iter().map(|r| r.label.as_str()).collect();
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc("seconds from the first event")
        .y_labels(n.min(60))
        .y_label_formatter(&|y| {
            let i = y.round();
            if (y - i).abs() < 1e-9 && i >= 0.0 {
                labels
                    .get(i as usize)
                    .map_or(String::new(), |l| l.to_string())
            } else {
                String::new()
            }
        })
        .label_style(("sans-serif", 11))
        .draw()?;
    // The slot row is row 0 when present: bars grow up from the row's bottom edge.
    for l in levels.unwrap_or_default() {
        let corners = [(l.start_s, 0.4 - 0.8 * l.fraction), (l.end_s, 0.4)];
        chart.draw_series(std::iter::once(Rectangle::new(
            corners,
            SLOTS_COLOUR.filled(),
        )))?;
    }
    for (row, r) in rows.iter().enumerate() {
        let y = row as f64;
        for b in &r.bars {
            let (colour, half) = match b.shows {
                Shows::Phase(Phase::Work(s)) => (stage_colour(s), 0.4),
                Shows::Phase(Phase::Wait(_)) => (WAIT_COLOUR, 0.15),
                Shows::Readying => (READYING_COLOUR, 0.4),
            };
            let corners = [(b.start_s, y - half), (b.end_s, y + half)];
            let style = match b.ending {
                Ending::Complete => colour.filled(),
                Ending::Returned => colour.mix(0.4).filled(),
                Ending::Interrupted => colour.stroke_width(1),
            };
            chart.draw_series(std::iter::once(Rectangle::new(corners, style)))?;
        }
    }
    Ok(())
}

fn draw_legend(area: &Area) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
    let mut items: Vec<(String, ShapeStyle)> = Stage::ALL
        .into_iter()
        .map(|s| (s.name().to_string(), stage_colour(s).filled()))
        .collect();
    items.push(("gpu readying".into(), READYING_COLOUR.filled()));
    items.push(("waiting".into(), WAIT_COLOUR.filled()));
    items.push(("returned".into(), BLACK.mix(0.4).filled()));
    items.push(("interrupted (no end)".into(), BLACK.stroke_width(1)));
    let mut x = 120;
    for (label, style) in items {
        area.draw(&Rectangle::new([(x, 12), (x + 18, 26)], style))?;
        area.draw(&Text::new(label.clone(), (x + 24, 13), ("sans-serif", 13)))?;
        x += 40 + 8 * label.len() as i32;
    }
    Ok(())
}
