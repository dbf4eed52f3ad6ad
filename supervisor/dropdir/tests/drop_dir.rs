//! The drop-directory contract: what counts as a job, claims, crash order, failures.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, SystemTime};

use cuzk_dropdir::{DropDir, DropDirError, RequeueReport, MAX_C1_NAME_BYTES};

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn file_names(paths: &[PathBuf]) -> Vec<String> {
    paths
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect()
}

/// Writes `incoming/name` with a modification time `age_s` seconds before a fixed moment.
fn drop_file(dir: &DropDir, name: &str, age_s: u64) -> PathBuf {
    let path = dir.incoming.join(name);
    let file = fs::File::create(&path).unwrap();
    (&file).write_all(b"{}").unwrap();
    let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_960_800);
    file.set_modified(base - Duration::from_secs(age_s))
        .unwrap();
    path
}

/// Warning lines logged while `f` runs.
fn warnings_during<T>(f: impl FnOnce() -> T) -> (T, Vec<String>) {
    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);
    impl Write for Lines {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let lines = Lines::default();
    let writer = lines.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::WARN)
        .finish();
    let out = tracing::subscriber::with_default(subscriber, f);
    let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
    (
        out,
        text.lines()
            .filter(|l| l.contains("WARN"))
            .map(str::to_owned)
            .collect(),
    )
}

#[test]
fn open_creates_the_four_directories() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DropDir::open(&tmp.path().join("data")).unwrap();
    for d in [&dir.incoming, &dir.working, &dir.done, &dir.failed] {
        assert!(d.is_dir(), "{}", d.display());
    }
    assert_eq!(
        names(&tmp.path().join("data")),
        ["done", "failed", "incoming", "working"]
    );
}

#[test]
fn scan_takes_complete_json_files_oldest_first() {
    let tmp = tempfile::tempdir().unwrap();
    let mut dir = DropDir::open(tmp.path()).unwrap();
    drop_file(&dir, "new.json", 10);
    drop_file(&dir, "old.json", 100);
    drop_file(&dir, "b-same.json", 50);
    drop_file(&dir, "a-same.json", 50);
    let found = dir.scan_incoming().unwrap();
    assert_eq!(
        file_names(&found),
        ["old.json", "a-same.json", "b-same.json", "new.json"]
    );
}

#[test]
fn partial_dot_tmp_and_other_files_are_ignored_with_one_warning_each() {
    let tmp = tempfile::tempdir().unwrap();
    let mut dir = DropDir::open(tmp.path()).unwrap();
    drop_file(&dir, "job.json", 1);
    drop_file(&dir, ".job2.json", 1); // being written under a dot name
    drop_file(&dir, "job3.json.tmp", 1); // being written under a temp name
    drop_file(&dir, "notes.txt", 1);
    drop_file(&dir, ".json", 1);
    fs::create_dir(dir.incoming.join("dir.json")).unwrap();
    std::os::unix::fs::symlink(
        dir.incoming.join("job.json"),
        dir.incoming.join("link.json"),
    )
    .unwrap();

    let too_long = format!("{}.json", "x".repeat(MAX_C1_NAME_BYTES - 4));
    drop_file(&dir, &too_long, 1);

    let (first, warnings) = warnings_during(|| dir.scan_incoming().unwrap());
    assert_eq!(file_names(&first), ["job.json"]);
    assert_eq!(warnings.len(), 7, "{warnings:#?}");
    for name in [
        ".job2.json",
        "job3.json.tmp",
        "notes.txt",
        "dir.json",
        "link.json",
        &too_long,
    ] {
        assert!(
            warnings.iter().any(|w| w.contains(name)),
            "no warning for {name}"
        );
    }

    let (second, warnings) = warnings_during(|| dir.scan_incoming().unwrap());
    assert_eq!(file_names(&second), ["job.json"]);
    assert!(warnings.is_empty(), "warned twice: {warnings:#?}");

    // Once the writer renames it into place, it is taken.
    fs::rename(
        dir.incoming.join(".job2.json"),
        dir.incoming.join("job2.json"),
    )
    .unwrap();
    let third = dir.scan_incoming().unwrap();
    assert_eq!(file_names(&third), ["job.json", "job2.json"]);
}

#[test]
fn claim_moves_to_working_and_a_vanished_file_is_none() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DropDir::open(tmp.path()).unwrap();
    let input = drop_file(&dir, "job.json", 1);
    let claimed = dir.claim(&input).unwrap().unwrap();
    assert_eq!(claimed, dir.working.join("job.json"));
    assert!(claimed.is_file());
    assert!(!input.exists());
    assert_eq!(dir.claim(&input).unwrap(), None);
}

#[test]
fn claim_race_between_threads_takes_each_file_once() {
    const FILES: usize = 200;
    const THREADS: usize = 4;
    let tmp = tempfile::tempdir().unwrap();
    let mut dir = DropDir::open(tmp.path()).unwrap();
    for i in 0..FILES {
        drop_file(&dir, &format!("job{i:03}.json"), 1);
    }
    let found = dir.scan_incoming().unwrap();
    let dir = Arc::new(dir);
    let barrier = Arc::new(Barrier::new(THREADS));
    let claimed: Vec<Vec<PathBuf>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|_| {
                let (dir, barrier, found) = (dir.clone(), barrier.clone(), &found);
                s.spawn(move || {
                    barrier.wait();
                    found.iter().filter_map(|p| dir.claim(p).unwrap()).collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut all: Vec<PathBuf> = claimed.into_iter().flatten().collect();
    assert_eq!(all.len(), FILES, "each file claimed exactly once");
    all.sort();
    all.dedup();
    assert_eq!(all.len(), FILES);
    assert_eq!(names(&dir.working).len(), FILES);
    assert!(names(&dir.incoming).is_empty());
}

/// Set in the children of `claim_race_between_processes`: the data directory to claim from.
const CHILD_DIR: &str = "CUZK_DROPDIR_TEST_CLAIM_DIR";

#[test]
fn claim_race_between_processes_takes_each_file_once() {
    if let Some(data) = std::env::var_os(CHILD_DIR) {
        return claim_everything_as_a_child(Path::new(&data));
    }
    const FILES: usize = 100;
    const CHILDREN: usize = 3;
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let dir = DropDir::open(&data).unwrap();
    for i in 0..FILES {
        drop_file(&dir, &format!("job{i:03}.json"), 1);
    }
    // Each child is this test binary running only this test, in child mode.
    let children: Vec<_> = (0..CHILDREN)
        .map(|_| {
            std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "claim_race_between_processes_takes_each_file_once",
                    "--test-threads=1",
                ])
                .env(CHILD_DIR, &data)
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    fs::write(tmp.path().join("go"), b"").unwrap();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let mut claimed: Vec<String> = fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("claims-")
        })
        .flat_map(|p| {
            fs::read_to_string(p)
                .unwrap()
                .lines()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(claimed.len(), FILES, "each file claimed exactly once");
    claimed.sort();
    claimed.dedup();
    assert_eq!(claimed.len(), FILES);
    assert_eq!(names(&dir.working).len(), FILES);
}

/// A child of `claim_race_between_processes`: waits for `go`, claims all it can, and
/// lists what it got in `claims-<pid>` beside the data directory.
fn claim_everything_as_a_child(data: &Path) {
    let parent = data.parent().unwrap();
    while !parent.join("go").exists() {
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut dir = DropDir::open(data).unwrap();
    let mut got = String::new();
    for path in dir.scan_incoming().unwrap() {
        if let Some(claimed) = dir.claim(&path).unwrap() {
            got.push_str(&format!("{}\n", claimed.display()));
        }
    }
    fs::write(parent.join(format!("claims-{}", std::process::id())), got).unwrap();
}

#[test]
fn claim_of_a_name_in_progress_or_proved_goes_to_failed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DropDir::open(tmp.path()).unwrap();
    let working = dir.claim(&drop_file(&dir, "job.json", 1)).unwrap().unwrap();

    let again = drop_file(&dir, "job.json", 1);
    let err = dir.claim(&again).unwrap_err();
    assert!(matches!(err, DropDirError::Duplicate { .. }), "{err}");
    assert!(err.to_string().contains("job.json"), "{err}");
    assert!(working.is_file(), "the job in progress is untouched");
    // Under a name of its own: failed/job.reason would say the job in progress failed.
    assert_eq!(names(&dir.failed), ["job.dup-1.json", "job.dup-1.reason"]);
    let reason = fs::read_to_string(dir.failed.join("job.dup-1.reason")).unwrap();
    assert!(reason.contains("in progress"), "{reason}");

    dir.finish(&working, b"proof", b"{}").unwrap();
    let again = drop_file(&dir, "job.json", 1);
    let err = dir.claim(&again).unwrap_err();
    assert!(matches!(err, DropDirError::Duplicate { .. }), "{err}");
    let reason = fs::read_to_string(dir.failed.join("job.dup-2.reason")).unwrap();
    assert!(reason.contains("proved"), "{reason}");
    assert!(
        !dir.failed.join("job.reason").exists(),
        "the job did not fail"
    );

    // The longest name taken: every name made from it fits, a duplicate's included.
    let longest = format!("{}.json", "y".repeat(MAX_C1_NAME_BYTES - 5));
    let first = dir.claim(&drop_file(&dir, &longest, 1)).unwrap().unwrap();
    dir.finish(&first, b"proof", b"{}").unwrap();
    for _ in 0..2 {
        let err = dir.claim(&drop_file(&dir, &longest, 1)).unwrap_err();
        assert!(matches!(err, DropDirError::Duplicate { .. }), "{err}");
    }
    assert_eq!(
        fs::read(dir.done.join("job.proof")).unwrap(),
        b"proof",
        "proof untouched"
    );
}

#[test]
fn claim_refuses_a_name_that_is_not_json() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DropDir::open(tmp.path()).unwrap();
    let path = drop_file(&dir, "job.txt", 1);
    let err = dir.claim(&path).unwrap_err();
    assert!(matches!(err, DropDirError::NotC1Name { .. }), "{err}");
    assert!(path.exists());
}

#[test]
fn finish_writes_outputs_leaves_no_temp_files_and_retires_the_input() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DropDir::open(tmp.path()).unwrap();
    let working = dir.claim(&drop_file(&dir, "job.json", 1)).unwrap().unwrap();
    let (proof, result) = dir
        .finish(&working, b"proof bytes", b"{\"ok\":true}")
        .unwrap();
    assert_eq!((proof.clone(), result.clone()), dir.done_paths(&working));
    assert_eq!(proof, dir.done.join("job.proof"));
    assert_eq!(result, dir.done.join("job.json"));
    assert_eq!(fs::read(&proof).unwrap(), b"proof bytes");
    assert_eq!(fs::read(&result).unwrap(), b"{\"ok\":true}");
    assert_eq!(names(&dir.done), ["job.json", "job.proof"], "no temp files");
    assert!(names(&dir.working).is_empty());
}

/// done/ unwritable (here a plain file in its place; the same path as a full disk: the
/// write fails), then fixed: the failed finish leaves the input in working/, and the retry
/// writes both outputs. A finish repeated after the input is retired succeeds as well,
/// so a retry after a late step's error cannot loop forever.
#[test]
fn a_finish_that_failed_is_retried_once_done_is_writable_again() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DropDir::open(tmp.path()).unwrap();
    let working = dir.claim(&drop_file(&dir, "job.json", 1)).unwrap().unwrap();
    fs::remove_dir(&dir.done).unwrap();
    fs::write(&dir.done, b"not a directory").unwrap();
    let err = dir.finish(&working, b"proof bytes", b"{}").unwrap_err();
    assert!(err.to_string().contains("done"), "{err}");
    assert!(
        working.exists(),
        "the input stays until the proof is written"
    );
    fs::remove_file(&dir.done).unwrap();
    fs::create_dir(&dir.done).unwrap();
    dir.finish(&working, b"proof bytes", b"{}").unwrap();
    assert_eq!(names(&dir.done), ["job.json", "job.proof"]);
    assert!(!working.exists());
    let (proof, _) = dir.finish(&working, b"proof bytes", b"{}").unwrap();
    assert_eq!(fs::read(proof).unwrap(), b"proof bytes");
    // failed/ broken does not hold a finish back (its stale reason is best effort), and
    // `at` opens without creating the directories `open` would.
    fs::remove_dir(&dir.failed).unwrap();
    fs::write(&dir.failed, b"not a directory").unwrap();
    let at = DropDir::at(tmp.path());
    let again = at.claim(&drop_file(&at, "two.json", 1)).unwrap().unwrap();
    at.finish(&again, b"two", b"{}").unwrap();
    assert_eq!(fs::read(at.done.join("two.proof")).unwrap(), b"two");
}

/// A directory where one job's result goes is that job's trouble (`is_directory_in_the_way`:
/// the epilogue fails the job rather than retry for ever holding its slot), while done/
/// itself unusable is the disk's (retried, the test above).
#[test]
fn a_directory_in_a_jobs_place_in_done_is_told_apart_from_a_broken_done() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DropDir::open(tmp.path()).unwrap();
    let working = dir.claim(&drop_file(&dir, "job.json", 1)).unwrap().unwrap();
    fs::create_dir(dir.done.join("job.json")).unwrap();
    let err = dir.finish(&working, b"proof bytes", b"{}").unwrap_err();
    assert!(err.is_directory_in_the_way(), "{err}");
    assert!(err.to_string().contains("job.json"), "{err}");
    assert!(working.exists(), "the input stays for the job's failure");
    // The proof's temp name taken by a directory: refused before the result is written,
    // so a failed job leaves nothing in done/.
    fs::remove_dir(dir.done.join("job.json")).unwrap();
    fs::create_dir(dir.done.join(".job.proof.tmp")).unwrap();
    let err = dir.finish(&working, b"proof bytes", b"{}").unwrap_err();
    assert!(err.is_directory_in_the_way(), "{err}");
    assert_eq!(names(&dir.done), [".job.proof.tmp"], "nothing written");
    fs::remove_dir(dir.done.join(".job.proof.tmp")).unwrap();
    // A directory named as the proof is not a proof: the job is not proved, so neither a
    // new claim of its name is refused as a duplicate nor its input retired at a restart.
    fs::create_dir(dir.done.join("job.proof")).unwrap();
    assert!(!dir.is_proved(&working));
    let report = dir.requeue_working().unwrap();
    assert_eq!(report.requeued, [dir.incoming.join("job.json")]);
    assert!(report.dropped.is_empty());
    let working = dir.claim(&dir.incoming.join("job.json")).unwrap().unwrap();
    let err = dir.finish(&working, b"proof bytes", b"{}").unwrap_err();
    assert!(err.is_directory_in_the_way(), "{err}");

    fs::remove_dir_all(&dir.done).unwrap();
    fs::write(&dir.done, b"not a directory").unwrap();
    let err = dir.finish(&working, b"proof bytes", b"{}").unwrap_err();
    assert!(!err.is_directory_in_the_way(), "{err}");
}

/// A job that failed, resubmitted under its name and proved: its earlier reason goes, so
/// done/ and failed/ do not both speak for the name.
#[test]
fn a_proved_resubmission_removes_the_earlier_failure_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DropDir::open(tmp.path()).unwrap();
    let working = dir.claim(&drop_file(&dir, "job.json", 2)).unwrap().unwrap();
    let failed = dir
        .fail(&working, "partition 0: the proof does not verify")
        .unwrap();
    assert_eq!(names(&dir.failed), ["job.json", "job.reason"]);
    // The operator moves the input back after fixing what was wrong.
    fs::rename(&failed, dir.incoming.join("job.json")).unwrap();
    let working = dir.claim(&dir.incoming.join("job.json")).unwrap().unwrap();
    dir.finish(&working, b"proof bytes", b"{}").unwrap();
    assert_eq!(names(&dir.done), ["job.json", "job.proof"]);
    assert!(names(&dir.failed).is_empty(), "{:?}", names(&dir.failed));
}

/// A finish that died after its result file and before its proof, then failed on its
/// redo: failing the job removes the lone result, which would read as its result beside
/// the reason. A proved job's result stays whatever else fails later.
#[test]
fn failing_a_job_removes_a_result_left_without_its_proof() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DropDir::open(tmp.path()).unwrap();
    let working = dir
        .claim(&drop_file(&dir, "half.json", 2))
        .unwrap()
        .unwrap();
    fs::write(dir.done.join("half.json"), b"{\"proof_base64\": \"...\"}").unwrap();
    dir.fail(&working, "partition 3: lost 4 times").unwrap();
    assert!(names(&dir.done).is_empty(), "{:?}", names(&dir.done));
    assert_eq!(names(&dir.failed), ["half.json", "half.reason"]);

    let working = dir
        .claim(&drop_file(&dir, "whole.json", 2))
        .unwrap()
        .unwrap();
    fs::write(dir.done.join("whole.json"), b"{}").unwrap();
    fs::write(dir.done.join("whole.proof"), b"proof").unwrap();
    dir.fail(&working, "not really").unwrap();
    assert_eq!(names(&dir.done), ["whole.json", "whole.proof"]);
}

/// The redo of a finish whose proof is already in done/: the input is retired (and an
/// earlier failure's reason of the name removed), a second call is no error.
#[test]
fn retiring_a_proved_input_removes_it_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DropDir::open(tmp.path()).unwrap();
    let working = dir.claim(&drop_file(&dir, "p.json", 2)).unwrap().unwrap();
    fs::write(dir.done.join("p.proof"), b"proof").unwrap();
    fs::write(dir.failed.join("p.reason"), b"time: x\nreason: y\n").unwrap();
    dir.retire_proved_input(&working).unwrap();
    assert!(!working.exists());
    assert!(names(&dir.failed).is_empty(), "{:?}", names(&dir.failed));
    dir.retire_proved_input(&working).unwrap();
}

#[test]
fn requeue_puts_working_back_unless_its_proof_exists() {
    let tmp = tempfile::tempdir().unwrap();
    let mut dir = DropDir::open(tmp.path()).unwrap();
    let a = dir.claim(&drop_file(&dir, "a.json", 1)).unwrap().unwrap();
    let b = dir.claim(&drop_file(&dir, "b.json", 1)).unwrap().unwrap();
    // A crash in `finish` of b after the proof was renamed into place, before the input was
    // removed: the proof is complete, b must not be proved twice.
    let (b_proof, b_result) = dir.done_paths(&b);
    fs::write(&b_result, b"{}").unwrap();
    fs::write(&b_proof, b"proof").unwrap();
    // And a crash of another finish while writing its temp file; and a directory named as
    // a temp file, which is not ours: left alone with a warning, not an error that would
    // stop every start.
    fs::write(dir.done.join(".c.proof.tmp"), b"half").unwrap();
    fs::create_dir(dir.failed.join(".d.reason.tmp")).unwrap();

    let (report, warned) = warnings_during(|| dir.requeue_working().unwrap());
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(warned[0].contains(".d.reason.tmp"), "{warned:?}");
    assert_eq!(
        report,
        RequeueReport {
            requeued: vec![dir.incoming.join("a.json")],
            dropped: vec![b.clone()],
            failed: vec![],
            removed_temps: vec![dir.done.join(".c.proof.tmp")],
        }
    );
    assert!(!a.exists() && !b.exists());
    assert_eq!(names(&dir.done), ["b.json", "b.proof"]);
    assert_eq!(file_names(&dir.scan_incoming().unwrap()), ["a.json"]);
}

#[test]
fn requeue_with_a_newer_file_of_the_same_name_fails_the_old_one() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DropDir::open(tmp.path()).unwrap();
    let old = dir.claim(&drop_file(&dir, "a.json", 1)).unwrap().unwrap();
    fs::write(dir.incoming.join("a.json"), b"newer").unwrap();
    let report = dir.requeue_working().unwrap();
    assert_eq!(report.failed, vec![dir.failed.join("a.json")]);
    assert!(!old.exists());
    assert_eq!(fs::read(dir.incoming.join("a.json")).unwrap(), b"newer");
}

#[test]
fn fail_moves_the_input_and_writes_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DropDir::open(tmp.path()).unwrap();
    let working = dir.claim(&drop_file(&dir, "bad.json", 1)).unwrap().unwrap();
    let failed = dir
        .fail(&working, "C1 parse error: unexpected end of file")
        .unwrap();
    assert_eq!(failed, dir.failed.join("bad.json"));
    assert_eq!(fs::read(&failed).unwrap(), b"{}");
    assert!(!working.exists());
    assert_eq!(
        names(&dir.failed),
        ["bad.json", "bad.reason"],
        "no temp files"
    );
    let reason = fs::read_to_string(dir.failed.join("bad.reason")).unwrap();
    let mut lines = reason.lines();
    let time = lines.next().unwrap();
    assert!(
        time.starts_with("time: 20") && time.ends_with('Z'),
        "{reason}"
    );
    assert_eq!(
        lines.next(),
        Some("reason: C1 parse error: unexpected end of file")
    );
}

#[test]
fn fail_of_a_missing_input_names_the_path() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DropDir::open(tmp.path()).unwrap();
    let err = dir.fail(&dir.working.join("gone.json"), "x").unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("move to failed/") && text.contains("gone.json"),
        "{text}"
    );
}

/// A failure whose input cannot be moved into failed/ (here another file system: EXDEV)
/// leaves no reason file there: it would stand for a failure that did not happen, and
/// tried again each round, a duplicate's would pile up under a new number each time.
#[test]
fn a_failure_that_cannot_be_moved_leaves_no_reason_behind() {
    // The drop directory under the build's target directory (on disk), the input on
    // /dev/shm (tmpfs): another file system whatever TMPDIR says.
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let dir = DropDir::open(tmp.path()).unwrap();
    let elsewhere = tempfile::tempdir_in("/dev/shm").unwrap();
    let input = elsewhere.path().join("far.json");
    fs::write(&input, b"{}").unwrap();
    for _ in 0..3 {
        let err = dir.fail(&input, "x").unwrap_err();
        assert!(err.to_string().contains("move to failed/"), "{err}");
    }
    assert!(names(&dir.failed).is_empty(), "{:?}", names(&dir.failed));
    assert!(input.is_file(), "the input stays where it was");
}

/// A claimed file the machine cannot take now (its parameters missing) goes back to
/// incoming/ to wait; a newer file of its name dropped meanwhile wins.
#[test]
fn an_unclaimed_file_goes_back_to_incoming_unless_a_newer_one_is_there() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DropDir::open(tmp.path()).unwrap();
    let working = dir
        .claim(&drop_file(&dir, "wait.json", 1))
        .unwrap()
        .unwrap();
    let back = dir.unclaim(&working).unwrap().unwrap();
    assert_eq!(back, dir.incoming.join("wait.json"));
    assert!(back.is_file() && !working.exists());

    let working = dir.claim(&back).unwrap().unwrap();
    let newer = drop_file(&dir, "wait.json", 0);
    assert_eq!(dir.unclaim(&working).unwrap(), None);
    assert!(newer.is_file(), "the newer file waits in incoming/");
    assert_eq!(names(&dir.failed), ["wait.json", "wait.reason"]);
    let reason = fs::read_to_string(dir.failed.join("wait.reason")).unwrap();
    assert!(reason.contains("a newer file of the same name"), "{reason}");
}
