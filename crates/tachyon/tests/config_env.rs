//! `TACHYON_CONFIG`, `TACHYON_PEERS`, `ROS_DISCOVERY_SERVER`: the variables configure
//! `DomainParticipant::new` with zero code. Its own test binary (the environment is per
//! process), and its tests hold `ENV` while they change a variable, so they never race each
//! other.

use std::path::PathBuf;
use std::sync::Mutex;

use std::net::{Ipv4Addr, SocketAddrV4};
use tachyon::config::CONFIG_ENV;

use tachyon::{
    Config, ConfigError, DiscoveryServerAddress, DomainParticipant, MulticastMode, Peer,
};

static ENV: Mutex<()> = Mutex::new(());

/// A file in a temporary directory of this process, removed (with the directory, once
/// empty) when the test is done with it, passed or failed.
struct TempFile(PathBuf);

impl std::ops::Deref for TempFile {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for TempFile {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// A file with `text` in a temporary directory of this process.
fn temp_file(name: &str, text: &str) -> TempFile {
    let dir = std::env::temp_dir().join(format!("tachyon-config-env-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    TempFile(path)
}

#[test]
fn the_variable_selects_the_file_and_a_missing_file_is_an_error() {
    let _guard = ENV.lock().unwrap_or_else(|p| p.into_inner());

    std::env::remove_var(CONFIG_ENV);
    let c = Config::from_env().expect("unset: default");
    assert_eq!(c.origin(), None);
    assert_eq!(c.settings(0).udp, tachyon::UdpConfig::default());
    std::env::set_var(CONFIG_ENV, "");
    assert_eq!(Config::from_env().expect("empty: default").origin(), None);

    std::env::set_var(CONFIG_ENV, "/nonexistent/tachyon.toml");
    let err = Config::from_env().unwrap_err();
    assert!(
        matches!(
            err,
            ConfigError::EnvFile {
                variable: "TACHYON_CONFIG",
                ..
            }
        ),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("TACHYON_CONFIG") && msg.contains("/nonexistent/tachyon.toml"),
        "{msg}"
    );
    // The participant refuses to start rather than fall back to defaults silently.
    let err = DomainParticipant::new(0).unwrap_err();
    assert!(matches!(err, tachyon::Error::Config(_)), "{err:?}");
    assert!(
        err.to_string().contains("/nonexistent/tachyon.toml"),
        "{err}"
    );

    let bad = temp_file("bad.toml", "[udp]\nmulticast = \"maybe\"\n");
    std::env::set_var(CONFIG_ENV, &bad);
    let msg = Config::from_env().unwrap_err().to_string();
    assert!(
        msg.contains(&bad.display().to_string()) && msg.contains("`udp.multicast`"),
        "{msg}"
    );

    let good = temp_file(
        "good.toml",
        "[udp]\nmulticast = \"off\"\n[log]\nfilter = \"debug\"\n",
    );
    std::env::set_var(CONFIG_ENV, &good);
    let c = Config::from_env().expect("reads");
    assert_eq!(c.settings(0).udp.multicast, MulticastMode::Disabled);
    assert_eq!(c.log_filter(), Some("debug"));
    assert_eq!(c.origin(), Some(good.display().to_string().as_str()));
    std::env::remove_var(CONFIG_ENV);
}

#[test]
fn a_participant_created_with_zero_code_uses_the_file() {
    tachyon_transport::testing::require_isolated_network();
    let _guard = ENV.lock().unwrap_or_else(|p| p.into_inner());
    let path = temp_file(
        "pinned.toml",
        "[udp]\nmulticast = \"off\"\nparticipant_index = 7\n",
    );
    std::env::set_var(CONFIG_ENV, &path);
    let p = DomainParticipant::new(13);
    std::env::remove_var(CONFIG_ENV);
    let p = p.expect("participant");
    assert_eq!(p.participant_index(), Some(7));
    assert!(!p.uses_multicast());
}

#[test]
fn tachyon_peers_adds_peers_to_every_domain_and_rejects_bad_ones() {
    let _guard = ENV.lock().unwrap_or_else(|p| p.into_inner());
    std::env::remove_var(CONFIG_ENV);
    std::env::set_var("TACHYON_PEERS", "10.0.0.2:1, 127.0.0.1:0-4;10.0.0.3");
    let c = Config::from_env();
    std::env::set_var("TACHYON_PEERS", "10.0.0.2:1,10.0.0:3");
    let bad = Config::from_env();
    std::env::remove_var("TACHYON_PEERS");

    let c = c.expect("config");
    let want = vec![
        Peer::with_index(Ipv4Addr::new(10, 0, 0, 2), 1),
        Peer::with_indices(Ipv4Addr::LOCALHOST, 0, 4),
        Peer::any_index(Ipv4Addr::new(10, 0, 0, 3)),
    ];
    assert_eq!(c.settings(0).udp.peers, want);
    assert_eq!(c.settings(7).udp.peers, want);
    let e = bad.expect_err("a bad peer");
    assert!(
        matches!(
            e,
            ConfigError::EnvValue {
                variable: "TACHYON_PEERS",
                ..
            }
        ),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(
        text.starts_with("bad value of the environment variable TACHYON_PEERS: ")
            && text.contains("\"10.0.0:3\""),
        "{text}"
    );
}

#[test]
fn ros_discovery_server_names_the_servers_unless_the_file_does() {
    let _guard = ENV.lock().unwrap_or_else(|p| p.into_inner());
    let file = temp_file(
        "servers.toml",
        "[discovery]\nservers = [\"10.0.0.9:7000\"]\n[domain.3.discovery]\nlease_duration = \"5s\"\n",
    );
    std::env::remove_var(CONFIG_ENV);
    std::env::set_var("ROS_DISCOVERY_SERVER", ";127.0.0.1:11888;10.0.0.2");
    let plain = Config::from_env();
    std::env::set_var(CONFIG_ENV, &file);
    let with_file = Config::from_env();
    std::env::remove_var(CONFIG_ENV);
    std::env::set_var("ROS_DISCOVERY_SERVER", "127.0.0.1:x");
    let bad = Config::from_env();
    std::env::remove_var("ROS_DISCOVERY_SERVER");

    let s = |a: [u8; 4], p| SocketAddrV4::new(a.into(), p);
    assert_eq!(
        plain.expect("config").settings(0).discovery_servers,
        vec![
            DiscoveryServerAddress::new(1, s([127, 0, 0, 1], 11888)),
            DiscoveryServerAddress::new(2, s([10, 0, 0, 2], 11811)),
        ]
    );
    assert_eq!(
        with_file.expect("config").settings(3).discovery_servers,
        vec![DiscoveryServerAddress::new(0, s([10, 0, 0, 9], 7000))]
    );
    let e = bad.expect_err("a bad server");
    assert!(
        e.to_string()
            .starts_with("bad value of the environment variable ROS_DISCOVERY_SERVER: "),
        "{e}"
    );
}
