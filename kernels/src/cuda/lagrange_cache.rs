//! H's bases in Lagrange form kept on disk (`lagrange.rs` makes them in ~12 s at 2 KiB and
//! ~5.7 min at 32 GiB on an H200): one file per H, named by the size and a digest of H's
//! bytes, so a gpu process that starts again with the same parameters reads LC and LD'
//! instead of making them.
//!
//! File: `lagrange-2^<log n>-<first 16 hex digits of the digest>.bin` in the cache
//! directory:
//!
//!   magic "CUZKLAG1" | log n (u32 LE) | 0 (u32) | digest of H (32 bytes)
//!   | LC (n points, 96 bytes each, as blst keeps them) | LD' (n points)
//!   | checksum of everything before it (32 bytes)
//!
//! Digests are SHA-256 over 64 MiB chunks hashed in parallel, then over the chunks'
//! digests (an hour of one core's SHA-256 at 32 GiB becomes seconds). A file whose header,
//! length or checksum does not match is not used (the bases are made again and the file
//! written anew); it is written to a temporary name and renamed, so a reader never sees
//! half a file, and a write that fails (a full disk) or a writer killed midway leaves no
//! temporary file behind past the next store. What a file holds is trusted as far as the
//! checksum goes: a proof made from wrong bases would fail the verification every proof
//! passes before it is written.

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use blstrs::G1Affine;
use group::prime::PrimeCurveAffine;
use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::layout::bytes_of;

/// LC and LD', n points each.
pub type LagrangeBases = (Vec<G1Affine>, Vec<G1Affine>);

const MAGIC: &[u8; 8] = b"CUZKLAG1";
const HEADER: usize = 8 + 4 + 4 + 32;
const POINT: usize = 96;
const CHUNK: usize = 64 << 20;

/// SHA-256 over the SHA-256 digests of `bytes`' 64 MiB chunks (computed in parallel).
pub fn digest(bytes: &[u8]) -> [u8; 32] {
    let parts: Vec<[u8; 32]> = bytes
        .par_chunks(CHUNK)
        .map(|c| Sha256::digest(c).into())
        .collect();
    let mut h = Sha256::new();
    h.update((bytes.len() as u64).to_le_bytes());
    for p in &parts {
        h.update(p);
    }
    h.finalize().into()
}

/// Where the cache file of these H bases lies in `dir`, and H's digest.
pub fn file_for(dir: &Path, h: &[G1Affine]) -> (PathBuf, [u8; 32]) {
    let d = digest(bytes_of(h));
    let n = h.len() + 1;
    let hex: String = d[..8].iter().map(|b| format!("{b:02x}")).collect();
    (
        dir.join(format!("lagrange-2^{}-{hex}.bin", n.trailing_zeros())),
        d,
    )
}

/// LC and LD' for `h` from `dir`, or None when there is no file for it or the file does
/// not hold what its header says (the reason is returned with None for the log).
pub fn load(dir: &Path, h: &[G1Affine]) -> (Option<LagrangeBases>, String) {
    let (path, want) = file_for(dir, h);
    match read(&path, h.len() + 1, &want) {
        Ok(v) => (Some(v), format!("read from {}", path.display())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            (None, format!("no file {} yet", path.display()))
        }
        Err(e) => (None, format!("{} not used: {e}", path.display())),
    }
}

fn bad(why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, why.to_string())
}

fn read(path: &Path, n: usize, want: &[u8; 32]) -> io::Result<LagrangeBases> {
    let mut f = fs::File::open(path)?;
    let len = f.metadata()?.len() as usize;
    if len != HEADER + 2 * n * POINT + 32 {
        return Err(bad("its length is not that of 2^k points twice"));
    }
    let mut head = [0u8; HEADER];
    f.read_exact(&mut head)?;
    if &head[..8] != MAGIC
        || u32::from_le_bytes(head[8..12].try_into().unwrap()) != n.trailing_zeros()
        || &head[16..48] != want
    {
        return Err(bad("its header names another H"));
    }
    let read_points = |f: &mut fs::File| -> io::Result<Vec<G1Affine>> {
        let mut v = vec![G1Affine::identity(); n];
        // SAFETY: G1Affine is blst's repr(C) affine point, 96 bytes of u64 limbs, for which
        // every bit pattern is a value; the slice covers exactly the vector's elements.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, std::mem::size_of_val(&v[..]))
        };
        f.read_exact(bytes)?;
        Ok(v)
    };
    let lc = read_points(&mut f)?;
    let ld = read_points(&mut f)?;
    let mut sum = [0u8; 32];
    f.read_exact(&mut sum)?;
    if sum != checksum(&head, &lc, &ld) {
        return Err(bad("its checksum does not match its contents"));
    }
    Ok((lc, ld))
}

fn checksum(head: &[u8], lc: &[G1Affine], ld: &[G1Affine]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(head);
    h.update(digest(bytes_of(lc)));
    h.update(digest(bytes_of(ld)));
    h.finalize().into()
}

/// Writes LC and LD' of `h` into `dir` (created if missing): a temporary file, then
/// renamed over the final name. Returns the path.
pub fn store(dir: &Path, h: &[G1Affine], lc: &[G1Affine], ld: &[G1Affine]) -> io::Result<PathBuf> {
    let n = h.len() + 1;
    if lc.len() != n || ld.len() != n {
        return Err(bad("LC and LD' must hold n points each"));
    }
    fs::create_dir_all(dir)?;
    let (path, d) = file_for(dir, h);
    let mut head = [0u8; HEADER];
    head[..8].copy_from_slice(MAGIC);
    head[8..12].copy_from_slice(&n.trailing_zeros().to_le_bytes());
    head[16..48].copy_from_slice(&d);
    write_then_rename(&path, |f| {
        f.write_all(&head)?;
        f.write_all(bytes_of(lc))?;
        f.write_all(bytes_of(ld))?;
        f.write_all(&checksum(&head, lc, ld))
    })?;
    Ok(path)
}

/// `path` written by `fill` under `<path stem>.tmp<pid>`, synced and renamed into place. A
/// write that fails (a full disk: the file is 24 GiB at 32 GiB) removes its temporary file,
/// and the temporary files of processes that are gone (killed while writing) are removed
/// first, so restarts do not pile them up. (The drop directory's own write-then-rename
/// takes one slice already in memory and lives in a crate above this one; this streams
/// several vectors, 24 GiB at 32 GiB.)
fn write_then_rename(
    path: &Path,
    fill: impl FnOnce(&mut io::BufWriter<fs::File>) -> io::Result<()>,
) -> io::Result<()> {
    remove_dead_temps(path);
    let tmp = temp_name(path, std::process::id());
    let written = (|| {
        let mut f = io::BufWriter::with_capacity(8 << 20, fs::File::create(&tmp)?);
        fill(&mut f)?;
        f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

fn temp_name(path: &Path, pid: u32) -> PathBuf {
    path.with_extension(format!("tmp{pid}"))
}

/// Removes `path`'s temporary files whose writer process no longer runs (another gpu
/// process may be writing the same file for its own device: its file stays).
fn remove_dead_temps(path: &Path) {
    let (Some(dir), Some(stem)) = (path.parent(), path.file_stem().and_then(|s| s.to_str())) else {
        return;
    };
    let prefix = format!("{stem}.tmp");
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(pid) = pid {
            if !Path::new(&format!("/proc/{pid}")).exists() {
                let _ = fs::remove_file(e.path());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::G1Projective;
    use group::{Curve, Group};
    use rand_chacha::rand_core::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn points(n: usize, seed: u64) -> Vec<G1Affine> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|_| G1Projective::random(&mut rng).to_affine())
            .collect()
    }

    /// Stored bases come back equal; another H, a flipped byte, a cut file and a foreign
    /// file at the name are each refused with a reason, not read.
    #[test]
    fn stored_bases_come_back_and_damaged_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let h = points(15, 1);
        let (lc, ld) = (points(16, 2), points(16, 3));
        assert!(load(dir.path(), &h).0.is_none(), "nothing stored yet");
        let path = store(dir.path(), &h, &lc, &ld).unwrap();
        let (got, why) = load(dir.path(), &h);
        assert_eq!(got, Some((lc.clone(), ld.clone())), "{why}");
        // Another H of the same size: another name, so no file.
        let other = points(15, 4);
        let (none, why) = load(dir.path(), &other);
        assert!(none.is_none() && why.contains("no file"), "{why}");
        let good = fs::read(&path).unwrap();
        let damaged = |bytes: Vec<u8>, want: &str| {
            fs::write(&path, bytes).unwrap();
            let (none, why) = load(dir.path(), &h);
            assert!(none.is_none() && why.contains(want), "{why}");
        };
        let mut flipped = good.clone();
        flipped[HEADER + 100] ^= 1;
        damaged(flipped, "checksum");
        damaged(good[..good.len() - 1].to_vec(), "length");
        let mut foreign = good.clone();
        foreign[20] ^= 1;
        damaged(foreign, "header");
        // Written again over the damaged file: read back.
        store(dir.path(), &h, &lc, &ld).unwrap();
        assert!(load(dir.path(), &h).0.is_some());
        assert!(store(dir.path(), &h, &lc[..3], &ld).is_err());
    }

    /// A write that fails leaves no temporary file; a dead process's temporary file is
    /// removed by the next store, a live one's is left alone.
    #[test]
    fn failed_writes_and_dead_writers_leave_no_temporary_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lagrange-2^4-0011223344556677.bin");
        let failed = write_then_rename(&path, |f| {
            f.write_all(&[1u8; 1000])?;
            f.flush()?;
            Err(io::Error::other("disk full"))
        });
        assert!(failed.is_err());
        let names = || -> Vec<String> {
            let mut v: Vec<String> = fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            v.sort();
            v
        };
        assert!(names().is_empty(), "{:?}", names());
        // pid 1 runs; a pid above the kernel's pid_max (2^22) never does.
        let live = temp_name(&path, 1);
        let dead = temp_name(&path, (1 << 22) + 1);
        let other = dir.path().join("lagrange-2^5-8899aabbccddeeff.tmp4194305");
        for p in [&live, &dead, &other] {
            fs::write(p, b"half").unwrap();
        }
        write_then_rename(&path, |f| f.write_all(b"whole")).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"whole");
        let mut want = vec![
            path.file_name().unwrap().to_str().unwrap().to_string(),
            live.file_name().unwrap().to_str().unwrap().to_string(),
            other.file_name().unwrap().to_str().unwrap().to_string(),
        ];
        want.sort();
        assert_eq!(names(), want, "the dead writer's file of this name went");
    }

    /// The digest covers every byte and the length, across chunk edges.
    #[test]
    fn the_digest_sees_every_byte() {
        let a = vec![7u8; CHUNK + 10];
        let mut b = a.clone();
        b[CHUNK + 3] = 8;
        assert_ne!(digest(&a), digest(&b));
        assert_ne!(digest(&a[..CHUNK]), digest(&a[..CHUNK + 1]));
        assert_eq!(digest(&a), digest(&a.clone()));
    }
}
