//! The critical lane over real UDP on loopback (inside the isolated network namespace
//! `scripts/test.sh` provides): writers and readers of TRANSPORT_PRIORITY above
//! `threads.critical_priority` announce a socket of their own, remote writers send their data
//! there, and a thread of its own receives it.

mod common;

use tachyon::config::{ThreadMode, ThreadRoles};
use tachyon::prelude::*;
use tachyon::qos::TopicQos;
use tachyon::ParticipantSettings;

use common::{take_at_least, wait_matched, wait_until};

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Tick")]
struct Tick {
    seq: u64,
}

fn settings(mode: ThreadMode) -> ParticipantSettings {
    ParticipantSettings {
        threads: ThreadRoles {
            mode,
            critical_priority: Some(5),
            ..ThreadRoles::default()
        },
        // Over UDP: both participants live in this process, and the in-process transport
        // would carry their pairs instead (`tests/intra.rs`).
        transports: tachyon::TransportSettings {
            no_intra: true,
            no_shm: true,
            ..tachyon::TransportSettings::default()
        },
        ..ParticipantSettings::default()
    }
}

fn critical_topic() -> TopicQos {
    TopicQos {
        transport_priority: 10,
        ..TopicQos::default()
    }
}

fn run(mode: ThreadMode, domain: u32) {
    tachyon_transport::testing::require_isolated_network();
    let a = DomainParticipant::with_settings(domain, &settings(mode)).expect("a");
    let b = DomainParticipant::with_settings(domain, &settings(mode)).expect("b");
    let crit_a = a
        .create_topic_with_qos::<Tick>("crit", critical_topic())
        .expect("topic");
    let crit_b = b
        .create_topic_with_qos::<Tick>("crit", critical_topic())
        .expect("topic");
    let bulk_a = a.create_topic::<Tick>("bulk").expect("topic");
    let bulk_b = b.create_topic::<Tick>("bulk").expect("topic");
    let (pa, sb) = (
        a.create_publisher().expect("publisher"),
        b.create_subscriber().expect("subscriber"),
    );
    let critical_qos = DataWriterQos {
        transport_priority: 10,
        ..DataWriterQos::default().reliable().keep_all()
    };
    let wc = pa.create_datawriter(&crit_a, critical_qos).expect("writer");
    let wb = pa
        .create_datawriter(&bulk_a, DataWriterQos::default().reliable().keep_all())
        .expect("writer");
    let reader_qos = DataReaderQos::default().reliable().keep_all();
    let rc = sb
        .create_datareader(&crit_b, reader_qos.clone())
        .expect("reader");
    let rb = sb.create_datareader(&bulk_b, reader_qos).expect("reader");
    wait_matched(&wc, &rc);
    wait_matched(&wb, &rb);

    // What each side announced: the critical endpoints their own port, the others the
    // participant's default (filled in from the participant's data).
    let port_of = |ls: &[tachyon_wire::Locator]| ls.first().map(|l| l.port).expect("a locator");
    wait_until("b knows both writers", || {
        b.discovered_publications().len() == 2
    });
    let pubs = b.discovered_publications();
    let crit_w = pubs.iter().find(|p| p.topic_name == "crit").expect("crit");
    let bulk_w = pubs.iter().find(|p| p.topic_name == "bulk").expect("bulk");
    assert_ne!(
        port_of(&crit_w.unicast_locators),
        port_of(&bulk_w.unicast_locators)
    );
    wait_until("a knows both readers", || {
        a.discovered_subscriptions().len() == 2
    });
    let subs = a.discovered_subscriptions();
    let crit_r = subs.iter().find(|s| s.topic_name == "crit").expect("crit");
    let bulk_r = subs.iter().find(|s| s.topic_name == "bulk").expect("bulk");
    assert_ne!(
        port_of(&crit_r.unicast_locators),
        port_of(&bulk_r.unicast_locators)
    );
    let default_port = b
        .discovered_participants()
        .iter()
        .find_map(|p| p.default_unicast_locators.first().map(|l| l.port))
        .expect("a's defaults");
    assert_eq!(port_of(&bulk_w.unicast_locators), default_port);

    // Data flows on both lanes.
    for seq in 0..50 {
        wc.write(&Tick { seq }).expect("write");
        wb.write(&Tick { seq }).expect("write");
    }
    assert_eq!(take_at_least(&rc, 50).len(), 50);
    assert_eq!(take_at_least(&rb, 50).len(), 50);
    wc.wait_for_acknowledgments(common::PATIENCE)
        .expect("acked");

    if mode == ThreadMode::Threads {
        let roles: Vec<&str> = b.thread_ids().iter().map(|(r, _)| *r).collect();
        assert_eq!(
            roles.iter().filter(|r| **r == "critical").count(),
            1,
            "{roles:?}"
        );
    }
}

#[test]
fn critical_endpoints_get_a_lane_of_their_own_with_receive_threads() {
    run(ThreadMode::Threads, 63);
}

#[test]
fn critical_endpoints_get_a_lane_of_their_own_with_a_driver() {
    run(ThreadMode::Driver, 64);
}
