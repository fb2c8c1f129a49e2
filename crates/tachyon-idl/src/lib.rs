//! OMG IDL 4 for Tachyon DDS: the types of other vendors' IDL files, the OMG suite's and
//! ROS 2's, as Rust types with `#[derive(DdsType)]` ([`Idl::to_rust`], `tachyon idl`, or a
//! build script with [`Builder`], as `prost-build` does for protobuf), or as type
//! descriptions ([`Idl::type_desc`]) that Tachyon reads and writes dynamically (`tachyon spy
//! echo --idl`).
//!
//! ```no_run
//! // build.rs, in `fn main`:
//! tachyon_idl::Builder::new()
//!     .file("idl/shapes.idl")
//!     .include("idl")
//!     .compile()
//!     .unwrap_or_else(|e| panic!("{e}"));
//! // src/lib.rs: include!(concat!(env!("OUT_DIR"), "/shapes.rs"));
//! ```
//!
//! Supported: the preprocessor (`#include`, `#define`, `#ifdef`/`#ifndef`/`#if`/`#else`/
//! `#endif`, `#pragma` ignored), modules, structs (with a base), unions, enums, bitmasks,
//! typedefs, constants and constant expressions, `string<N>`, `sequence<T, N>`, `map`,
//! arrays, and the annotations `@key`, `@optional`, `@id`, `@hashid`, `@autoid`,
//! `@final`/`@appendable`/`@mutable`/`@extensibility`, `@must_understand`, `@external`,
//! `@nested`, `@value`, `@default_literal`, `@bit_bound`, `@position` (others are
//! ignored). Errors name the file, line and column. Types are described as Cyclone DDS's
//! `idlc` describes them (unannotated structs are `@final`, as there): their TypeObjects are
//! byte for byte idlc's (`tests/cyclone_vectors.rs`).

#![forbid(unsafe_code)]

mod ast;
mod error;
mod lexer;
mod model;
mod parser;
mod rust;

use std::path::{Path, PathBuf};

pub use error::{IdlError, Pos};
pub use rust::RustOptions;
use tachyon_cdr::{Extensibility, TypeDesc};

/// How IDL is read.
#[derive(Clone, Debug)]
pub struct Options {
    /// Where `#include` looks (after the including file's directory for `"file"`).
    pub include_dirs: Vec<PathBuf>,
    /// Macros defined before the first line (`-D NAME=VALUE`).
    pub defines: Vec<(String, String)>,
    /// The extensibility of a struct or union without annotation: `@final`, as Cyclone
    /// DDS's idlc has it (XTypes says `@appendable`, which Fast DDS follows).
    pub default_extensibility: Extensibility,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            include_dirs: Vec::new(),
            defines: Vec::new(),
            default_extensibility: Extensibility::Final,
        }
    }
}

/// A parsed IDL file with what it includes.
pub struct Idl {
    model: model::Model,
    source: String,
    files: Vec<PathBuf>,
}

impl std::fmt::Debug for Idl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Idl")
            .field("source", &self.source)
            .field("types", &self.type_names())
            .finish()
    }
}

/// Parses the IDL file `path` (and the files it includes).
pub fn parse_file(path: impl AsRef<Path>, options: &Options) -> Result<Idl, IdlError> {
    let path = path.as_ref();
    let mut lexer = lexer::Lexer::new(options.include_dirs.clone(), &options.defines);
    lexer.file(path, None, 0)?;
    finish(lexer, path, options)
}

/// Parses IDL text, as if read from `name` (includes are looked for next to it).
pub fn parse_str(text: &str, name: impl AsRef<Path>, options: &Options) -> Result<Idl, IdlError> {
    let name = name.as_ref();
    let mut lexer = lexer::Lexer::new(options.include_dirs.clone(), &options.defines);
    lexer.text(text, name, 0)?;
    finish(lexer, name, options)
}

fn finish(lexer: lexer::Lexer, path: &Path, options: &Options) -> Result<Idl, IdlError> {
    let end = lexer.tokens.last().map_or_else(
        || Pos {
            file: path.to_owned(),
            line: 1,
            col: 1,
        },
        |t| t.pos.clone(),
    );
    let files = lexer.files();
    let defs = parser::Parser::new(lexer.tokens, end).specification()?;
    let model = model::Model::new(defs, options.default_extensibility)?;
    // Every type described once: what is wrong anywhere (an unknown name, a bad bound, a
    // recursive type) is reported now.
    for i in 0..model.entries.len() {
        if matches!(
            model.entries[i].kind,
            model::Kind::Struct(_)
                | model::Kind::Union(_)
                | model::Kind::Enum(_)
                | model::Kind::Bitmask(_)
                | model::Kind::Typedef { .. }
        ) {
            model.describe(i)?;
        }
        if matches!(model.entries[i].kind, model::Kind::Const(_)) {
            model.const_value(i)?;
        }
    }
    Ok(Idl {
        model,
        source: path.display().to_string(),
        files,
    })
}

impl Idl {
    /// The structs and unions, by fully qualified name (`Module::Type`), in declaration
    /// order: the types a topic can have.
    pub fn type_names(&self) -> Vec<String> {
        self.model
            .entries
            .iter()
            .filter(|e| matches!(e.kind, model::Kind::Struct(_) | model::Kind::Union(_)))
            .map(model::Entry::full_name)
            .collect()
    }

    /// The description of type `name` (`A::B`, `::A::B`, or `B` when only one struct or
    /// union has that name), for dynamic reading and writing.
    pub fn type_desc(&self, name: &str) -> Result<TypeDesc, IdlError> {
        let i = self.model.lookup(name).ok_or_else(|| IdlError {
            pos: Pos {
                file: PathBuf::from(&self.source),
                line: 1,
                col: 1,
            },
            message: format!(
                "no type {name} (it declares {})",
                self.type_names().join(", ")
            ),
        })?;
        self.model.describe(i)
    }

    /// The Rust source of every definition, for `include!` or a file of its own.
    pub fn to_rust(&self, options: &RustOptions) -> Result<String, IdlError> {
        rust::generate(&self.model, options, &self.source)
    }

    /// The files read: the parsed one and every file it includes.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }
}

/// Generates Rust from IDL files in a build script (`build.rs`), into `OUT_DIR/<stem>.rs`
/// (one per file), and tells Cargo to run it again when one of the files read changes.
#[derive(Clone, Debug, Default)]
pub struct Builder {
    files: Vec<PathBuf>,
    options: Options,
    rust: RustOptions,
    out_dir: Option<PathBuf>,
}

impl Builder {
    pub fn new() -> Builder {
        Builder::default()
    }

    /// An IDL file to compile.
    pub fn file(mut self, path: impl Into<PathBuf>) -> Builder {
        self.files.push(path.into());
        self
    }

    /// A directory `#include` looks in.
    pub fn include(mut self, dir: impl Into<PathBuf>) -> Builder {
        self.options.include_dirs.push(dir.into());
        self
    }

    /// A macro defined before the first line.
    pub fn define(mut self, name: &str, value: &str) -> Builder {
        self.options
            .defines
            .push((name.to_owned(), value.to_owned()));
        self
    }

    /// Where the Rust goes (default: `OUT_DIR`).
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Builder {
        self.out_dir = Some(dir.into());
        self
    }

    /// The extensibility of unannotated structs and unions (default `@final`).
    pub fn default_extensibility(mut self, e: Extensibility) -> Builder {
        self.options.default_extensibility = e;
        self
    }

    /// How the Rust is written (the `tachyon_cdr` path, extra derives).
    pub fn rust_options(mut self, o: RustOptions) -> Builder {
        self.rust = o;
        self
    }

    /// Compiles every file; returns the Rust files written.
    pub fn compile(self) -> Result<Vec<PathBuf>, BuildError> {
        let out_dir = match self.out_dir {
            Some(d) => d,
            None => PathBuf::from(std::env::var_os("OUT_DIR").ok_or(BuildError::NoOutDir)?),
        };
        let mut written = Vec::new();
        for f in &self.files {
            let idl = parse_file(f, &self.options)?;
            for read in idl.files() {
                println!("cargo:rerun-if-changed={}", read.display());
            }
            let rust = idl.to_rust(&self.rust)?;
            let stem = f
                .file_stem()
                .map_or_else(|| "idl".into(), |s| s.to_string_lossy().into_owned());
            let out = out_dir.join(format!("{stem}.rs"));
            std::fs::write(&out, rust).map_err(|e| BuildError::Write(out.clone(), e))?;
            written.push(out);
        }
        Ok(written)
    }
}

/// Why [`Builder::compile`] failed.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The IDL, with file, line and column.
    #[error(transparent)]
    Idl(#[from] IdlError),
    /// Not run by Cargo, and no `out_dir` given.
    #[error("OUT_DIR is not set (run from a build script, or set out_dir)")]
    NoOutDir,
    /// The output could not be written.
    #[error("cannot write {0}: {1}")]
    Write(PathBuf, std::io::Error),
}
