//! Jobs in and out of the arena: C1 files claimed from incoming/, checked, published as
//! jobs; failed jobs moved to failed/ with their reason once none of their partitions is
//! still in a slot.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use cuzk_c1::open::{read_c1_bytes, Links};
use cuzk_c1::proof_type::{format_sector_size, proof_type_name};
use cuzk_c1::{C1Input, GivenIds};
use cuzk_dropdir::DropDir;
use cuzk_epilogue::{aggregation_srs_path, check_aggregation_srs, load_verifying_key};
use cuzk_kernels::synthetic::SyntheticShape;
use cuzk_shm_layout::job::MAX_PARTITIONS;
use cuzk_shm_layout::timeline::names;
use cuzk_shm_layout::{Arena, At, PartitionShape, SlotState, Timeline};
use cuzk_stage_common::{BG2Stage, JobSpec, SyntheticJob};
use cuzk_synthesis::{params_path, with_porep_circuits, CircuitsVisitor, PorepCircuits};
use filecoin_proofs::MerkleTreeTrait;

// A job's name in its record is the C1 file's whole name: the epilogue's result and the
// supervisor's log make done/ paths from it.
const _: () = assert!(cuzk_dropdir::MAX_C1_NAME_BYTES <= cuzk_shm_layout::job::NAME_BYTES);

use crate::instance::shape_of_params;
use crate::replica_check::check_replica_id;
use crate::waiting::{stamp, Stamp};

/// Whether the pipeline wants another job: only when a slot is free, every active job's
/// partitions are all taken (so synthesis would otherwise idle) and the job table has a
/// record to publish it in. Files wait in incoming/ until then, where an operator sees
/// them as queued, and a drain has only the jobs in the slots to finish.
pub fn wants_job(arena: &Arena) -> bool {
    arena.census()[SlotState::Free as usize] > 0
        && arena.has_free_job_record()
        && !arena.active_jobs().any(|j| j.has_untaken_partition())
}

/// What became of a file in incoming/.
pub enum Admitted {
    Published(u64),
    /// Moved to failed/ with the reason.
    Refused,
    /// Refused, but failed/ could not take it (the drop directory's trouble): it waits in
    /// working/ (the path) with its reason for the caller to move it when it can.
    RefusedUnmoved {
        working: PathBuf,
        reason: String,
        error: anyhow::Error,
    },
    /// Gone before we could claim it (another supervisor took it).
    Vanished,
    /// Back in incoming/ (the path): this machine cannot admit it now (its parameters
    /// missing or unreadable), which is no fault of the file. Tried again when `watch`
    /// (the file it lacks) changes.
    Waiting {
        incoming: PathBuf,
        reason: String,
        watch: PathBuf,
        /// `watch` as it was just before the check that found it lacking.
        seen: Stamp,
    },
}

/// Why a file is not admitted: its own fault, or this machine's for now.
enum Refusal {
    /// It cannot be proved (malformed, wrong ids, too large for the slots): to failed/.
    File(anyhow::Error),
    /// It could be, but this machine lacks what it needs now (`watch`: the parameter
    /// file or verifying key of its configured sector size, there at start, or the
    /// aggregation SRS if that was there at start): it waits in incoming/ rather than
    /// fail, so a parameter cache away for a moment does not send the queue to failed/.
    Machine {
        error: anyhow::Error,
        watch: PathBuf,
        seen: Stamp,
    },
}

/// What the run's configuration puts into every job it admits.
pub struct Terms<'a> {
    /// The drop directory's root.
    pub data_dir: &'a Path,
    /// Synthetic jobs only, of this shape (`--synthetic`).
    pub synthetic: Option<SyntheticShape>,
    /// The stage that computes B_G2.
    pub b_g2: BG2Stage,
    /// `miner_id`, for files without a MinerID.
    pub miner_id: Option<u64>,
    /// `sector_size`: a C1 of a larger sector cannot fit the slots, whatever the machine
    /// has (refused without looking for its parameters).
    pub sector_size: u64,
    /// Whether the inner-product SRS was in the parameter cache at start: only then does a
    /// NonInteractivePoRep file wait for it when it is missing (else it is refused).
    pub aggregation_srs_at_start: bool,
}

/// Claims `incoming` into working/ and publishes it on `terms`, or moves it to failed/
/// with the reason it cannot be proved.
pub fn admit(
    arena: &Arena,
    drop_dir: &DropDir,
    incoming: &Path,
    terms: &Terms<'_>,
    timeline: &Timeline,
) -> Result<Admitted> {
    let Terms {
        data_dir,
        synthetic,
        b_g2,
        ..
    } = *terms;
    let working = match drop_dir.claim(incoming) {
        Ok(Some(w)) => w,
        Ok(None) => return Ok(Admitted::Vanished),
        // Same name as a job in working/ or done/: `claim` moved it to failed/ already.
        Err(e @ cuzk_dropdir::DropDirError::Duplicate { .. }) => {
            eprintln!("cuzk: {e}");
            timeline.emit_full(
                names::JOB_FAILED,
                At::default(),
                None,
                &[],
                Some(&e.to_string()),
            );
            return Ok(Admitted::Refused);
        }
        Err(e) => return Err(e.into()),
    };
    let name = working
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let checked = match utf8_path(&working) {
        Err(e) => Err(e),
        Ok(()) => match synthetic {
            None => match check(&working, arena.header().shape, terms) {
                Ok(checked) => Ok(checked),
                Err(Refusal::File(e)) => Err(e),
                Err(Refusal::Machine { error, watch, seen }) => {
                    return Ok(wait_in_incoming(drop_dir, &working, error, (watch, seen)))
                }
            },
            Some(shape) => check_synthetic(&working, shape).map(|(job, n)| Checked {
                params: PathBuf::new(),
                partitions: n,
                miner_id: None,
                synthetic: Some(job),
            }),
        },
    };
    // What the job record cannot hold (checked above as far as we know how) fails this
    // file, never the supervisor: an error out of `admit` ends `run` and every job in
    // flight, and the same file, requeued first at the restart, would end it again.
    let published = checked.and_then(|checked| {
        let Checked {
            params,
            partitions,
            miner_id,
            synthetic,
        } = checked;
        let spec = JobSpec {
            c1_path: working.clone(),
            miner_id,
            sector_num: None,
            params_path: params,
            data_dir: data_dir.to_path_buf(),
            claimed_unix_ns: cuzk_shm_layout::clock::unix_ns(),
            synthetic,
            b_g2,
        };
        arena
            .publish_job(&name, &spec, &vec![(); partitions])
            .map(|job| job.job_id())
            .context("publishing the job")
    });
    match published {
        Ok(job_id) => {
            timeline.emit_full(names::JOB_CLAIMED, At::job(job_id), Some(&name), &[], None);
            Ok(Admitted::Published(job_id))
        }
        Err(e) => {
            let reason = format!("{e:#}");
            eprintln!("cuzk: {name}: {reason}");
            // The drop directory failing (a full disk) is the supervisor's own trouble,
            // not the file's: the file waits in working/ with its reason until failed/
            // takes it.
            if let Err(error) = drop_dir.fail(&working, &reason) {
                return Ok(Admitted::RefusedUnmoved {
                    working,
                    reason,
                    error: error.into(),
                });
            }
            timeline.emit_full(
                names::JOB_FAILED,
                At::default(),
                Some(&name),
                &[],
                Some(&reason),
            );
            Ok(Admitted::Refused)
        }
    }
}

/// Gives `working` back to incoming/ to wait for what this machine lacks (`why`, and the
/// file it lacks with how it was).
fn wait_in_incoming(
    drop_dir: &DropDir,
    working: &Path,
    why: anyhow::Error,
    (watch, seen): (PathBuf, Stamp),
) -> Admitted {
    let reason = format!("{why:#}");
    match drop_dir.unclaim(working) {
        Ok(Some(incoming)) => Admitted::Waiting {
            incoming,
            reason,
            watch,
            seen,
        },
        // A newer file of its name took its place: this one went to failed/ saying so.
        Ok(None) => Admitted::Refused,
        // incoming/ (or failed/, for a newer copy) cannot take it: failed/ gets it, with
        // the reason, once it can (the caller's moves of unmoved files), rather than its
        // lying in working/ with no job until the next start.
        Err(error) => Admitted::RefusedUnmoved {
            working: working.to_path_buf(),
            reason,
            error: error.into(),
        },
    }
}

/// The job record carries the path in a `JobSpec`, which bincode encodes only as UTF-8.
fn utf8_path(path: &Path) -> Result<()> {
    if path.to_str().is_none() {
        bail!(
            "{}: the path is not valid UTF-8, which a job record cannot carry; rename the file",
            path.display()
        );
    }
    Ok(())
}

/// What admission learnt of a file, for its job record.
struct Checked {
    /// The proof type's `.params` file (empty for a synthetic job).
    params: PathBuf,
    partitions: usize,
    /// The configured miner id, where the file carries none (the stages read the C1 with it).
    miner_id: Option<u64>,
    synthetic: Option<SyntheticJob>,
}

/// Everything about a C1 that can be checked before minutes of proving: it parses, has a
/// prover id (its own MinerID, else the configured `miner_id`) and sector number that give
/// its replica id (`check_replica_id`), its
/// verifying key and parameters exist, and its partitions fit the arena's slots. What this
/// machine lacks (the parameters, keys and SRS) is `Refusal::Machine`; the rest is the file's.
fn check(
    c1_path: &Path,
    slot_shape: PartitionShape,
    terms: &Terms<'_>,
) -> Result<Checked, Refusal> {
    let sector_size = terms.sector_size;
    let (c1, miner_id) = check_file(c1_path, terms.miner_id, sector_size).map_err(Refusal::File)?;
    // Only what was there at start can be away for a moment: the configured sector
    // size's parameters (`ensure_params`) and the aggregation SRS if it was there. What
    // this machine never had would keep a file waiting for ever: refused.
    let ours = c1.sector_size() == sector_size;
    let lacking = |error: anyhow::Error, (watch, seen): (PathBuf, Stamp), was_there: bool| {
        if ours && was_there {
            return Refusal::Machine { error, watch, seen };
        }
        Refusal::File(error.context(format!(
            "{}: this machine lacks what a {} sector ({}) needs, and lacked it at its start \
             (only sector_size {}'s parameters, and the inner-product SRS if present, are \
             waited for)",
            c1_path.display(),
            format_sector_size(c1.sector_size()),
            proof_type_name(c1.proof_type()),
            format_sector_size(sector_size)
        )))
    };
    // Each file's stamp is taken before its check: one that appears in between is then
    // seen as a change.
    let stamped = |path: PathBuf| {
        let seen = stamp(&path);
        (path, seen)
    };
    let vk = stamped(
        c1.proof_type()
            .cache_verifying_key_path()
            .unwrap_or_default(),
    );
    load_verifying_key(c1.proof_type()).map_err(|e| lacking(e.into(), vk, true))?;
    let srs = stamped(aggregation_srs_path());
    check_aggregation_srs(c1.proof_type())
        .map_err(|e| lacking(e.into(), srs, terms.aggregation_srs_at_start))?;
    struct Params;
    impl CircuitsVisitor for Params {
        type Output = (PathBuf, usize);
        fn visit<Tree: 'static + MerkleTreeTrait>(
            self,
            c: PorepCircuits<'_, Tree>,
        ) -> Self::Output {
            (params_path(&c), c.partitions())
        }
    }
    let (params, partitions) =
        with_porep_circuits(&c1, Params).map_err(|e| Refusal::File(e.into()))?;
    let params_seen = stamped(params.clone());
    if !params.exists() {
        let error = anyhow::anyhow!("{}: parameter file not found", params.display());
        return Err(lacking(error, params_seen, true));
    }
    let need = shape_of_params(&params).map_err(|e| lacking(e, params_seen, true))?;
    if need.domain_log2 > slot_shape.domain_log2
        || need.num_inputs > slot_shape.num_inputs
        || need.num_aux > slot_shape.num_aux
    {
        return Err(Refusal::File(anyhow::anyhow!(
            "its partitions (domain 2^{}, {} inputs, {} aux) do not fit the slots (domain 2^{}, {} inputs, {} aux): set sector_size to the largest size you prove",
            need.domain_log2, need.num_inputs, need.num_aux,
            slot_shape.domain_log2, slot_shape.num_inputs, slot_shape.num_aux
        )));
    }
    Ok(Checked {
        params,
        partitions,
        miner_id,
        synthetic: None,
    })
}

/// What `check` asks of the file alone, before what the machine has: the C1 (with the
/// configured miner id where it has none) and that miner id, if it was used.
fn check_file(
    c1_path: &Path,
    miner_id: Option<u64>,
    sector_size: u64,
) -> Result<(C1Input, Option<u64>)> {
    let c1 = C1Input::read_dropped(c1_path, GivenIds::default())?;
    // The file's own MinerID wins; the configured one only fills its absence.
    let miner_id = miner_id.filter(|_| c1.miner_id().is_none());
    let c1 = c1.or_miner_id(miner_id);
    // Before the keys and parameters: a valid C1 of more partitions than a job record holds
    // is refused for that, whatever else this machine lacks.
    if c1.partitions() > MAX_PARTITIONS {
        bail!(
            "{}: {} partitions ({}); a job holds at most {MAX_PARTITIONS} in this build",
            c1_path.display(),
            c1.partitions(),
            proof_type_name(c1.proof_type())
        );
    }
    c1.prover_id()?;
    c1.sector_id()?;
    check_replica_id(&c1)?;
    if c1.sector_size() > sector_size {
        bail!(
            "{}: a {} sector ({}), larger than this instance's sector_size {}: its partitions do not fit the slots",
            c1_path.display(),
            format_sector_size(c1.sector_size()),
            proof_type_name(c1.proof_type()),
            format_sector_size(sector_size)
        );
    }
    Ok((c1, miner_id))
}

/// A synthetic job file (`SyntheticJob` as JSON) for an instance started with
/// `--synthetic SHAPE`: of that shape, with a partition count a job record holds.
fn check_synthetic(path: &Path, shape: SyntheticShape) -> Result<(SyntheticJob, usize)> {
    // Read as a C1 is (a drop-directory file: no links, FIFOs or huge files).
    let bytes = read_c1_bytes(path, Links::Refuse)?;
    let job: SyntheticJob = serde_json::from_slice(&bytes).with_context(|| {
        format!(
            "{}: not a synthetic job ({{\"synthetic\": \"{}\", \"partitions\": N, \"seed\": S}}); this instance runs synthetic jobs only",
            path.display(),
            shape.name
        )
    })?;
    if job.shape()? != shape {
        bail!(
            "{}: synthetic shape {:?}, but this instance's slots are for {:?}",
            path.display(),
            job.synthetic,
            shape.name
        );
    }
    let n = job.partitions as usize;
    if n == 0 || n > MAX_PARTITIONS {
        bail!(
            "{}: {} partitions (1 to {} allowed)",
            path.display(),
            n,
            MAX_PARTITIONS
        );
    }
    Ok((job, n))
}

/// What [`retire_failed`] did.
#[derive(Default)]
pub struct Retired {
    /// The jobs moved to failed/ and freed.
    pub ids: Vec<u64>,
    /// The drop directory's error for the jobs failed/ could not take; they stay in the
    /// table, failed, and are tried again at the next call.
    pub unmoved: Option<anyhow::Error>,
}

/// Moves failed jobs whose slots have all drained to failed/ and frees their records.
pub fn retire_failed(arena: &Arena, drop_dir: &DropDir, timeline: &Timeline) -> Retired {
    let mut retired = Retired::default();
    for job in arena.active_jobs().filter(|j| j.is_failed()) {
        let in_flight = (0..arena.slot_count()).any(|s| {
            arena.slot_word(s).state != SlotState::Free
                && arena
                    .slot_header(s)
                    .job_id
                    .load(std::sync::atomic::Ordering::Relaxed)
                    == job.job_id()
        });
        if in_flight {
            continue;
        }
        let reason = job.failure_reason();
        let name = job.name();
        let spec: Result<JobSpec, _> = job.decode_job();
        if let Ok(spec) = spec {
            // Failed after its verified proof was written (a finisher killed between the
            // write and the input's removal, whose redo then failed on something else):
            // proved, not failed. Its input is retired as the finish would have.
            if spec.synthetic.is_none() && drop_dir.is_proved(&spec.c1_path) {
                if let Err(e) = drop_dir.retire_proved_input(&spec.c1_path) {
                    retired.unmoved = Some(e.into());
                    continue;
                }
                eprintln!(
                    "cuzk: job {} ({name}): its proof is in done/; not failed for what came after it: {reason}",
                    job.job_id()
                );
                timeline.emit_full(
                    names::JOB_DONE,
                    At::job(job.job_id()),
                    Some(&name),
                    &[],
                    Some("already written"),
                );
                job.retire();
                continue;
            }
            if spec.c1_path.exists() {
                if let Err(e) = drop_dir.fail(&spec.c1_path, &reason) {
                    retired.unmoved = Some(e.into());
                    continue;
                }
            }
        }
        eprintln!("cuzk: job {} ({name}) failed: {reason}", job.job_id());
        timeline.emit_full(
            names::JOB_FAILED,
            At::job(job.job_id()),
            Some(&name),
            &[],
            Some(&reason),
        );
        retired.ids.push(job.job_id());
        job.retire();
    }
    retired
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    use cuzk_kernels::synthetic::TINY;
    use cuzk_shm_layout::ArenaConfig;

    use super::*;

    /// A data directory with its drop directory, and an arena of tiny slots beside it.
    fn setup(job_blob_capacity: u64) -> (tempfile::TempDir, DropDir, Arena) {
        let tmp = tempfile::tempdir().unwrap();
        let drop_dir = DropDir::open(&tmp.path().join("data")).unwrap();
        let shape = PartitionShape::new(
            1 << TINY.domain_log2,
            TINY.num_inputs as u64,
            TINY.num_aux as u64,
        );
        let mut cfg = ArenaConfig::new("admission", shape, 1);
        cfg.dir = tmp.path().to_owned();
        cfg.job_blob_capacity = job_blob_capacity;
        let arena = Arena::create(&cfg).unwrap();
        (tmp, drop_dir, arena)
    }

    fn admit_one(
        arena: &Arena,
        drop_dir: &DropDir,
        tmp: &Path,
        incoming: &Path,
        synthetic: Option<SyntheticShape>,
    ) -> Admitted {
        let timeline = Timeline::open(None, "supervisor").unwrap();
        let data = tmp.join("data");
        let terms = Terms {
            data_dir: &data,
            synthetic,
            b_g2: BG2Stage::HostPrep,
            miner_id: None,
            sector_size: 2048,
            aggregation_srs_at_start: false,
        };
        admit(arena, drop_dir, incoming, &terms, &timeline)
            .expect("a file the job record cannot carry fails that file, not the supervisor")
    }

    fn reason(drop_dir: &DropDir, stem: &[u8]) -> String {
        let mut name = stem.to_vec();
        name.extend_from_slice(b".reason");
        std::fs::read_to_string(drop_dir.failed.join(OsStr::from_bytes(&name))).unwrap()
    }

    /// A real C1 under a name bincode cannot encode: refused for its name, before the
    /// parameters are looked for, and moved to failed/.
    #[test]
    fn a_c1_named_in_invalid_utf8_is_refused_not_fatal() {
        let (tmp, drop_dir, arena) = setup(1 << 20);
        let name = OsStr::from_bytes(b"bad\xff.json");
        let incoming = drop_dir.incoming.join(name);
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/porep-2KiB-a.c1.json");
        std::fs::copy(fixture, &incoming).unwrap();

        let admitted = admit_one(&arena, &drop_dir, tmp.path(), &incoming, None);

        assert!(matches!(admitted, Admitted::Refused));
        assert!(drop_dir.failed.join(name).exists());
        assert!(!drop_dir.working.join(name).exists());
        let reason = reason(&drop_dir, b"bad\xff");
        assert!(reason.contains("bad\u{fffd}.json"), "{reason}");
        assert!(reason.contains("not valid UTF-8"), "{reason}");
        assert_eq!(arena.active_jobs().count(), 0);
    }

    /// A lotus envelope without MinerID, and no `miner_id` configured: refused for its
    /// prover id, the reason saying which setting gives it.
    #[test]
    fn a_c1_without_a_miner_id_is_refused_naming_the_setting() {
        let (tmp, drop_dir, arena) = setup(1 << 20);
        let lotus = edited_fixture(|envelope, _| {
            envelope.as_object_mut().unwrap().remove("MinerID");
        });
        let incoming = drop_dir.incoming.join("lotus.json");
        std::fs::write(&incoming, lotus).unwrap();

        let admitted = admit_one(&arena, &drop_dir, tmp.path(), &incoming, None);

        assert!(matches!(admitted, Admitted::Refused));
        let reason = reason(&drop_dir, b"lotus");
        assert!(reason.contains("lotus.json: missing prover id"), "{reason}");
        assert!(reason.contains("set miner_id (cuzk run)"), "{reason}");
        assert_eq!(arena.active_jobs().count(), 0);
    }

    /// The 2 KiB fixture's envelope with `edit` applied to it and its decoded Phase1Out.
    fn edited_fixture(
        edit: impl FnOnce(&mut serde_json::Value, &mut serde_json::Value),
    ) -> Vec<u8> {
        use base64::Engine;
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/porep-2KiB-a.c1.json");
        let mut envelope: serde_json::Value =
            serde_json::from_slice(&std::fs::read(fixture).unwrap()).unwrap();
        let b64 = base64::engine::general_purpose::STANDARD;
        let mut inner: serde_json::Value =
            serde_json::from_slice(&b64.decode(envelope["Phase1Out"].as_str().unwrap()).unwrap())
                .unwrap();
        edit(&mut envelope, &mut inner);
        envelope["Phase1Out"] = b64.encode(serde_json::to_vec(&inner).unwrap()).into();
        serde_json::to_vec(&envelope).unwrap()
    }

    /// A C1 whose replica id its ids do not give (a changed ticket, a wrong MinerID, a
    /// wrong configured miner_id) is refused at the door, before any proving, saying so;
    /// the fixture itself passes that check with its own MinerID or with the configured one.
    #[test]
    fn a_c1_whose_ids_do_not_give_its_replica_id_is_refused_at_once() {
        use cuzk_c1::{C1Input, GivenIds};
        let good = edited_fixture(|_, _| {});
        let read = |bytes: &[u8]| {
            C1Input::from_bytes(Path::new("x.json"), bytes, GivenIds::default()).unwrap()
        };
        check_replica_id(&read(&good)).expect("the fixture's own ids");
        let lotus = edited_fixture(|envelope, _| {
            envelope.as_object_mut().unwrap().remove("MinerID");
        });
        check_replica_id(&read(&lotus).or_miner_id(Some(1000))).expect("the configured id");
        let err = check_replica_id(&read(&lotus).or_miner_id(Some(1001))).unwrap_err();
        assert!(err.to_string().contains("miner 1001 and sector"), "{err}");

        let (tmp, drop_dir, arena) = setup(1 << 20);
        for (name, bytes) in [
            (
                "ticket",
                edited_fixture(|_, inner| inner["ticket"][0] = 7.into()),
            ),
            (
                "miner",
                edited_fixture(|envelope, _| envelope["MinerID"] = 1001.into()),
            ),
            (
                "sector",
                edited_fixture(|envelope, _| envelope["SectorNum"] = 99.into()),
            ),
        ] {
            let incoming = drop_dir.incoming.join(format!("{name}.json"));
            std::fs::write(&incoming, bytes).unwrap();
            let admitted = admit_one(&arena, &drop_dir, tmp.path(), &incoming, None);
            assert!(matches!(admitted, Admitted::Refused), "{name}");
            let reason = reason(&drop_dir, name.as_bytes());
            assert!(
                reason.contains(&format!("{name}.json: its replica_id is not the one")),
                "{reason}"
            );
        }
        assert_eq!(arena.active_jobs().count(), 0);
    }

    /// A C1 of a larger sector than the instance's `sector_size` can never fit its slots:
    /// the file's refusal (to failed/), decided before its parameters are looked for, so
    /// a machine without them does not keep it waiting.
    #[test]
    fn a_c1_of_a_larger_sector_is_refused_without_looking_for_its_parameters() {
        let (tmp, drop_dir, arena) = setup(1 << 20);
        let incoming = drop_dir.incoming.join("big.json");
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/porep-8MiB-a.c1.json");
        std::fs::copy(fixture, &incoming).unwrap();

        let admitted = admit_one(&arena, &drop_dir, tmp.path(), &incoming, None);

        assert!(matches!(admitted, Admitted::Refused));
        let reason = reason(&drop_dir, b"big");
        assert!(
            reason.contains("a 8MiB sector") && reason.contains("sector_size 2KiB"),
            "{reason}"
        );
        assert_eq!(arena.active_jobs().count(), 0);
    }

    /// A failed job whose proof is in done/ (its finisher killed after the write, the redo
    /// failing on something else) is retired as proved: its input leaves working/, nothing
    /// goes to failed/, and it is not among the failed ids. One without a proof goes to
    /// failed/ with its reason.
    #[test]
    fn a_failed_job_whose_proof_is_written_is_retired_as_proved() {
        let (tmp, drop_dir, arena) = setup(1 << 20);
        let timeline = Timeline::open(None, "supervisor").unwrap();
        let publish = |stem: &str| {
            let working = drop_dir.working.join(format!("{stem}.json"));
            std::fs::write(&working, b"{}").unwrap();
            let spec = JobSpec {
                c1_path: working.clone(),
                miner_id: None,
                sector_num: None,
                params_path: tmp.path().join("x.params"),
                data_dir: tmp.path().join("data"),
                claimed_unix_ns: 0,
                synthetic: None,
                b_g2: BG2Stage::HostPrep,
            };
            let job = arena
                .publish_job(&format!("{stem}.json"), &spec, &[()])
                .unwrap();
            job.mark_failed("its finish was lost 4 times");
            (job.job_id(), working)
        };
        let (proved, proved_input) = publish("proved");
        let (failed, failed_input) = publish("failed");
        std::fs::write(drop_dir.done.join("proved.proof"), b"proof").unwrap();

        let retired = retire_failed(&arena, &drop_dir, &timeline);

        assert!(retired.unmoved.is_none());
        assert_eq!(retired.ids, [failed]);
        assert!(!proved_input.exists() && !failed_input.exists());
        assert!(!drop_dir.failed.join("proved.json").exists());
        assert!(drop_dir.failed.join("failed.json").exists());
        assert!(arena.job(proved).is_err() && arena.job(failed).is_err());
    }

    /// A job the checks pass but the arena cannot publish (here: a blob window too small
    /// for its spec) is refused with publish_job's reason.
    #[test]
    fn a_job_the_arena_cannot_publish_is_refused_not_fatal() {
        let (tmp, drop_dir, arena) = setup(8);
        let incoming = drop_dir.incoming.join("s.json");
        std::fs::write(&incoming, r#"{"synthetic": "tiny", "partitions": 1}"#).unwrap();

        let admitted = admit_one(&arena, &drop_dir, tmp.path(), &incoming, Some(TINY));

        assert!(matches!(admitted, Admitted::Refused));
        assert!(drop_dir.failed.join("s.json").exists());
        let reason = reason(&drop_dir, b"s");
        assert!(reason.contains("publishing the job"), "{reason}");
        assert_eq!(arena.active_jobs().count(), 0);
    }
}
