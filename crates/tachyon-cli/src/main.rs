//! The `tachyon` command.
//!
//! - `tachyon perf MODE`: latency and throughput, wire-compatible with Cyclone DDS's
//!   `ddsperf` (see `docs/perf.md`).
#![forbid(unsafe_code)]

mod perf;
mod stats;

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
    /// Measure latency or throughput (ddsperf-compatible: ping, pong, pub, sub, intra).
    Perf(perf::PerfArgs),
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let outcome = match &cli.command {
        Command::Perf(a) => perf::run(a),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tachyon perf {}: {e}", mode_name(&cli));
            ExitCode::from(e.exit_code())
        }
    }
}

fn mode_name(cli: &Cli) -> &'static str {
    match &cli.command {
        Command::Perf(a) => a.mode.name(),
    }
}
