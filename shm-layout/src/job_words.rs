//! The job record's packed words: the done bits read at one moment, and text (the job's
//! name, its failure reason) kept zero padded in atomic words.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::job::{DONE_WORDS, MAX_PARTITIONS};

/// A job's done bits read at one moment (`JobView::done_bits`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DoneBits(pub(crate) [u64; DONE_WORDS]);

impl DoneBits {
    /// The word and the bit in it of `partition`.
    pub(crate) fn place(partition: u32) -> (usize, u64) {
        (partition as usize / 64, 1u64 << (partition % 64))
    }

    /// Whether `partition`'s bit is set.
    pub fn has(&self, partition: u32) -> bool {
        let (word, bit) = Self::place(partition);
        self.0.get(word).is_some_and(|w| w & bit != 0)
    }

    /// How many bits are set.
    pub fn count(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }

    /// The partitions whose bits are set, in order.
    pub fn partitions(&self) -> impl Iterator<Item = u32> + '_ {
        (0..MAX_PARTITIONS as u32).filter(|&p| self.has(p))
    }
}

/// Writes UTF-8 text zero padded into atomic words (truncated to fit).
pub(crate) fn store_text(words: &[AtomicU64], text: &str) {
    let mut bytes = vec![0u8; words.len() * 8];
    let mut n = text.len().min(bytes.len());
    while !text.is_char_boundary(n) {
        n -= 1;
    }
    bytes[..n].copy_from_slice(&text.as_bytes()[..n]);
    for (w, chunk) in words.iter().zip(bytes.chunks(8)) {
        w.store(
            u64::from_le_bytes(chunk.try_into().unwrap()),
            Ordering::Relaxed,
        );
    }
}

pub(crate) fn load_text(words: &[AtomicU64]) -> String {
    let bytes: Vec<u8> = words
        .iter()
        .flat_map(|w| w.load(Ordering::Relaxed).to_le_bytes())
        .take_while(|b| *b != 0)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}
