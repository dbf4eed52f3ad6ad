//! The slot a stage takes ahead (`Lookahead`): claimed only when ready and only once, kept
//! for the next round of the stage loop, given back undone when the stage stops.

use cuzk_shm_layout::{Arena, ArenaConfig, PartitionShape, ShmError, SlotClaim, Stage};
use cuzk_stage_common::runtime::Lookahead;

/// Moves a free slot through synthesis and host-prep: it is then ready for the gpu stage.
fn make_gpu_ready(arena: &Arena) -> u32 {
    let c = arena.claim_any(Stage::Synthesis).expect("a free slot");
    let slot = c.slot();
    c.complete().unwrap();
    let c = arena
        .claim_any(Stage::HostPrep)
        .expect("the synthesized slot");
    assert_eq!(c.slot(), slot);
    c.complete().unwrap();
    slot
}

#[test]
fn a_slot_is_taken_ahead_once_when_ready_and_given_back_on_stop() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = ArenaConfig::new("lookahead", PartitionShape::new(5000, 8, 4000), 3);
    cfg.dir = dir.path().to_owned();
    let arena = Arena::create(&cfg).unwrap();
    let mut claims = 0;
    let mut claim = || -> Result<Option<SlotClaim<'_>>, ShmError> {
        claims += 1;
        Ok(arena.claim_any(Stage::Gpu))
    };

    // Nothing ready: nothing taken, and the lookahead asks again next time.
    let mut next = None;
    assert!(Lookahead::new(&mut next, &mut claim).next_slot().is_none());
    let first = make_gpu_ready(&arena);
    let second = make_gpu_ready(&arena);
    let taken = {
        let mut ahead = Lookahead::new(&mut next, &mut claim);
        let slot = ahead.next_slot().expect("a ready slot").slot();
        // Asked again within the same round: the same slot, no second claim.
        assert_eq!(ahead.next_slot().unwrap().slot(), slot);
        slot
    };
    assert!(taken == first || taken == second);
    assert_eq!(claims, 2);
    // The next round starts from the slot taken ahead: it stays claimed by this process.
    let held = next.take().expect("kept for the next round");
    assert_eq!(held.slot(), taken);
    assert!(arena
        .try_claim(taken, Stage::Gpu.ready_state(), None)
        .is_err());
    // The other ready slot is still there for another gpu process.
    let other = arena.claim_any(Stage::Gpu).expect("the other ready slot");
    assert_ne!(other.slot(), taken);
    // A stage that stops gives the slot taken ahead back undone: ready for the gpu again.
    held.abandon().unwrap();
    let again = arena.claim_any(Stage::Gpu).expect("given back");
    assert_eq!(again.slot(), taken);
    drop((other, again));

    // Outside a stage loop the lookahead never claims, even with slots ready.
    let mut none = None;
    assert!(Lookahead::none(&mut none).next_slot().is_none());
    assert!(arena.claim_any(Stage::Gpu).is_some());
    arena.remove().unwrap();
}
