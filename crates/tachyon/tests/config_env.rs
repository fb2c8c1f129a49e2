//! `TACHYON_CONFIG`: the variable configures `DomainParticipant::new` with zero code. Its own
//! test binary (the environment is per process), and its tests hold `ENV` while they change
//! the variable, so they never race each other.

use std::path::PathBuf;
use std::sync::Mutex;

use tachyon::config::CONFIG_ENV;
use tachyon::{Config, ConfigError, DomainParticipant, MulticastMode};

static ENV: Mutex<()> = Mutex::new(());

/// A file with `text` in a fresh temporary directory.
fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tachyon-config-env-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path
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
