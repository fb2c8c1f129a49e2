//! Operation sequences (hostile submessages, writes, takes, time jumps) against a participant's
//! writer and readers; the harness panics when an invariant breaks.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    tachyon_proto::fuzzing::run_ops(data);
});
