//! Encode and decode of ShapeType and of a type with a 1 KiB octet sequence, side by side with
//! the serde-based `cdr` crate (what RustDDS uses) in the same run.
//!
//! Run: `cargo bench -p tachyon-cdr --bench cdr`. The ratio (cdr crate time / ours) is the figure
//! that matters; absolute times vary with the machine.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use serde::{Deserialize, Serialize};
use tachyon_cdr::{DdsType, Endianness, XcdrVersion};

#[derive(DdsType, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dds(name = "ShapeType")]
struct ShapeType {
    #[dds(key, bound = 128)]
    color: String,
    x: i32,
    y: i32,
    shapesize: i32,
}

#[derive(DdsType, Debug, PartialEq)]
#[dds(name = "ShapeType")]
struct ShapeTypeRef<'a> {
    #[dds(key, bound = 128)]
    color: &'a str,
    x: i32,
    y: i32,
    shapesize: i32,
}

#[derive(DdsType, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[dds(name = "Blob")]
struct Blob {
    id: u32,
    data: Vec<u8>,
}

#[derive(DdsType, Debug, PartialEq)]
#[dds(name = "Blob")]
struct BlobRef<'a> {
    id: u32,
    data: &'a [u8],
}

fn shape() -> ShapeType {
    ShapeType {
        color: "BLUE".into(),
        x: 81,
        y: 117,
        shapesize: 30,
    }
}

fn blob() -> Blob {
    Blob {
        id: 7,
        data: (0..1024u32).map(|i| i as u8).collect(),
    }
}

fn bench_shape(c: &mut Criterion) {
    let v = shape();
    let mut g = c.benchmark_group("ShapeType");
    let mut buf = [0u8; 256];
    g.bench_function("encode/tachyon", |b| {
        b.iter(|| {
            let n = tachyon_cdr::serialize(
                black_box(&v),
                // Runtime values in a real writer: keep the compiler from folding them.
                black_box(XcdrVersion::Xcdr1),
                black_box(Endianness::Little),
                &mut buf,
            )
            .unwrap();
            // Observe the output so the stores cannot be optimised away.
            black_box(&buf);
            n
        })
    });
    let mut out = Vec::with_capacity(256);
    g.bench_function("encode/cdr-crate", |b| {
        b.iter(|| {
            out.clear();
            cdr::serialize_into::<_, _, _, cdr::CdrLe>(&mut out, black_box(&v), cdr::Infinite)
                .unwrap();
            black_box(&out);
        })
    });
    let ours = tachyon_cdr::serialize_to_vec(&v, XcdrVersion::Xcdr1, Endianness::Little).unwrap();
    let theirs = cdr::serialize::<_, _, cdr::CdrLe>(&v, cdr::Infinite).unwrap();
    assert_eq!(ours, theirs, "both encode the same bytes");
    g.bench_function("decode/tachyon", |b| {
        b.iter(|| tachyon_cdr::deserialize::<ShapeType>(black_box(&ours)).unwrap())
    });
    g.bench_function("decode-borrowed/tachyon", |b| {
        b.iter(|| tachyon_cdr::deserialize::<ShapeTypeRef<'_>>(black_box(&ours)).unwrap())
    });
    g.bench_function("decode/cdr-crate", |b| {
        b.iter(|| cdr::deserialize::<ShapeType>(black_box(&theirs)).unwrap())
    });
    g.finish();
}

fn bench_blob(c: &mut Criterion) {
    let v = blob();
    let mut g = c.benchmark_group("Octets1KiB");
    let mut buf = [0u8; 2048];
    g.bench_function("encode/tachyon", |b| {
        b.iter(|| {
            let n = tachyon_cdr::serialize(
                black_box(&v),
                // Runtime values in a real writer: keep the compiler from folding them.
                black_box(XcdrVersion::Xcdr1),
                black_box(Endianness::Little),
                &mut buf,
            )
            .unwrap();
            // Observe the output so the stores cannot be optimised away.
            black_box(&buf);
            n
        })
    });
    let mut out = Vec::with_capacity(2048);
    g.bench_function("encode/cdr-crate", |b| {
        b.iter(|| {
            out.clear();
            cdr::serialize_into::<_, _, _, cdr::CdrLe>(&mut out, black_box(&v), cdr::Infinite)
                .unwrap();
            black_box(&out);
        })
    });
    let ours = tachyon_cdr::serialize_to_vec(&v, XcdrVersion::Xcdr1, Endianness::Little).unwrap();
    let theirs = cdr::serialize::<_, _, cdr::CdrLe>(&v, cdr::Infinite).unwrap();
    assert_eq!(ours, theirs, "both encode the same bytes");
    g.bench_function("decode/tachyon", |b| {
        b.iter(|| tachyon_cdr::deserialize::<Blob>(black_box(&ours)).unwrap())
    });
    g.bench_function("decode-borrowed/tachyon", |b| {
        b.iter(|| tachyon_cdr::deserialize::<BlobRef<'_>>(black_box(&ours)).unwrap())
    });
    g.bench_function("decode/cdr-crate", |b| {
        b.iter(|| cdr::deserialize::<Blob>(black_box(&theirs)).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench_shape, bench_blob);
criterion_main!(benches);
