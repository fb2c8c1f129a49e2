//! `tachyon floor` end to end on 127.0.0.1 (unicast loopback only: nothing can leave the
//! machine): a ping-pong and a paced flood, checked through their JSON records.

use std::process::{Command, Stdio};

fn tachyon() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tachyon"))
}

fn json(out: std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the JSON record on stdout")
}

#[test]
fn ping_pong_measures_round_trips_and_loses_none() {
    let mut pong = tachyon()
        .args([
            "floor",
            "pong",
            "--bind",
            "127.0.0.1:7381",
            "--duration",
            "20",
            "--quiet",
        ])
        .stderr(Stdio::null())
        .spawn()
        .expect("pong");
    let out = tachyon()
        .args(["floor", "ping", "--peer", "127.0.0.1:7381", "--size", "64"])
        .args([
            "--duration",
            "1",
            "--warmup",
            "0.2",
            "--quiet",
            "--json",
            "-",
        ])
        .output()
        .expect("ping");
    let _ = pong.kill();
    let _ = pong.wait();
    let r = json(out);
    assert_eq!(r["schema"], "tachyon-perf/1");
    assert_eq!(r["implementation"], "udp");
    assert_eq!(r["config"]["payload_bytes"], 64);
    let l = &r["latency"];
    assert!(l["count"].as_u64().unwrap() > 100, "{l}");
    assert_eq!(l["lost"], 0);
    assert!(l["p50"].as_u64().unwrap() > 0);
    assert!(l["max"].as_u64() >= l["p50"].as_u64());
}

#[test]
fn a_paced_flood_arrives_whole() {
    let sub = tachyon()
        .args(["floor", "sub", "--bind", "127.0.0.1:7382", "--size", "1024"])
        .args([
            "--duration",
            "1",
            "--warmup",
            "0.2",
            "--quiet",
            "--json",
            "-",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("sub");
    std::thread::sleep(std::time::Duration::from_millis(200));
    let pubr = tachyon()
        .args(["floor", "pub", "--peer", "127.0.0.1:7382", "--size", "1024"])
        .args([
            "--rate",
            "2000",
            "--duration",
            "3",
            "--warmup",
            "0",
            "--quiet",
        ])
        .status()
        .expect("pub");
    assert!(pubr.success());
    let r = json(sub.wait_with_output().expect("sub output"));
    let t = &r["throughput"];
    let n = t["samples"].as_u64().unwrap();
    assert!(n > 1000, "{t}");
    assert_eq!(t["lost"], 0);
    assert_eq!(t["bytes"].as_u64().unwrap(), n * 1024);
}

#[test]
fn impossible_sizes_are_refused_with_status_2() {
    let out = tachyon()
        .args(["floor", "ping", "--size", "70000"])
        .output()
        .expect("ping");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("65507"));
}

/// `floor stalls` records the gaps in a spinning thread's clock readings: a process stopped
/// for 100 ms (SIGSTOP, then SIGCONT) shows one of at least that, and every stall it records
/// is of 2 µs or more.
#[test]
fn stalls_records_the_time_a_spinning_thread_lost_its_cpu() {
    let probe = tachyon()
        .args(["floor", "stalls", "--duration", "1.5", "--warmup", "0"])
        .args(["--quiet", "--json", "-"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("stalls");
    let pid = probe.id().to_string();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let signal = |s: &str| {
        let ok = Command::new("kill")
            .args([s, &pid])
            .status()
            .is_ok_and(|st| st.success());
        assert!(ok, "kill {s} {pid}");
    };
    signal("-STOP");
    std::thread::sleep(std::time::Duration::from_millis(100));
    signal("-CONT");
    let r = json(probe.wait_with_output().expect("the probe's output"));
    assert_eq!(r["implementation"], "machine");
    assert_eq!(r["role"], "stalls");
    let l = &r["latency"];
    assert!(
        l["max"].as_u64().unwrap() >= 100_000_000,
        "the 100 ms stop is a stall: {l}"
    );
    assert!(l["min"].as_u64().unwrap() >= 2_000, "{l}");
    let histogram: u64 = r["histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b[1].as_u64().unwrap())
        .sum();
    assert_eq!(histogram, l["count"].as_u64().unwrap());
}
