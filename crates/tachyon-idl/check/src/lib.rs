//! The Rust `tachyon_idl::Builder` generates from IDL, in a module per file
//! (`tests/equivalence.rs` checks it against the IDL).

/// `interop/cdr-vectors/types.idl`: the 22 types Cyclone DDS 11's vectors cover (generated
/// for a crate that depends on `tachyon-cdr`: `#[derive(::tachyon_cdr::DdsType)]`).
pub mod types {
    include!(concat!(env!("OUT_DIR"), "/types.rs"));
}

/// `interop/peers/interop.idl`: the interop matrix's types (generated for a crate that
/// depends on `tachyon`: `#[derive(::tachyon::DdsType)]`).
pub mod interop {
    include!(concat!(env!("OUT_DIR"), "/interop.rs"));
}

/// `interop/shape/shape.idl`: the OMG suite's ShapeType.
pub mod shape {
    include!(concat!(env!("OUT_DIR"), "/shape.rs"));
}

/// `idl/everything.idl`: modules, constants, typedefs, includes and annotations.
pub mod everything {
    include!(concat!(env!("OUT_DIR"), "/everything.rs"));
}
