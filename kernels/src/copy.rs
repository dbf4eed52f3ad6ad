//! Large copies on the pool's threads: one thread's memcpy of a 32 GiB partition's
//! buffers (hundreds of MB to GB) would be a serial tail beside parallel work, and a
//! single core does not reach the host's memory bandwidth.

use rayon::prelude::*;

/// Bytes one thread copies at a time: large against the task's overhead, small enough to
/// spread a 256 MiB buffer over 64 tasks.
const PIECE_BYTES: usize = 4 << 20;

/// `to.copy_from_slice(from)`, in pieces on the pool's threads.
pub fn copy_on_threads<T: Copy + Send + Sync>(to: &mut [T], from: &[T]) {
    assert_eq!(
        to.len(),
        from.len(),
        "copy between slices of different lengths"
    );
    let piece = (PIECE_BYTES / std::mem::size_of::<T>().max(1)).max(1);
    to.par_chunks_mut(piece)
        .zip(from.par_chunks(piece))
        .for_each(|(t, f)| t.copy_from_slice(f));
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
}
