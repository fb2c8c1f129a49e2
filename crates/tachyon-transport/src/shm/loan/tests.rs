//! Loan areas between `Loans` of this test process, each standing for a participant (a
//! locked file where its segment would be). Killed processes: the `tachyon` crate's
//! `tests/shm.rs`.

use super::*;
use crate::shm::tests::Dir;

/// A participant of token `token`: its `Loans` and a locked file standing for its segment
/// (dropping it is the participant dying).
fn participant(dir: &Dir, token: u64) -> (Loans, Mapping) {
    let seg = Mapping::create(&segment::path_of(&dir.0, token), 4096, 0o600, None)
        .expect("stand-in segment");
    (Loans::new(&dir.0, token, 0o600, None), seg)
}

fn write(slot: &mut LoanSlot, value: u8, len: usize) {
    slot.bytes_mut()[..len].fill(value);
}

fn held_bytes(r: Resolved) -> Vec<u8> {
    match r {
        Resolved::Held(h) => h.bytes().to_vec(),
        Resolved::Copied(c) => c,
    }
}

#[test]
fn a_published_sample_is_read_in_place_and_its_slot_waits_for_the_reader() {
    let dir = Dir::new();
    let (w, _ws) = participant(&dir, 1);
    let (r, _rs) = participant(&dir, 2);
    let area = w.create_area(1000, 2).expect("area");
    assert_eq!(area.slot_size(), 1024);
    let mut a = area.loan().expect("slot");
    write(&mut a, 7, 100);
    let a = a.publish(60, 40).expect("inside");
    assert_eq!(a.bytes(), &[7; 40][..]);
    let held = match r.resolve(a.reference()).expect("resolves") {
        Resolved::Held(h) => h,
        Resolved::Copied(_) => panic!("a row and entries are free: held in place"),
    };
    assert_eq!(held.bytes(), &[7; 40][..]);
    drop(a); // the writer is done with it; the reader is not
    let b = area.loan().expect("the other slot");
    assert!(area.loan().is_none(), "the first slot is held");
    drop(held);
    let c = area.loan().expect("released: reused");
    drop((b, c));
    let s = w.stats();
    assert_eq!((s.areas, s.loans, s.exhausted), (1, 3, 1));
    assert_eq!((r.stats().held, r.stats().missed), (1, 0));
}

#[test]
fn a_reference_to_a_reused_slot_is_missed() {
    let dir = Dir::new();
    let (w, _ws) = participant(&dir, 1);
    let (r, _rs) = participant(&dir, 2);
    let area = w.create_area(64, 1).expect("area");
    let mut a = area.loan().expect("slot");
    write(&mut a, 1, 8);
    let a = a.publish(0, 8).expect("inside");
    let stale = a.reference().to_vec();
    drop(a);
    let mut b = area.loan().expect("nobody held it: reused");
    write(&mut b, 2, 8);
    assert_eq!(r.resolve(&stale).err(), Some("the writer reused the slot"));
    let b = b.publish(0, 8).expect("inside");
    assert_eq!(
        held_bytes(r.resolve(b.reference()).expect("the new one")),
        vec![2; 8]
    );
    assert_eq!(r.stats().missed, 1);
}

#[test]
fn a_dead_readers_holds_are_released() {
    let dir = Dir::new();
    let (w, _ws) = participant(&dir, 1);
    let (r, rs) = participant(&dir, 2);
    let area = w.create_area(64, 1).expect("area");
    let a = area.loan().expect("slot").publish(0, 8).expect("inside");
    let held = r.resolve(a.reference()).expect("held");
    drop(a);
    assert!(area.loan().is_none(), "held by a live reader");
    // The reader dies: its lock goes, its memory (and hold entry) stays.
    std::mem::forget(held);
    std::mem::forget(r);
    drop(rs);
    assert!(
        area.loan().is_none(),
        "checked at most every LIVENESS_PERIOD"
    );
    std::thread::sleep(LIVENESS_PERIOD);
    assert!(area.loan().is_some(), "its row was cleared");
    assert_eq!(w.stats().rows_reclaimed, 1);
}

#[test]
fn with_no_hold_entry_free_samples_are_copied() {
    let dir = Dir::new();
    let (w, _ws) = participant(&dir, 1);
    let (r, _rs) = participant(&dir, 2);
    let area = w.create_area(64, HOLDS + 1).expect("area");
    let mut published = Vec::new();
    let mut held = Vec::new();
    for n in 0..=HOLDS {
        let mut s = area.loan().expect("slot");
        write(&mut s, n as u8, 4);
        let p = s.publish(0, 4).expect("inside");
        held.push(r.resolve(p.reference()).expect("resolves"));
        published.push(p);
    }
    assert!(matches!(held.last(), Some(Resolved::Copied(c)) if c == &vec![HOLDS as u8; 4]));
    assert_eq!((r.stats().held, r.stats().copied), (u64::from(HOLDS), 1));
}

#[test]
fn malformed_references_and_areas_are_rejected() {
    let dir = Dir::new();
    let (w, _ws) = participant(&dir, 1);
    let (r, _rs) = participant(&dir, 2);
    let area = w.create_area(64, 1).expect("area");
    let p = area.loan().expect("slot").publish(0, 8).expect("inside");
    let good = p.reference().to_vec();
    let with = |at: usize, bytes: &[u8]| {
        let mut v = good.clone();
        v[at..at + bytes.len()].copy_from_slice(bytes);
        v
    };
    let cases: [(Vec<u8>, &str); 6] = [
        (good[..20].to_vec(), "a loan reference too short"),
        (with(0, &[0; 8]), "a loan reference of token 0"),
        (
            with(12, &5u32.to_le_bytes()),
            "a loan reference outside its area",
        ),
        (
            with(24, &60u32.to_le_bytes()),
            "a loan reference outside its area",
        ),
        (
            with(28, &u32::MAX.to_le_bytes()),
            "a loan reference outside its area",
        ),
        (
            with(8, &9u32.to_le_bytes()),
            "the loan area cannot be opened",
        ),
    ];
    for (reference, why) in cases {
        assert_eq!(r.resolve(&reference).err(), Some(why));
    }
    // An area whose numbers were overwritten (a hostile process) is not used.
    let (r2, _rs2) = participant(&dir, 3);
    let other = w.create_area(64, 1).expect("area");
    let q = other.loan().expect("slot").publish(0, 8).expect("inside");
    other
        .0
        .map
        .u32_at(header::SLOTS)
        .expect("word")
        .store(4000, Ordering::Relaxed);
    assert_eq!(
        r2.resolve(q.reference()).err(),
        Some("a loan area of the wrong size")
    );
    other
        .0
        .map
        .u32_at(header::SLOT_SIZE)
        .expect("word")
        .store(0, Ordering::Relaxed);
    let (r3, _rs3) = participant(&dir, 4);
    assert_eq!(
        r3.resolve(q.reference()).err(),
        Some("a loan area of bad numbers")
    );
    assert_eq!(r.stats().malformed, 5);
}

#[test]
fn area_files_go_with_their_writer_or_when_it_is_gone() {
    let dir = Dir::new();
    let (w, ws) = participant(&dir, 1);
    let area = w.create_area(64, 1).expect("area");
    assert_eq!(dir.segments(), 2);
    drop(area);
    assert_eq!(dir.segments(), 1, "deleted with its writer");
    // A writer that died left an area (unlocked, its segment gone): deleted when a reader
    // forgets the writer, or by any sweep.
    let dead = path_of(&dir.0, 5, 0);
    drop(Mapping::create(&dead, 8192, 0o600, None).expect("an area file"));
    let also = path_of(&dir.0, 6, 3);
    drop(Mapping::create(&also, 8192, 0o600, None).expect("an area file"));
    let (r, _rs) = participant(&dir, 2);
    r.forget(5);
    assert!(!dead.exists());
    assert!(also.exists(), "another participant's");
    delete_dead_areas(&dir.0, None);
    assert!(!also.exists());
    // A live writer's area is left alone.
    let live = w.create_area(64, 1).expect("area");
    delete_dead_areas(&dir.0, None);
    assert!(live.path().exists());
    drop(ws);
    assert_eq!(area_of("tachyon-0000000000000001-00000002"), Some((1, 2)));
    assert_eq!(area_of("tachyon-0000000000000001"), None);
}
