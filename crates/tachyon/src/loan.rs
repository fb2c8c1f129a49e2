//! Loans: samples of fixed-size types written in place and read in place.
//!
//! A type whose memory is its serialized form — `#[repr(C)]`, no padding, made of numbers
//! and arrays of them, `@final` (the derive's default) — is [`Loanable`] when it also derives
//! `zerocopy`'s `FromBytes`, `IntoBytes`, `KnownLayout` and `Immutable` (which check those
//! properties at compile time; `tachyon::zerocopy` re-exports the crate, and
//! `#[zerocopy(crate = "tachyon::zerocopy")]` points the derives at it). Then:
//!
//! - [`DataWriter::loan_sample`](crate::DataWriter::loan_sample) lends a [`Loan`]: with
//!   shared memory on, a slot of the writer's loan area in `/dev/shm`; the application
//!   writes the sample in place, and
//!   [`write_loaned`](crate::DataWriter::write_loaned) publishes it without serializing or
//!   copying it. Readers of other processes of the host are sent a reference to the slot
//!   instead of the bytes; readers elsewhere (UDP, other vendors) get the bytes as usual.
//! - [`DataReader::take_loaned`](crate::DataReader::take_loaned) returns [`LoanedSample`]s
//!   that borrow the received bytes — in the writer's slot, for a sample that came by
//!   reference — and release them when dropped. A sample whose bytes are not the type's
//!   memory (another vendor's byte order, an XCDR2 `@appendable` header) is decoded instead.
//!
//! The size of a sample does not change what a loaned round trip between two processes
//! costs: nothing is copied. Every step that cannot lend (no shared memory, every slot in
//! use) falls back to the heap, so a loan always works.

use std::any::TypeId;
use std::collections::HashMap;
use std::mem::size_of;
use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, OnceLock};

use tachyon_cdr::{DdsType, Decode, Endianness, XcdrVersion};
use tachyon_proto::history::{Payload, SampleInfo, SharedBytes, SharedPool};
use tachyon_proto::shared::{Resolved, SampleResolver};
use tachyon_transport::shm::loan::{self, LoanArea, LoanSlot, Loans, Published};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// Where a loaned sample starts in its slot: its encapsulation header 4 bytes before a
/// 64-byte line, the value on the line.
const VALUE_AT: usize = 64;
const HEADER_AT: usize = VALUE_AT - 4;
/// Most alignment a loaned type may need (a slot's value is 64-byte aligned).
const MAX_ALIGN: usize = 64;

/// A type samples of which can be loaned: its memory is its XCDR encoding (checked once per
/// type at run time too; a type that fails the check is serialized as usual).
pub trait Loanable:
    DdsType
    + for<'de> Decode<'de>
    + FromBytes
    + IntoBytes
    + KnownLayout
    + Immutable
    + Send
    + Sync
    + 'static
{
}

impl<T> Loanable for T where
    T: DdsType
        + for<'de> Decode<'de>
        + FromBytes
        + IntoBytes
        + KnownLayout
        + Immutable
        + Send
        + Sync
        + 'static
{
}

/// An encapsulation header for XCDR1 and one for XCDR2, each if a type's memory is its
/// serialized form under it.
pub(crate) type Headers = [Option<[u8; 4]>; 2];

/// The encapsulation headers under which `T`'s memory is its serialized form (XCDR1, XCDR2),
/// found once per type by serializing a value of distinct bytes and comparing.
pub(crate) fn in_place_headers<T: Loanable>() -> Headers {
    static PROBES: OnceLock<Mutex<HashMap<TypeId, Headers>>> = OnceLock::new();
    let probes = PROBES.get_or_init(Mutex::default);
    if let Some(h) = crate::runtime::lock(probes).get(&TypeId::of::<T>()) {
        return *h;
    }
    let probe = |version| {
        if std::mem::align_of::<T>() > MAX_ALIGN || cfg!(target_endian = "big") {
            return None;
        }
        let pattern: Vec<u8> = (0..size_of::<T>())
            .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3] | 1)
            .collect();
        // On the heap: a large type does not fit a thread's stack.
        let mut value = T::new_box_zeroed().ok()?;
        value.as_mut_bytes().copy_from_slice(&pattern);
        let ser = tachyon_cdr::serialize_to_vec(&*value, version, Endianness::Little).ok()?;
        let header: [u8; 4] = ser.get(..4)?.try_into().ok()?;
        (ser.len() == 4 + pattern.len() && ser[4..] == pattern[..]).then_some(header)
    };
    let h = [probe(XcdrVersion::Xcdr1), probe(XcdrVersion::Xcdr2)];
    crate::runtime::lock(probes).insert(TypeId::of::<T>(), h);
    h
}

/// The header `version` serializes `T` under when its memory is that form.
pub(crate) fn in_place_header<T: Loanable>(version: XcdrVersion) -> Option<[u8; 4]> {
    in_place_headers::<T>()[usize::from(version == XcdrVersion::Xcdr2)]
}

/// A sample lent by [`DataWriter::loan_sample`](crate::DataWriter::loan_sample): write it in
/// place (it holds what an earlier sample left, or zeros), then hand it to
/// [`write_loaned`](crate::DataWriter::write_loaned). Dropped unwritten, it goes back.
pub struct Loan<T: Loanable> {
    pub(crate) store: Store<T>,
}

pub(crate) enum Store<T> {
    /// A slot of the writer's loan area.
    Shm(LoanSlot),
    /// Heap memory (no shared memory, or every slot in use).
    Heap(Box<T>),
}

impl<T: Loanable> Loan<T> {
    /// A loan in `slot`, if `T` fits it.
    pub(crate) fn in_slot(mut slot: LoanSlot) -> Option<Loan<T>> {
        let bytes = slot
            .bytes_mut()
            .get_mut(VALUE_AT..VALUE_AT + size_of::<T>())?;
        T::mut_from_bytes(bytes).ok()?;
        Some(Loan {
            store: Store::Shm(slot),
        })
    }

    /// A loan of heap memory, zeroed (`None`: out of memory).
    pub(crate) fn on_heap() -> Option<Loan<T>> {
        Some(Loan {
            store: Store::Heap(T::new_box_zeroed().ok()?),
        })
    }

    /// Whether the sample is being written in shared memory (and goes to readers of other
    /// processes of this host without a copy).
    pub fn is_shared_memory(&self) -> bool {
        matches!(self.store, Store::Shm(_))
    }
}

impl<T: Loanable> Deref for Loan<T> {
    type Target = T;
    fn deref(&self) -> &T {
        match &self.store {
            Store::Heap(b) => b,
            Store::Shm(slot) => {
                let bytes = slot.bytes().get(VALUE_AT..VALUE_AT + size_of::<T>());
                bytes
                    .and_then(|b| T::ref_from_bytes(b).ok())
                    .expect("a loan's slot was checked to hold a T when it was made")
            }
        }
    }
}

impl<T: Loanable> DerefMut for Loan<T> {
    fn deref_mut(&mut self) -> &mut T {
        match &mut self.store {
            Store::Heap(b) => b,
            Store::Shm(slot) => {
                let bytes = slot
                    .bytes_mut()
                    .get_mut(VALUE_AT..VALUE_AT + size_of::<T>());
                bytes
                    .and_then(|b| T::mut_from_bytes(b).ok())
                    .expect("a loan's slot was checked to hold a T when it was made")
            }
        }
    }
}

impl<T: Loanable> std::fmt::Debug for Loan<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loan")
            .field("shared_memory", &self.is_shared_memory())
            .finish_non_exhaustive()
    }
}

/// The slot of a loan, published under encapsulation `header`: the payload of its sample
/// (its holder from `pool`).
pub(crate) fn publish<T: Loanable>(
    mut slot: LoanSlot,
    header: [u8; 4],
    pool: &SharedPool,
) -> Option<Payload> {
    slot.bytes_mut()
        .get_mut(HEADER_AT..VALUE_AT)?
        .copy_from_slice(&header);
    let published = slot.publish(HEADER_AT, 4 + size_of::<T>())?;
    Some(pool.payload(PublishedBytes(published)))
}

/// The bytes of a loan area's slot a writer published.
struct PublishedBytes(Published);

impl SharedBytes for PublishedBytes {
    fn bytes(&self) -> &[u8] {
        self.0.bytes()
    }
    fn reference(&self) -> Option<&[u8]> {
        Some(self.0.reference())
    }
    fn release(&mut self) {
        self.0.release();
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

/// A sample held in place in another participant's loan area.
struct HeldBytes(loan::Held);

impl SharedBytes for HeldBytes {
    fn bytes(&self) -> &[u8] {
        self.0.bytes()
    }
    fn release(&mut self) {
        self.0.release();
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

/// Resolves references to loaned samples through a participant's shared-memory transport
/// (the holders of what it resolves recycled: no allocation per sample).
pub(crate) struct ShmResolver {
    loans: std::sync::Arc<Loans>,
    pool: SharedPool,
}

impl ShmResolver {
    pub(crate) fn new(loans: std::sync::Arc<Loans>) -> ShmResolver {
        ShmResolver {
            loans,
            pool: SharedPool::new(),
        }
    }
}

impl SampleResolver for ShmResolver {
    fn resolve(&self, reference: &[u8]) -> Resolved {
        match self.loans.resolve(reference) {
            Ok(loan::Resolved::Held(h)) => Resolved::Sample(self.pool.payload(HeldBytes(h))),
            Ok(loan::Resolved::Copied(v)) => Resolved::Sample(Payload::from(v)),
            Err(why) => Resolved::Missed(why),
        }
    }
}

/// A writer's loan area, made on its first loan.
pub(crate) fn make_area<T: Loanable>(loans: &Loans) -> Option<LoanArea> {
    let slot_bytes = VALUE_AT + size_of::<T>();
    match loans.create_area(slot_bytes, loans.slots_for(slot_bytes)) {
        Ok(a) => Some(a),
        Err(e) => {
            tracing::warn!(error = %e, "loans of {} come from the heap", T::TYPE_NAME);
            None
        }
    }
}

/// A sample taken by [`DataReader::take_loaned`](crate::DataReader::take_loaned): its value
/// borrowed from the received bytes (the writer's shared-memory slot, for a sample that came
/// by reference), released when dropped.
pub struct LoanedSample<T: Loanable> {
    /// DDS SampleInfo.
    pub info: SampleInfo,
    data: Option<Data<T>>,
}

enum Data<T> {
    InPlace(Payload),
    /// The writer's value itself (a writer of this process, `tachyon_cdr::share`).
    Shared(Payload),
    Decoded(Box<T>),
}

impl<T: Loanable> LoanedSample<T> {
    /// A sample of `payload` (none for a dispose or unregister): borrowed when its bytes are
    /// `T`'s memory, else decoded (`Err`: it does not decode).
    /// (`headers`: [`in_place_headers`] of `T`, looked up once per take.)
    pub(crate) fn new(
        info: SampleInfo,
        payload: Option<Payload>,
        headers: &Headers,
    ) -> Result<Self, String> {
        let data = match payload {
            None => None,
            Some(p) if shared::<T>(&p).is_some() => Some(Data::Shared(p)),
            Some(p) if in_place::<T>(&p, headers).is_some() => Some(Data::InPlace(p)),
            Some(p) => {
                // Decoded into the heap (a large value never sits on the stack).
                let mut value = T::new_box_zeroed().map_err(|_| "out of memory".to_string())?;
                tachyon_cdr::deserialize_into(p.as_bytes(), &mut *value)
                    .map_err(|e| e.to_string())?;
                Some(Data::Decoded(value))
            }
        };
        Ok(LoanedSample { info, data })
    }

    /// The value, `None` when `info.valid_data` is false.
    pub fn data(&self) -> Option<&T> {
        match self.data.as_ref()? {
            Data::Decoded(b) => Some(b),
            // Its header was checked when it was taken: only the cast is left.
            Data::InPlace(p) => T::ref_from_bytes(p.as_bytes().get(4..)?).ok(),
            Data::Shared(p) => shared::<T>(p),
        }
    }

    /// Whether the value is read where it arrived (no copy, no decoding): in shared memory,
    /// or the writer's own value in this process.
    pub fn is_in_place(&self) -> bool {
        matches!(self.data, Some(Data::InPlace(_) | Data::Shared(_)))
    }
}

impl<T: Loanable> std::fmt::Debug for LoanedSample<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoanedSample")
            .field("info", &self.info)
            .field("in_place", &self.is_in_place())
            .finish_non_exhaustive()
    }
}

/// The writer's value `payload` holds, when it is a `T` (read as it is: serializing it to
/// read it in place would copy it).
fn shared<T: Loanable>(payload: &Payload) -> Option<&T> {
    payload.shared_sample()?.as_any().downcast_ref::<T>()
}

/// `payload` as a `T` in place, if its header is one `T`'s memory is serialized under and
/// its value is exactly `T`'s bytes, aligned.
fn in_place<'a, T: Loanable>(payload: &'a Payload, headers: &Headers) -> Option<&'a T> {
    let bytes = payload.as_bytes();
    let header = bytes.get(..4)?;
    if !headers.iter().flatten().any(|h| h[..] == *header) {
        return None;
    }
    T::ref_from_bytes(bytes.get(4..)?).ok()
}
