//! `ignore_local` (Cyclone DDS's `ignorelocal`): a writer and a reader of one participant do
//! not match when either asks so, and still match the other participant's endpoints — over
//! real UDP sockets on loopback (inside the network namespace `scripts/test.sh` provides).

use std::time::{Duration, Instant};

use tachyon::prelude::*;

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Echo")]
struct Echo {
    n: u32,
}

fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(10);
    while !f() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn endpoints_of_one_participant_match_unless_told_to_ignore_local_ones() {
    let a = DomainParticipant::new(55).expect("participant a");
    let b = DomainParticipant::new(55).expect("participant b");
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
    wait_until("the remote reader to match", || {
        writer.get_publication_matched_status().current_count == 1
    });
    writer.write(&Echo { n: 1 }).unwrap();
    wait_until("the remote reader to receive", || {
        remote.take(10).map(|s| s.len()).unwrap_or(0) == 1
    });
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(local.get_subscription_matched_status().current_count, 0);
    assert!(
        local.take(10).unwrap().is_empty(),
        "the local reader got its own sample"
    );

    // Without the flag on either side, local endpoints match as DDS says.
    let plain = pa
        .create_datawriter(&ta, DataWriterQos::default())
        .expect("plain writer");
    wait_until("the local reader to match the plain writer", || {
        local.get_subscription_matched_status().current_count == 1
    });
    assert_eq!(plain.get_publication_matched_status().current_count, 2);
}
