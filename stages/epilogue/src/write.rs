//! Writing a verified proof: the raw bytes, and beside them (`<proof>.json`) the result
//! record, each atomically (temporary file in the same directory, fsync, rename, fsync of
//! the directory), so a reader never sees a partial file and a crash leaves none.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine;
use serde::Serialize;

use crate::error::EpilogueError;

/// What the JSON result records besides the proof.
#[derive(Debug, Clone)]
pub struct ResultRecord<'a> {
    pub job: &'a str,
    pub c1_file: &'a Path,
    pub proof_type: String,
    pub sector_num: Option<u64>,
    pub miner_id: Option<u64>,
    /// Wall time of each step, named by the caller.
    pub timings: &'a BTreeMap<String, Duration>,
}

#[derive(Serialize)]
struct ResultJson<'a> {
    job: &'a str,
    c1_file: String,
    proof_type: &'a str,
    sector_num: Option<u64>,
    miner_id: Option<u64>,
    proof_len: usize,
    proof_base64: String,
    timings_ms: BTreeMap<&'a str, f64>,
}

/// The path of the JSON result written beside `proof_path`.
pub fn result_path(proof_path: &Path) -> PathBuf {
    let mut name = proof_path.file_name().unwrap_or_default().to_os_string();
    name.push(".json");
    proof_path.with_file_name(name)
}

/// The JSON result for `proof`, as written beside it.
pub fn result_json(proof: &[u8], record: &ResultRecord<'_>) -> Vec<u8> {
    let json = ResultJson {
        job: record.job,
        c1_file: record.c1_file.display().to_string(),
        proof_type: &record.proof_type,
        sector_num: record.sector_num,
        miner_id: record.miner_id,
        proof_len: proof.len(),
        proof_base64: base64::engine::general_purpose::STANDARD.encode(proof),
        timings_ms: record
            .timings
            .iter()
            .map(|(step, took)| (step.as_str(), took.as_secs_f64() * 1e3))
            .collect(),
    };
    let mut json_bytes = serde_json::to_vec_pretty(&json).expect("the result serializes");
    json_bytes.push(b'\n');
    json_bytes
}

/// Writes the JSON result, then the proof: once the proof exists, its result does too.
/// Returns the result's path.
pub fn write_proof(
    proof_path: &Path,
    proof: &[u8],
    record: &ResultRecord<'_>,
) -> Result<PathBuf, EpilogueError> {
    let json_bytes = result_json(proof, record);
    let json_path = result_path(proof_path);
    write_atomically(&json_path, &json_bytes)?;
    write_atomically(proof_path, proof)?;
    Ok(json_path)
}

/// Replaces `path` with `bytes` atomically.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), EpilogueError> {
    let failed = |source| EpilogueError::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| {
        failed(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a file path",
        ))
    })?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(name);
    temp_name.push(format!(".tmp.{}", std::process::id()));
    let temp = dir.join(temp_name);

    let written = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temp, path)?;
        // The rename is durable only once the directory entry is.
        File::open(dir)?.sync_all()
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written.map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_sits_beside_the_proof() {
        assert_eq!(
            result_path(Path::new("/out/s-t01000-11.proof")),
            Path::new("/out/s-t01000-11.proof.json")
        );
        assert_eq!(result_path(Path::new("p")), Path::new("p.json"));
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("proof");
        write_atomically(&path, b"first").unwrap();
        write_atomically(&path, b"second").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"second");
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "only the proof remains");
    }

    #[test]
    fn write_into_a_missing_directory_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("absent").join("proof");
        let err = write_atomically(&path, b"x").unwrap_err();
        assert!(err.to_string().contains(&*path.to_string_lossy()), "{err}");
    }
}
