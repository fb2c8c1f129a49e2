//! `tachyon perf join` end to end (the Tachyon side of `bench/join.py`): twelve processes of
//! ten endpoints each, started together, all report every endpoint matched, with a time that
//! is after they started.
//!
//! DDS discovery uses multicast: `scripts/test.sh` runs this inside a private network
//! namespace (TACHYON_TEST_NETNS=1); anywhere else the test says so and does nothing.

use std::process::{Command, Stdio};
use std::time::SystemTime;

const DOMAIN: u32 = 73;
const PROCESSES: u32 = 12;

#[test]
fn every_process_of_a_join_reports_all_its_endpoints_matched() {
    if std::env::var("TACHYON_TEST_NETNS").as_deref() != Ok("1") {
        eprintln!("skipped: needs a private network namespace (scripts/test.sh runs it in one)");
        return;
    }
    let started = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .expect("a clock after 1970")
        .as_secs_f64();
    let children: Vec<_> = (0..PROCESSES)
        .map(|i| {
            Command::new(env!("CARGO_BIN_EXE_tachyon"))
                .args(["perf", "join", "--transport", "udp", "--endpoints", "10"])
                .args(["--index", &i.to_string()])
                .args(["--processes", &PROCESSES.to_string()])
                .args(["--domain", &DOMAIN.to_string()])
                // Each stays until the others had time to match with it, then leaves.
                .args(["--duration", "8", "--match-timeout", "30"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("tachyon perf join")
        })
        .collect();
    for (i, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().expect("a finished process");
        assert!(
            out.status.success(),
            "process {i}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let line: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("one JSON line on stdout");
        assert_eq!(line["index"], i);
        let at = line["matched_at"].as_f64().expect("matched_at");
        assert!(at >= started - 1.0, "matched at {at}, started at {started}");
    }
}

#[test]
fn a_join_index_outside_the_processes_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_tachyon"))
        .args(["perf", "join", "--index", "3", "--processes", "3"])
        .output()
        .expect("tachyon perf join");
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--index below it"), "{err}");
}
