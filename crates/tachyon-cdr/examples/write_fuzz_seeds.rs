//! Writes seed inputs for the `cdr_decode` fuzz target: encodings of `tachyon_cdr::fuzzing::Rich`
//! in every version and byte order. Usage: `cargo run --example write_fuzz_seeds -- DIR`.

use tachyon_cdr::fuzzing::{App, Kind, Mut, Pick, Rich};
use tachyon_cdr::{serialize_to_vec, Endianness, XcdrVersion};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .ok_or("usage: write_fuzz_seeds DIR")?;
    std::fs::create_dir_all(&dir)?;
    let blob: Vec<u8> = (0..40).collect();
    let values = [
        Rich {
            name: "seed",
            blob: &blob,
            flags: [true, false],
            c: 'x',
            f: 1.25,
            strings: vec!["a".into(), "bcd".into()],
            pick: Pick::Text("pick"),
            app: App {
                a: -3,
                b: Some(9),
                grid: [[1, 2, 3], [4, 5, 6]],
            },
            muts: vec![Mut {
                id: 5,
                values: vec![0.5, 1.5],
                label: Some("label".into()),
                kind: Kind::B,
            }],
            nested: vec![vec![1, 2], vec![]],
            kind: Some(Kind::A),
        },
        Rich {
            name: "",
            blob: &[],
            flags: [false, false],
            c: '\0',
            f: 0.0,
            strings: vec![],
            pick: Pick::Nothing,
            app: App {
                a: 0,
                b: None,
                grid: [[0; 3]; 2],
            },
            muts: vec![],
            nested: vec![],
            kind: None,
        },
    ];
    let combos = [
        (XcdrVersion::Xcdr1, Endianness::Little, "cdr1le"),
        (XcdrVersion::Xcdr1, Endianness::Big, "cdr1be"),
        (XcdrVersion::Xcdr2, Endianness::Little, "cdr2le"),
        (XcdrVersion::Xcdr2, Endianness::Big, "cdr2be"),
    ];
    for (i, v) in values.iter().enumerate() {
        for (ver, end, tag) in combos {
            let bytes = serialize_to_vec(v, ver, end)?;
            std::fs::write(format!("{dir}/seed-{i}-{tag}"), bytes)?;
        }
    }
    Ok(())
}
