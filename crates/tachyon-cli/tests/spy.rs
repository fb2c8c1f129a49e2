//! `tachyon spy` end to end: this test process is a participant with a writer and a reader that
//! do not match (BEST_EFFORT offered, RELIABLE requested); the `tachyon` command, another
//! process, must list it (`ls`: vendor, host, process) and name the pair and the reason
//! (`topics`). Other vendors' participants: `interop/spy_check.py`.
//!
//! DDS discovery uses multicast: `scripts/test.sh` runs this inside a private network
//! namespace (TACHYON_TEST_NETNS=1); anywhere else the test says so and does nothing.

use std::process::Command;

use tachyon::prelude::*;

#[derive(DdsType, Debug, Clone)]
#[dds(name = "spy::Reading")]
struct Reading {
    #[dds(key)]
    sensor: u32,
    value: f64,
}

const DOMAIN: u32 = 71;

fn spy(what: &str) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_tachyon"))
        .arg("spy")
        .args(what.split(' '))
        .args(["--json", "--wait", "2", "--domain"])
        .arg(DOMAIN.to_string())
        .output()
        .expect("tachyon spy");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON document on stdout")
}

#[test]
fn spy_lists_this_process_and_the_pair_that_does_not_match() {
    if std::env::var("TACHYON_TEST_NETNS").as_deref() != Ok("1") {
        eprintln!("skipped: needs a private network namespace (scripts/test.sh runs it in one)");
        return;
    }
    let p = DomainParticipant::new(DOMAIN).expect("participant");
    let topic = p.create_topic::<Reading>("spy_readings").expect("topic");
    let _w = p
        .create_publisher()
        .expect("publisher")
        .create_datawriter(&topic, DataWriterQos::default().best_effort())
        .expect("writer");
    let _r = p
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&topic, DataReaderQos::default().reliable())
        .expect("reader");

    let ls = spy("ls");
    let me = std::process::id();
    let list = ls["participants"].as_array().expect("participants");
    let mine = list
        .iter()
        .find(|p| p["pid"] == me)
        .unwrap_or_else(|| panic!("this process ({me}) is not listed: {ls}"));
    assert_eq!(mine["vendor"], "Tachyon DDS");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").expect("hostname");
    assert_eq!(mine["host"], host.trim());
    let exe = std::env::current_exe().expect("exe");
    let name = exe.file_name().expect("name").to_string_lossy();
    assert_eq!(mine["process"], name.as_ref());
    assert_eq!(
        (mine["writers"].as_u64(), mine["readers"].as_u64()),
        (Some(1), Some(1))
    );

    let topics = spy("topics");
    let t = topics["topics"]
        .as_array()
        .expect("topics")
        .iter()
        .find(|t| t["name"] == "spy_readings")
        .unwrap_or_else(|| panic!("the topic is not listed: {topics}"));
    assert_eq!(t["types"], serde_json::json!(["spy::Reading"]));
    let bad = t["not_matched"].as_array().expect("not_matched");
    assert_eq!(bad.len(), 1, "{t}");
    assert_eq!(
        bad[0]["incompatible_policies"],
        serde_json::json!(["RELIABILITY"])
    );
    assert_eq!(bad[0]["writer"], t["writers"][0]["guid"]);
    assert_eq!(bad[0]["reader"], t["readers"][0]["guid"]);

    // The type as IDL, fetched from this process with TypeLookup: one type, two endpoints.
    let t = spy("typeof spy_readings");
    let types = t["types"].as_array().expect("types");
    assert_eq!(types.len(), 1, "{t}");
    assert_eq!(
        types[0]["endpoints"].as_array().map(Vec::len),
        Some(2),
        "{t}"
    );
    assert_eq!(
        types[0]["idl"],
        "module spy {\n    @final\n    struct Reading {\n        @key unsigned long sensor;\n        \
         double value;\n    };\n};\n",
        "{t}"
    );
}
