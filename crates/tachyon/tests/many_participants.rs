//! A host runs more participants than there are automatic participant indices (10 by
//! default): the ones beyond get unicast ports from the kernel, not tied to an index, and
//! match and exchange data with the indexed ones both ways (the CI runs this over UDP too).

mod common;

use common::*;
use tachyon::prelude::*;

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "many::Sample")]
struct Sample {
    #[dds(key)]
    id: u32,
    value: u64,
}

#[test]
fn fourteen_participants_on_one_host_all_start_and_talk() {
    tachyon_transport::testing::require_isolated_network();
    let ps: Vec<DomainParticipant> = (0..14)
        .map(|i| DomainParticipant::new(76).unwrap_or_else(|e| panic!("participant {i}: {e}")))
        .collect();
    let indexed: Vec<Option<u32>> = ps
        .iter()
        .map(DomainParticipant::participant_index)
        .collect();
    assert_eq!(
        indexed.iter().filter(|i| i.is_none()).count(),
        4,
        "indices 0..=9 taken, four without: {indexed:?}"
    );
    let last = ps
        .iter()
        .position(|p| p.participant_index().is_none())
        .expect("an unindexed participant");
    let first = ps
        .iter()
        .position(|p| p.participant_index() == Some(0))
        .expect("index 0");
    // Unindexed to indexed, and indexed to unindexed.
    for (from, to, topic) in [(last, first, "up"), (first, last, "down")] {
        let (w, r) = reliable_pair::<Sample>(&ps[from], &ps[to], topic);
        wait_matched(&w, &r);
        for i in 0..5 {
            w.write(&Sample { id: i, value: 7 }).expect("write");
        }
        let got = take_all_written(&w, &r, 5);
        assert_eq!(got.len(), 5, "{topic}");
    }
}
