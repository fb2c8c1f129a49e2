//! `shape_main`: Tachyon's application for the OMG DDS-RTPS interoperability suite
//! (github.com/omg-dds/dds-rtps), the same program as `tachyon shape` under the name the
//! suite's scripts expect (see `docs/interop.md`).
#![forbid(unsafe_code)]

mod shape;

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args();
    let prog = args.next().unwrap_or_else(|| "shape_main".to_owned());
    let rest: Vec<String> = args.collect();
    ExitCode::from(shape::main_with(&prog, &rest))
}
