//! [`Encode`](crate::Encode)/[`Decode`](crate::Decode) for the Rust types that map onto IDL types.

mod array;
mod primitive;
mod sequence;
mod string;
