//! Replays the committed `endpoint_ops` fuzz corpus through the same harness, so everything the
//! fuzzer ever found stays fixed without nightly or libFuzzer.

#[test]
fn endpoint_ops_corpus_replays_cleanly() {
    let dir = format!(
        "{}/../../fuzz/corpus/endpoint_ops",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{dir}: {e}")) {
        let path = entry.expect("corpus entry").path();
        tachyon_proto::fuzzing::run_ops(&std::fs::read(&path).expect("corpus file"));
        n += 1;
    }
    assert!(n > 0, "the endpoint_ops corpus is empty");
    println!("endpoint_ops: replayed {n} corpus inputs");
}
