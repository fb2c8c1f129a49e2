//! Discovery through a Tachyon discovery server (Fast DDS's protocol), over real UDP sockets
//! with multicast off: clients find each other through the server only, each client hears
//! of the endpoints of the topics it uses only, and a client that leaves is forgotten by the
//! others. (Against Fast DDS's own server and clients: `interop/discovery_server.py`.)

mod common;

use std::time::Duration;

use common::{take_at_least, wait_matched, wait_until};
use tachyon::prelude::*;
use tachyon::Config;

#[derive(Clone, Debug, PartialEq, DdsType)]
#[dds(name = "test::Tick")]
struct Tick {
    #[key]
    id: u32,
}

/// A participant on `domain` as the configuration text says, UDP only, multicast off.
fn participant(domain: u32, extra: &str) -> DomainParticipant {
    let text =
        format!("[udp]\nmulticast = \"off\"\n[transports]\nintra = false\nshm = false\n{extra}");
    let config = Config::from_toml_str(&text, "test.toml").expect("config");
    DomainParticipant::with_config(domain, &config).expect("participant")
}

fn server(domain: u32, port: u16) -> DomainParticipant {
    participant(
        domain,
        &format!("[discovery.server]\nid = 0\nport = {port}\n"),
    )
}

fn client(domain: u32, port: u16) -> DomainParticipant {
    participant(
        domain,
        &format!("[discovery]\nservers = [\"127.0.0.1:{port}\"]\n"),
    )
}

fn topics(p: &DomainParticipant) -> Vec<String> {
    let mut t: Vec<String> = p
        .discovered_publications()
        .into_iter()
        .map(|d| d.topic_name)
        .chain(
            p.discovered_subscriptions()
                .into_iter()
                .map(|d| d.topic_name),
        )
        .collect();
    t.sort();
    t
}

#[test]
fn clients_meet_through_the_server_and_hear_only_of_their_topics() {
    tachyon_transport::testing::require_isolated_network();
    let (domain, port) = (41, 21811);
    let s = server(domain, port);
    assert_eq!(
        s.guid_prefix(),
        tachyon_proto::discovery::fastdds_server_prefix(0),
        "a server has the GUID prefix its clients know it by"
    );
    let (a, b, c) = (
        client(domain, port),
        client(domain, port),
        client(domain, port),
    );
    let w = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(
            &a.create_topic::<Tick>("shared").expect("topic"),
            DataWriterQos::default().reliable(),
        )
        .expect("writer");
    let r = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(
            &b.create_topic::<Tick>("shared").expect("topic"),
            DataReaderQos::default().reliable(),
        )
        .expect("reader");
    let other = c
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(
            &c.create_topic::<Tick>("elsewhere").expect("topic"),
            DataReaderQos::default().reliable(),
        )
        .expect("reader");
    wait_matched(&w, &r);
    w.write(&Tick { id: 7 }).expect("write");
    assert_eq!(take_at_least(&r, 1), vec![Tick { id: 7 }]);

    // Every client knows the server and the other clients (the server relays every
    // announcement), but the endpoints only of its topics.
    wait_until("the server knows the three clients", || {
        s.discovered_participants().len() == 3
    });
    for p in [&a, &b, &c] {
        wait_until("each client knows the server and the two others", || {
            p.discovered_participants().len() == 3
        });
    }
    wait_until("the server knows the three endpoints", || {
        topics(&s) == ["elsewhere", "shared", "shared"]
    });
    wait_until("a hears of b's reader", || topics(&a) == ["shared"]);
    wait_until("b hears of a's writer", || topics(&b) == ["shared"]);
    // What should not come: given the time the others took, and some.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(topics(&a), vec!["shared"], "a hears of b's reader only");
    assert_eq!(topics(&b), vec!["shared"], "b hears of a's writer only");
    assert!(topics(&c).is_empty(), "c shares no topic: {:?}", topics(&c));
    assert!(other.matched_publications().is_empty());

    // c starts using the topic: it hears of the endpoints relayed before.
    let late = c
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(
            &c.create_topic::<Tick>("shared").expect("topic"),
            DataReaderQos::default().reliable(),
        )
        .expect("reader");
    wait_matched(&w, &late);
    w.write(&Tick { id: 8 }).expect("write");
    assert_eq!(take_at_least(&late, 1), vec![Tick { id: 8 }]);

    // A client that leaves is forgotten by the others: the server relays its end.
    let gone = a.guid_prefix();
    drop(w);
    drop(a);
    for p in [&b, &c] {
        wait_until("the others forget the client that left", || {
            p.discovered_participants()
                .iter()
                .all(|d| d.key.0.prefix != gone)
        });
    }
    wait_until("the server forgets it too", || {
        s.discovered_participants().len() == 2
    });
}

#[test]
fn a_client_started_before_its_server_finds_it() {
    tachyon_transport::testing::require_isolated_network();
    let (domain, port) = (42, 21812);
    let a = client(domain, port);
    let b = client(domain, port);
    std::thread::sleep(Duration::from_millis(300));
    assert!(a.discovered_participants().is_empty());
    let _s = server(domain, port);
    for p in [&a, &b] {
        wait_until("the clients find the server and each other", || {
            p.discovered_participants().len() == 2
        });
    }
}

#[test]
fn a_second_server_on_the_same_port_is_a_clear_error() {
    tachyon_transport::testing::require_isolated_network();
    let _s = server(43, 21813);
    let text = "[discovery.server]\nport = 21813\n";
    let config = Config::from_toml_str(text, "test.toml").expect("config");
    let e = DomainParticipant::with_config(43, &config).expect_err("port in use");
    assert!(e.to_string().contains("port 21813"), "{e}");
}
