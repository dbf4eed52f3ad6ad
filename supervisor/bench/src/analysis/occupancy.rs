//! Slot occupancy: how many partition slots hold work over time.
//!
//! A slot is busy from a partition's SYNTH_START to its EPILOGUE_END (or until a
//! SLOT_RETURNED gives it back). Slots are the admission bound: when all of them are busy
//! most of the time while no stage is, the slot count bounds throughput.

use std::collections::{BTreeSet, HashMap};

use cuzk_shm_layout::timeline::{names, TimelineEvent};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SlotOccupancy {
    /// Slot numbers seen in the log (or the count given on the command line).
    pub slots: usize,
    /// Time-weighted mean of busy slots over the span.
    pub mean_busy: f64,
    pub max_busy: usize,
    /// Fraction of the span with every slot busy.
    pub all_busy_fraction: f64,
    /// Occupancies the log ends inside (interrupted or still running).
    pub unfinished: usize,
    /// Busy slots from each change on: (seconds from the first event, busy slots).
    pub series: Vec<(f64, usize)>,
    /// Mean busy slots in each tenth of the span, in order: the shape of the run (fill,
    /// steady state, drain) at a glance.
    pub by_tenth: Vec<f64>,
}

/// Time-weighted mean of the step function `series` (value held from each point on, 0
/// before the first) over each of `parts` equal parts of `[0, span_s]`.
pub fn mean_by_part(series: &[(f64, usize)], span_s: f64, parts: usize) -> Vec<f64> {
    if span_s <= 0.0 {
        return vec![0.0; parts];
    }
    let width = span_s / parts as f64;
    (0..parts)
        .map(|i| {
            let (lo, hi) = (i as f64 * width, (i + 1) as f64 * width);
            let mut area = 0.0;
            for (k, &(t, busy)) in series.iter().enumerate() {
                let next = series.get(k + 1).map_or(span_s, |s| s.0);
                let overlap = next.min(hi) - t.max(lo);
                if overlap > 0.0 {
                    area += overlap * busy as f64;
                }
            }
            area / width
        })
        .collect()
}

/// What the log says about one partition's hold on its slot.
#[derive(Default)]
struct Hold {
    start: Option<u64>,
    epilogue_end: Option<u64>,
    /// The time of the partition's last event, and whether that was a SLOT_RETURNED.
    last: (u64, bool),
}

/// `events` sorted by time; `slots` overrides the count seen in the log.
///
/// A partition holds its slot from its first SYNTH_START to its EPILOGUE_END. Without an
/// EPILOGUE_END it held it until a SLOT_RETURNED that was its last event (its job failed);
/// otherwise until the end of the log (counted unfinished). A SLOT_RETURNED followed by more
/// work (recovery put the slot back one state) does not end the hold.
pub fn occupancy(events: &[&TimelineEvent], slots: Option<usize>) -> SlotOccupancy {
    let (first, last) = super::pairing::span_of(events);
    let mut seen = BTreeSet::new();
    let mut holds: HashMap<(Option<u64>, Option<u32>), Hold> = HashMap::new();
    for e in events {
        if e.partition.is_none() {
            continue; // job- and process-level events
        }
        if let Some(slot) = e.slot {
            seen.insert(slot);
        }
        let hold = holds.entry((e.job, e.partition)).or_default();
        match e.event.as_str() {
            names::SYNTH_START => {
                hold.start.get_or_insert(e.mono_ns);
            }
            names::EPILOGUE_END => hold.epilogue_end = Some(e.mono_ns),
            _ => {}
        }
        hold.last = (e.mono_ns, e.event == names::SLOT_RETURNED);
    }
    let mut unfinished = 0;
    let mut changes: Vec<(u64, i64)> = Vec::new();
    for hold in holds.values() {
        let Some(start) = hold.start else { continue };
        let end = match (hold.epilogue_end, hold.last) {
            (Some(end), _) => end,
            (None, (t, true)) => t,
            (None, _) => {
                unfinished += 1;
                last
            }
        };
        changes.push((start, 1));
        changes.push((end.max(start), -1));
    }
    let slots = slots.unwrap_or(seen.len());
    changes.sort_unstable();
    let (mut busy, mut at, mut weighted, mut full, mut max_busy) = (0i64, first, 0u128, 0u64, 0);
    let mut series = Vec::new();
    for (t, delta) in changes {
        let dt = t - at;
        weighted += busy as u128 * dt as u128;
        if slots > 0 && busy as usize >= slots {
            full += dt;
        }
        busy += delta;
        at = t;
        max_busy = max_busy.max(busy as usize);
        match series.last_mut() {
            Some((last_t, b)) if *last_t == (t - first) as f64 / 1e9 => *b = busy as usize,
            _ => series.push(((t - first) as f64 / 1e9, busy as usize)),
        }
    }
    // Every hold ends by `last`, so nothing is busy after the last change.
    let span = (last - first).max(1);
    let by_tenth = mean_by_part(&series, (last - first) as f64 / 1e9, 10);
    SlotOccupancy {
        by_tenth,
        slots,
        mean_busy: weighted as f64 / span as f64,
        max_busy,
        all_busy_fraction: full as f64 / span as f64,
        unfinished,
        series,
    }
}

#[cfg(test)]
mod tests {
    use super::mean_by_part;

    #[test]
    fn mean_of_a_step_function_by_part() {
        // 0 until 1 s, 2 until 3 s, 1 until 4 s.
        let series = [(1.0, 2), (3.0, 1)];
        assert_eq!(mean_by_part(&series, 4.0, 2), vec![1.0, 1.5]);
        assert_eq!(mean_by_part(&series, 4.0, 4), vec![0.0, 2.0, 2.0, 1.0]);
        assert_eq!(mean_by_part(&[], 0.0, 3), vec![0.0; 3]);
    }
}
