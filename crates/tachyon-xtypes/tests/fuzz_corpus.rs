//! Replays the committed `type_object` fuzz corpus through the fuzz entry point, so everything
//! the fuzzer ever found stays fixed without needing nightly or libFuzzer.

#[test]
fn type_object_corpus_replays_cleanly() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/corpus/type_object");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).expect("fuzz/corpus/type_object exists") {
        let path = entry.expect("entry").path();
        let data = std::fs::read(&path).expect("readable");
        tachyon_xtypes::fuzzing::fuzz_type_object(&data);
        n += 1;
    }
    assert!(n > 0, "the type_object corpus is empty");
    println!("replayed {n} corpus inputs");
}
