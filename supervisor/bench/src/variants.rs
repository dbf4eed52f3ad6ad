//! Builds side by side: the rows of `cuzk-gpu-check` reports from several builds of the
//! kernels (variants), run in one device call, as one table with each variant's best time a
//! row and its ratio to the first variant's. A report row is
//! `{what:<44} {ok|FAIL|-:>5} {gpu ms:10.2} {cpu ms or -:>10} {note}` (kernels/src/bin/
//! cuzk-gpu-check/main.rs); a scale row's note carries its steps as `name value` pairs
//! (`upload 246 ntt 246 msm_h 807 ...`), which become rows of their own (`<what> · msm_h`).
//! Several logs of one variant (rounds) fold into the best (smallest) time of each row.

use serde::Serialize;

use crate::steps::note_fields;

/// One row of a report.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportRow {
    /// The row's label, its words joined by single spaces.
    pub what: String,
    /// `Some(true)` for ok, `Some(false)` for FAIL, `None` for a timing without a check.
    pub ok: Option<bool>,
    pub gpu_ms: f64,
    pub note: String,
}

/// The rows of one `cuzk-gpu-check` output. The binary prints each row as it goes and the
/// whole table again at the end, after a `== cuzk-gpu-check` line: when that line is there,
/// only what follows the last one is read, so no row counts twice.
pub fn report_rows(log: &str) -> Vec<ReportRow> {
    let body = log
        .rfind("\n== cuzk-gpu-check")
        .map_or(log, |at| &log[at + 1..]);
    body.lines().filter_map(parse_row).collect()
}

/// A report row, or None for any other line (headers, device lines, `failures: 0`).
pub fn parse_row(line: &str) -> Option<ReportRow> {
    let words: Vec<&str> = line.split_whitespace().collect();
    // The first (status, gpu ms, cpu ms) triple after at least one word of label.
    (1..words.len().saturating_sub(2)).find_map(|i| {
        let ok = match words[i] {
            "ok" => Some(true),
            "FAIL" => Some(false),
            "-" => None,
            _ => return None,
        };
        let gpu_ms: f64 = words[i + 1].parse().ok()?;
        if words[i + 2] != "-" && words[i + 2].parse::<f64>().is_err() {
            return None;
        }
        let note = words[i + 3..].join(" ");
        Some(ReportRow {
            what: words[..i].join(" "),
            ok,
            gpu_ms,
            note,
        })
    })
}

/// A row of the comparison: one measured quantity, each variant's best ms (None where that
/// variant's logs lack it) and how many values that best was taken from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Compared {
    pub what: String,
    pub best_ms: Vec<Option<f64>>,
    pub values: Vec<usize>,
}

impl Compared {
    /// first / this for each variant (above 1: faster than the first variant).
    pub fn ratios(&self) -> Vec<Option<f64>> {
        let first = self.best_ms.first().copied().flatten();
        self.best_ms
            .iter()
            .map(|b| match (first, b) {
                (Some(f), Some(t)) if *t > 0.0 => Some(f / t),
                _ => None,
            })
            .collect()
    }
}

/// The comparison of the variants' logs: rows in the order they first appear, the rows
/// that carry a time (gpu ms above 0) and their steps (non-zero `name value` pairs of the
/// note); and each variant's failed checks (rows marked FAIL, and `ERROR:` lines: a run
/// the error stopped).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub variants: Vec<String>,
    pub rows: Vec<Compared>,
    pub failures: Vec<Vec<String>>,
}

/// `logs`: (variant name, log text) pairs, a variant named once or more (one log a round).
/// Variants keep the order of their first log.
pub fn compare(logs: &[(String, String)]) -> Comparison {
    let mut variants: Vec<String> = Vec::new();
    for (v, _) in logs {
        if !variants.contains(v) {
            variants.push(v.clone());
        }
    }
    let n = variants.len();
    let mut rows: Vec<Compared> = Vec::new();
    let mut failures = vec![Vec::new(); n];
    for (v, log) in logs {
        let vi = variants.iter().position(|x| x == v).expect("named above");
        // A run stopped by an error (`ERROR: ...`, then the report so far) failed too.
        for line in log.lines().filter(|l| l.starts_with("ERROR:")) {
            failures[vi].push(line.trim().to_string());
        }
        for row in report_rows(log) {
            if row.ok == Some(false) {
                failures[vi].push(row.what.clone());
            }
            if row.gpu_ms <= 0.0 {
                continue;
            }
            put(&mut rows, n, row.what.clone(), vi, row.gpu_ms);
            for (name, ms) in note_fields(&row.note) {
                if ms > 0.0 {
                    put(&mut rows, n, format!("{} · {name}", row.what), vi, ms);
                }
            }
        }
    }
    Comparison {
        variants,
        rows,
        failures,
    }
}

/// Folds one value into row `what` (made at the end when new) for variant `vi` of `n`.
fn put(rows: &mut Vec<Compared>, n: usize, what: String, vi: usize, ms: f64) {
    let at = match rows.iter().position(|r| r.what == what) {
        Some(at) => at,
        None => {
            rows.push(Compared {
                what,
                best_ms: vec![None; n],
                values: vec![0; n],
            });
            rows.len() - 1
        }
    };
    let r = &mut rows[at];
    r.best_ms[vi] = Some(r.best_ms[vi].map_or(ms, |b| b.min(ms)));
    r.values[vi] += 1;
}

/// The comparison as a text table: a column of best ms a variant, then first/this ratios.
pub fn table(c: &Comparison) -> String {
    let width = c
        .rows
        .iter()
        .map(|r| r.what.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut out = format!("{:<width$}", "row");
    for v in &c.variants {
        out += &format!(" {v:>12}");
    }
    for v in c.variants.iter().skip(1) {
        out += &format!(" {:>12}", format!("{}/{v}", c.variants[0]));
    }
    out.push('\n');
    for r in &c.rows {
        out += &format!("{:<width$}", r.what);
        for (b, k) in r.best_ms.iter().zip(&r.values) {
            out += &match b {
                Some(ms) if *k > 1 => format!(" {:>12}", format!("{ms:.2} ({k})")),
                Some(ms) => format!(" {ms:>12.2}"),
                None => format!(" {:>12}", "-"),
            };
        }
        for q in r.ratios().iter().skip(1) {
            out += &match q {
                Some(q) => format!(" {:>11.3}x", q),
                None => format!(" {:>12}", "-"),
            };
        }
        out.push('\n');
    }
    for (v, f) in c.variants.iter().zip(&c.failures) {
        let which = if f.is_empty() {
            String::new()
        } else {
            format!(" ({})", f.join("; "))
        };
        out += &format!("{v}: {} failed checks{which}\n", f.len());
    }
    out
}
