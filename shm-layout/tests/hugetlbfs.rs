//! The arena and an SRS segment on a hugetlbfs mount, where production provers put their
//! 20 GB slots (2 MiB pages: fewer TLB misses for the MSMs' random base reads): file
//! lengths rounded to the huge page, a second mapping (another stage) sees the creator's
//! bytes, the pages really come from the kernel's huge page pool while mapped, and they go
//! back to it when the files are removed.
//!
//! Needs a hugetlbfs mount: `CUZK_TEST_HUGETLBFS=DIR`, or root, in which case the test
//! reserves 64 huge pages if fewer are free and mounts one at /var/tmp/cuzk-test-hugetlbfs
//! (what CI does; the machines it runs on are root).

use std::path::{Path, PathBuf};

use cuzk_shm_layout::{Arena, ArenaConfig, PartitionShape, Region, SrsKey, SrsSegment};

const MOUNT: &str = "/var/tmp/cuzk-test-hugetlbfs";
const PAGES: u64 = 64;
const HUGE_PAGE: u64 = 2 << 20;

fn meminfo(key: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("{key} not in /proc/meminfo"))
}

/// Huge pages mapped or reserved by someone.
fn huge_pages_taken() -> u64 {
    meminfo("HugePages_Total") - meminfo("HugePages_Free") + meminfo("HugePages_Rsvd")
}

fn is_hugetlbfs(dir: &Path) -> bool {
    use nix::sys::statfs::{statfs, HUGETLBFS_MAGIC};
    statfs(dir).is_ok_and(|s| s.filesystem_type() == HUGETLBFS_MAGIC)
}

fn hugetlbfs() -> PathBuf {
    if let Ok(dir) = std::env::var("CUZK_TEST_HUGETLBFS") {
        let dir = PathBuf::from(dir);
        assert!(
            is_hugetlbfs(&dir),
            "CUZK_TEST_HUGETLBFS={} is not a hugetlbfs mount",
            dir.display()
        );
        return dir;
    }
    let dir = PathBuf::from(MOUNT);
    if is_hugetlbfs(&dir) {
        return dir;
    }
    let how = "mount hugetlbfs and set CUZK_TEST_HUGETLBFS=DIR, or run the tests as root";
    if meminfo("HugePages_Free") < PAGES {
        let want = meminfo("HugePages_Total") + PAGES;
        std::fs::write("/proc/sys/vm/nr_hugepages", want.to_string())
            .unwrap_or_else(|e| panic!("reserving {PAGES} huge pages: {e} ({how})"));
    }
    std::fs::create_dir_all(&dir).unwrap();
    let status = std::process::Command::new("mount")
        .args(["-t", "hugetlbfs", "-o", "pagesize=2M", "none", MOUNT])
        .status()
        .unwrap_or_else(|e| panic!("mount: {e} ({how})"));
    assert!(
        status.success(),
        "mount hugetlbfs at {MOUNT}: {status} ({how})"
    );
    dir
}

#[test]
fn arena_and_srs_segment_live_in_huge_pages() {
    let dir = hugetlbfs();
    assert!(
        meminfo("HugePages_Free") >= 16,
        "too few free huge pages for the test"
    );
    let before = huge_pages_taken();

    let name = format!("hugetlbfs-test-{}", std::process::id());
    let mut cfg = ArenaConfig::new(&name, PartitionShape::new(5000, 8, 4000), 3);
    cfg.dir = dir.clone();
    let a = Arena::create(&cfg).unwrap();
    assert_eq!(a.len() % HUGE_PAGE, 0, "arena length is whole huge pages");
    let file_len = std::fs::metadata(a.path()).unwrap().len();
    assert_eq!(file_len % HUGE_PAGE, 0);

    // The creator writes a slot region; a second mapping (as another stage process would
    // have) reads the same bytes.
    let b = Arena::attach(a.path()).unwrap();
    assert_eq!(b.header().layout_hash, a.header().layout_hash);
    let at = a.region_offset(1, Region::EvalA) as usize;
    let pattern: Vec<u8> = (0..4096u32).map(|i| (i * 7 + 3) as u8).collect();
    let (pa, la) = a.mapping();
    let (pb, lb) = b.mapping();
    assert!(at + pattern.len() <= la && la == lb);
    // SAFETY: `at .. at + 4096` lies inside both mappings (asserted); nothing else in this
    // test touches that region, and both mappings live until the end of the test.
    let seen = unsafe {
        std::ptr::copy_nonoverlapping(pattern.as_ptr(), pa.add(at), pattern.len());
        std::slice::from_raw_parts(pb.add(at), pattern.len()).to_vec()
    };
    assert_eq!(seen, pattern);
    let arena_pages = huge_pages_taken() - before;
    assert!(
        arena_pages >= a.len() / HUGE_PAGE,
        "the arena's {} huge pages are taken from the pool ({arena_pages} are)",
        a.len() / HUGE_PAGE
    );

    // An SRS segment on the same mount: filled once, mapped again by a second open.
    let key = SrsKey::new(format!("hugetlbfs-test-{}", std::process::id()));
    let len = 3 * HUGE_PAGE as usize + 12_345;
    let (seg, filled) = SrsSegment::open_or_load(&dir, &key, len, |out| {
        out.iter_mut()
            .enumerate()
            .for_each(|(i, x)| *x = (i % 251) as u8);
        Ok(())
    })
    .unwrap();
    assert!(filled);
    let again = SrsSegment::open_or_load(&dir, &key, len, |_| Err("filled twice".into()))
        .unwrap()
        .0;
    assert!(again.bytes()[..len]
        .iter()
        .enumerate()
        .all(|(i, x)| *x == (i % 251) as u8));
    assert_eq!(std::fs::metadata(seg.path()).unwrap().len() % HUGE_PAGE, 0);
    assert!(huge_pages_taken() > before + arena_pages);

    // Removed and unmapped: every huge page back in the pool.
    drop((seg, again));
    SrsSegment::remove(&dir, &key).unwrap();
    a.remove().unwrap();
    drop((a, b));
    assert_eq!(huge_pages_taken(), before, "huge pages returned");
}
