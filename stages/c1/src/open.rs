//! Reading a C1 file's bytes safely. Drop-directory files come from other programs: a name
//! checked as a regular file when scanned can be replaced before it is read, by a symbolic
//! link (to `/dev/zero`, to a file elsewhere), a FIFO (a read that never returns, stopping
//! the supervisor's loop) or something far larger than any C1 (read whole, it exhausts the
//! supervisor's memory). So such a file is opened without following links and without
//! blocking, and what was opened is checked before a byte is read. A path an operator names
//! on the command line may be a link (followed), and gets the same checks otherwise.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use crate::error::C1Error;

/// The largest C1 file read. The largest real ones are NonInteractivePoRep outputs of 64
/// GiB sectors: ~12.6x the challenges of an interactive C1 (~50 MB at 32 GiB), under 1 GB;
/// this leaves room for their base64 envelope and then some.
pub const MAX_C1_BYTES: u64 = 4 << 30;

/// Whether a C1's path may be a symbolic link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// A path named by an operator (`cuzk prove --c1 latest.json`).
    Follow,
    /// A drop-directory file: a link is refused.
    Refuse,
}

/// The whole of `file`, which must be a regular file (not a FIFO or device; not a link
/// either, with [`Links::Refuse`]) of at most [`MAX_C1_BYTES`], not empty.
pub fn read_c1_bytes(file: &Path, links: Links) -> Result<Vec<u8>, C1Error> {
    let read_error = |source| C1Error::Read {
        file: file.to_path_buf(),
        source,
    };
    // NOFOLLOW: a link is refused (ELOOP) rather than followed; NONBLOCK: opening a FIFO
    // returns at once instead of waiting for a writer; NOCTTY: a terminal swapped in does
    // not become the supervisor's.
    let nofollow = if links == Links::Refuse {
        libc::O_NOFOLLOW
    } else {
        0
    };
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nofollow | libc::O_NONBLOCK | libc::O_NOCTTY)
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
    // A regular file: blocking reads again (a FUSE file system may answer EAGAIN to a
    // non-blocking one).
    // SAFETY: fcntl on a descriptor this function owns, with integer arguments only.
    let cleared = unsafe {
        use std::os::fd::AsRawFd;
        let fd = f.as_raw_fd();
        let flags = libc::fcntl(fd, libc::F_GETFL);
        flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) == 0
    };
    if !cleared {
        return Err(read_error(std::io::Error::last_os_error()));
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
