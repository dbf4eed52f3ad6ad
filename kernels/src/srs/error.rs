use std::path::PathBuf;

/// Why a parameter file could not be used. Every variant names the file; those about
/// content also name the vector and the byte offset.
#[derive(Debug, thiserror::Error)]
pub enum SrsError {
    #[error("{path}: cannot read parameter file: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: truncated in vector `{vector}`: needs {needed} bytes at offset {offset}, file has {file_len}")]
    Truncated {
        path: PathBuf,
        vector: &'static str,
        offset: u64,
        needed: u64,
        file_len: u64,
    },
    #[error(
        "{path}: invalid point {index} of vector `{vector}` at byte offset {offset}: {reason}"
    )]
    BadPoint {
        path: PathBuf,
        vector: &'static str,
        index: usize,
        offset: u64,
        reason: &'static str,
    },
    #[error("{path}: {extra} unexpected bytes after the last vector (offset {offset})")]
    TrailingBytes {
        path: PathBuf,
        offset: u64,
        extra: u64,
    },
    #[error("SRS image: {0}")]
    Image(&'static str),
}

impl SrsError {
    /// Whether the fault lies in the file's bytes (a bad point, a truncated vector, bytes
    /// after the last one): decoding the same file again fails the same way, unlike a
    /// read error or an image of the wrong size.
    pub fn is_in_the_file(&self) -> bool {
        matches!(
            self,
            SrsError::Truncated { .. } | SrsError::BadPoint { .. } | SrsError::TrailingBytes { .. }
        )
    }
}
