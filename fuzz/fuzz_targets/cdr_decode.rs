//! CDR decoding of a rich derived type from arbitrary bytes (see `tachyon_cdr::fuzzing`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| tachyon_cdr::fuzzing::fuzz_decode(data));
