//! Generates the Rust of the project's IDL files (the interop vectors', the matrix peers',
//! the OMG suite's shape type) and of `idl/everything.idl` with `tachyon_idl::Builder`, as a
//! user's build script would.

use std::path::Path;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let written = tachyon_idl::Builder::new()
        .file(root.join("interop/cdr-vectors/types.idl"))
        .file(root.join("interop/peers/interop.idl"))
        .file(root.join("interop/shape/shape.idl"))
        .file("idl/everything.idl")
        .include("idl/include")
        .compile()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(written.len(), 4);
}
