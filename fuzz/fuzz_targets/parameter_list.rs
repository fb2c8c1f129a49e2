//! ParameterList parsing (SPDP/SEDP payloads, inline QoS) from arbitrary bytes.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| tachyon_wire::fuzz_parse_parameter_list(data));
