//! The multiplier's ceilings as a picture: how close each kernel of `cuzk-gpu-check
//! ceilings` (a field product or the madd alone, looped in registers) and each whole
//! workload comes to the multiply-add rate the floors count with (the H200's ~16.7 T 32-bit
//! multiply-adds a second). A ceilings row reads e.g.
//! `Fp product (fp_mul), one chain [4/SM]  ok  116.76  - 0.0369 ns a unit, 85.6 % of the
//! floor rate (528 counted ...)`: its kernel, its occupancy tag (`full`: as many blocks an
//! SM as fit; `4/SM`: the accumulation's four) and its fraction. Workloads (the MSM's
//! accumulation, a whole NTT) are the caller's: floor ÷ measured time, from docs/perf.md.

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use plotters::prelude::*;

use crate::bar_chart::{draw_legend, row_label, Area};
use crate::variants::report_rows;

pub const WIDTH: u32 = 1000;
const ROW_PX: u32 = 40;

/// One kernel of the ceilings log: its fraction of the floor rate (%) at each occupancy
/// the log has for it, in the log's order of first appearance.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Ceiling {
    pub kernel: String,
    /// (occupancy tag, % of the floor rate); the last row of a (kernel, tag) wins.
    pub rates: Vec<(String, f64)>,
}

/// A whole workload drawn beside the kernels (e.g. the MSM 2^27 accumulation at
/// floor / measured = 76.2 %).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Workload {
    pub name: String,
    pub percent: f64,
}

impl Workload {
    /// `NAME=FLOOR/MEASURED` (both in ms: the percent is floor ÷ measured) or `NAME=PERCENT`.
    pub fn parse(s: &str) -> Result<Workload> {
        let (name, value) = s
            .rsplit_once('=')
            .context("expected NAME=FLOOR/MEASURED or NAME=PERCENT")?;
        let percent = match value.split_once('/') {
            Some((floor, measured)) => {
                let floor: f64 = floor.trim().parse().context("floor in ms")?;
                let measured: f64 = measured.trim().parse().context("measured time in ms")?;
                if measured <= 0.0 {
                    bail!("measured time must be positive: {s:?}");
                }
                100.0 * floor / measured
            }
            None => value.trim().parse().context("percent")?,
        };
        Ok(Workload {
            name: name.trim().to_string(),
            percent,
        })
    }
}

impl Ceiling {
    /// The kernel's % of the floor rate at occupancy `tag`, if the log has it.
    pub fn rate(&self, tag: &str) -> Option<f64> {
        self.rates.iter().find(|(t, _)| t == tag).map(|(_, p)| *p)
    }
}

/// The kernels of a `cuzk-gpu-check ceilings` log (its report rows, read as
/// [`report_rows`] reads them: the final table only). A row whose device result differed
/// from the CPU's (FAIL) is an error: its rate measures wrong code.
pub fn ceilings_from_log(log: &str) -> Result<Vec<Ceiling>> {
    let mut out: Vec<Ceiling> = Vec::new();
    for row in report_rows(log) {
        let Some(before) = row.note.split_once(" % of the floor rate").map(|(b, _)| b) else {
            continue;
        };
        if row.ok == Some(false) {
            bail!(
                "{:?} failed its check against the CPU: no rate to draw",
                row.what
            );
        }
        let pct: f64 = before
            .rsplit(|c: char| c.is_whitespace() || c == ',')
            .next()
            .unwrap_or_default()
            .parse()
            .with_context(|| {
                format!(
                    "no fraction before \"% of the floor rate\" in {:?}",
                    row.what
                )
            })?;
        let (kernel, tag) = match row.what.strip_suffix(']').and_then(|w| w.rsplit_once(" [")) {
            Some((k, t)) => (k.to_string(), t.to_string()),
            None => bail!("no [occupancy] tag in {:?}", row.what),
        };
        let entry = match out.iter().position(|c| c.kernel == kernel) {
            Some(i) => &mut out[i],
            None => {
                out.push(Ceiling {
                    kernel,
                    rates: Vec::new(),
                });
                out.last_mut().expect("just pushed")
            }
        };
        match entry.rates.iter_mut().find(|(t, _)| *t == tag) {
            Some(r) => r.1 = pct,
            None => entry.rates.push((tag, pct)),
        }
    }
    if out.is_empty() {
        bail!("no ceilings row (a report row with \"% of the floor rate\")");
    }
    Ok(out)
}

/// Rows of the picture: one a kernel, then one a workload.
pub fn height_for(kernels: usize, workloads: usize) -> u32 {
    90 + ROW_PX * (kernels + workloads) as u32
}

/// One colour an occupancy tag, in order; workloads have their own.
const TAGS: [RGBColor; 3] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
];
const WORKLOAD: RGBColor = RGBColor(44, 160, 44);

/// The occupancy tags of `ceilings`, in order of first appearance (one colour each).
pub fn tags(ceilings: &[Ceiling]) -> Vec<String> {
    let mut tags: Vec<String> = Vec::new();
    for c in ceilings {
        for (t, _) in &c.rates {
            if !tags.contains(t) {
                tags.push(t.clone());
            }
        }
    }
    tags
}

/// Writes the picture (SVG): a bar an occupancy a kernel, a bar a workload, on 0..100 % of
/// the floor rate, with the 100 % line. Returns (width, height).
pub fn write_svg(
    ceilings: &[Ceiling],
    workloads: &[Workload],
    out: &Path,
    title: &str,
) -> Result<(u32, u32)> {
    if ceilings.is_empty() {
        bail!("no ceilings to draw");
    }
    let tags = tags(ceilings);
    if tags.len() > TAGS.len() {
        bail!(
            "{} occupancy tags ({tags:?}); the picture has colours for {}",
            tags.len(),
            TAGS.len()
        );
    }
    let size = (WIDTH, height_for(ceilings.len(), workloads.len()));
    let root = SVGBackend::new(out, size).into_drawing_area();
    draw(&root, ceilings, &tags, workloads, title)
        .map_err(|e| anyhow!("drawing {}: {e}", out.display()))?;
    root.present()
        .map_err(|e| anyhow!("writing {}: {e}", out.display()))?;
    Ok(size)
}

/// The legend's words for an occupancy tag of the log.
pub fn tag_label(tag: &str) -> String {
    match tag.strip_suffix("/SM") {
        _ if tag == "full" => "alone, as many blocks an SM as fit".into(),
        Some(n) => format!("alone, {n} blocks an SM"),
        None => format!("alone, {tag}"),
    }
}

fn draw(
    root: &Area,
    ceilings: &[Ceiling],
    tags: &[String],
    workloads: &[Workload],
    title: &str,
) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
    root.fill(&WHITE)?;
    let (legend, area) = root.split_vertically(34);
    let mut items: Vec<(String, RGBColor)> = tags
        .iter()
        .zip(TAGS)
        .map(|(t, c)| (tag_label(t), c))
        .collect();
    if !workloads.is_empty() {
        items.push(("whole workload (floor / measured)".into(), WORKLOAD));
    }
    draw_legend(&legend, &items, 120, 270)?;
    let mut labels: Vec<String> = ceilings.iter().map(|c| c.kernel.clone()).collect();
    labels.extend(workloads.iter().map(|w| w.name.clone()));
    let n = labels.len();
    let mut chart = ChartBuilder::on(&area)
        .caption(title, ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(330)
        .build_cartesian_2d(0f64..112.0, (n as f64 - 0.5)..-0.5f64)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc("% of the multiply-add rate the floors count with")
        .y_labels(n)
        .y_label_formatter(&|y| row_label(&labels, *y))
        .label_style(("sans-serif", 12))
        .draw()?;
    // A kernel's row holds one thin bar an occupancy tag, stacked in the tags' order.
    let band = 0.76 / tags.len() as f64;
    let mut bar = |y: f64, pct: f64, colour: RGBColor| {
        chart.draw_series(std::iter::once(Rectangle::new(
            [(0.0, y), (pct, y + band * 0.9)],
            colour.filled(),
        )))?;
        chart.draw_series(std::iter::once(Text::new(
            format!("{pct:.1} %"),
            (pct + 0.6, y),
            ("sans-serif", 11),
        )))?;
        Ok::<_, DrawingAreaErrorKind<std::io::Error>>(())
    };
    for (row, c) in ceilings.iter().enumerate() {
        for (i, tag) in tags.iter().enumerate() {
            if let Some(pct) = c.rate(tag) {
                bar(row as f64 - 0.38 + band * i as f64, pct, TAGS[i])?;
            }
        }
    }
    for (j, w) in workloads.iter().enumerate() {
        bar((ceilings.len() + j) as f64 - 0.3, w.percent, WORKLOAD)?;
    }
    // 100 %: the rate the floors count with, which no kernel reaches (an ideal IMAD.WIDE
    // stream gets ~90 %); the gap to it is what the floors leave out.
    chart.draw_series(std::iter::once(PathElement::new(
        vec![(100.0, -0.5), (100.0, n as f64 - 0.5)],
        BLACK.stroke_width(1),
    )))?;
    Ok(())
}
