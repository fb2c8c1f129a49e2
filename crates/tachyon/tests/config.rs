//! Configuration files: every key parses into the settings it names; an unknown key or a bad
//! value is an error naming the file and the key; a participant uses what the file says.
//! (`TACHYON_CONFIG` is exercised in `config_env.rs`, its own process: the environment is
//! shared by every test of a binary.)

mod common;

use std::net::Ipv4Addr;
use std::time::Duration;

use common::{take_at_least, wait_matched, wait_until};
use tachyon::prelude::*;
use tachyon::{Config, ConfigError, MulticastMode, Peer};
use tachyon_transport::PortMapping;

const FULL: &str = r#"
# Every key, set to something other than its default.
[log]
filter = "warn,tachyon=debug"

[udp]
interface = "eth1"
multicast = "off"
spdp_multicast_group = "239.255.0.2"
peers = ["10.0.0.2", "10.0.0.3:3"]
participant_index = 4
max_auto_participant_index = 20
receive_buffer_size = "4MiB"
send_buffer_size = 1048576
multicast_ttl = 4
multicast_loopback = false
connected_destinations = 0

[udp.ports]
base = 17400
domain_gain = 200
participant_gain = 4
d0 = 1
d1 = 12
d2 = 3
d3 = 13

[discovery]
lease_duration = "1.5s"
announce_period = "250ms"
max_participants = 64
max_remote_endpoints = 500

[limits]
max_reassembly_bytes = "8MiB"
max_samples_in_reassembly = 4
max_pending_bytes = 1048576

[threads]
mode = "single"
critical_priority = 10
strict = true

[threads.driver]
cpus = [3, 2]
priority = 50

[threads.receive]
cpus = [1]
priority = 80
busy_poll = "50us"

[threads.timers]
priority = 10

[threads.critical]
spin = "0us"

[transports]
intra = false

[domain.7.udp]
participant_index = 1
multicast = "on"

[domain.7.discovery]
lease_duration = "infinite"

[domain.7.limits]
max_pending_bytes = "2MiB"

[domain.7.transports]
intra = true
"#;

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::from_toml_str(text, "/etc/tachyon.toml")
}

fn error(text: &str) -> String {
    match parse(text) {
        Ok(c) => panic!("{text:?} parsed: {c:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_full_file_parses_into_every_setting() {
    let c = parse(FULL).expect("parses");
    assert_eq!(c.log_filter(), Some("warn,tachyon=debug"));
    assert_eq!(c.origin(), Some("/etc/tachyon.toml"));
    let s = c.settings(0);
    let u = &s.udp;
    assert_eq!(u.interface.as_deref(), Some("eth1"));
    assert_eq!(u.multicast, MulticastMode::Disabled);
    assert_eq!(u.spdp_multicast_group, Ipv4Addr::new(239, 255, 0, 2));
    assert_eq!(
        u.peers,
        vec![
            Peer::any_index(Ipv4Addr::new(10, 0, 0, 2)),
            Peer::with_index(Ipv4Addr::new(10, 0, 0, 3), 3)
        ]
    );
    assert_eq!(u.participant_index, Some(4));
    assert_eq!(u.max_auto_participant_index, 20);
    assert_eq!(u.receive_buffer_size, Some(4 << 20));
    assert_eq!(u.send_buffer_size, Some(1 << 20));
    assert_eq!(u.multicast_ttl, 4);
    assert!(!u.multicast_loopback);
    assert_eq!(u.connected_destinations, 0);
    assert_eq!(
        u.ports,
        PortMapping {
            base: 17400,
            domain_gain: 200,
            participant_gain: 4,
            d0: 1,
            d1: 12,
            d2: 3,
            d3: 13
        }
    );
    assert_eq!(s.lease_duration, Some(Duration::from_millis(1500)));
    assert_eq!(s.announce_period, Some(Duration::from_millis(250)));
    assert_eq!(s.max_participants, Some(64));
    assert_eq!(s.threads.mode, tachyon::config::ThreadMode::Single);
    assert_eq!(s.threads.critical_priority, Some(10));
    assert!(s.threads.strict);
    assert_eq!(s.max_remote_endpoints, Some(500));
    let r = s.reassembly.expect("[limits] sets reassembly");
    assert_eq!(r.max_total_bytes, 8 * 1024 * 1024);
    assert_eq!(r.max_in_progress, 4);
    assert_eq!(
        r.max_sample_size,
        256 * 1024 * 1024,
        "unset keys keep their default"
    );
    assert_eq!(s.max_pending_bytes, Some(1024 * 1024));
    assert_eq!(s.threads.driver.cpus, vec![2, 3]);
    assert_eq!(s.threads.driver.priority, Some(50));
    assert_eq!(s.threads.receive.cpus, vec![1]);
    assert_eq!(s.threads.receive.priority, Some(80));
    assert_eq!(s.threads.receive.busy_poll, Some(Duration::from_micros(50)));
    assert_eq!(s.threads.driver.busy_poll, None);
    // Watching before blocking: off where set to zero; by default 20 µs for a thread of the
    // default policy, none for a SCHED_FIFO one or one that busy-polls.
    assert_eq!(s.threads.critical.spin, Some(Duration::ZERO));
    assert_eq!(s.threads.critical.receive_spin(), Duration::ZERO);
    assert_eq!(s.threads.receive.spin, None);
    assert_eq!(s.threads.receive.receive_spin(), Duration::ZERO);
    assert_eq!(
        tachyon::config::ThreadSettings::default().receive_spin(),
        tachyon::config::DEFAULT_RECEIVE_SPIN
    );
    let fifo = tachyon::config::ThreadSettings {
        priority: Some(50),
        ..Default::default()
    };
    assert_eq!(fifo.receive_spin(), Duration::ZERO);
    let chosen = tachyon::config::ThreadSettings {
        priority: Some(50),
        spin: Some(Duration::from_micros(5)),
        ..Default::default()
    };
    assert_eq!(chosen.receive_spin(), Duration::from_micros(5));
    assert!(s.threads.timers.cpus.is_empty());
    assert_eq!(s.threads.timers.priority, Some(10));
    assert!(s.transports.no_intra);

    // Domain 7 overrides only what its section sets.
    let d7 = c.settings(7);
    assert_eq!(d7.udp.participant_index, Some(1));
    assert_eq!(d7.udp.multicast, MulticastMode::Enabled);
    assert_eq!(d7.lease_duration, Some(Duration::MAX));
    assert_eq!(d7.max_pending_bytes, Some(2 * 1024 * 1024));
    assert_eq!(d7.reassembly, s.reassembly);
    assert_eq!(d7.announce_period, Some(Duration::from_millis(250)));
    assert_eq!(d7.udp.interface.as_deref(), Some("eth1"));
    assert!(!d7.transports.no_intra);
    assert_eq!(c.domains_with_overrides().collect::<Vec<_>>(), vec![7]);
}

/// The complete example of `docs/configuration.md` is a file Tachyon reads.
#[test]
fn the_documented_example_parses() {
    let doc = include_str!("../../../docs/configuration.md");
    let start = doc
        .find("```toml\n# /etc/tachyon.toml")
        .expect("the example")
        + "```toml\n".len();
    let len = doc[start..].find("```").expect("its end");
    let c = parse(&doc[start..start + len]).expect("the documented example parses");
    let s = c.settings(0);
    assert_eq!(s.threads.critical.priority, Some(60));
    assert!(!s.transports.no_intra);
    assert!(!s.transports.no_shm);
    // Every [shm] key at its default.
    assert_eq!(s.shm, tachyon_transport::shm::ShmConfig::default());
}

#[test]
fn shared_memory_keys_apply() {
    let c = parse(
        "[transports]\nshm = false\n[shm]\ndir = \"/run/shm\"\nsmall_slots = 16\n\
         small_slot_size = \"4KiB\"\nlarge_slots = 8\nchannels = 4\nring = 64\nincoming = 9\n\
         group = 1042\nloan_bytes = \"8MiB\"\nspin = \"0us\"\n",
    )
    .expect("parses");
    let s = c.settings(0);
    assert!(s.transports.no_shm);
    let want = tachyon_transport::shm::ShmConfig {
        dir: "/run/shm".into(),
        small_slots: 16,
        small_slot_size: 4096,
        large_slots: 8,
        channels: 4,
        ring: 64,
        incoming: 9,
        group: Some(1042),
        loan_bytes: 8 << 20,
        spin: std::time::Duration::ZERO,
    };
    assert_eq!(s.shm, want);
    let spin = parse("[shm]\nspin = \"50us\"\n").expect("parses");
    assert_eq!(
        spin.settings(0).shm.spin,
        std::time::Duration::from_micros(50)
    );
    let msg = error("[shm]\nspin = \"1s\"\n");
    assert!(msg.contains("spin") && msg.contains("10ms"), "{msg}");
    let msg = error("[shm]\ngroup = \"no-such-group-here\"\n");
    assert!(
        msg.contains("no-such-group-here") && msg.contains("/etc/group"),
        "{msg}"
    );
}

#[test]
fn an_empty_file_is_the_zero_config_default() {
    let c = parse("# nothing\n").expect("parses");
    let d = Config::default();
    assert_eq!(c.settings(0).udp, d.settings(0).udp);
    assert_eq!(c.settings(3).udp, tachyon::UdpConfig::default());
    assert_eq!(c.settings(0).lease_duration, None);
    assert!(c.settings(0).threads.is_default());
    assert_eq!(c.log_filter(), None);
    assert_eq!(d.origin(), None);
}

#[test]
fn an_unknown_key_names_the_key_and_the_file() {
    let msg = error("[udp]\nmultcast = \"off\"\n");
    assert!(msg.contains("/etc/tachyon.toml"), "{msg}");
    assert!(msg.contains("unknown key `udp.multcast`"), "{msg}");
    assert!(msg.contains("multicast"), "expected keys listed: {msg}");
    assert!(
        matches!(parse("[udp]\nmultcast = \"off\"\n"), Err(ConfigError::UnknownKey { ref key, line: Some(2), .. }) if key == "udp.multcast"),
        "{msg}"
    );

    let msg = error("[domain.7.udp]\nmulticastt = \"off\"\n");
    assert!(
        msg.contains("unknown key `domain.7.udp.multicastt`"),
        "{msg}"
    );
    let msg = error("[udpp]\n");
    assert!(msg.contains("unknown key `udpp`"), "{msg}");
    let msg = error("[threads.sender]\npriority = 3\n");
    assert!(msg.contains("unknown key `threads.sender`"), "{msg}");
    let msg = error("[udp.ports]\nd4 = 3\n");
    assert!(msg.contains("unknown key `udp.ports.d4`"), "{msg}");
    let msg = error("[domain.7.log]\nfilter = \"info\"\n");
    assert!(msg.contains("unknown key `domain.7.log`"), "{msg}");
}

#[test]
fn a_bad_value_names_the_key() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "[udp]\nmulticast = \"maybe\"\n",
            "udp.multicast",
            "\"auto\", \"on\" or \"off\"",
        ),
        (
            "[discovery]\nlease_duration = \"10 parsecs\"\n",
            "discovery.lease_duration",
            "unit",
        ),
        (
            "[discovery]\nlease_duration = 10\n",
            "discovery.lease_duration",
            "unit",
        ),
        (
            "[discovery]\nannounce_period = \"infinite\"\n",
            "discovery.announce_period",
            "infinite",
        ),
        (
            "[discovery]\nannounce_period = \"0s\"\n",
            "discovery.announce_period",
            "zero",
        ),
        (
            "[udp]\npeers = [\"10.0.0.2\", \"10.0.0:3\"]\n",
            "udp.peers[1]",
            "IPv4",
        ),
        (
            "[udp]\npeers = [\"10.0.0.2:x\"]\n",
            "udp.peers[0]",
            "participant index",
        ),
        (
            "[threads]\nmode = \"multi\"\n",
            "threads.mode",
            "\"single\"",
        ),
        (
            "[threads.driver]\npriority = 100\n",
            "threads.driver.priority",
            "1 to 99",
        ),
        (
            "[threads.driver]\npriority = 0\n",
            "threads.driver.priority",
            "1 to 99",
        ),
        (
            "[threads.receive]\nbusy_poll = \"infinite\"\n",
            "threads.receive.busy_poll",
            "\"3s\"",
        ),
        (
            "[threads.receive]\nbusy_poll = 50\n",
            "threads.receive.busy_poll",
            "duration",
        ),
        (
            "[threads.receive]\nspin = \"1s\"\n",
            "threads.receive.spin",
            "out of range",
        ),
        (
            "[threads.receive]\ncpus = [1, 5000]\n",
            "threads.receive.cpus[1]",
            "0 to 1023",
        ),
        (
            "[udp]\nparticipant_index = -1\n",
            "udp.participant_index",
            "auto",
        ),
        (
            "[udp]\nreceive_buffer_size = \"4 megs\"\n",
            "udp.receive_buffer_size",
            "MiB",
        ),
        (
            "[udp]\nreceive_buffer_size = \"4GiB\"\n",
            "udp.receive_buffer_size",
            "range",
        ),
        (
            "[udp]\nspdp_multicast_group = \"10.0.0.1\"\n",
            "udp.spdp_multicast_group",
            "multicast",
        ),
        ("[udp]\nmulticast_ttl = 300\n", "udp.multicast_ttl", "300"),
        (
            "[udp]\nmulticast_loopback = \"yes\"\n",
            "udp.multicast_loopback",
            "bool",
        ),
        ("[udp]\ninterface = \"\"\n", "udp.interface", "interface"),
        ("[udp.ports]\nbase = \"7400\"\n", "udp.ports.base", "u32"),
        ("[log]\nfilter = \"verbose\"\n", "log.filter", "verbose"),
        (
            "[log]\nfilter = \"info,tachyon=loud\"\n",
            "log.filter",
            "loud",
        ),
        (
            "[domain.seven.udp]\nmulticast = \"on\"\n",
            "domain.seven",
            "domain id",
        ),
        ("[domain.7]\nudp = 3\n", "domain.7.udp", "table"),
    ];
    for (text, key, what) in cases {
        let msg = error(text);
        assert!(msg.contains("/etc/tachyon.toml"), "{text:?}: {msg}");
        assert!(
            msg.contains(&format!("bad value for `{key}`")),
            "{text:?}: {msg}"
        );
        assert!(msg.contains(what), "{text:?} should say {what:?}: {msg}");
    }
    match parse("\n[udp]\nmulticast = \"maybe\"\n") {
        Err(ConfigError::InvalidValue { key, line, .. }) => {
            assert_eq!((key.as_str(), line), ("udp.multicast", Some(3)));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn values_have_friendly_forms() {
    let c = parse(
        "[udp]\nmulticast = true\ninterface = \"auto\"\nparticipant_index = \"auto\"\n\
         send_buffer_size = \"512KiB\"\n[discovery]\nlease_duration = \"2min\"\n",
    )
    .expect("parses");
    let s = c.settings(0);
    assert_eq!(s.udp.multicast, MulticastMode::Enabled);
    assert_eq!(s.udp.interface, None);
    assert_eq!(s.udp.participant_index, None);
    assert_eq!(s.udp.send_buffer_size, Some(512 << 10));
    assert_eq!(s.lease_duration, Some(Duration::from_secs(120)));
    let off = parse("[udp]\nmulticast = false\n").expect("parses");
    assert_eq!(off.settings(0).udp.multicast, MulticastMode::Disabled);
}

#[test]
fn invalid_toml_names_the_file_and_line() {
    let msg = error("[udp]\nmulticast = \n");
    assert!(msg.starts_with("/etc/tachyon.toml:2:"), "{msg}");
    assert!(matches!(parse("[udp\n"), Err(ConfigError::Syntax { .. })));
}

#[test]
fn from_file_names_a_missing_file() {
    let err = Config::from_file("/nonexistent/tachyon.toml").unwrap_err();
    assert!(matches!(err, ConfigError::Io { .. }), "{err:?}");
    assert!(
        err.to_string().contains("/nonexistent/tachyon.toml"),
        "{err}"
    );

    let dir = std::env::temp_dir().join(format!("tachyon-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("bad.toml");
    std::fs::write(&path, "[discovery]\nlease = \"1s\"\n").expect("write");
    let err = Config::from_file(&path).unwrap_err().to_string();
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(err.contains("`discovery.lease`"), "{err}");
    std::fs::write(&path, FULL).expect("write");
    let c = Config::from_file(&path).expect("reads");
    assert_eq!(c.settings(0).udp.participant_index, Some(4));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_error_converts_into_the_dcps_error() {
    let err: tachyon::Error = parse("[udp]\nx = 1\n").unwrap_err().into();
    assert!(matches!(err, tachyon::Error::Config(_)));
    assert!(err.to_string().contains("udp.x"), "{err}");
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Note")]
struct Note {
    #[key]
    id: u32,
}

#[test]
fn a_participant_uses_the_pinned_index_and_unicast_peers() {
    tachyon_transport::testing::require_isolated_network();
    // The test namespace's loopback can multicast, so "auto" would use it: "off" must win.
    // a sits on index 15, beyond the automatic range (0..=9) b would probe without its peer
    // list, and announces only to index 9, where nobody is: the two meet only if b announces
    // to its configured peer "127.0.0.1:15" and a answers.
    let a = Config::from_toml_str(
        "[udp]\nmulticast = \"auto\"\n\
         [domain.11.udp]\nmulticast = \"off\"\nparticipant_index = 15\npeers = [\"127.0.0.1:9\"]\n\
         [discovery]\nannounce_period = \"200ms\"\n",
        "a.toml",
    )
    .expect("config a");
    let b = Config::from_toml_str(
        "[udp]\nmulticast = \"off\"\npeers = [\"127.0.0.1:15\"]\nparticipant_index = 2\n",
        "b.toml",
    )
    .expect("config b");
    assert_eq!(a.settings(0).udp.multicast, MulticastMode::Auto);
    let pa = DomainParticipant::with_config(11, &a).expect("participant a");
    let pb = DomainParticipant::with_config(11, &b).expect("participant b");
    assert_eq!(pa.participant_index(), Some(15));
    assert_eq!(pb.participant_index(), Some(2));
    assert!(!pa.uses_multicast() && !pb.uses_multicast());
    wait_until("mutual discovery", || {
        pa.discovered_participants().len() == 1 && pb.discovered_participants().len() == 1
    });
    for p in pa.discovered_participants() {
        assert!(p.metatraffic_multicast_locators.is_empty(), "{p:?}");
    }
    let ta = pa.create_topic::<Note>("note").expect("topic");
    let tb = pb.create_topic::<Note>("note").expect("topic");
    let w = pa
        .create_publisher()
        .expect("publisher")
        .create_datawriter(&ta, DataWriterQos::default().reliable())
        .expect("writer");
    let r = pb
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&tb, DataReaderQos::default().reliable())
        .expect("reader");
    wait_matched(&w, &r);
    w.write(&Note { id: 9 }).expect("write");
    assert_eq!(take_at_least(&r, 1), vec![Note { id: 9 }]);
}

#[test]
fn a_peer_index_range_reaches_a_participant_inside_it() {
    tachyon_transport::testing::require_isolated_network();
    // a sits on index 14, beyond the automatic range; b probes 127.0.0.1 on 12..=16 only
    // (added as TACHYON_PEERS adds them), and a announces nowhere b listens.
    let a = Config::from_toml_str(
        "[udp]\nmulticast = \"off\"\nparticipant_index = 14\npeers = [\"127.0.0.1:9\"]\n",
        "a.toml",
    )
    .expect("config a");
    let mut b = Config::from_toml_str(
        "[udp]\nmulticast = \"off\"\nparticipant_index = 3\npeers = [\"127.0.0.1:9\"]\n",
        "b.toml",
    )
    .expect("config b");
    b.add_peers([Peer::with_indices(Ipv4Addr::LOCALHOST, 12, 16)]);
    assert_eq!(b.settings(13).udp.peers.len(), 2);
    let pa = DomainParticipant::with_config(13, &a).expect("participant a");
    let pb = DomainParticipant::with_config(13, &b).expect("participant b");
    wait_until("mutual discovery", || {
        pa.discovered_participants().len() == 1 && pb.discovered_participants().len() == 1
    });
}

#[test]
fn a_pinned_index_in_use_is_an_error() {
    tachyon_transport::testing::require_isolated_network();
    let c = Config::from_toml_str("[udp]\nparticipant_index = 6\n", "c.toml").expect("config");
    let _first = DomainParticipant::with_config(12, &c).expect("first");
    let second = DomainParticipant::with_config(12, &c);
    assert!(second.is_err(), "two participants bound index 6");
}

#[test]
fn xdp_keys_apply_and_bad_values_name_the_choices() {
    assert_eq!(
        parse("").expect("parses").settings(0).xdp,
        None,
        "off by default"
    );
    let c = parse(
        "[xdp]\ninterface = \"veth0\"\nqueue = 1\ntraffic = \"user\"\nattach = \"generic\"\n\
         bind = \"copy\"\nbusy_poll = true\nvlan = 42\nframes = 1024\nfallback = true\n\
         multicast = true\n[domain.3.xdp]\ntraffic = \"critical\"\n",
    )
    .expect("parses");
    let want = tachyon::XdpConfig {
        interface: "veth0".into(),
        queue: 1,
        traffic: tachyon::XdpTraffic::UserData,
        attach: tachyon_transport::xdp::AttachMode::Generic,
        bind: tachyon_transport::xdp::BindMode::Copy,
        busy_poll: true,
        vlan: Some(42),
        frames: 1024,
        fallback: true,
        multicast: true,
    };
    assert_eq!(c.settings(0).xdp.as_ref(), Some(&want));
    assert_eq!(
        c.settings(3).xdp.map(|x| x.traffic),
        Some(tachyon::XdpTraffic::Critical),
        "a domain section overrides one key"
    );
    let msg = error("[xdp]\ninterface = \"veth0\"\ntraffic = \"bulk\"\n");
    assert!(
        msg.contains("xdp.traffic") && msg.contains("\"critical\", \"user\""),
        "{msg}"
    );
    let msg = error("[xdp]\nbind = \"zerocopy\"\n");
    assert!(msg.contains("\"zero-copy\""), "{msg}");
}

#[test]
fn an_xdp_interface_that_is_not_there_is_a_clear_error_or_a_fallback() {
    tachyon_transport::testing::require_isolated_network();
    let mut settings = tachyon::domain::ParticipantSettings {
        xdp: Some(tachyon::XdpConfig {
            interface: "no-such-if0".into(),
            traffic: tachyon::XdpTraffic::UserData,
            ..tachyon::XdpConfig::default()
        }),
        ..Default::default()
    };
    settings.transports.no_shm = true;
    settings.transports.no_intra = true;
    // The UDP transport announces the [xdp] interface: it names the missing one first.
    let e = tachyon::DomainParticipant::with_settings(0, &settings).expect_err("no such interface");
    assert!(e.to_string().contains("no-such-if0"), "{e}");
    // With the UDP transport on lo, the XDP transport says the interfaces differ.
    settings.udp.interface = Some("lo".into());
    let e = tachyon::DomainParticipant::with_settings(0, &settings).expect_err("no such interface");
    assert!(
        e.to_string().contains("[xdp] interface") && e.to_string().contains("[udp] interface"),
        "{e}"
    );
    settings.xdp.as_mut().expect("xdp").fallback = true;
    let p = tachyon::DomainParticipant::with_settings(0, &settings).expect("falls back to UDP");
    assert_eq!(p.statistics().xdp, Default::default());
}
