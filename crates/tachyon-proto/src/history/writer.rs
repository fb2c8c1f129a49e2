//! [`WriterHistory`]: the DataWriter's HistoryCache — sequence numbers, KEEP_LAST replacement,
//! KEEP_ALL flow control, instances, acknowledgement release, lifespan and GAP information.

use crate::maps::HashMap;
use std::collections::{BTreeSet, VecDeque};

use tachyon_cdr::KeyHash;
use tachyon_wire::{SequenceNumber, Time};

use super::coherent::Coherence;
use super::payload::Payload;
use super::qos::{at_limit, validate, Durability, History, QosError, ResourceLimits};
use crate::time::Instant;

/// What a change says about its instance (RTPS ChangeKind, carried as PID_STATUS_INFO).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChangeKind {
    /// New data for the instance.
    Alive,
    /// The instance was disposed.
    NotAliveDisposed,
    /// The writer unregistered the instance.
    NotAliveUnregistered,
    /// The writer disposed and unregistered the instance in one change.
    NotAliveDisposedUnregistered,
}

impl ChangeKind {
    /// Whether the change ends the writer's registration of the instance.
    pub fn unregisters(self) -> bool {
        matches!(
            self,
            ChangeKind::NotAliveUnregistered | ChangeKind::NotAliveDisposedUnregistered
        )
    }
}

/// Configuration of a [`WriterHistory`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriterHistoryConfig {
    /// HISTORY QoS.
    pub history: History,
    /// RESOURCE_LIMITS QoS.
    pub limits: ResourceLimits,
    /// DURABILITY: whether acknowledged samples are kept for late joiners.
    pub durability: Durability,
}

/// A change the writer asks the cache to add; the cache assigns its sequence number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewChange {
    /// What the change does to its instance.
    pub kind: ChangeKind,
    /// Instance handle (all-zero for unkeyed topics).
    pub instance: KeyHash,
    /// Source timestamp sent with the change.
    pub source_timestamp: Time,
    /// When LIFESPAN expires the change, `None` for never.
    pub expiry: Option<Instant>,
    /// Serialized data for [`ChangeKind::Alive`], the serialized key (possibly empty) otherwise.
    pub payload: Payload,
    /// Coherent-set membership (`None`: outside any set). An end marker belongs to no
    /// instance: KEEP_LAST, instance limits and registration ignore it.
    pub coherent: Option<Coherence>,
}

impl NewChange {
    /// The change as the cache holds it, under sequence number `sn`.
    fn numbered(self, sn: SequenceNumber) -> CacheChange {
        CacheChange {
            sn,
            kind: self.kind,
            instance: self.instance,
            source_timestamp: self.source_timestamp,
            expiry: self.expiry,
            payload: self.payload,
            coherent: self.coherent,
        }
    }
}

/// A change held by the cache.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheChange {
    /// Sequence number assigned by the cache.
    pub sn: SequenceNumber,
    /// What the change does to its instance.
    pub kind: ChangeKind,
    /// Instance handle.
    pub instance: KeyHash,
    /// Source timestamp.
    pub source_timestamp: Time,
    /// LIFESPAN expiry.
    pub expiry: Option<Instant>,
    /// Data or key-only payload, as [`NewChange::payload`].
    pub payload: Payload,
    /// Coherent-set membership, as [`NewChange::coherent`].
    pub coherent: Option<Coherence>,
}

impl CacheChange {
    /// Whether this is a coherent set's end marker (no instance, no payload).
    pub fn is_coherent_end(&self) -> bool {
        self.coherent.is_some_and(|c| c.is_end())
    }
}

/// What [`WriterHistory::add_change`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddOutcome {
    /// Sequence number given to the new change.
    pub sn: SequenceNumber,
    /// A change dropped to make room (KEEP_LAST replacement or an acknowledged transient-local
    /// change evicted): readers that lack it must get a GAP for it.
    pub replaced: Option<SequenceNumber>,
}

/// Which limit a full cache hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// `max_samples`.
    Samples,
    /// `max_instances`.
    Instances,
    /// `max_samples_per_instance`.
    SamplesPerInstance,
    /// The writer's flow control: too many octets not acknowledged yet.
    UnacknowledgedBytes,
}

/// Why a writer's cache refused a change or command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteError {
    /// The cache is full until readers acknowledge (or instances are unregistered); the writer
    /// blocks up to `max_blocking_time` and retries, then reports TIMEOUT / OUT_OF_RESOURCES.
    WouldBlock {
        /// The limit that was hit.
        limit: Limit,
    },
    /// Unregistering an instance the writer has not registered (DDS: PRECONDITION_NOT_MET).
    NotRegistered,
    /// All 2^63 sequence numbers are used up.
    SequenceNumbersExhausted,
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::WouldBlock { limit } => write!(f, "history full ({limit:?} limit)"),
            WriteError::NotRegistered => f.write_str("instance not registered"),
            WriteError::SequenceNumbersExhausted => f.write_str("sequence numbers exhausted"),
        }
    }
}

impl std::error::Error for WriteError {}

/// Per-instance bookkeeping of the writer.
#[derive(Debug, Default)]
struct WriterInstance {
    registered: bool,
    /// Sequence numbers of this instance's changes in the cache, ascending.
    sns: VecDeque<SequenceNumber>,
}

/// The writer's HistoryCache.
///
/// Sans-IO like the rest of the crate: time is an argument. Methods, in the crate's order:
/// - **commands**: [`add_change`](Self::add_change), [`register_instance`](Self::register_instance),
///   [`remove_acknowledged`](Self::remove_acknowledged), [`expire`](Self::expire);
/// - **outputs**: [`next_expiry`](Self::next_expiry);
/// - **getters**: [`get`](Self::get), [`iter_from`](Self::iter_from), [`missing`](Self::missing),
///   [`min_sn`](Self::min_sn), [`max_sn`](Self::max_sn), [`last_sn`](Self::last_sn), … .
///
/// Payloads are held by reference count, never copied. Every change of an instance counts
/// toward its KEEP_LAST depth, dispose and unregister included (as in Cyclone DDS).
///
/// Changes are kept in a deque sorted by sequence number: adding is a push at the back,
/// acknowledgement releases from the front, lookups are binary searches, and after warm-up
/// nothing allocates (a lifespan adds an ordered set of expiry times, which does).
#[derive(Debug)]
pub struct WriterHistory {
    config: WriterHistoryConfig,
    changes: VecDeque<CacheChange>,
    instances: HashMap<KeyHash, WriterInstance>,
    expiries: BTreeSet<(Instant, SequenceNumber)>,
    last_sn: SequenceNumber,
    acked: SequenceNumber,
    scratch: Vec<SequenceNumber>,
    /// Payload octets held.
    bytes: usize,
}

impl WriterHistory {
    /// An empty cache, or the reason `config` is inconsistent.
    pub fn new(config: WriterHistoryConfig) -> Result<WriterHistory, QosError> {
        validate(config.history, &config.limits)?;
        Ok(WriterHistory {
            config,
            changes: VecDeque::new(),
            instances: HashMap::default(),
            expiries: BTreeSet::new(),
            last_sn: SequenceNumber::ZERO,
            acked: SequenceNumber::ZERO,
            scratch: Vec::new(),
            bytes: 0,
        })
    }

    /// Adds a change under the next sequence number, replacing per KEEP_LAST or refusing per
    /// KEEP_ALL and RESOURCE_LIMITS. Nothing changes when an error is returned.
    pub fn add_change(&mut self, change: NewChange) -> Result<AddOutcome, WriteError> {
        if change.coherent.is_some_and(|c| c.is_end()) {
            return self.add_marker(change);
        }
        let (sn, known) = self.admit(&change)?;
        let victim = self.victim_for(known)?;

        // The victim is usually the instance's own oldest (KEEP_LAST): it leaves the
        // instance's list below, in the one look-up of the instance.
        let mut own_victim = None;
        if let Some(removed) = victim.and_then(|v| self.take_change(v)) {
            match removed.instance == change.instance && !removed.is_coherent_end() {
                true => own_victim = Some(removed.sn),
                false => self.forget_in_instance(&removed),
            }
        }
        self.last_sn = sn;
        let inst = self.instances.entry(change.instance).or_default();
        if let Some(v) = own_victim {
            remove_sn(&mut inst.sns, v);
        }
        inst.registered = !change.kind.unregisters();
        inst.sns.push_back(sn);
        if let Some(at) = change.expiry {
            self.expiries.insert((at, sn));
        }
        self.bytes += change.payload.len();
        self.changes.push_back(change.numbered(sn));
        Ok(AddOutcome {
            sn,
            replaced: victim,
        })
    }

    /// The checks every new change of an instance passes (a registration to end, the
    /// instance limit), and the sequence number it gets; with the instance, if known.
    fn admit(
        &self,
        change: &NewChange,
    ) -> Result<(SequenceNumber, Option<&WriterInstance>), WriteError> {
        let known = self.instances.get(&change.instance);
        if change.kind.unregisters() && !known.is_some_and(|i| i.registered) {
            return Err(WriteError::NotRegistered);
        }
        if known.is_none() && at_limit(self.instances.len(), self.config.limits.max_instances) {
            return Err(WriteError::WouldBlock {
                limit: Limit::Instances,
            });
        }
        let sn = self
            .last_sn
            .0
            .checked_add(1)
            .map(SequenceNumber)
            .ok_or(WriteError::SequenceNumbersExhausted)?;
        Ok((sn, known))
    }

    /// Numbers a change and applies it to its instance as [`add_change`](Self::add_change)
    /// does (registration, `max_instances`), without holding it: for a writer nobody could
    /// ask again (volatile, every reader served at once). Returns the change as it would be
    /// held. Not for a coherent set's end marker.
    pub fn add_unheld(&mut self, change: NewChange) -> Result<CacheChange, WriteError> {
        let (sn, _) = self.admit(&change)?;
        self.last_sn = sn;
        let registered = !change.kind.unregisters();
        let inst = self.instances.entry(change.instance).or_default();
        inst.registered = registered;
        if !registered && inst.sns.is_empty() {
            // As a held change's release would forget it.
            self.instances.remove(&change.instance);
        }
        Ok(change.numbered(sn))
    }

    /// Adds a coherent set's end marker: it takes a sequence number but belongs to no
    /// instance, never expires and replaces nothing.
    fn add_marker(&mut self, change: NewChange) -> Result<AddOutcome, WriteError> {
        let sn = self
            .last_sn
            .0
            .checked_add(1)
            .map(SequenceNumber)
            .ok_or(WriteError::SequenceNumbersExhausted)?;
        self.last_sn = sn;
        self.changes.push_back(CacheChange {
            sn,
            kind: change.kind,
            instance: change.instance,
            source_timestamp: change.source_timestamp,
            expiry: None,
            payload: Payload::default(),
            coherent: change.coherent,
        });
        Ok(AddOutcome { sn, replaced: None })
    }

    /// Registers `instance` without adding a change (DDS `register_instance`); returns its handle.
    pub fn register_instance(&mut self, instance: KeyHash) -> Result<KeyHash, WriteError> {
        if !self.instances.contains_key(&instance)
            && at_limit(self.instances.len(), self.config.limits.max_instances)
        {
            return Err(WriteError::WouldBlock {
                limit: Limit::Instances,
            });
        }
        self.instances.entry(instance).or_default().registered = true;
        Ok(instance)
    }

    /// Records that every matched reliable reader acknowledged all changes up to `up_to`.
    ///
    /// A volatile cache drops them; a transient-local one keeps them for late joiners, except
    /// those of unregistered instances, and may evict them when full. Returns how many changes
    /// were dropped.
    pub fn remove_acknowledged(&mut self, up_to: SequenceNumber) -> usize {
        self.acked = self.acked.max(up_to);
        if self.config.durability == Durability::Volatile {
            return self.release_front(up_to);
        }
        let mut victims = std::mem::take(&mut self.scratch);
        victims.clear();
        victims.extend(
            self.changes
                .iter()
                .take_while(|c| c.sn <= up_to)
                .filter(|c| {
                    !c.is_coherent_end()
                        && !self
                            .instances
                            .get(&c.instance)
                            .is_some_and(|i| i.registered)
                })
                .map(|c| c.sn),
        );
        for &sn in &victims {
            self.remove_change(sn);
        }
        let mut n = victims.len();
        // A transient-local end marker stays while a sample of its set does, so late
        // joiners see the set end.
        victims.clear();
        victims.extend(
            self.changes
                .iter()
                .take_while(|c| c.sn <= up_to)
                .filter(|c| match c.coherent {
                    Some(Coherence::End { set, .. }) => !set.is_some_and(|first| {
                        self.iter_from(first)
                            .next()
                            .is_some_and(|m| m.sn < c.sn && !m.is_coherent_end())
                    }),
                    _ => false,
                })
                .map(|c| c.sn),
        );
        for &sn in &victims {
            self.remove_change(sn);
        }
        n += victims.len();
        self.scratch = victims;
        n
    }

    /// A volatile cache's release: every change up to `up_to` goes, and those are the
    /// oldest, so each leaves from the front of the cache and, usually, of its instance's
    /// list (no search, no scratch list).
    fn release_front(&mut self, up_to: SequenceNumber) -> usize {
        let mut n = 0;
        while self.changes.front().is_some_and(|c| c.sn <= up_to) {
            let Some(change) = self.changes.pop_front() else {
                break;
            };
            n += 1;
            self.bytes -= change.payload.len();
            if let Some(at) = change.expiry {
                self.expiries.remove(&(at, change.sn));
            }
            self.forget_in_instance(&change);
        }
        n
    }

    /// Drops the changes whose LIFESPAN expired at `now`, appending their sequence numbers to
    /// `removed` (the writer GAPs them).
    pub fn expire(&mut self, now: Instant, removed: &mut Vec<SequenceNumber>) {
        while let Some(&(at, sn)) = self.expiries.first() {
            if at > now {
                break;
            }
            self.remove_change(sn);
            removed.push(sn);
        }
    }

    /// When the next change expires, for the writer's timer.
    pub fn next_expiry(&self) -> Option<Instant> {
        self.expiries.first().map(|&(at, _)| at)
    }

    /// The change with sequence number `sn`, if still held (for retransmission).
    pub fn get(&self, sn: SequenceNumber) -> Option<&CacheChange> {
        let i = self.position(sn).ok()?;
        self.changes.get(i)
    }

    /// Held changes from `sn` on, in sequence order.
    pub fn iter_from(&self, sn: SequenceNumber) -> impl Iterator<Item = &CacheChange> + '_ {
        let start = self.position(sn).unwrap_or_else(|i| i);
        self.changes.range(start..)
    }

    /// Where change `sn` is in the cache (`Ok`), or where it would go (`Err`). Sequence
    /// numbers ascend; where none between the oldest held and `sn` was removed (a KEEP_ALL
    /// history, whose changes leave from the front as they are acknowledged), `sn` sits at its
    /// distance from the oldest, and is found there without a search. A binary search
    /// otherwise: on a history of 60,000 small samples in flight, its cache misses were 5 % of
    /// a writer's CPU (`perf record` of `tachyon perf pub`, 32 B, finding the next to send).
    fn position(&self, sn: SequenceNumber) -> Result<usize, usize> {
        let Some(first) = self.changes.front() else {
            return Err(0);
        };
        if sn <= first.sn {
            return if sn == first.sn { Ok(0) } else { Err(0) };
        }
        if let Some(at) =
            sn.0.checked_sub(first.sn.0)
                .and_then(|d| usize::try_from(d).ok())
        {
            match self.changes.get(at) {
                Some(c) if c.sn == sn => return Ok(at),
                None if self.changes.back().is_some_and(|c| c.sn < sn) => {
                    return Err(self.changes.len())
                }
                _ => {}
            }
        }
        self.changes.binary_search_by_key(&sn, |c| c.sn)
    }

    /// Every held change in sequence order: what a transient-local late joiner receives.
    pub fn iter(&self) -> impl Iterator<Item = &CacheChange> + '_ {
        self.changes.iter()
    }

    /// Runs of sequence numbers in `first..=last` (clamped to those assigned so far) that are no
    /// longer held, as inclusive `(start, end)` pairs ascending: what the writer must GAP.
    pub fn missing(
        &self,
        first: SequenceNumber,
        last: SequenceNumber,
    ) -> impl Iterator<Item = (SequenceNumber, SequenceNumber)> + '_ {
        let first = first.max(SequenceNumber(1));
        let last = last.min(self.last_sn);
        let mut next = first;
        let mut held = (first <= last)
            .then(|| {
                self.iter_from(first)
                    .take_while(move |c| c.sn <= last)
                    .map(|c| c.sn)
            })
            .into_iter()
            .flatten();
        let mut done = first > last;
        std::iter::from_fn(move || loop {
            if done {
                return None;
            }
            match held.next() {
                Some(sn) if sn == next => next = SequenceNumber(sn.0 + 1),
                Some(sn) => {
                    let run = (next, SequenceNumber(sn.0 - 1));
                    next = SequenceNumber(sn.0 + 1);
                    return Some(run);
                }
                None => {
                    done = true;
                    return (next <= last).then_some((next, last));
                }
            }
        })
    }

    /// The oldest held sequence number (HEARTBEAT firstSN is this, or `last_sn + 1` if empty).
    pub fn min_sn(&self) -> Option<SequenceNumber> {
        self.changes.front().map(|c| c.sn)
    }

    /// The newest held sequence number.
    pub fn max_sn(&self) -> Option<SequenceNumber> {
        self.changes.back().map(|c| c.sn)
    }

    /// The last sequence number assigned (HEARTBEAT lastSN), zero before the first change.
    pub fn last_sn(&self) -> SequenceNumber {
        self.last_sn
    }

    /// The highest sequence number reported acknowledged by all readers.
    pub fn acknowledged(&self) -> SequenceNumber {
        self.acked
    }

    /// Payload octets of the held changes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Number of held changes.
    pub fn len(&self) -> usize {
        self.changes.len()
    }

    /// Whether no change is held.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// Number of instances known (registered, or with changes still held).
    pub fn instance_count(&self) -> usize {
        self.instances.len()
    }

    /// The handle of a known instance with this key hash (DDS `lookup_instance`).
    pub fn lookup_instance(&self, key: &KeyHash) -> Option<KeyHash> {
        self.instances.contains_key(key).then_some(*key)
    }

    /// Whether the writer has `instance` registered.
    pub fn is_registered(&self, instance: &KeyHash) -> bool {
        self.instances.get(instance).is_some_and(|i| i.registered)
    }

    /// The instances the writer has registered and not unregistered (in no particular order).
    pub fn registered_instances(&self) -> impl Iterator<Item = &KeyHash> + '_ {
        self.instances
            .iter()
            .filter(|(_, i)| i.registered)
            .map(|(k, _)| k)
    }

    /// Number of changes held for `instance`.
    pub fn instance_len(&self, instance: &KeyHash) -> usize {
        self.instances.get(instance).map_or(0, |i| i.sns.len())
    }

    /// The configuration the cache was built with.
    pub fn config(&self) -> &WriterHistoryConfig {
        &self.config
    }

    /// The change to drop so that one more fits for `instance`, or why none may be dropped.
    fn victim_for(
        &self,
        instance: Option<&WriterInstance>,
    ) -> Result<Option<SequenceNumber>, WriteError> {
        let in_instance = instance.map_or(0, |i| i.sns.len());
        let oldest_of_instance = instance.and_then(|i| i.sns.front());
        let limits = &self.config.limits;
        if let History::KeepLast(depth) = self.config.history {
            if in_instance >= depth {
                return Ok(oldest_of_instance.copied());
            }
        }
        if at_limit(in_instance, limits.max_samples_per_instance) {
            return match oldest_of_instance {
                Some(&sn) if sn <= self.acked => Ok(Some(sn)),
                _ => Err(WriteError::WouldBlock {
                    limit: Limit::SamplesPerInstance,
                }),
            };
        }
        if at_limit(self.changes.len(), limits.max_samples) {
            return match self.min_sn() {
                Some(sn) if sn <= self.acked => Ok(Some(sn)),
                _ => Err(WriteError::WouldBlock {
                    limit: Limit::Samples,
                }),
            };
        }
        Ok(None)
    }

    /// Drops change `sn` from every index; forgets its instance if unregistered and now empty.
    fn remove_change(&mut self, sn: SequenceNumber) -> Option<CacheChange> {
        let change = self.take_change(sn)?;
        self.forget_in_instance(&change);
        Some(change)
    }

    /// Takes change `sn` out of the cache (the oldest without a search), its octets and its
    /// expiry; its instance still lists it.
    fn take_change(&mut self, sn: SequenceNumber) -> Option<CacheChange> {
        let change = match self.changes.front() {
            Some(c) if c.sn == sn => self.changes.pop_front()?,
            _ => {
                let i = self.position(sn).ok()?;
                self.changes.remove(i)?
            }
        };
        self.bytes -= change.payload.len();
        if let Some(at) = change.expiry {
            self.expiries.remove(&(at, sn));
        }
        Some(change)
    }

    /// A change taken out ([`take_change`](Self::take_change)) leaves its instance's list;
    /// the instance is forgotten if unregistered and now empty.
    #[inline]
    fn forget_in_instance(&mut self, change: &CacheChange) {
        if change.is_coherent_end() {
            return;
        }
        if let Some(inst) = self.instances.get_mut(&change.instance) {
            remove_sn(&mut inst.sns, change.sn);
            if !inst.registered && inst.sns.is_empty() {
                self.instances.remove(&change.instance);
            }
        }
    }
}

/// Removes `sn` from an instance's ascending list (usually its first).
#[inline]
fn remove_sn(sns: &mut VecDeque<SequenceNumber>, sn: SequenceNumber) {
    match sns.front() {
        Some(&first) if first == sn => {
            sns.pop_front();
        }
        _ => {
            if let Some(pos) = sns.iter().position(|&s| s == sn) {
                sns.remove(pos);
            }
        }
    }
}
