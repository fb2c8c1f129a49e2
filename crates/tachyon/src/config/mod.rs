//! [`Config`]: how participants join their domains, from a TOML file or from code.
//!
//! Zero configuration is the default. A file named by the `TACHYON_CONFIG` environment
//! variable is read by [`DomainParticipant::new`](crate::DomainParticipant::new), so a
//! program configures without code; [`Config::from_file`] and
//! [`DomainParticipant::with_config`](crate::DomainParticipant::with_config) do it
//! explicitly. Every key is optional; an unknown key or a bad value is an error naming the
//! file and the key, never a silent default. `docs/configuration.md` lists every key.
//!
//! ```toml
//! [log]
//! filter = "info"                  # for the application's tracing subscriber
//!
//! [udp]
//! interface = "eth0"               # name, IPv4 address or "auto"
//! multicast = "off"                # "auto", "on" or "off"
//! peers = ["10.0.0.2", "10.0.0.3:1"]
//! receive_buffer_size = "4MiB"
//!
//! [discovery]
//! lease_duration = "10s"
//!
//! [threads]
//! mode = "threads"                 # or "driver" (one thread), "single" (the application drives)
//! critical_priority = 10           # writers with TRANSPORT_PRIORITY above 10 come first
//!
//! [threads.receive]               # each receive thread ([threads.timers]: the timers thread)
//! cpus = [2, 3]
//! priority = 50                    # SCHED_FIFO
//! busy_poll = "50us"               # spin on the socket this long before blocking
//! spin = "20us"                    # the default: watch this long before blocking, while that pays
//!
//! [domain.7.udp]                   # only for domain 7: overrides the keys above
//! participant_index = 2
//! ```
//!
//! The log filter is not applied by Tachyon (a library installs no global subscriber): an
//! application passes [`Config::log_filter`] to its own, for example
//! `tracing_subscriber::EnvFilter::new(filter)` when `RUST_LOG` is unset, as the `hello_*`
//! examples do.

mod error;
mod file;
mod threads;
mod value;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use error::ConfigError;
pub use threads::{ThreadMode, ThreadRoles, ThreadSettings, DEFAULT_RECEIVE_SPIN};

use crate::domain::ParticipantSettings;
use file::{FileRepr, SectionRepr};

/// The environment variable naming the configuration file [`Config::from_env`] reads.
pub const CONFIG_ENV: &str = "TACHYON_CONFIG";

/// The environment variable listing unicast peers [`Config::from_env`] adds to `udp.peers`
/// of every domain: entries as in the file (`"10.0.0.2"`, `"10.0.0.2:3"`, `"host:0-4"`),
/// separated by commas, semicolons or spaces.
pub const PEERS_ENV: &str = "TACHYON_PEERS";

/// The configuration of the participants of a process: settings for every domain, overrides
/// for some domains, and the log filter the application may install.
#[derive(Clone, Debug, Default)]
pub struct Config {
    origin: Option<String>,
    any_domain: ParticipantSettings,
    domains: BTreeMap<u32, SectionRepr>,
    log_filter: Option<String>,
    /// Peers from `TACHYON_PEERS`, added to every domain's.
    env_peers: Vec<tachyon_transport::Peer>,
    /// Discovery servers from `ROS_DISCOVERY_SERVER`, for domains the file gives none.
    env_servers: Vec<crate::DiscoveryServerAddress>,
}

impl Config {
    /// The file named by `TACHYON_CONFIG`, or the zero-config default when the variable is
    /// unset or empty, with the peers `TACHYON_PEERS` lists added to every domain's, and the
    /// discovery servers `ROS_DISCOVERY_SERVER` lists for domains the file gives none. A set
    /// variable whose file cannot be read, or a bad entry, is an error naming the variable.
    pub fn from_env() -> Result<Config, ConfigError> {
        let mut config = Config::from_config_env()?;
        if let Some(peers) = std::env::var_os(PEERS_ENV) {
            let text = peers.to_string_lossy();
            config.env_peers =
                value::parse_peer_list(&text).map_err(|message| ConfigError::EnvValue {
                    variable: PEERS_ENV,
                    message,
                })?;
        }
        let servers_env = crate::ROS_DISCOVERY_SERVER_ENV;
        if let Some(servers) = std::env::var_os(servers_env) {
            let text = servers.to_string_lossy();
            config.env_servers = crate::discovery_server::parse_ros_discovery_server(&text)
                .map_err(|message| ConfigError::EnvValue {
                    variable: servers_env,
                    message,
                })?;
        }
        Ok(config)
    }

    fn from_config_env() -> Result<Config, ConfigError> {
        let Some(path) = std::env::var_os(CONFIG_ENV).filter(|v| !v.is_empty()) else {
            return Ok(Config::default());
        };
        let path = PathBuf::from(path);
        let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::EnvFile {
            variable: CONFIG_ENV,
            path: path.clone(),
            source,
        })?;
        Config::from_toml_str(&text, &path.display().to_string())
    }

    /// The configuration file at `path`.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Config, ConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
            path: path.to_owned(),
            source,
        })?;
        Config::from_toml_str(&text, &path.display().to_string())
    }

    /// A configuration from TOML text; `origin` names it in errors (a file name, "inline").
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Config, ConfigError> {
        let file: FileRepr = serde_path_to_error::deserialize(toml::Deserializer::new(text))
            .map_err(|e| describe(e, text, origin))?;
        let mut any_domain = ParticipantSettings::default();
        file.top_level().apply(&mut any_domain);
        let mut domains = BTreeMap::new();
        for (id, section) in file.domain {
            let Ok(domain_id) = id.trim().parse::<u32>() else {
                return Err(ConfigError::InvalidValue {
                    file: origin.to_owned(),
                    line: None,
                    key: format!("domain.{id}"),
                    message: format!(
                        "a domain section is named by a domain id, like [domain.7], found \"{id}\""
                    ),
                });
            };
            domains.insert(domain_id, section);
        }
        Ok(Config {
            origin: Some(origin.to_owned()),
            any_domain,
            domains,
            log_filter: file.log.filter,
            env_peers: Vec::new(),
            env_servers: Vec::new(),
        })
    }

    /// The settings of participants in `domain_id`: the defaults, overridden by the file's
    /// top level, overridden by its `[domain.<domain_id>]` section if there is one; then the
    /// peers of `TACHYON_PEERS` ([`from_env`](Self::from_env)) added.
    pub fn settings(&self, domain_id: u32) -> ParticipantSettings {
        let mut s = self.any_domain.clone();
        if let Some(section) = self.domains.get(&domain_id) {
            section.apply(&mut s);
        }
        for p in &self.env_peers {
            if !s.udp.peers.contains(p) {
                s.udp.peers.push(*p);
            }
        }
        if s.discovery_servers.is_empty() {
            s.discovery_servers.clone_from(&self.env_servers);
        }
        s
    }

    /// Adds unicast peers to every domain's `udp.peers`, as `TACHYON_PEERS` does.
    pub fn add_peers(&mut self, peers: impl IntoIterator<Item = tachyon_transport::Peer>) {
        self.env_peers.extend(peers);
    }

    /// The `tracing` filter directives of `[log] filter` ("info", "warn,tachyon=debug") for
    /// the application's subscriber; `None` when the file sets none.
    pub fn log_filter(&self) -> Option<&str> {
        self.log_filter.as_deref()
    }

    /// Where the configuration came from (the file, or the origin given), `None` for the
    /// default or one built from code.
    pub fn origin(&self) -> Option<&str> {
        self.origin.as_deref()
    }

    /// The domains that have a section of their own.
    pub fn domains_with_overrides(&self) -> impl Iterator<Item = u32> + '_ {
        self.domains.keys().copied()
    }
}

impl From<ParticipantSettings> for Config {
    /// `settings` for every domain.
    fn from(settings: ParticipantSettings) -> Config {
        Config {
            any_domain: settings,
            ..Config::default()
        }
    }
}

/// The error of a failed deserialization, with the key path serde tracked and the line the
/// TOML parser located.
fn describe(
    e: serde_path_to_error::Error<toml::de::Error>,
    text: &str,
    origin: &str,
) -> ConfigError {
    let path = e.path().to_string();
    let inner = e.into_inner();
    let message = inner.message().trim_end().to_owned();
    let line = inner
        .span()
        .and_then(|s| text.get(..s.start))
        .map(|before| before.matches('\n').count() + 1);
    let file = origin.to_owned();
    let parent = if path == "." { "" } else { path.as_str() };
    // serde's own message for `deny_unknown_fields`; the path already ends with the key.
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let expected = rest
            .split_once(", expected ")
            .map(|(_, x)| x.strip_prefix("one of ").unwrap_or(x).to_owned())
            .unwrap_or_else(|| "no key here".to_owned());
        return ConfigError::UnknownKey {
            file,
            line,
            key: path,
            expected,
        };
    }
    if parent.is_empty() {
        return ConfigError::Syntax {
            file,
            line,
            message,
        };
    }
    ConfigError::InvalidValue {
        file,
        line,
        key: path,
        message,
    }
}
