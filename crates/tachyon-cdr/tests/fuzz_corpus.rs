//! Replays the committed `cdr_decode` fuzz corpus through the fuzz entry point, so everything
//! the fuzzer ever found stays fixed without needing nightly or libFuzzer.

#[test]
fn cdr_decode_corpus_replays_cleanly() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/corpus/cdr_decode");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).expect("fuzz/corpus/cdr_decode exists") {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        tachyon_cdr::fuzzing::fuzz_decode(&data);
        n += 1;
    }
    assert!(n > 0, "the cdr_decode corpus is empty");
    println!("replayed {n} corpus inputs");
}
