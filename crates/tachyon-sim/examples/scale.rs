//! Discovery at scale in virtual time: the table of issue 18, part 1.
//!
//! ```text
//! cargo run --release -p tachyon-sim --example scale -- [--participants 10,100,300,1000]
//!     [--endpoints 20] [--loss 0,0.02] [--steady 30] [--server]
//! ```
//!
//! `--server`: discovery through a discovery server on a host of its own, every participant
//! its client, no multicast (the per-participant figures average over the clients and the
//! server).
//!
//! For each N and loss: time to discover every participant and to match every endpoint,
//! datagrams and bytes per participant per second during the join and in steady state, handled
//! messages per participant (the simulator's CPU measure) and the wall-clock time the run took,
//! and the heap per remote participant and per remote endpoint (measured by an instrumented
//! allocator around each participant's calls, from a run without and one with endpoints).

use std::alloc::System;

use stats_alloc::{StatsAlloc, INSTRUMENTED_SYSTEM};
use tachyon_proto::Duration;
use tachyon_sim::scale::{memory, ScaleConfig};
use tachyon_sim::Table;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn live_heap() -> usize {
    let s = GLOBAL.stats();
    // A reallocation is counted in `bytes_allocated` or `bytes_deallocated` by its growth.
    s.bytes_allocated.saturating_sub(s.bytes_deallocated)
}

const USAGE: &str = "usage: scale [--participants 10,100,300,1000] [--endpoints 20] \
                     [--loss 0,0.02] [--steady SECONDS] [--server]";

fn usage(problem: &str) -> ! {
    eprintln!("{problem}\n{USAGE}");
    std::process::exit(2)
}

fn list<T: std::str::FromStr>(text: &str) -> Vec<T> {
    text.split(',')
        .map(|t| {
            t.trim()
                .parse()
                .unwrap_or_else(|_| usage(&format!("bad list item {t:?}")))
        })
        .collect()
}

fn number<T: std::str::FromStr>(text: &str) -> T {
    text.parse()
        .unwrap_or_else(|_| usage(&format!("{text:?} is not a number")))
}

fn main() {
    let mut participants = vec![10u32, 100, 300, 1000];
    let mut endpoints = 20u32;
    let mut losses = vec![0.0f64, 0.02];
    let mut steady = 30u64;
    let mut server = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || {
            args.next()
                .unwrap_or_else(|| usage(&format!("{a} needs a value")))
        };
        match a.as_str() {
            "--participants" => participants = list(&value()),
            "--endpoints" => endpoints = number(&value()),
            "--loss" => losses = list(&value()),
            "--steady" => steady = number(&value()),
            "--server" => server = true,
            "--help" | "-h" => {
                println!("{USAGE}");
                return;
            }
            other => usage(&format!("unknown argument {other}")),
        }
    }
    let mut table = Table::new([
        "N",
        "M",
        "loss",
        "discovered",
        "matched",
        "join out",
        "join in",
        "join kB in",
        "join handled",
        "steady out/s",
        "steady in/s",
        "steady kB/s",
        "steady handled/s",
        "B/participant",
        "B/endpoint",
        "wall",
    ]);
    for &n in &participants {
        for &loss in &losses {
            let config = ScaleConfig {
                loss,
                steady: Duration::from_secs(steady),
                heap_probe: Some(live_heap),
                server,
                ..ScaleConfig::new(n, endpoints)
            };
            let t = std::time::Instant::now();
            let Some((m, _, r)) = memory(&config) else {
                eprintln!(
                    "N={n} loss={loss}: did not complete within {:?}",
                    config.limit
                );
                continue;
            };
            let secs =
                |d: Option<Duration>| d.map_or("-".into(), |d| format!("{:.3}s", d.as_secs_f64()));
            table.row([
                n.to_string(),
                endpoints.to_string(),
                format!("{:.0}%", loss * 100.0),
                secs(r.discovered_at),
                secs(r.matched_at),
                format!("{:.0}", r.join.sent),
                format!("{:.0}", r.join.received),
                format!("{:.1}", r.join.bytes_received / 1000.0),
                format!("{:.0}", r.join.handled),
                format!("{:.1}", r.steady.sent),
                format!("{:.1}", r.steady.received),
                format!("{:.2}", r.steady.bytes_received / 1000.0),
                format!("{:.1}", r.steady.handled),
                format!("{:.0}", m.per_remote_participant),
                format!("{:.0}", m.per_remote_endpoint),
                format!("{:.1}s", t.elapsed().as_secs_f64()),
            ]);
            eprint!("{}", table.render());
        }
    }
    print!("{}", table.render());
}
