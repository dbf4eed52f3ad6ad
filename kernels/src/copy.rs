//! Large copies on the pool's threads: one thread's memcpy of a 32 GiB partition's
//! buffers (hundreds of MB to GB) would be a serial tail beside parallel work, and a
//! single core does not reach the host's memory bandwidth.

use rayon::prelude::*;

/// Bytes one thread copies at a time: large against the task's overhead, small enough to
/// spread a 256 MiB buffer over 64 tasks.
const PIECE_BYTES: usize = 4 << 20;

/// `to.copy_from_slice(from)`, in pieces on the pool's threads.
pub fn copy_on_threads<T: Copy + Send + Sync>(to: &mut [T], from: &[T]) {
    gather_on_threads(to, &[from]);
}

/// The sources one after another into `to` (their lengths sum to its length), in pieces
/// on the pool's threads: a source larger than a piece is split, and many small ones
/// (prep_msm's ~2000 chunk lists a plan) spread over the threads as they are.
pub fn gather_on_threads<T: Copy + Send + Sync>(to: &mut [T], from: &[&[T]]) {
    assert_eq!(
        to.len(),
        from.iter().map(|f| f.len()).sum::<usize>(),
        "copy between slices of different lengths"
    );
    let piece = (PIECE_BYTES / std::mem::size_of::<T>().max(1)).max(1);
    let mut rest = to;
    let mut work = Vec::new();
    for f in from {
        for f in f.chunks(piece) {
            let (t, r) = std::mem::take(&mut rest).split_at_mut(f.len());
            work.push((t, f));
            rest = r;
        }
    }
    work.into_par_iter().for_each(|(t, f)| t.copy_from_slice(f));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_every_element_across_pieces() {
        let from: Vec<u32> = (0..(3 << 20) + 5).collect();
        let mut to = vec![0u32; from.len()];
        copy_on_threads(&mut to, &from);
        assert_eq!(to, from);
    }

    /// Sources of every size (empty, one element, several pieces) land one after another.
    #[test]
    fn gathers_sources_in_order() {
        let sizes = [0usize, 1, (1 << 20) + 3, 0, 7, (2 << 20) + 1];
        let mut next = 0u32;
        let from: Vec<Vec<u32>> = sizes
            .iter()
            .map(|&n| {
                next += n as u32;
                (next - n as u32..next).collect()
            })
            .collect();
        let refs: Vec<&[u32]> = from.iter().map(|f| &f[..]).collect();
        let mut to = vec![u32::MAX; next as usize];
        gather_on_threads(&mut to, &refs);
        assert!(to.iter().enumerate().all(|(i, &v)| v == i as u32));
    }
}
