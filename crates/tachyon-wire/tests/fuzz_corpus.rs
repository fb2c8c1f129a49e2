//! Replays the committed `rtps_message` and `parameter_list` fuzz corpora through the fuzz
//! entry points, so everything the fuzzer ever found stays fixed without nightly or libFuzzer.

fn replay(target: &str, f: fn(&[u8])) {
    let dir = format!("{}/../../fuzz/corpus/{target}", env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{dir}: {e}")) {
        let path = entry.unwrap().path();
        f(&std::fs::read(&path).unwrap());
        n += 1;
    }
    assert!(n > 0, "the {target} corpus is empty");
    println!("{target}: replayed {n} corpus inputs");
}

#[test]
fn rtps_message_corpus_replays_cleanly() {
    replay("rtps_message", tachyon_wire::fuzz_parse_message);
}

#[test]
fn parameter_list_corpus_replays_cleanly() {
    replay("parameter_list", tachyon_wire::fuzz_parse_parameter_list);
}
