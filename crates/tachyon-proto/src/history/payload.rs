//! [`Payload`]: the immutable serialized sample that history caches share instead of copying,
//! and [`PayloadPool`], which recycles payload buffers so the steady-state path allocates
//! nothing (DESIGN.md section 3).
//!
//! A payload may also hold the writer's sample as its value ([`PayloadPool::share`],
//! `tachyon_cdr::share`), for readers of the same type in this process: it is serialized
//! only when someone asks for its bytes.

use std::cell::RefCell;
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use tachyon_cdr::{SharedSample, XcdrVersion};

/// Most buffers a pool keeps; more are freed. A reliable writer of small samples holds up to
/// `MAX_UNACKNOWLEDGED_BYTES` of them in flight (58,000 of 32 B) and gets them back by the
/// thousand with each acknowledgement: with room for 4,096, most went back to the allocator
/// and the next writes allocated again (a `malloc` and a `free` each, on two threads: 8 % of
/// such a writer's CPU). The byte budget below bounds what they pin.
const POOL_MAX_BUFFERS: usize = 65_536;
/// Most bytes (buffer capacities) a pool keeps free: a burst of huge samples must not pin
/// memory, but a writer of 1 MiB samples reuses its buffers (a fresh one costs its pages'
/// faults and zeroing, a tenth of such a writer's CPU).
const POOL_MAX_BYTES: usize = 32 << 20;

/// Most buffers a thread keeps aside for the next payloads of their pools made on it.
const LOCAL_MAX_BUFFERS: usize = 16;
/// Largest buffer (capacity, holder included) a thread keeps aside: larger ones go back to
/// their pool at once (a thread must not pin what a bulk writer's pool budgets).
const LOCAL_MAX_BUFFER_BYTES: usize = 16 << 10;

thread_local! {
    /// Buffers whose last payload was dropped on this thread, kept for the next payload of
    /// their pool made on it ([`LocalCache`]).
    static LOCAL: RefCell<LocalCache> = const { RefCell::new(LocalCache { buffers: Vec::new() }) };
}

/// A thread's cache of free payload buffers, in the order they were freed. A pool's lock
/// and the `Weak` that reaches it cost four atomic read-modify-writes per buffer given back
/// and two per buffer taken, on every sample: a thread that drops a buffer and makes the
/// next one of its pool (a reader's receive thread, a writer's thread whose history lets
/// go of the last sample) does neither, with none. Bounded: the oldest buffer goes back to
/// its pool when a newer one comes; a buffer whose pool is gone is not kept.
struct LocalCache {
    buffers: Vec<Arc<Inner>>,
}

impl LocalCache {
    /// Keeps `inner` (held alone, not shared bytes, small) if this thread's cache can;
    /// gives it back otherwise. What it evicts goes back to its pool.
    fn keep(inner: Arc<Inner>) -> Option<Arc<Inner>> {
        // Moved in and out, not cloned: a clone and a drop are two atomic operations more.
        let mut inner = Some(inner);
        let evicted = LOCAL.try_with(|c| {
            let mut c = c.try_borrow_mut().ok()?;
            let evicted = (c.buffers.len() >= LOCAL_MAX_BUFFERS).then(|| c.buffers.remove(0));
            c.buffers.extend(inner.take());
            evicted
        });
        inner.or(evicted.ok().flatten())
    }

    /// The most recently freed buffer of `pool` this thread keeps, if any.
    fn take(pool: &Arc<Mutex<FreeList>>) -> Option<Arc<Inner>> {
        let ours = Arc::as_ptr(pool);
        LOCAL
            .try_with(|c| {
                let mut c = c.try_borrow_mut().ok()?;
                let i = c.buffers.iter().rposition(|b| b.pool.as_ptr() == ours)?;
                Some(c.buffers.remove(i))
            })
            .ok()
            .flatten()
    }

    /// How many buffers of `pool` this thread keeps.
    fn count(pool: &Arc<Mutex<FreeList>>) -> usize {
        let ours = Arc::as_ptr(pool);
        LOCAL
            .try_with(|c| {
                c.try_borrow().map_or(0, |c| {
                    c.buffers.iter().filter(|b| b.pool.as_ptr() == ours).count()
                })
            })
            .unwrap_or(0)
    }
}

/// The buffers a pool keeps for reuse, and their capacities added up.
#[derive(Default)]
struct FreeList {
    buffers: Vec<Arc<Inner>>,
    bytes: usize,
    /// Payloads of this pool held as values that were serialized after all.
    late_serializations: u64,
}

/// Shared storage of a payload.
#[derive(Default)]
struct Inner {
    bytes: Vec<u8>,
    /// Where the buffer goes back when the last [`Payload`] referring to it is dropped.
    pool: Weak<Mutex<FreeList>>,
    /// Bytes that live elsewhere (a shared-memory slot); `bytes` is then empty.
    external: Option<Box<dyn SharedBytes>>,
    /// A sample held as its value: the payload's sample when `valued` says so, else the
    /// last one a recycled buffer held (overwritten in place by the next).
    value: Option<Box<dyn SharedSample>>,
    /// The serialized size of `value`'s sample.
    value_size: usize,
    /// The payload is `value` (`bytes` unused), serialized in this version when asked.
    valued: Option<XcdrVersion>,
    /// `value` serialized, once someone asked for the bytes.
    serialized: OnceLock<Vec<u8>>,
}

impl Inner {
    /// Makes this a buffer of `len` bytes to write, holding no value. A recycled buffer
    /// keeps what it held (its writer overwrites every byte it keeps), and what it lacks is
    /// zeroed.
    fn set_len(&mut self, len: usize) {
        self.valued = None;
        if self.bytes.len() >= len {
            self.bytes.truncate(len);
        } else {
            self.bytes.resize(len, 0);
        }
    }

    /// The bytes held (a pool's budget counts them), the holder's own included.
    fn held(&self) -> usize {
        std::mem::size_of::<Inner>()
            + self.bytes.capacity()
            + if self.value.is_some() {
                self.value_size
            } else {
                0
            }
    }

    /// `value` serialized (empty, and logged, if it fails: the writer checked its size, so
    /// it does not).
    fn serialize_value(&self, version: XcdrVersion) -> Vec<u8> {
        if let Some(pool) = self.pool.upgrade() {
            if let Ok(mut f) = pool.lock() {
                f.late_serializations += 1;
            }
        }
        match self.value.as_deref().map(|v| v.serialize(version)) {
            Some(Ok(bytes)) => {
                if bytes.len() != self.value_size {
                    // Its Encode or Clone is not faithful (the value measured at `write`
                    // serializes otherwise now): the bytes go as they are.
                    tracing::warn!(
                        measured = self.value_size,
                        serialized = bytes.len(),
                        "a shared sample serializes to another size than it was written with"
                    );
                }
                bytes
            }
            Some(Err(e)) => {
                tracing::warn!(error = %e, "a shared sample does not serialize; sent empty");
                Vec::new()
            }
            None => Vec::new(),
        }
    }
}

/// Bytes of a [`Payload`] kept outside the process's heap: a sample in a shared-memory slot
/// (a loaned sample a writer wrote in place, or one a reader holds in its writer's segment).
/// [`release`](Self::release) (or dropping it) gives the storage back; a [`SharedPool`]
/// keeps released holders to reuse them, so that a payload of shared bytes allocates nothing.
pub trait SharedBytes: Send + Sync + 'static {
    /// The serialized sample, encapsulation header included; the same bytes every call
    /// until it is released.
    fn bytes(&self) -> &[u8];
    /// What another participant of this host resolves to the same bytes
    /// ([`crate::shared::PID_TACHYON_SHM_SAMPLE`]'s value), when it can.
    fn reference(&self) -> Option<&[u8]> {
        None
    }
    /// The last payload referring to it is gone: give the storage back (dropping it must
    /// then do nothing more).
    fn release(&mut self);
    /// Itself, to be re-targeted by a [`SharedPool`] of its type.
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
}

/// A cheaply clonable, immutable serialized payload (encapsulation header included).
///
/// Cloning bumps a reference count; the bytes are never copied once inside. A payload taken
/// from a [`PayloadPool`] returns its buffer there when its last clone is dropped.
#[derive(Clone, Default)]
pub struct Payload(Option<Arc<Inner>>);

impl Payload {
    /// A payload holding a copy of `bytes` (one allocation; see [`PayloadPool`] for none).
    pub fn copy_from_slice(bytes: &[u8]) -> Payload {
        Payload::from(bytes.to_vec())
    }

    /// A payload whose bytes live in `shared` (released when the last clone goes).
    pub fn from_shared(shared: Box<dyn SharedBytes>) -> Payload {
        Payload(Some(Arc::new(Inner {
            external: Some(shared),
            ..Inner::default()
        })))
    }

    /// The serialized bytes (a payload held as its value is serialized at the first call).
    pub fn as_bytes(&self) -> &[u8] {
        match self.0.as_deref() {
            Some(Inner {
                external: Some(e), ..
            }) => e.bytes(),
            Some(i) => match i.valued {
                Some(version) => i.serialized.get_or_init(|| i.serialize_value(version)),
                None => &i.bytes,
            },
            None => &[],
        }
    }

    /// The serialized size, without serializing a payload held as its value.
    pub fn len(&self) -> usize {
        match self.0.as_deref() {
            Some(Inner {
                external: Some(e), ..
            }) => e.bytes().len(),
            Some(i) if i.valued.is_some() => i.value_size,
            Some(i) => i.bytes.len(),
            None => 0,
        }
    }

    /// Whether the serialized sample is empty (no data: a dispose or unregister).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The writer's sample itself, when the payload holds it as its value
    /// ([`PayloadPool::share`]).
    pub fn shared_sample(&self) -> Option<&dyn SharedSample> {
        let i = self.0.as_deref()?;
        i.valued?;
        i.value.as_deref()
    }

    /// The writer's sample itself, moved out, when the payload holds it as its value and
    /// no one else holds the payload; else the payload back.
    pub fn into_shared_sample(mut self) -> Result<Box<dyn SharedSample>, Payload> {
        let taken = self
            .0
            .as_mut()
            .and_then(Arc::get_mut)
            .filter(|i| i.valued.is_some())
            .and_then(|i| {
                i.valued = None;
                i.value.take()
            });
        taken.ok_or(self)
    }

    /// The reference to the bytes that another participant of this host can resolve
    /// ([`SharedBytes::reference`]), if they live in shared memory.
    pub fn shared_reference(&self) -> Option<&[u8]> {
        self.0.as_deref()?.external.as_deref()?.reference()
    }

    /// Whether two payloads share the same buffer (no copy happened between them).
    pub fn ptr_eq(&self, other: &Payload) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }
}

impl Drop for Payload {
    fn drop(&mut self) {
        let Some(inner) = self.0.take() else {
            return;
        };
        // The last reference to a pooled buffer hands it back (a race between two last
        // clones on two threads at worst frees it: never unsound, only not recycled).
        if Arc::strong_count(&inner) == 1 {
            let mut inner = inner;
            // Only shared bytes and a late serialization need the buffer to themselves (an
            // atomic read-modify-write): the usual payload has neither.
            let reset = inner.external.is_some() || inner.serialized.get().is_some();
            if let Some(i) = reset.then(|| Arc::get_mut(&mut inner)).flatten() {
                // Shared bytes go back to their owner now, whether or not the holder is kept.
                if let Some(e) = i.external.as_mut() {
                    e.release();
                }
                i.serialized = OnceLock::new();
            }
            let kept_here = inner.external.is_none()
                && inner.held() <= LOCAL_MAX_BUFFER_BYTES
                && inner.pool.strong_count() > 0;
            let back = match kept_here {
                true => LocalCache::keep(inner),
                false => Some(inner),
            };
            if let Some(inner) = back {
                give_back(inner);
            }
        }
    }
}

/// Hands a free buffer back to its pool, if the pool still exists and has room.
fn give_back(inner: Arc<Inner>) {
    if let Some(pool) = inner.pool.upgrade() {
        let cap = inner.held();
        if let Ok(mut free) = pool.lock() {
            if free.buffers.len() < POOL_MAX_BUFFERS && free.bytes + cap <= POOL_MAX_BYTES {
                free.bytes += cap;
                free.buffers.push(inner);
            }
        }
    }
}

impl From<Vec<u8>> for Payload {
    fn from(bytes: Vec<u8>) -> Payload {
        Payload(Some(Arc::new(Inner {
            bytes,
            ..Inner::default()
        })))
    }
}

impl From<&[u8]> for Payload {
    fn from(bytes: &[u8]) -> Payload {
        Payload::copy_from_slice(bytes)
    }
}

impl Deref for Payload {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl AsRef<[u8]> for Payload {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl PartialEq for Payload {
    fn eq(&self, other: &Payload) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Payload {}

impl std::hash::Hash for Payload {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state);
    }
}

impl fmt::Debug for Payload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Payload({} bytes)", self.len())
    }
}

/// Recycles payload buffers: after warm-up, taking a payload, filling it and dropping every
/// clone of it allocates nothing. Cloning the pool shares it.
#[derive(Clone, Default)]
pub struct PayloadPool {
    free: Arc<Mutex<FreeList>>,
}

impl PayloadPool {
    /// An empty pool.
    pub fn new() -> PayloadPool {
        PayloadPool::default()
    }

    /// A payload holding a copy of `bytes`, in a recycled buffer when one is free.
    pub fn copy_from_slice(&self, bytes: &[u8]) -> Payload {
        let filled = self.fill(bytes.len(), |b| {
            b.copy_from_slice(bytes);
            Ok::<_, std::convert::Infallible>(bytes.len())
        });
        match filled {
            Ok(p) => p,
            Err(never) => match never {},
        }
    }

    /// A payload of at most `len` bytes written by `write` (which returns how many it
    /// wrote: the payload is cut to that), in a recycled buffer when one is free; `write`'s
    /// error when it fails (the buffer goes back to the pool). What [`alloc`](Self::alloc),
    /// [`PayloadMut::as_mut_slice`], [`PayloadMut::truncate`] and
    /// [`PayloadMut::freeze`] do, with the buffer checked to be held alone once, not three
    /// times (each check an atomic read-modify-write).
    pub fn fill<E>(
        &self,
        len: usize,
        write: impl FnOnce(&mut [u8]) -> Result<usize, E>,
    ) -> Result<Payload, E> {
        // `recycled_or` calls the set-up exactly once: the result is always the write's.
        let mut result = Ok(0);
        let inner = self.recycled_or(
            || vec![0; len],
            |i| {
                i.set_len(len);
                result = write(&mut i.bytes);
                if let Ok(n) = result {
                    i.bytes.truncate(n);
                }
            },
        );
        // Dropped as a payload on failure too: the buffer goes back to the pool.
        let payload = Payload(Some(inner));
        result.map(|_| payload)
    }

    /// A writable payload of `len` bytes (serialize straight into it, then
    /// [`PayloadMut::freeze`]). A new one is zeroed; a recycled one of at least `len` bytes
    /// keeps what it held, since serialization overwrites every byte it returns (a
    /// property `tachyon-cdr` tests): zeroing 64 KiB per write was a tenth of a bulk
    /// writer's CPU.
    pub fn alloc(&self, len: usize) -> PayloadMut {
        let inner = self.recycled_or(
            // Zeroed by the allocator (fresh pages of a large one are zero already).
            || vec![0; len],
            |i| i.set_len(len),
        );
        PayloadMut(inner)
    }

    /// A payload holding a sample as its value (not serialized): `fill` puts it in the
    /// slot, which holds the value of a recycled payload when there is one (to overwrite in
    /// place: `tachyon_cdr::Sharing::share`). `size`: its serialized size, which
    /// [`Payload::len`] says; `version`: the representation it is serialized in if someone
    /// asks for its bytes ([`Payload::as_bytes`]). A slot left empty makes an empty payload.
    pub fn share(
        &self,
        size: usize,
        version: XcdrVersion,
        fill: impl FnOnce(&mut Option<Box<dyn SharedSample>>),
    ) -> Payload {
        let inner = self.recycled_or(Vec::new, |i| {
            fill(&mut i.value);
            i.value_size = size;
            i.valued = i.value.is_some().then_some(version);
            i.bytes.clear();
        });
        Payload(Some(inner))
    }

    /// A free buffer of the pool set up by `set`, or a new one of `bytes()` (set up too:
    /// `set` is called exactly once). Whether a free one is held alone is checked once, in
    /// the `Arc::get_mut` that sets it up (an atomic read-modify-write); one still held
    /// elsewhere (two last clones dropped at once) is not reused. A new one is set up
    /// before it is shared, unchecked.
    fn recycled_or(&self, bytes: impl Fn() -> Vec<u8>, set: impl FnOnce(&mut Inner)) -> Arc<Inner> {
        if let Some(mut inner) = self.recycled() {
            if let Some(i) = Arc::get_mut(&mut inner) {
                set(i);
                return inner;
            }
        }
        // Set up before it is shared: no check needed.
        let mut fresh = Inner {
            bytes: bytes(),
            pool: Arc::downgrade(&self.free),
            ..Inner::default()
        };
        set(&mut fresh);
        Arc::new(fresh)
    }

    /// A free buffer of the pool, if one is (not checked to be held alone: see
    /// [`recycled_or`](Self::recycled_or)).
    fn recycled(&self) -> Option<Arc<Inner>> {
        if let Some(local) = LocalCache::take(&self.free) {
            return Some(local);
        }
        self.free.lock().ok().and_then(|mut f| {
            let a = f.buffers.pop()?;
            f.bytes -= a.held();
            Some(a)
        })
    }

    /// Buffers waiting for reuse (in the pool, and those the calling thread keeps aside
    /// for it).
    pub fn free_buffers(&self) -> usize {
        self.free.lock().map_or(0, |f| f.buffers.len()) + LocalCache::count(&self.free)
    }

    /// How many of its payloads held as values were serialized after all (someone asked
    /// for their bytes: a reader of another process or type, a content filter that reads
    /// bytes, a transcoding reader).
    pub fn late_serializations(&self) -> u64 {
        self.free.lock().map_or(0, |f| f.late_serializations)
    }
}

impl fmt::Debug for PayloadPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PayloadPool({} free)", self.free_buffers())
    }
}

/// Recycles the holders of [`SharedBytes`] payloads: after warm-up, making a payload of
/// shared bytes and dropping every clone of it allocates nothing. Cloning the pool shares it.
#[derive(Clone, Default)]
pub struct SharedPool {
    free: Arc<Mutex<FreeList>>,
}

impl SharedPool {
    /// An empty pool.
    pub fn new() -> SharedPool {
        SharedPool::default()
    }

    /// A payload of `shared`, in a recycled holder of its type when one is free.
    pub fn payload<S: SharedBytes>(&self, shared: S) -> Payload {
        let recycled = self.free.lock().ok().and_then(|mut f| f.buffers.pop());
        if let Some(mut inner) = recycled {
            let slot = Arc::get_mut(&mut inner)
                .and_then(|i| i.external.as_mut())
                .and_then(|e| e.as_any_mut().downcast_mut::<S>());
            if let Some(slot) = slot {
                *slot = shared;
                return Payload(Some(inner));
            }
        }
        Payload(Some(Arc::new(Inner {
            pool: Arc::downgrade(&self.free),
            external: Some(Box::new(shared)),
            ..Inner::default()
        })))
    }

    /// Holders waiting for reuse.
    pub fn free_holders(&self) -> usize {
        self.free.lock().map_or(0, |f| f.buffers.len())
    }
}

impl fmt::Debug for SharedPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SharedPool({} free)", self.free_holders())
    }
}

/// A payload being written; [`freeze`](PayloadMut::freeze) makes it a shareable [`Payload`].
pub struct PayloadMut(Arc<Inner>);

impl PayloadMut {
    /// The bytes to write.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        match Arc::get_mut(&mut self.0) {
            Some(i) => &mut i.bytes,
            // Unreachable: a PayloadMut is never shared. Fail soft rather than panic.
            None => &mut [],
        }
    }

    /// Shortens the payload to `len` bytes (after serializing fewer bytes than reserved).
    pub fn truncate(&mut self, len: usize) {
        if let Some(i) = Arc::get_mut(&mut self.0) {
            i.bytes.truncate(len);
        }
    }

    /// The finished, immutable payload.
    pub fn freeze(self) -> Payload {
        Payload(Some(self.0))
    }
}

impl fmt::Debug for PayloadMut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PayloadMut({} bytes)", self.0.bytes.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tachyon_cdr::DdsType;

    #[test]
    fn clones_share_the_buffer() {
        let p = Payload::from(vec![1, 2, 3]);
        let q = p.clone();
        assert!(p.ptr_eq(&q));
        assert_eq!(q.as_bytes(), &[1, 2, 3]);
        assert_eq!(format!("{q:?}"), "Payload(3 bytes)");
        assert!(!p.ptr_eq(&Payload::copy_from_slice(&[1, 2, 3])));
        assert_eq!(p, Payload::copy_from_slice(&[1, 2, 3]));
        assert!(Payload::default().is_empty());
    }

    #[test]
    fn pooled_buffers_come_back_when_the_last_clone_goes() {
        let pool = PayloadPool::new();
        let a = pool.copy_from_slice(&[7; 100]);
        let b = a.clone();
        drop(a);
        assert_eq!(pool.free_buffers(), 0, "still referenced");
        drop(b);
        assert_eq!(pool.free_buffers(), 1);
        let c = pool.copy_from_slice(&[1, 2]);
        assert_eq!(pool.free_buffers(), 0, "reused");
        assert_eq!(c.as_bytes(), &[1, 2]);
        drop(pool);
        drop(c); // the pool is gone: the buffer is simply freed
    }

    /// Shared bytes that count their releases.
    struct Counted {
        bytes: Vec<u8>,
        released: Arc<std::sync::atomic::AtomicUsize>,
    }

    impl SharedBytes for Counted {
        fn bytes(&self) -> &[u8] {
            &self.bytes
        }
        fn release(&mut self) {
            self.released
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
            self
        }
    }

    #[test]
    fn shared_holders_are_released_with_their_last_payload_and_reused() {
        let pool = SharedPool::new();
        let released = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = |b: u8| Counted {
            bytes: vec![b; 4],
            released: released.clone(),
        };
        let p = pool.payload(counted(1));
        let q = p.clone();
        assert_eq!(q.as_bytes(), &[1; 4]);
        assert!(p.shared_reference().is_none());
        drop(p);
        assert_eq!(released.load(std::sync::atomic::Ordering::Relaxed), 0);
        drop(q);
        assert_eq!(released.load(std::sync::atomic::Ordering::Relaxed), 1);
        assert_eq!(pool.free_holders(), 1);
        let r = pool.payload(counted(2));
        assert_eq!((r.as_bytes(), pool.free_holders()), (&[2u8; 4][..], 0));
        drop(r);
        drop(pool);
        // The pool is gone: a payload still out is released when dropped, not kept.
        let pool = SharedPool::new();
        let s = pool.payload(counted(3));
        drop(pool);
        drop(s);
        assert_eq!(released.load(std::sync::atomic::Ordering::Relaxed), 3);
    }

    #[derive(tachyon_cdr::DdsType, Clone, Debug, PartialEq)]
    struct Text {
        n: u32,
        s: String,
    }

    fn text(n: u32) -> Text {
        Text {
            n,
            s: format!("text {n}"),
        }
    }

    fn shared(pool: &PayloadPool, v: &Text) -> Payload {
        let sharing = Text::sharing().expect("shareable");
        let size = tachyon_cdr::serialized_size(v, XcdrVersion::Xcdr2).expect("size");
        pool.share(size, XcdrVersion::Xcdr2, |slot| sharing.share(v, slot))
    }

    #[test]
    fn a_shared_value_is_serialized_only_when_its_bytes_are_asked_for() {
        let pool = PayloadPool::new();
        let v = text(1);
        let p = shared(&pool, &v);
        let want =
            tachyon_cdr::serialize_to_vec(&v, XcdrVersion::Xcdr2, tachyon_cdr::Endianness::Little)
                .expect("serialize");
        assert_eq!(p.len(), want.len(), "the size, not serializing");
        assert!(!p.is_empty());
        assert_eq!(pool.late_serializations(), 0);
        let held = p
            .shared_sample()
            .and_then(|s| s.as_any().downcast_ref::<Text>());
        assert_eq!(held, Some(&v));
        assert_eq!(p.as_bytes(), &want[..]);
        assert_eq!(p.as_bytes(), &want[..]);
        assert_eq!(pool.late_serializations(), 1, "once");
        // Held elsewhere: not moved out.
        let q = p.clone();
        let Err(p) = p.into_shared_sample() else {
            panic!("moved out while another payload held it");
        };
        drop(q);
        // Alone: moved out.
        let moved = p
            .into_shared_sample()
            .ok()
            .map(|b| b.as_any().downcast_ref::<Text>().cloned());
        assert_eq!(moved, Some(Some(v)));
    }

    #[test]
    fn a_recycled_payload_keeps_its_value_to_overwrite() {
        let pool = PayloadPool::new();
        let p = shared(&pool, &text(1));
        let at = p
            .shared_sample()
            .map(|s| s as *const dyn SharedSample as *const u8);
        drop(p);
        assert_eq!(pool.free_buffers(), 1);
        let p = shared(&pool, &text(2));
        let again = p
            .shared_sample()
            .map(|s| s as *const dyn SharedSample as *const u8);
        assert_eq!(at, again, "the same box, overwritten");
        assert_eq!(
            p.shared_sample()
                .and_then(|s| s.as_any().downcast_ref::<Text>()),
            Some(&text(2))
        );
        drop(p);
        // Serialized payloads from the same pool hold no value.
        let b = pool.copy_from_slice(&[1, 2, 3]);
        assert!(b.shared_sample().is_none());
        assert_eq!((b.len(), b.as_bytes()), (3, &[1u8, 2, 3][..]));
    }

    #[test]
    fn large_buffers_are_kept_up_to_a_byte_budget() {
        let pool = PayloadPool::new();
        let size = 2 << 20;
        let many: Vec<Payload> = (0..20).map(|_| pool.alloc(size).freeze()).collect();
        drop(many);
        assert_eq!(
            pool.free_buffers(),
            POOL_MAX_BYTES / (size + std::mem::size_of::<Inner>()),
            "within the budget (the holders counted)"
        );
        // Reused: the same buffer, not zeroed again (it keeps what it held).
        let mut m = pool.alloc(size);
        m.as_mut_slice()[0] = 9;
        drop(m.freeze());
        assert_eq!(pool.alloc(size).as_mut_slice()[0], 9);
    }

    #[test]
    fn fill_cuts_to_what_was_written_and_recycles_on_failure() {
        let pool = PayloadPool::new();
        let p = pool.fill(8, |b| {
            assert_eq!(b.len(), 8, "the length asked for");
            b[..3].copy_from_slice(&[7, 8, 9]);
            Ok::<_, ()>(3)
        });
        let p = p.expect("written");
        assert_eq!(p.as_bytes(), &[7u8, 8, 9][..]);
        drop(p);
        assert_eq!(pool.free_buffers(), 1);
        // A failed write returns its error, and its buffer (the same one) to the pool.
        assert_eq!(
            pool.fill(4, |_| Err::<usize, _>("bad sample")).err(),
            Some("bad sample")
        );
        assert_eq!(pool.free_buffers(), 1);
        let again = pool.fill(2, |b| Ok::<_, ()>(b.len())).expect("written");
        assert_eq!(again.len(), 2);
    }
}
