//! Pieces shared by the horizontal bar pictures (`steps`, `ceilings`): a legend of colour
//! swatches across the top, and the row names of a category axis drawn as numbers 0..n.

use plotters::prelude::*;

pub type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// One swatch and its words a legend item, `step` pixels apart from `x0`.
pub fn draw_legend(
    area: &Area,
    items: &[(String, RGBColor)],
    x0: i32,
    step: i32,
) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
    for (i, (label, colour)) in items.iter().enumerate() {
        let x = x0 + step * i as i32;
        area.draw(&Rectangle::new([(x, 10), (x + 18, 24)], colour.filled()))?;
        area.draw(&Text::new(label.clone(), (x + 24, 11), ("sans-serif", 13)))?;
    }
    Ok(())
}

/// The name of the row at axis value `y` (rows sit at 0, 1, ...); nothing between rows.
pub fn row_label(labels: &[String], y: f64) -> String {
    let i = y.round();
    if (y - i).abs() < 1e-9 && i >= 0.0 {
        labels.get(i as usize).cloned().unwrap_or_default()
    } else {
        String::new()
    }
}
