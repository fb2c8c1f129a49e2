//! The `tachyon` command.
//!
//! - `tachyon perf MODE`: latency and throughput, wire-compatible with Cyclone DDS's
//!   `ddsperf` (see `docs/perf.md`);
//! - `tachyon floor MODE`: the same measurements on raw UDP sockets, the floor;
//! - `tachyon shape OPTIONS`: the OMG interoperability suite's `shape_main` (also built as
//!   the `shape_main` binary, see `docs/interop.md`);
//! - `tachyon spy ls|topics|typeof|echo|hz|watch`: what runs on a domain, any vendor's
//!   (see `docs/spy.md`);
//! - `tachyon idl FILE.idl`: Rust types with `#[derive(DdsType)]` for an IDL file;
//! - `tachyon discovery-server`: a discovery server, Fast DDS's protocol (see
//!   `docs/discovery-server.md`);
//! - `tachyon xdp setup|status IFACE`: the NIC side of the AF_XDP transport's timing
//!   isolation (see `docs/xdp.md`).
#![forbid(unsafe_code)]

mod discovery;
mod floor;
mod idl;
mod perf;
mod shape;
mod spy;
mod stats;
mod xdp;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "tachyon", version, about = "Tachyon DDS tools")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Measure latency or throughput (ddsperf-compatible: ping, pong, pub, sub, intra), or
    /// make a discovery storm (storm).
    Perf(perf::PerfArgs),
    /// The raw-UDP floor: ping, pong, pub, sub, intra on plain sockets, no protocol.
    Floor(floor::FloorArgs),
    /// The OMG DDS-RTPS interoperability suite's shape_main (its options, as `-P -t Square`).
    #[command(disable_help_flag = true)]
    Shape {
        /// shape_main's options, passed through unparsed (`tachyon shape -h` lists them).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Look at a running system, any vendor's: participants (ls), topics (topics), a
    /// topic's type (typeof), samples (echo), rate (hz), a live table (watch).
    Spy(spy::SpyArgs),
    /// Rust types with #[derive(DdsType)] for an IDL file (to standard output or -o DIR).
    Idl(idl::IdlArgs),
    /// A discovery server (Fast DDS's protocol, as `fastdds discovery`): clients find each
    /// other through it without multicast (ROS_DISCOVERY_SERVER).
    DiscoveryServer(discovery::ServerArgs),
    /// The NIC side of AF_XDP timing isolation: reserve a queue for critical traffic (setup),
    /// or show what an interface has (status).
    Xdp(xdp::XdpArgs),
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    if let Command::Shape { args } = &cli.command {
        return ExitCode::from(shape::main_with("tachyon shape", args));
    }
    let outcome = match &cli.command {
        Command::Perf(a) => perf::run(a),
        Command::Floor(a) => floor::run(a),
        Command::Spy(a) => spy::run(a),
        Command::Idl(a) => idl::run(a),
        Command::DiscoveryServer(a) => discovery::run(a),
        Command::Xdp(a) => xdp::run(a),
        Command::Shape { .. } => return ExitCode::SUCCESS,
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tachyon {}: {e}", command_name(&cli));
            ExitCode::from(e.exit_code())
        }
    }
}

fn command_name(cli: &Cli) -> String {
    match &cli.command {
        Command::Perf(a) => format!("perf {}", a.mode.name()),
        Command::Floor(_) => "floor".to_owned(),
        Command::Shape { .. } => "shape".to_owned(),
        Command::Spy(a) => format!("spy {}", a.what.name()),
        Command::Idl(_) => "idl".to_owned(),
        Command::DiscoveryServer(_) => "discovery-server".to_owned(),
        Command::Xdp(_) => "xdp".to_owned(),
    }
}
