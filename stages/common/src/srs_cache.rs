//! The decoded SRS in shared memory: decoded once per parameter file into a segment
//! (`cuzk_shm_layout::SrsSegment`, under a lock, so concurrent stages wait for one
//! decode) and then read in place by every process that maps it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use cuzk_kernels::srs::{
    fill_image, fill_synthetic_image, image_len, synthetic_image_len, view_image, Srs, SrsView,
    Validation,
};
use cuzk_kernels::synthetic::SyntheticShape;
use cuzk_shm_layout::{SrsKey, SrsSegment};

use crate::params_check::{self, FileIdentity};
use crate::JobSpec;

/// Context on an SRS error whose fault lies in the parameter file's own bytes (a bad point,
/// a truncated vector), as opposed to this machine (a full /dev/shm, a file away while the
/// cache is fetched again): loading the same file fails the same way again.
#[derive(Debug)]
pub struct FaultInTheFile;

impl std::fmt::Display for FaultInTheFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the parameter file itself is faulty")
    }
}

/// Whether an error of `SrsCache::for_job` is the parameter file's own (the jobs proved
/// with it fail) rather than this machine's (a stage gives its slot back and restarts
/// after back-off, and the jobs wait).
pub fn is_fault_in_the_file(e: &anyhow::Error) -> bool {
    e.downcast_ref::<FaultInTheFile>().is_some()
        || e.chain().any(|c| {
            c.downcast_ref::<cuzk_kernels::srs::SrsError>()
                .is_some_and(|s| s.is_in_the_file())
        })
}

pub struct SrsCache {
    dir: PathBuf,
    trust_params: bool,
    segments: HashMap<PathBuf, SrsSegment>,
    /// Parameter files whose decode failed on their own bytes (a bad point, a truncated
    /// vector), with the identity they had then and the error. The next job of the same
    /// unchanged file is refused at once with that error instead of after another full
    /// decode (minutes at 32 GiB, on every job). Only the file's own faults are kept: a
    /// failure to create the segment (a full /dev/shm) or to read the file may pass, and is
    /// tried again. Replacing the file changes its identity, so it is loaded afresh.
    refused: HashMap<PathBuf, (FileIdentity, String)>,
}

impl SrsCache {
    /// Segments live in `dir` (the arena's directory, normally /dev/shm).
    pub fn new(dir: &Path, trust_params: bool) -> Self {
        SrsCache {
            dir: dir.to_path_buf(),
            trust_params,
            segments: HashMap::new(),
            refused: HashMap::new(),
        }
    }

    /// The proving key a job is proved with: its parameter file's, or for a synthetic job
    /// the synthetic SRS of its shape.
    pub fn for_job(&mut self, spec: &JobSpec) -> Result<SrsView<'_>> {
        match &spec.synthetic {
            Some(job) => self.synthetic(job.shape()?),
            None => self.get(&spec.params_path),
        }
    }

    /// The synthetic SRS of `shape`, in a segment of its own (filled by the first process
    /// that asks; seconds for a 32 GiB shape).
    pub fn synthetic(&mut self, shape: SyntheticShape) -> Result<SrsView<'_>> {
        let name = PathBuf::from(format!("synthetic:{}", shape.name));
        if !self.segments.contains_key(&name) {
            let counts = shape.srs_counts();
            let key = Self::synthetic_key(shape);
            let (segment, _) =
                SrsSegment::open_or_load(&self.dir, &key, synthetic_image_len(counts), |out| {
                    fill_synthetic_image(counts, out);
                    Ok(())
                })
                .with_context(|| format!("synthetic {} SRS into shared memory", shape.name))?;
            self.segments.insert(name.clone(), segment);
        }
        let seg = &self.segments[&name];
        view_image(seg.bytes()).with_context(|| format!("SRS segment {}", seg.path().display()))
    }

    /// The segment key of `shape`'s synthetic SRS.
    pub fn synthetic_key(shape: SyntheticShape) -> SrsKey {
        SrsKey::new(format!("synthetic-{}-v1", shape.name))
    }

    /// The proving key of `params`, mapping (and if nobody has yet, decoding) its segment.
    /// The first decode of a file checks every point fully unless it is marked checked
    /// (see `params_check`) or the operator trusts the parameters.
    pub fn get(&mut self, params: &Path) -> Result<SrsView<'_>> {
        if !self.segments.contains_key(params) {
            if let Some((seen, why)) = self.refused.get(params) {
                if params_check::identity(params).as_ref() == Some(seen) {
                    return Err(anyhow::anyhow!(
                        "{}: refused when this process last loaded it, and unchanged since \
                         (replace the file): {why}",
                        params.display()
                    )
                    .context(FaultInTheFile));
                }
            }
            let segment = self.load(params)?;
            self.segments.insert(params.to_path_buf(), segment);
        }
        let seg = &self.segments[params];
        view_image(seg.bytes()).with_context(|| format!("SRS segment {}", seg.path().display()))
    }

    /// The shared memory (bytes) that loading `params` would still take in this cache's
    /// directory: 0 when the segment a load would map is there, else the whole segment.
    /// The supervisor checks at start that its directory has room for it.
    pub fn bytes_to_load(&self, params: &Path) -> Result<u64> {
        let (key, checked_key) = Self::keys(params)?;
        let present = |k: &SrsKey| SrsSegment::segment_path(&self.dir, k).exists();
        let there = match params_check::validation_for(params, self.trust_params) {
            Validation::Full => present(&checked_key),
            Validation::Trusted => present(&checked_key) || present(&key),
        };
        Ok(if there {
            0
        } else {
            SrsSegment::bytes_in(&self.dir, image_len(&Srs::layout(params)?))
        })
    }

    /// The same for the synthetic SRS of `shape`.
    pub fn synthetic_bytes_to_load(&self, shape: SyntheticShape) -> u64 {
        let key = Self::synthetic_key(shape);
        if SrsSegment::segment_path(&self.dir, &key).exists() {
            0
        } else {
            SrsSegment::bytes_in(&self.dir, synthetic_image_len(shape.srs_counts()))
        }
    }

    /// The segment keys of `params`: the plain one and the one filled with the full check.
    fn keys(params: &Path) -> Result<(SrsKey, SrsKey)> {
        let key = SrsKey::of_file(params)?;
        let checked_key = SrsKey::new(format!("{}:full-check", key.as_str()));
        Ok((key, checked_key))
    }

    fn load(&mut self, params: &Path) -> Result<SrsSegment> {
        if !params.exists() {
            anyhow::bail!(
                "{}: parameter file not found (set FIL_PROOFS_PARAMETER_CACHE or param_cache)",
                params.display()
            );
        }
        let layout = Srs::layout(params)?;
        let validation = params_check::validation_for(params, self.trust_params);
        let (key, checked_key) = Self::keys(params)?;
        // A segment filled without the subgroup checks must not stand in for them: a load
        // that owes the file its full check gets (and fills) a segment of its own. A
        // Trusted load (checked before, or the operator trusts the file) maps that checked
        // segment when a complete one exists (it is at least as good; the decoding is the
        // same), and only otherwise opens or fills the plain one, so a file checked by one
        // process is not decoded into a second copy by the next. (A Trusted load racing a
        // Full load's fill, possible only when processes differ in trust_params, still
        // fills the plain segment; neither ever maps a half-filled one.)
        let key = match validation {
            Validation::Full => checked_key,
            Validation::Trusted => match Self::open_complete(&self.dir, &checked_key)
                .with_context(|| format!("{}: checked SRS segment", params.display()))?
            {
                Some(segment) => return Ok(segment),
                None => key,
            },
        };
        // Taken before the decode: a file replaced during it is not blamed for the old
        // one's fault.
        let identity = params_check::identity(params);
        let mut fault_in_file = None;
        let loaded = SrsSegment::open_or_load(&self.dir, &key, image_len(&layout), |out| {
            let file = std::fs::File::open(params).map_err(|e| e.to_string())?;
            // SAFETY: parameter files are not modified while provers run (the key
            // includes size and mtime; a rewritten file gets a new segment).
            let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| e.to_string())?;
            fill_image(&map, params, validation, out).map_err(|e| {
                if e.is_in_the_file() {
                    fault_in_file = Some(e.to_string());
                }
                e.to_string()
            })
        });
        let in_the_file = fault_in_file.is_some();
        if let (Some(why), Some(identity)) = (fault_in_file, identity) {
            self.refused.insert(params.to_path_buf(), (identity, why));
        }
        let loaded =
            loaded.with_context(|| format!("{}: loading into shared memory", params.display()));
        let (segment, filled) = match loaded {
            Err(e) if in_the_file => return Err(e.context(FaultInTheFile)),
            loaded => loaded?,
        };
        if filled && validation == Validation::Full {
            params_check::record_checked(params);
        }
        Ok(segment)
    }

    /// The segment of `key` if a complete one has been published, never filling it:
    /// `None` when there is none. Segments appear under their name only once complete
    /// (magic written, then renamed into place); mapping goes through `open_or_load`, so
    /// under its lock and with its magic and key checks. A fill still in progress is not
    /// waited for (its segment has no name yet): that wait could be the whole point check,
    /// and `open_or_load` on an absent segment makes a scratch file (a huge page on
    /// hugetlbfs, which may have none to spare).
    fn open_complete(dir: &Path, key: &SrsKey) -> Result<Option<SrsSegment>> {
        if !SrsSegment::segment_path(dir, key).exists() {
            return Ok(None);
        }
        let mut absent = false;
        // Length 0: were the segment removed in between, the refused fill's scratch file
        // is one header page, never the image.
        let opened = SrsSegment::open_or_load(dir, key, 0, |_| {
            absent = true;
            Err("only an existing segment is mapped here".into())
        });
        match opened {
            Ok((segment, _)) => Ok(Some(segment)),
            Err(_) if absent => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}
