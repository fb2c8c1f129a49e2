//! XTypes TypeObject and TypeInformation decoding from arbitrary bytes (see
//! `tachyon_xtypes::fuzzing`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| tachyon_xtypes::fuzzing::fuzz_type_object(data));
