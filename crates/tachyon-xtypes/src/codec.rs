//! The XCDR2 little-endian plumbing every type-representation structure shares: two-pass
//! encoding into an owned buffer, appendable framing, optional members and sequences.

use tachyon_cdr::{
    DecodeError, DecodeErrorKind, EncodeError, Endianness, Reader, Writer, XcdrVersion,
};

/// The longest member or type name XTypes allows (`MemberName`, `QualifiedTypeName`).
pub const NAME_MAX: u32 = 256;

/// A structure of the type representation, written in XCDR2.
pub trait Codec: Sized {
    /// The fewest bytes one value takes (sequence counts are checked against it).
    const MIN_SIZE: usize = 1;
    /// Writes the value.
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError>;
    /// Reads a value.
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError>;
}

/// Encodes with `f` into a new buffer sized by a counting pass (XCDR2, little endian, no
/// encapsulation header, no trailing padding).
pub fn to_bytes(
    f: impl Fn(&mut Writer<'_>) -> Result<(), EncodeError>,
) -> Result<Vec<u8>, EncodeError> {
    let mut counter = Writer::counter(XcdrVersion::Xcdr2, Endianness::Little);
    f(&mut counter)?;
    let mut buf = vec![0u8; counter.position()];
    let mut w = Writer::new(&mut buf, XcdrVersion::Xcdr2, Endianness::Little);
    f(&mut w)?;
    let n = w.position();
    buf.truncate(n);
    Ok(buf)
}

/// A reader over `bytes` (XCDR2 in the given byte order).
pub fn reader(bytes: &[u8], endian: Endianness) -> Reader<'_> {
    Reader::new(bytes, XcdrVersion::Xcdr2, endian, 0)
}

/// Writes an appendable structure: a DHEADER, then what `f` writes.
pub fn appendable(
    w: &mut Writer<'_>,
    f: impl FnOnce(&mut Writer<'_>) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    let mark = w.begin_dheader()?;
    f(w)?;
    w.end_dheader(mark)
}

/// Reads an appendable structure: its DHEADER bounds what `f` reads, and what `f` leaves
/// (members a later version appended) is skipped.
pub fn read_appendable<T>(
    r: &mut Reader<'_>,
    f: impl FnOnce(&mut Reader<'_>) -> Result<T, DecodeError>,
) -> Result<T, DecodeError> {
    r.enter()?;
    let region = match r.begin_delimited() {
        Ok(region) => region,
        Err(e) => {
            r.leave();
            return Err(e);
        }
    };
    let v = f(r);
    r.end_region(region);
    r.leave();
    v
}

/// Writes a sequence of non-primitive elements: a DHEADER, the count, the elements.
pub fn write_seq<T: Codec>(w: &mut Writer<'_>, items: &[T]) -> Result<(), EncodeError> {
    appendable(w, |w| {
        w.write_len(items.len())?;
        items.iter().try_for_each(|i| i.encode(w))
    })
}

/// Reads a sequence [`write_seq`] writes.
pub fn read_seq<T: Codec>(r: &mut Reader<'_>, what: &'static str) -> Result<Vec<T>, DecodeError> {
    read_appendable(r, |r| {
        let n = r.read_count(what, T::MIN_SIZE, None)?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(T::decode(r)?);
        }
        Ok(v)
    })
}

/// Writes an `@optional` member of a final or appendable structure: a presence flag, then
/// the value.
pub fn write_opt<T>(
    w: &mut Writer<'_>,
    v: &Option<T>,
    f: impl FnOnce(&mut Writer<'_>, &T) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    match v {
        None => w.write_bool(false),
        Some(v) => {
            w.write_bool(true)?;
            f(w, v)
        }
    }
}

/// Reads what [`write_opt`] writes.
pub fn read_opt<T>(
    r: &mut Reader<'_>,
    f: impl FnOnce(&mut Reader<'_>) -> Result<T, DecodeError>,
) -> Result<Option<T>, DecodeError> {
    if r.read_bool()? {
        f(r).map(Some)
    } else {
        Ok(None)
    }
}

/// Reads a name (`string<256>`).
pub fn read_name(r: &mut Reader<'_>) -> Result<String, DecodeError> {
    r.read_str(Some(NAME_MAX)).map(str::to_owned)
}

/// Writes a name (`string<256>`).
pub fn write_name(w: &mut Writer<'_>, name: &str) -> Result<(), EncodeError> {
    w.write_string(name, Some(NAME_MAX))
}

/// Reads `N` raw octets (an `octet[N]`).
pub fn read_array<const N: usize>(r: &mut Reader<'_>) -> Result<[u8; N], DecodeError> {
    let b = r.read_bytes(N)?;
    let mut out = [0u8; N];
    out.copy_from_slice(b);
    Ok(out)
}

/// The error for a union discriminator this implementation does not know.
pub fn unknown(r: &Reader<'_>, type_name: &'static str, value: u8) -> DecodeError {
    r.error(DecodeErrorKind::UnknownDiscriminator {
        type_name,
        value: i64::from(value),
    })
}

/// Reads a sequence of 32-bit values (no DHEADER: primitive elements).
pub fn read_u32_seq(r: &mut Reader<'_>, what: &'static str) -> Result<Vec<u32>, DecodeError> {
    let n = r.read_count(what, 4, None)?;
    r.read_u32_vec(n)
}

/// Writes a sequence of 32-bit values.
pub fn write_u32_seq(w: &mut Writer<'_>, v: &[u32]) -> Result<(), EncodeError> {
    w.write_len(v.len())?;
    v.iter().try_for_each(|x| w.write_u32(*x))
}

/// Writes a sequence of non-primitive elements with `f` (elements whose form depends on the
/// representation).
pub fn write_seq_with<T>(
    w: &mut Writer<'_>,
    items: &[T],
    f: impl Fn(&mut Writer<'_>, &T) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    appendable(w, |w| {
        w.write_len(items.len())?;
        items.iter().try_for_each(|i| f(w, i))
    })
}

/// Reads what [`write_seq_with`] writes; each element takes at least `min_size` bytes.
pub fn read_seq_with<T>(
    r: &mut Reader<'_>,
    what: &'static str,
    min_size: usize,
    f: impl Fn(&mut Reader<'_>) -> Result<T, DecodeError>,
) -> Result<Vec<T>, DecodeError> {
    read_appendable(r, |r| {
        let n = r.read_count(what, min_size, None)?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(f(r)?);
        }
        Ok(v)
    })
}
