//! `ignore_local` (Cyclone DDS's `ignorelocal`): a writer and a reader of one participant do
//! not match when either asks so, and still match the other participant's endpoints — over
//! real UDP sockets on loopback (inside the network namespace `scripts/test.sh` provides).

mod common;

use common::{participants, take_all_written, wait_matched, wait_until};
use tachyon::prelude::*;

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Echo")]
struct Echo {
    n: u32,
}

#[test]
fn endpoints_of_one_participant_match_unless_told_to_ignore_local_ones() {
    let (a, b) = participants(55);
    let ta = a.create_topic::<Echo>("echo").expect("topic");
    let tb = b.create_topic::<Echo>("echo").expect("topic");
    let (pa, sa) = (
        a.create_publisher().unwrap(),
        a.create_subscriber().unwrap(),
    );
    let sb = b.create_subscriber().unwrap();

    let writer = pa
        .create_datawriter(&ta, DataWriterQos::default().ignore_local(true))
        .expect("writer");
    let local = sa
        .create_datareader(&ta, DataReaderQos::default().reliable())
        .expect("local reader");
    let remote = sb
        .create_datareader(&tb, DataReaderQos::default().reliable())
        .expect("remote reader");
    wait_matched(&writer, &remote);
    writer.write(&Echo { n: 1 }).unwrap();
    wait_until("the remote reader to receive", || {
        remote.take(10).map(|s| s.len()).unwrap_or(0) == 1
    });
    // A participant matches its own endpoints as it creates them: these two never did.
    assert_eq!(local.get_subscription_matched_status().current_count, 0);
    assert_eq!(writer.matched_subscriptions(), [remote.guid()]);

    // Without the flag on either side, local endpoints match as DDS says.
    let plain = pa
        .create_datawriter(&ta, DataWriterQos::default())
        .expect("plain writer");
    wait_until("the local reader to match the plain writer", || {
        local.get_subscription_matched_status().current_count == 1
    });
    assert_eq!(plain.get_publication_matched_status().current_count, 2);
    assert_eq!(local.matched_publications(), [plain.guid()]);
    // The plain writer's sample, written after the first one reached the remote reader, is
    // all the local reader gets: the first one, had it been sent there, would have come first.
    plain.write(&Echo { n: 2 }).unwrap();
    assert_eq!(
        take_all_written(&plain, &local, 1),
        [Echo { n: 2 }],
        "the local reader got the ignore_local writer's sample"
    );
}
