//! `tachyon idl FILE.idl`: the Rust types of an IDL file, with `#[derive(DdsType)]`, to
//! standard output or `-o DIR/<stem>.rs` (the same `tachyon_idl` a build script uses).

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use tachyon_cdr::Extensibility;

use crate::perf::Failure;

#[derive(Args, Debug)]
pub struct IdlArgs {
    /// The IDL file.
    pub file: PathBuf,
    /// Write DIR/STEM.rs (STEM: the IDL file's name without `.idl`) instead of printing.
    #[arg(long, short = 'o')]
    pub out_dir: Option<PathBuf>,
    /// A directory #include looks in (repeatable).
    #[arg(long = "include", short = 'I')]
    pub include: Vec<PathBuf>,
    /// A macro, NAME or NAME=VALUE (repeatable).
    #[arg(long = "define", short = 'D')]
    pub define: Vec<String>,
    /// The extensibility of unannotated structs and unions (Cyclone DDS's idlc: final;
    /// XTypes and Fast DDS: appendable).
    #[arg(long, value_enum, default_value_t = Ext::Final)]
    pub default_extensibility: Ext,
    /// The path of the CDR crate in the generated code: ::tachyon::cdr (a crate that depends
    /// on tachyon), ::tachyon_cdr (one that depends on tachyon-cdr), or another path.
    #[arg(long, default_value = "::tachyon::cdr")]
    pub cdr_crate: String,
    /// List the types (structs and unions) instead, with their IDL as Tachyon reads it.
    #[arg(long)]
    pub types: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Ext {
    Final,
    Appendable,
    Mutable,
}

/// How `--include`/`--define` read IDL (shared with `spy echo --idl`).
pub fn options(include: &[PathBuf], define: &[String], ext: Ext) -> tachyon_idl::Options {
    tachyon_idl::Options {
        include_dirs: include.to_vec(),
        defines: define
            .iter()
            .map(|d| match d.split_once('=') {
                Some((k, v)) => (k.to_owned(), v.to_owned()),
                None => (d.clone(), String::new()),
            })
            .collect(),
        default_extensibility: match ext {
            Ext::Final => Extensibility::Final,
            Ext::Appendable => Extensibility::Appendable,
            Ext::Mutable => Extensibility::Mutable,
        },
    }
}

pub fn run(a: &IdlArgs) -> Result<(), Failure> {
    let o = options(&a.include, &a.define, a.default_extensibility);
    let idl = tachyon_idl::parse_file(&a.file, &o).map_err(|e| Failure::Other(e.to_string()))?;
    if a.types {
        for name in idl.type_names() {
            let d = idl
                .type_desc(&name)
                .map_err(|e| Failure::Other(e.to_string()))?;
            println!("// {name}\n{}", tachyon::xtypes::idl::to_idl(&d));
        }
        return Ok(());
    }
    let rust = idl
        .to_rust(&tachyon_idl::RustOptions {
            cdr_crate: a.cdr_crate.clone(),
            ..Default::default()
        })
        .map_err(|e| Failure::Other(e.to_string()))?;
    match &a.out_dir {
        None => print!("{rust}"),
        Some(dir) => {
            let stem = a
                .file
                .file_stem()
                .map_or_else(|| "idl".into(), |s| s.to_string_lossy().into_owned());
            let out = dir.join(format!("{stem}.rs"));
            std::fs::write(&out, rust)
                .map_err(|e| Failure::Other(format!("cannot write {}: {e}", out.display())))?;
            eprintln!("wrote {}", out.display());
        }
    }
    Ok(())
}
