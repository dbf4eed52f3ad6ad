//! Reading a C1 file's bytes safely. The files come from a drop directory other programs
//! write into: a name checked as a regular file when scanned can be replaced before it is
//! read, by a symbolic link (to `/dev/zero`, to a file elsewhere), a FIFO (a read that
//! never returns, stopping the supervisor's loop) or something far larger than any C1
//! (read whole, it exhausts the supervisor's memory). So the file is opened without
//! following links and without blocking, and what was opened is checked before a byte is
//! read.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use crate::error::C1Error;

/// The largest C1 file read. The largest real ones are NonInteractivePoRep outputs of 64
/// GiB sectors: ~12.6x the challenges of an interactive C1 (~50 MB at 32 GiB), under 1 GB;
/// this leaves room for their base64 envelope and then some.
pub const MAX_C1_BYTES: u64 = 4 << 30;

/// The whole of `file`, which must be a regular file (not a link, FIFO or device) of at
/// most [`MAX_C1_BYTES`].
pub fn read_c1_bytes(file: &Path) -> Result<Vec<u8>, C1Error> {
    let read_error = |source| C1Error::Read {
        file: file.to_path_buf(),
        source,
    };
    let opened = std::fs::OpenOptions::new()
        .read(true)
        // NOFOLLOW: a link is refused (ELOOP) rather than followed; NONBLOCK: opening a
        // FIFO returns at once instead of waiting for a writer.
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(file);
    let mut f: File = match opened {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(C1Error::NotRegularFile {
                file: file.to_path_buf(),
                kind: "a symbolic link",
            })
        }
        Err(e) => return Err(read_error(e)),
    };
    // The type and size of what was opened (fstat), not of whatever the name points to now.
    let meta = f.metadata().map_err(read_error)?;
    let kind = meta.file_type();
    if !kind.is_file() {
        let kind = if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_dir() {
            "a directory"
        } else if kind.is_socket() {
            "a socket"
        } else if kind.is_char_device() || kind.is_block_device() {
            "a device"
        } else {
            "not a regular file"
        };
        return Err(C1Error::NotRegularFile {
            file: file.to_path_buf(),
            kind,
        });
    }
    let too_large = |bytes| C1Error::TooLarge {
        file: file.to_path_buf(),
        bytes,
        max: MAX_C1_BYTES,
    };
    if meta.len() > MAX_C1_BYTES {
        return Err(too_large(meta.len()));
    }
    // Bounded even so: the file may grow after the fstat.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    (&mut f)
        .take(MAX_C1_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() as u64 > MAX_C1_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    if bytes.is_empty() {
        return Err(C1Error::Empty {
            file: file.to_path_buf(),
        });
    }
    Ok(bytes)
}
