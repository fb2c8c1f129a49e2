//! RTPS message parsing, display and re-emission from arbitrary bytes.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| tachyon_wire::fuzz_parse_message(data));
