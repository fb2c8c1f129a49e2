//! Generates the Rust of the project's IDL files (the interop vectors', the matrix peers',
//! the OMG suite's shape type) and of `idl/everything.idl` with `tachyon_idl::Builder`, as a
//! user's build script would: for a crate that depends on `tachyon` (the default), and for
//! one that depends on `tachyon-cdr` alone (`types.idl`).

use std::path::Path;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let written = tachyon_idl::Builder::new()
        .file(root.join("interop/peers/interop.idl"))
        .file(root.join("interop/shape/shape.idl"))
        .file("idl/everything.idl")
        .include("idl/include")
        .compile()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(written.len(), 3);
    let written = tachyon_idl::Builder::new()
        .file(root.join("interop/cdr-vectors/types.idl"))
        .rust_options(tachyon_idl::RustOptions {
            cdr_crate: "::tachyon_cdr".into(),
            ..Default::default()
        })
        .compile()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(written.len(), 1);
}
