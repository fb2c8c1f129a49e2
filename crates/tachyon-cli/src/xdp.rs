//! `tachyon xdp setup IFACE`: the NIC side of timing isolation for the AF_XDP transport
//! (`docs/xdp.md`, "Isolation"), as the timing-isolation paper sets it up — a queue reserved
//! for critical traffic, flow steering to it where the driver has it, `mqprio` mapping the
//! critical socket priority to that queue's traffic class, and `pfifo` under each queue
//! instead of `fq_codel` — applied with `ethtool` and `tc`, each step reported with what the
//! device could not do. `tachyon xdp status IFACE` shows what is in place.

use std::process::Command;

use clap::{Args, Subcommand};

use crate::perf::Failure;

#[derive(Args, Clone, Debug)]
pub struct XdpArgs {
    #[command(subcommand)]
    pub what: XdpCommand,
}

#[derive(Subcommand, Clone, Debug)]
pub enum XdpCommand {
    /// Reserve the last queue of IFACE for critical traffic: queue count, flow steering
    /// (with --port), mqprio and pfifo. Prints each step and what the device refused.
    Setup(SetupArgs),
    /// What IFACE has: its queues, its qdiscs and its XDP program.
    Status {
        /// The interface.
        interface: String,
    },
}

#[derive(Args, Clone, Debug)]
pub struct SetupArgs {
    /// The interface.
    pub interface: String,
    /// Queues in all (receive and transmit); the last is the critical one, the one to give
    /// `[xdp] queue`.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(2..=64))]
    pub queues: u32,
    /// Steer received UDP datagrams to this port (the critical traffic's) to the critical
    /// queue, where the driver has ntuple filters (veth has none: there the sender's queue is
    /// the receiver's, and Tachyon transmits on its `[xdp] queue`).
    #[arg(long)]
    pub port: Option<u16>,
    /// The socket priority (SO_PRIORITY) that mqprio maps to the critical queue (Tachyon
    /// gives TRANSPORT_PRIORITY above the critical threshold priority 6).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u8).range(0..=15))]
    pub priority: u8,
    /// Print the commands, run nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// One step of the setup: what it does, its command, and whether it is needed for the
/// reserved queue to exist (the others improve isolation where the device allows them).
struct Step {
    what: String,
    argv: Vec<String>,
    essential: bool,
}

fn cmd(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| (*s).to_owned()).collect()
}

/// The steps for `a`, in order.
fn steps(a: &SetupArgs) -> Vec<Step> {
    let dev = a.interface.as_str();
    let n = a.queues.to_string();
    let critical = a.queues - 1;
    let mut s = vec![Step {
        what: format!("{n} receive and transmit queues"),
        argv: cmd(&["ethtool", "-L", dev, "rx", &n, "tx", &n]),
        essential: true,
    }];
    if let Some(port) = a.port {
        s.push(Step {
            what: "ntuple filters on".into(),
            argv: cmd(&["ethtool", "-K", dev, "ntuple", "on"]),
            essential: false,
        });
        s.push(Step {
            what: format!("UDP to port {port} steered to queue {critical}"),
            argv: cmd(&[
                "ethtool",
                "-N",
                dev,
                "flow-type",
                "udp4",
                "dst-port",
                &port.to_string(),
                "action",
                &critical.to_string(),
            ]),
            essential: false,
        });
    }
    // Priority -> traffic class: every priority to class 0 except the critical one.
    let map: Vec<String> = (0..16)
        .map(|p| if p == a.priority { "1" } else { "0" }.to_owned())
        .collect();
    let mut mqprio = cmd(&[
        "tc", "qdisc", "replace", "dev", dev, "root", "handle", "100:", "mqprio", "num_tc", "2",
        "map",
    ]);
    mqprio.extend(map);
    mqprio.extend(cmd(&[
        "queues",
        &format!("{critical}@0"),
        &format!("1@{critical}"),
        "hw",
        "0",
    ]));
    s.push(Step {
        what: format!(
            "mqprio: socket priority {} to queue {critical}, the others to queues 0..{}",
            a.priority,
            critical.saturating_sub(1)
        ),
        argv: mqprio,
        essential: false,
    });
    for q in 0..a.queues {
        s.push(Step {
            what: format!("pfifo under transmit queue {q}"),
            argv: cmd(&[
                "tc",
                "qdisc",
                "replace",
                "dev",
                dev,
                "parent",
                &format!("100:{:x}", q + 1),
                "pfifo",
                "limit",
                "1000",
            ]),
            essential: false,
        });
    }
    s
}

fn run_step(argv: &[String]) -> Result<(), String> {
    let out = Command::new(&argv[0])
        .args(&argv[1..])
        .output()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                format!(
                    "{} not found: install it (Debian: apt-get install {})",
                    argv[0],
                    if argv[0] == "tc" {
                        "iproute2"
                    } else {
                        "ethtool"
                    }
                )
            } else {
                format!("cannot run {}: {e}", argv[0])
            }
        })?;
    if out.status.success() {
        Ok(())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        let err = err.trim();
        Err(if err.is_empty() {
            format!("exit status {}", out.status)
        } else {
            err.lines().next().unwrap_or(err).to_owned()
        })
    }
}

pub fn run(a: &XdpArgs) -> Result<(), Failure> {
    match &a.what {
        XdpCommand::Setup(s) => setup(s),
        XdpCommand::Status { interface } => status(interface),
    }
}

fn setup(a: &SetupArgs) -> Result<(), Failure> {
    let mut refused = Vec::new();
    let mut essential_failed = false;
    for step in steps(a) {
        let line = step.argv.join(" ");
        if a.dry_run {
            println!("{line}");
            continue;
        }
        match run_step(&step.argv) {
            Ok(()) => println!("ok       {}  ({line})", step.what),
            Err(e) => {
                println!("refused  {}: {e}  ({line})", step.what);
                essential_failed |= step.essential;
                refused.push(step.what);
            }
        }
    }
    if a.dry_run {
        return Ok(());
    }
    let critical = a.queues - 1;
    if essential_failed {
        return Err(Failure::Other(format!(
            "{} cannot have {} queues, so no queue can be reserved: AF_XDP still works on \
             queue 0 (`[xdp] queue = 0`), without isolation from other traffic",
            a.interface, a.queues
        )));
    }
    if refused.is_empty() {
        println!(
            "{}: queue {critical} reserved; set `[xdp] queue = {critical}` and \
             `[threads] critical_priority`",
            a.interface
        );
    } else {
        println!(
            "{}: queue {critical} exists (set `[xdp] queue = {critical}`); the device could not \
             do: {}",
            a.interface,
            refused.join("; ")
        );
    }
    Ok(())
}

fn status(interface: &str) -> Result<(), Failure> {
    for argv in [
        cmd(&["ethtool", "-l", interface]),
        cmd(&["tc", "qdisc", "show", "dev", interface]),
        cmd(&["ip", "-d", "link", "show", "dev", interface]),
    ] {
        println!("$ {}", argv.join(" "));
        match Command::new(&argv[0]).args(&argv[1..]).output() {
            Ok(out) => {
                print!("{}", String::from_utf8_lossy(&out.stdout));
                eprint!("{}", String::from_utf8_lossy(&out.stderr));
            }
            Err(e) => println!("cannot run {}: {e}", argv[0]),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_steps_reserve_the_last_queue_for_the_critical_priority() {
        let a = SetupArgs {
            interface: "eth1".into(),
            queues: 4,
            port: Some(7411),
            priority: 6,
            dry_run: true,
        };
        let s = steps(&a);
        let lines: Vec<String> = s.iter().map(|s| s.argv.join(" ")).collect();
        assert_eq!(lines[0], "ethtool -L eth1 rx 4 tx 4");
        assert!(s[0].essential && !s[1].essential);
        assert_eq!(
            lines[2],
            "ethtool -N eth1 flow-type udp4 dst-port 7411 action 3"
        );
        assert_eq!(
            lines[3],
            "tc qdisc replace dev eth1 root handle 100: mqprio num_tc 2 map \
             0 0 0 0 0 0 1 0 0 0 0 0 0 0 0 0 queues 3@0 1@3 hw 0"
        );
        assert_eq!(lines.len(), 4 + 4, "a pfifo per queue");
        assert_eq!(
            lines[7],
            "tc qdisc replace dev eth1 parent 100:4 pfifo limit 1000"
        );
        // Without a port, no steering.
        let b = SetupArgs { port: None, ..a };
        assert!(!steps(&b).iter().any(|s| s.argv.contains(&"-N".to_owned())));
    }
}
