//! Which files in `incoming/` are complete C1 files.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::fs::Metadata;
use std::io;
use std::path::PathBuf;
use std::time::SystemTime;

use crate::{c1_stem, DropDir, DropDirError};

impl DropDir {
    /// Complete C1 files in `incoming/`, oldest first (modification time, then name).
    ///
    /// Complete means: a regular file (not a symlink) named `<name>.json`, not starting with
    /// a dot. Writers write elsewhere, or under a dot name or a non-`.json` name in
    /// `incoming/`, and then rename into place. Anything else is left alone and reported
    /// once per name with a warning.
    pub fn scan_incoming(&mut self) -> Result<Vec<PathBuf>, DropDirError> {
        let entries = std::fs::read_dir(&self.incoming)
            .map_err(DropDirError::io("read directory", &self.incoming))?;
        let mut found = Vec::new();
        let mut ignored = HashSet::new();
        for entry in entries {
            let entry = entry.map_err(DropDirError::io("read directory", &self.incoming))?;
            let path = entry.path();
            let meta = match path.symlink_metadata() {
                Ok(meta) => meta,
                // Claimed or renamed away since the listing.
                Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
                Err(err) => return Err(DropDirError::io("stat", &path)(err)),
            };
            let name = entry.file_name();
            match why_not_c1(&name, &meta) {
                None => {
                    let mtime = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                    found.push((mtime, name, path));
                }
                Some(why) => {
                    if !self.warned.contains(&name) {
                        tracing::warn!(
                            path = %path.display(),
                            "drop directory: ignoring {}: {why}; only complete <name>.json files, renamed into place, are taken",
                            name.to_string_lossy(),
                        );
                        self.warned.insert(name.clone());
                    }
                    ignored.insert(name);
                }
            }
        }
        self.warned.retain(|name| ignored.contains(name));
        found.sort();
        Ok(found.into_iter().map(|(_, _, path)| path).collect())
    }
}

/// The longest C1 file name taken, in bytes. Every name made from a job's stem must fit
/// the 255 bytes a file name has on Linux file systems; the longest, a rejected duplicate's
/// reason under its temporary name (`.<stem>.dup-<k>.reason.tmp`), is the stem and up to 27
/// bytes. A longer name would be proved and its proof then never written: left in
/// `incoming/` with a warning instead.
pub const MAX_C1_NAME_BYTES: usize = 200;

/// Why an entry of `incoming/` is not a complete C1 file, or `None` when it is one.
fn why_not_c1(name: &OsStr, meta: &Metadata) -> Option<&'static str> {
    if name.as_encoded_bytes().starts_with(b".") {
        Some("a dot name is a file still being written")
    } else if c1_stem(name).is_none() {
        Some("not a .json name")
    } else if name.len() > MAX_C1_NAME_BYTES {
        Some("the name is longer than 200 bytes (MAX_C1_NAME_BYTES), too long for the names of its outputs; rename it shorter")
    } else if !meta.file_type().is_file() {
        Some("not a regular file")
    } else {
        None
    }
}
