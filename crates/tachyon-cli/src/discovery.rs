//! `tachyon discovery-server`: a discovery server (Fast DDS's protocol, as `fastdds
//! discovery` runs it), so participants find each other without multicast: Fast DDS clients
//! through `ROS_DISCOVERY_SERVER`, Tachyon clients through it too or `discovery.servers`
//! (docs/discovery-server.md). It prints a line as each client comes and goes.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tachyon::{Config, DomainParticipant, ServerRole};

use crate::perf::Failure;

/// `tachyon discovery-server` options (those of `fastdds discovery` where they mean the same).
#[derive(clap::Args)]
pub struct ServerArgs {
    /// The server's id: its position in the clients' ROS_DISCOVERY_SERVER (its GUID prefix is
    /// Fast DDS's for this id)
    #[arg(short = 'i', long = "server-id", default_value_t = 0)]
    id: u8,
    /// The UDP port it listens on
    #[arg(short = 'p', long, default_value_t = tachyon::DEFAULT_SERVER_PORT)]
    port: u16,
    /// The DDS domain
    #[arg(short = 'd', long, default_value_t = 0)]
    domain: u32,
    /// Stop after this many seconds (default: at SIGINT or SIGTERM)
    #[arg(long)]
    duration: Option<f64>,
}

/// Runs the server until a signal (or `--duration`).
pub fn run(a: &ServerArgs) -> Result<(), Failure> {
    if a.port == 0 {
        return Err(Failure::Usage(
            "--port 0: give a port from 1 to 65535".into(),
        ));
    }
    let limit = match a.duration {
        None => None,
        Some(s) if s.is_finite() && s > 0.0 && s <= 1e6 => Some(Duration::from_secs_f64(s)),
        Some(s) => {
            return Err(Failure::Usage(format!(
                "--duration {s}: give seconds above 0"
            )))
        }
    };
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&stop))
            .map_err(|e| Failure::Other(format!("cannot handle signal {signal}: {e}")))?;
    }
    let config = Config::from_env().map_err(|e| Failure::Other(e.to_string()))?;
    let mut settings = config.settings(a.domain);
    // A server is nobody's client, whatever ROS_DISCOVERY_SERVER says.
    settings.discovery_servers.clear();
    settings.discovery_server = Some(ServerRole {
        id: a.id,
        port: a.port,
    });
    let p = DomainParticipant::with_settings(a.domain, &settings).map_err(Failure::dds)?;
    println!(
        "discovery server {} listening on UDP port {} (domain {}, GUID prefix {})",
        a.id,
        a.port,
        a.domain,
        p.guid_prefix()
    );
    let start = Instant::now();
    let mut known: BTreeMap<String, String> = BTreeMap::new();
    while !stop.load(Ordering::Relaxed) && limit.map_or(true, |l| start.elapsed() < l) {
        let now: BTreeMap<String, String> = p
            .discovered_participants()
            .into_iter()
            .map(|d| (d.key.0.prefix.to_string(), describe(&d)))
            .collect();
        for (k, v) in &now {
            if !known.contains_key(k) {
                println!("client {k} joined: {v}");
            }
        }
        for k in known.keys() {
            if !now.contains_key(k) {
                println!("client {k} left");
            }
        }
        known = now;
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

/// "Fast DDS 2.9.1, process 123 on host" (what the participant announced of it).
fn describe(d: &tachyon::builtin::ParticipantBuiltinTopicData) -> String {
    let vendor = d.vendor_id.name().unwrap_or("unknown vendor");
    let version = d
        .product_version
        .map(|v| format!(" {v}"))
        .unwrap_or_default();
    let prop = |names: &[&str]| {
        d.properties
            .iter()
            .find(|(k, _)| names.contains(&k.as_str()))
            .map(|(_, v)| v.clone())
    };
    let pid = prop(&["__Pid", "fastdds.physical_data.process"]);
    let host = prop(&["__Hostname", "fastdds.physical_data.host"]);
    let mut s = format!("{vendor}{version}");
    if let Some(pid) = pid {
        s.push_str(&format!(", process {pid}"));
    }
    if let Some(host) = host {
        s.push_str(&format!(" on {host}"));
    }
    s
}
