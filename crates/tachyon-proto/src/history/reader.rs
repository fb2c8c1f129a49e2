//! [`ReaderHistory`]: the DataReader's cache — instances, KEEP_LAST / KEEP_ALL with
//! RESOURCE_LIMITS, instance lifecycle, `read`/`take` with state masks and ranks, autopurge.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

use tachyon_cdr::KeyHash;
use tachyon_wire::{Guid, Time};

use super::instance::{ReaderInstance, StoredSample};
use super::payload::Payload;
use super::qos::{at_limit, validate, History, QosError, ReaderDataLifecycle, ResourceLimits};
use super::sample_info::{
    InstanceState, InstanceStateMask, Sample, SampleInfo, SampleState, SampleStateMask, ViewState,
    ViewStateMask,
};
use crate::time::Instant;

/// Up to this many instances in [`ReaderHistory`]'s `pending` set, an emptied instance stays in
/// it (a take finds it empty at the cost of one look-up) instead of leaving and re-entering.
const SMALL_PENDING: usize = 8;

/// Configuration of a [`ReaderHistory`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReaderHistoryConfig {
    /// HISTORY QoS.
    pub history: History,
    /// RESOURCE_LIMITS QoS.
    pub limits: ResourceLimits,
    /// READER_DATA_LIFECYCLE QoS.
    pub lifecycle: ReaderDataLifecycle,
}

/// SampleRejectedStatusKind: why a sample was not stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RejectReason {
    /// REJECTED_BY_SAMPLES_LIMIT.
    SamplesLimit,
    /// REJECTED_BY_INSTANCES_LIMIT.
    InstancesLimit,
    /// REJECTED_BY_SAMPLES_PER_INSTANCE_LIMIT.
    SamplesPerInstanceLimit,
}

/// A sample the reader could not store (for SAMPLE_REJECTED; a reliable reader must not
/// acknowledge it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rejected {
    /// Which limit refused it.
    pub reason: RejectReason,
    /// The instance it was for (`last_instance_handle` of the status).
    pub instance: KeyHash,
}

impl std::fmt::Display for Rejected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "sample for {} rejected: {:?}",
            self.instance, self.reason
        )
    }
}

impl std::error::Error for Rejected {}

/// Why a `read`/`take` could not run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadError {
    /// `read_instance`/`take_instance` on a handle the reader does not know (BAD_PARAMETER).
    UnknownInstance,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("unknown instance handle")
    }
}

impl std::error::Error for ReadError {}

/// Which instances a [`Query`] looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum InstanceSelector {
    /// All instances, in handle order.
    #[default]
    Any,
    /// Only this instance (`read_instance`).
    Instance(KeyHash),
    /// The first instance after this handle (`None`: from the start) that has matching
    /// samples (`read_next_instance`).
    NextAfter(Option<KeyHash>),
}

/// The arguments of `read`/`take`: how many samples, in which states, of which instances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Query {
    /// Most samples to return (LENGTH_UNLIMITED is `usize::MAX`).
    pub max_samples: usize,
    /// Sample states to return.
    pub sample_states: SampleStateMask,
    /// View states to return.
    pub view_states: ViewStateMask,
    /// Instance states to return.
    pub instance_states: InstanceStateMask,
    /// Instance restriction.
    pub instance: InstanceSelector,
}

impl Default for Query {
    fn default() -> Query {
        Query::ANY
    }
}

impl Query {
    /// Every sample of every instance.
    pub const ANY: Query = Query {
        max_samples: usize::MAX,
        sample_states: SampleStateMask::ANY,
        view_states: ViewStateMask::ANY,
        instance_states: InstanceStateMask::ANY,
        instance: InstanceSelector::Any,
    };

    /// This query limited to `n` samples.
    pub fn max_samples(self, n: usize) -> Query {
        Query {
            max_samples: n,
            ..self
        }
    }

    /// This query restricted to the given states.
    pub fn states(self, s: SampleStateMask, v: ViewStateMask, i: InstanceStateMask) -> Query {
        Query {
            sample_states: s,
            view_states: v,
            instance_states: i,
            ..self
        }
    }

    /// This query restricted to instances as `selector` says.
    pub fn instances(self, selector: InstanceSelector) -> Query {
        Query {
            instance: selector,
            ..self
        }
    }

    /// This query restricted to samples in these sample states.
    pub fn sample_states(self, mask: SampleStateMask) -> Query {
        Query {
            sample_states: mask,
            ..self
        }
    }

    /// This query restricted to instances in these view states.
    pub fn view_states(self, mask: ViewStateMask) -> Query {
        Query {
            view_states: mask,
            ..self
        }
    }

    /// This query restricted to instances in these instance states.
    pub fn instance_states(self, mask: InstanceStateMask) -> Query {
        Query {
            instance_states: mask,
            ..self
        }
    }
}

/// The DataReader's cache.
///
/// Methods, in the crate's order:
/// - **inputs** (from the reader's writer proxies): [`insert_sample`](Self::insert_sample),
///   [`dispose`](Self::dispose), [`unregister`](Self::unregister),
///   [`writer_lost`](Self::writer_lost), [`purge`](Self::purge);
/// - **commands**: [`read`](Self::read), [`take`](Self::take) and their instance variants;
/// - **outputs**: [`next_purge`](Self::next_purge);
/// - **getters**: [`len`](Self::len), [`instance_count`](Self::instance_count), … .
///
/// Instances are kept in handle (key hash) order, which is the order of `read_next_instance`
/// and of every returned collection; within an instance samples are in reception order, the
/// invalid-data sample (if any) last. With KEEP_LAST and a bounded `max_instances`, memory is
/// bounded whatever arrives: each instance holds at most `depth` samples plus one invalid one.
#[derive(Debug)]
pub struct ReaderHistory {
    config: ReaderHistoryConfig,
    instances: BTreeMap<KeyHash, ReaderInstance>,
    /// Valid samples over all instances (what `max_samples` bounds).
    sample_count: usize,
    /// The earliest LIFESPAN expiry of a held sample (`None`: none expires).
    next_expiry: Option<Instant>,
    /// PRESENTATION ordered access with scope TOPIC or GROUP: `read`/`take` of all
    /// instances return samples in reception order instead of instance by instance.
    ordered: bool,
    /// Forget an instance as soon as a take empties it, whoever still writes it: for readers
    /// whose application keeps its own state per instance (discovery's builtin readers), so
    /// the cache holds only what is waiting to be taken.
    forget_taken: bool,
    /// The reception number of the last sample stored.
    last_seq: u64,
    /// Instances that may hold a sample (valid or invalid): every instance that holds one is
    /// here, an emptied one leaves at the next read or take that visits it (unless the set
    /// holds no more than [`SMALL_PENDING`]: then a take walking the few empty ones costs less
    /// than their leaving and coming back with the next sample, as in a ping-pong). Reads and
    /// takes of all instances walk this set, not every instance known (Cyclone DDS keeps such
    /// a list too), so a take costs what it returns, not what the reader has ever seen.
    pending: BTreeSet<KeyHash>,
    /// Handles a read or take found empty (reused, so steady-state takes do not allocate).
    emptied: Vec<KeyHash>,
}

impl ReaderHistory {
    /// An empty cache, or the reason `config` is inconsistent.
    pub fn new(config: ReaderHistoryConfig) -> Result<ReaderHistory, QosError> {
        validate(config.history, &config.limits)?;
        Ok(ReaderHistory {
            config,
            instances: BTreeMap::new(),
            sample_count: 0,
            next_expiry: None,
            ordered: false,
            forget_taken: false,
            last_seq: 0,
            pending: BTreeSet::new(),
            emptied: Vec::new(),
        })
    }

    /// Orders `read`/`take` of all instances by reception across instances (PRESENTATION
    /// `ordered_access` with access scope TOPIC or GROUP); otherwise (the default) they
    /// return instance by instance, in handle order.
    pub fn set_ordered(&mut self, ordered: bool) {
        self.ordered = ordered;
    }

    /// Whether `read`/`take` of all instances return samples in reception order.
    pub fn is_ordered(&self) -> bool {
        self.ordered
    }

    /// Forgets each instance as soon as a take empties it, even while writers still write it
    /// (its state and generation counts start afresh with its next sample). For a reader
    /// whose application keeps its own state per instance, as discovery does with its builtin
    /// readers: memory then grows with what waits to be taken, not with every key ever seen.
    pub fn set_forget_taken(&mut self, forget: bool) {
        self.forget_taken = forget;
    }

    /// Whether an instance a take just visited can be dropped.
    fn forgettable(&self, inst: &ReaderInstance) -> bool {
        forgettable(self.forget_taken, inst)
    }

    /// Numbers an invalid-data sample a state change just created.
    fn number_state_change(&mut self, instance: &KeyHash) {
        let seq = self.last_seq + 1;
        let Some(inst) = self.instances.get_mut(instance) else {
            return;
        };
        let numbered = inst
            .invalid
            .as_mut()
            .filter(|s| s.seq == 0)
            .map(|s| s.seq = seq)
            .is_some();
        if numbered {
            self.last_seq = seq;
            mark_pending(&mut self.pending, *instance, inst);
        }
    }

    /// Stores a valid sample from `writer`, or says which limit refused it (nothing changes
    /// then). KEEP_LAST drops the instance's oldest sample when it holds `depth`.
    pub fn insert_sample(
        &mut self,
        now: Instant,
        writer: Guid,
        instance: KeyHash,
        source_timestamp: Time,
        payload: Payload,
    ) -> Result<(), Rejected> {
        self.insert_expiring(now, writer, instance, source_timestamp, payload, None)
    }

    /// [`insert_sample`](Self::insert_sample) for a sample that LIFESPAN removes at
    /// `expiry` ([`expire`](Self::expire)) if the application has not taken it by then.
    pub fn insert_expiring(
        &mut self,
        now: Instant,
        writer: Guid,
        instance: KeyHash,
        source_timestamp: Time,
        payload: Payload,
        expiry: Option<Instant>,
    ) -> Result<(), Rejected> {
        let reject = |reason| Rejected { reason, instance };
        let limits = self.config.limits;
        let (history, sample_count) = (self.config.history, self.sample_count);
        // Whether the sample replaces the instance's oldest, or which limit refuses it.
        let room = |held: usize| {
            let replace = match history {
                History::KeepLast(depth) => held >= depth,
                History::KeepAll if at_limit(held, limits.max_samples_per_instance) => {
                    return Err(reject(RejectReason::SamplesPerInstanceLimit))
                }
                History::KeepAll => false,
            };
            if !replace && at_limit(sample_count, limits.max_samples) {
                return Err(reject(RejectReason::SamplesLimit));
            }
            Ok(replace)
        };
        // One look-up of the instance: nothing is inserted when the sample is refused.
        let instances = self.instances.len();
        let (inst, replace) = match self.instances.entry(instance) {
            Entry::Occupied(o) => {
                let replace = room(o.get().samples.len())?;
                (o.into_mut(), replace)
            }
            Entry::Vacant(_) if at_limit(instances, limits.max_instances) => {
                return Err(reject(RejectReason::InstancesLimit))
            }
            Entry::Vacant(v) => {
                let replace = room(0)?;
                (v.insert(ReaderInstance::new(now)), replace)
            }
        };
        if replace && inst.samples.pop_front().is_some() {
            self.sample_count -= 1;
        }
        self.last_seq += 1;
        let seq = self.last_seq;
        inst.on_data(writer);
        inst.samples.push_back(StoredSample {
            sample_state: SampleState::NotRead,
            source_timestamp,
            writer,
            reception_time: now,
            disposed_generation_count: inst.disposed_generation_count,
            no_writers_generation_count: inst.no_writers_generation_count,
            payload: Some(payload),
            expiry,
            seq,
        });
        mark_pending(&mut self.pending, instance, inst);
        self.sample_count += 1;
        if let Some(at) = expiry {
            self.next_expiry = Some(self.next_expiry.map_or(at, |n| n.min(at)));
        }
        Ok(())
    }

    /// Removes the samples whose LIFESPAN ended by `now`; returns how many.
    pub fn expire(&mut self, now: Instant) -> usize {
        if self.next_expiry.map_or(true, |at| at > now) {
            return 0;
        }
        let mut removed = 0;
        let mut next: Option<Instant> = None;
        self.instances.retain(|_, inst| {
            let before = inst.samples.len();
            inst.samples
                .retain(|s| s.expiry.map_or(true, |at| at > now));
            removed += before - inst.samples.len();
            for at in inst.samples.iter().filter_map(|s| s.expiry) {
                next = Some(next.map_or(at, |n| n.min(at)));
            }
            !inst.is_unused()
        });
        self.sample_count -= removed;
        self.next_expiry = next;
        removed
    }

    /// When [`expire`](Self::expire) next has work, for the reader's timer.
    pub fn next_expiry(&self) -> Option<Instant> {
        self.next_expiry
    }

    /// `writer` disposed `instance`. An unknown instance is created (disposed) so the
    /// application learns of it, unless `max_instances` refuses.
    pub fn dispose(
        &mut self,
        now: Instant,
        writer: Guid,
        instance: KeyHash,
        source_timestamp: Time,
    ) -> Result<(), Rejected> {
        if !self.instances.contains_key(&instance)
            && at_limit(self.instances.len(), self.config.limits.max_instances)
        {
            return Err(Rejected {
                reason: RejectReason::InstancesLimit,
                instance,
            });
        }
        self.instances
            .entry(instance)
            .or_insert_with(|| ReaderInstance::new(now))
            .on_dispose(now, writer, source_timestamp);
        self.number_state_change(&instance);
        Ok(())
    }

    /// `writer` unregistered `instance`; unknown instances are ignored.
    pub fn unregister(&mut self, now: Instant, writer: Guid, instance: KeyHash, ts: Time) {
        if let Some(inst) = self.instances.get_mut(&instance) {
            inst.on_writer_gone(now, writer, ts);
            if inst.is_unused() {
                self.instances.remove(&instance);
            }
        }
        self.number_state_change(&instance);
    }

    /// `writer` lost liveliness or was unmatched: every instance it wrote and nobody else
    /// writes becomes NOT_ALIVE_NO_WRITERS (its invalid sample has source timestamp INVALID).
    pub fn writer_lost(&mut self, now: Instant, writer: Guid) {
        let mut seq = self.last_seq;
        let pending = &mut self.pending;
        self.instances.retain(|handle, inst| {
            inst.on_writer_gone(now, writer, Time::INVALID);
            if let Some(s) = inst.invalid.as_mut().filter(|s| s.seq == 0) {
                seq += 1;
                s.seq = seq;
                mark_pending(pending, *handle, inst);
            }
            !inst.is_unused()
        });
        self.last_seq = seq;
    }

    /// Applies the autopurge delays at `now` and forgets instances with nothing left.
    pub fn purge(&mut self, now: Instant) {
        let lifecycle = self.config.lifecycle;
        let mut dropped = 0;
        self.instances.retain(|_, inst| {
            if purge_due(&lifecycle, inst).is_some_and(|at| at <= now) {
                dropped += inst.samples.len();
                inst.samples.clear();
                inst.invalid = None;
                if inst.state == InstanceState::NotAliveNoWriters {
                    return false;
                }
            }
            !inst.is_unused()
        });
        self.sample_count -= dropped;
    }

    /// When [`purge`](Self::purge) next has work, for the reader's timer.
    pub fn next_purge(&self) -> Option<Instant> {
        let l = &self.config.lifecycle;
        // Without autopurge (the default) nothing is ever due: no pass over the instances
        // (this is asked after every batch a receive thread handles).
        if l.autopurge_disposed_samples_delay.is_none()
            && l.autopurge_nowriter_samples_delay.is_none()
        {
            return None;
        }
        self.instances
            .values()
            .filter_map(|inst| purge_due(&self.config.lifecycle, inst))
            .min()
    }

    /// Copies the samples `query` selects into `out` (cleared first), marks them Read and their
    /// instances NotNew; returns how many.
    pub fn read(&mut self, query: &Query, out: &mut Vec<Sample>) -> Result<usize, ReadError> {
        self.collect(query, false, out)
    }

    /// Like [`read`](Self::read), but removes the returned samples from the cache.
    pub fn take(&mut self, query: &Query, out: &mut Vec<Sample>) -> Result<usize, ReadError> {
        self.collect(query, true, out)
    }

    /// `read` restricted to one instance.
    pub fn read_instance(
        &mut self,
        instance: KeyHash,
        query: &Query,
        out: &mut Vec<Sample>,
    ) -> Result<usize, ReadError> {
        let q = query.instances(InstanceSelector::Instance(instance));
        self.collect(&q, false, out)
    }

    /// `take` restricted to one instance.
    pub fn take_instance(
        &mut self,
        instance: KeyHash,
        query: &Query,
        out: &mut Vec<Sample>,
    ) -> Result<usize, ReadError> {
        let q = query.instances(InstanceSelector::Instance(instance));
        self.collect(&q, true, out)
    }

    /// `read` of the first instance after `after` (in handle order) with matching samples.
    pub fn read_next_instance(
        &mut self,
        after: Option<KeyHash>,
        query: &Query,
        out: &mut Vec<Sample>,
    ) -> Result<usize, ReadError> {
        let q = query.instances(InstanceSelector::NextAfter(after));
        self.collect(&q, false, out)
    }

    /// `take` of the first instance after `after` (in handle order) with matching samples.
    pub fn take_next_instance(
        &mut self,
        after: Option<KeyHash>,
        query: &Query,
        out: &mut Vec<Sample>,
    ) -> Result<usize, ReadError> {
        let q = query.instances(InstanceSelector::NextAfter(after));
        self.collect(&q, true, out)
    }

    /// Valid samples held over all instances.
    pub fn len(&self) -> usize {
        self.sample_count
    }

    /// Whether no sample (valid or invalid) is held.
    pub fn is_empty(&self) -> bool {
        self.sample_count == 0 && self.held().all(|(_, i)| i.invalid.is_none())
    }

    /// The instances that may hold samples, in handle order from `range`.
    fn held_in(
        &self,
        range: (Bound<KeyHash>, Bound<KeyHash>),
    ) -> impl Iterator<Item = (KeyHash, &ReaderInstance)> {
        self.pending
            .range(range)
            .filter_map(|h| self.instances.get(h).map(|i| (*h, i)))
    }

    /// The instances that may hold samples, in handle order.
    fn held(&self) -> impl Iterator<Item = (KeyHash, &ReaderInstance)> {
        self.held_in((Bound::Unbounded, Bound::Unbounded))
    }

    /// Whether a sample (valid or invalid) not yet read is held: the condition a
    /// `ReadCondition` with NOT_READ waits for.
    pub fn has_unread(&self) -> bool {
        self.held().any(|(_, i)| {
            i.samples
                .iter()
                .any(|s| s.sample_state == SampleState::NotRead)
                || i.invalid
                    .as_ref()
                    .is_some_and(|s| s.sample_state == SampleState::NotRead)
        })
    }

    /// Whether `query` selects at least one sample (its `max_samples` aside): what a DDS
    /// `ReadCondition` with the query's masks triggers on. Nothing is marked or removed; an
    /// unknown instance selects nothing.
    pub fn has_matching(&self, query: &Query) -> bool {
        let range = match query.instance {
            InstanceSelector::Any | InstanceSelector::NextAfter(None) => {
                (Bound::Unbounded, Bound::Unbounded)
            }
            InstanceSelector::Instance(h) => (Bound::Included(h), Bound::Included(h)),
            InstanceSelector::NextAfter(Some(h)) => (Bound::Excluded(h), Bound::Unbounded),
        };
        self.held_in(range).any(|(_, inst)| {
            query.instance_states.contains(inst.state)
                && query.view_states.contains(inst.view)
                && inst
                    .samples
                    .iter()
                    .chain(inst.invalid.iter())
                    .any(|s| query.sample_states.contains(s.sample_state))
        })
    }

    /// The serialized data of the newest valid sample held for `instance`: where the
    /// runtime finds the key fields for DDS `get_key_value`.
    pub fn newest_payload(&self, instance: &KeyHash) -> Option<&Payload> {
        self.instances
            .get(instance)?
            .samples
            .back()?
            .payload
            .as_ref()
    }

    /// Instances the reader knows.
    pub fn instance_count(&self) -> usize {
        self.instances.len()
    }

    /// The handle of a known instance with this key hash (DDS `lookup_instance`).
    pub fn lookup_instance(&self, key: &KeyHash) -> Option<KeyHash> {
        self.instances.contains_key(key).then_some(*key)
    }

    /// State, view state and generation counts `(disposed, no_writers)` of an instance.
    pub fn instance_state(
        &self,
        instance: &KeyHash,
    ) -> Option<(InstanceState, ViewState, u32, u32)> {
        self.instances.get(instance).map(|i| {
            (
                i.state,
                i.view,
                i.disposed_generation_count,
                i.no_writers_generation_count,
            )
        })
    }

    /// Valid samples held for `instance`.
    pub fn instance_len(&self, instance: &KeyHash) -> usize {
        self.instances.get(instance).map_or(0, |i| i.samples.len())
    }

    /// Changes the READER_DATA_LIFECYCLE autopurge delays (`set_qos`); they apply from the
    /// next [`next_purge`](Self::next_purge) on.
    pub fn set_lifecycle(&mut self, lifecycle: ReaderDataLifecycle) {
        self.config.lifecycle = lifecycle;
    }

    /// The configuration the cache was built with.
    pub fn config(&self) -> &ReaderHistoryConfig {
        &self.config
    }

    /// Shared body of every read and take.
    fn collect(
        &mut self,
        query: &Query,
        take: bool,
        out: &mut Vec<Sample>,
    ) -> Result<usize, ReadError> {
        out.clear();
        if self.ordered && query.instance == InstanceSelector::Any {
            return Ok(self.collect_ordered(query, take, out));
        }
        let (lower, only_one) = match query.instance {
            InstanceSelector::Any => (Bound::Unbounded, false),
            InstanceSelector::Instance(h) => {
                if !self.instances.contains_key(&h) {
                    return Err(ReadError::UnknownInstance);
                }
                (Bound::Included(h), true)
            }
            InstanceSelector::NextAfter(None) => (Bound::Unbounded, true),
            InstanceSelector::NextAfter(Some(h)) => (Bound::Excluded(h), true),
        };
        let exact = matches!(query.instance, InstanceSelector::Instance(_));
        let mut removed = 0;
        let mut emptied = std::mem::take(&mut self.emptied);
        let settling = self.settling();
        let upper = match query.instance {
            InstanceSelector::Instance(h) => Bound::Included(h),
            _ => Bound::Unbounded,
        };
        for &handle in self.pending.range((lower, upper)) {
            if out.len() >= query.max_samples {
                break;
            }
            let Some(inst) = self.instances.get_mut(&handle) else {
                emptied.push(handle);
                continue;
            };
            let n = collect_instance(handle, inst, query, take, out, u64::MAX, None);
            removed += if take { n.valid } else { 0 };
            if inst.is_empty() && settling.needed(inst, take) {
                emptied.push(handle);
            }
            if exact || (only_one && n.total > 0) {
                break;
            }
        }
        self.sample_count -= removed;
        self.settle(take, &mut emptied);
        self.emptied = emptied;
        Ok(out.len())
    }

    /// What [`settle`](Self::settle) will do with an emptied instance, as known before a
    /// read or take visits the instances.
    fn settling(&self) -> Settling {
        Settling {
            forget_taken: self.forget_taken,
            large: self.pending.len() > SMALL_PENDING,
        }
    }

    /// After a read or take: the visited instances found empty leave `pending`, and those a
    /// take may forget are forgotten.
    fn settle(&mut self, take: bool, emptied: &mut Vec<KeyHash>) {
        for handle in emptied.drain(..) {
            let forget = match self.instances.get(&handle) {
                None => true,
                Some(inst) => take && self.forgettable(inst),
            };
            if forget {
                self.instances.remove(&handle);
                self.pending.remove(&handle);
            } else if self.pending.len() > SMALL_PENDING {
                self.pending.remove(&handle);
                if let Some(inst) = self.instances.get_mut(&handle) {
                    inst.pending = false;
                }
            }
        }
    }
}

impl ReaderHistory {
    /// [`collect`](Self::collect) of all instances in reception order: the
    /// `query.max_samples` oldest selected samples, whatever their instance (ranks are
    /// still per instance).
    fn collect_ordered(&mut self, query: &Query, take: bool, out: &mut Vec<Sample>) -> usize {
        let selected = |inst: &ReaderInstance| {
            query.instance_states.contains(inst.state) && query.view_states.contains(inst.view)
        };
        let mut seqs: Vec<u64> = self
            .held()
            .map(|(_, inst)| inst)
            .filter(|inst| selected(inst))
            .flat_map(|inst| inst.samples.iter().chain(inst.invalid.iter()))
            .filter(|s| query.sample_states.contains(s.sample_state))
            .map(|s| s.seq)
            .collect();
        if seqs.is_empty() || query.max_samples == 0 {
            return 0;
        }
        seqs.sort_unstable();
        let cutoff = seqs[query.max_samples.min(seqs.len()) - 1];
        let all = query.max_samples(usize::MAX);
        let mut order = std::mem::take(&mut seqs);
        order.clear();
        let mut removed = 0;
        let mut emptied = std::mem::take(&mut self.emptied);
        let settling = self.settling();
        for &handle in &self.pending {
            let Some(inst) = self.instances.get_mut(&handle) else {
                emptied.push(handle);
                continue;
            };
            let n = collect_instance(handle, inst, &all, take, out, cutoff, Some(&mut order));
            removed += if take { n.valid } else { 0 };
            if inst.is_empty() && settling.needed(inst, take) {
                emptied.push(handle);
            }
        }
        self.sample_count -= removed;
        self.settle(take, &mut emptied);
        self.emptied = emptied;
        let mut pairs: Vec<(u64, Sample)> = order.into_iter().zip(out.drain(..)).collect();
        pairs.sort_by_key(|(seq, _)| *seq);
        out.extend(pairs.into_iter().map(|(_, s)| s));
        out.len()
    }
}

/// Whether [`ReaderHistory::settle`] has something to do with an emptied instance: only it
/// needs the instance's handle (and a look-up of it) afterwards.
#[derive(Clone, Copy)]
struct Settling {
    forget_taken: bool,
    /// The pending set holds more than [`SMALL_PENDING`]: emptied instances leave it.
    large: bool,
}

impl Settling {
    /// As [`ReaderHistory::forgettable`] and `settle` decide.
    fn needed(self, inst: &ReaderInstance, take: bool) -> bool {
        self.large || (take && forgettable(self.forget_taken, inst))
    }
}

/// `inst` (of handle `handle`) may hold samples to read: in the pending set, once.
fn mark_pending(pending: &mut BTreeSet<KeyHash>, handle: KeyHash, inst: &mut ReaderInstance) {
    if !inst.pending {
        inst.pending = true;
        pending.insert(handle);
    }
}

/// Whether a take may forget `inst`: unused, or emptied by a reader that forgets taken
/// instances.
fn forgettable(forget_taken: bool, inst: &ReaderInstance) -> bool {
    inst.is_unused() || (forget_taken && inst.is_empty())
}

/// How many samples one instance contributed.
struct Contribution {
    total: usize,
    valid: usize,
}

/// Appends the samples of `inst` that `query` selects (until `query.max_samples`) and that
/// were received no later than `upto`, fills in their ranks, then marks or removes them;
/// `seqs` gets their reception numbers.
fn collect_instance(
    handle: KeyHash,
    inst: &mut ReaderInstance,
    query: &Query,
    take: bool,
    out: &mut Vec<Sample>,
    upto: u64,
    seqs: Option<&mut Vec<u64>>,
) -> Contribution {
    let none = Contribution { total: 0, valid: 0 };
    if !query.instance_states.contains(inst.state) || !query.view_states.contains(inst.view) {
        return none;
    }
    let start = out.len();
    let room = query.max_samples.saturating_sub(start);
    let wanted = |s: &StoredSample| query.sample_states.contains(s.sample_state) && s.seq <= upto;
    let only_one = inst.samples.len() == 1 && inst.invalid.is_none();
    if take && (room == 1 || only_one) && room > 0 && seqs.is_none() {
        // One sample taken (`take_next_sample`, a take of one), or a take of an instance that
        // holds one sample (a ping-pong's, KEEP_LAST 1): the oldest, when it is selected,
        // moved out as the general case below would (a collection of one sample: both its
        // ranks 0).
        let oldest = match inst.samples.front().is_some_and(wanted) {
            true => inst.samples.pop_front(),
            false => None,
        };
        if let Some(s) = oldest {
            let info = stored_info(&s, handle, (inst.view, inst.state, inst.generation()));
            out.push(Sample {
                info,
                data: s.payload,
            });
            inst.view = ViewState::NotNew;
            return Contribution { total: 1, valid: 1 };
        }
    }
    let valid = inst.samples.iter().filter(|s| wanted(s)).take(room).count();
    let with_invalid = valid < room && inst.invalid.as_ref().is_some_and(wanted);
    let total = valid + usize::from(with_invalid);
    if total == 0 {
        return none;
    }

    let of_instance = (inst.view, inst.state, inst.generation());
    let sample = |s: &StoredSample, data: Option<Payload>| Sample {
        info: stored_info(s, handle, of_instance),
        data,
    };
    let mut seqs = seqs;
    let oldest_first = take && inst.samples.iter().take(valid).all(wanted);
    if oldest_first {
        // The usual take: the oldest samples, moved out (no copy of the payload handle to
        // drop again, no pass to remove them).
        for mut s in inst.samples.drain(..valid) {
            if let Some(v) = seqs.as_deref_mut() {
                v.push(s.seq);
            }
            let mut taken = sample(&s, None);
            taken.data = s.payload.take();
            out.push(taken);
        }
        if with_invalid {
            if let Some(s) = inst.invalid.take() {
                if let Some(v) = seqs.as_deref_mut() {
                    v.push(s.seq);
                }
                out.push(sample(&s, s.payload.clone()));
            }
        }
        set_ranks(&mut out[start..]);
        inst.view = ViewState::NotNew;
        return Contribution { total, valid };
    }
    let chosen = inst
        .samples
        .iter()
        .filter(|s| wanted(s))
        .take(valid)
        .chain(inst.invalid.iter().filter(|_| with_invalid));
    for s in chosen {
        if let Some(v) = seqs.as_deref_mut() {
            v.push(s.seq);
        }
        out.push(sample(s, s.payload.clone()));
    }
    set_ranks(&mut out[start..]);

    let mut left = valid;
    if take {
        inst.samples.retain(|s| {
            let pick = left > 0 && wanted(s);
            left -= usize::from(pick);
            !pick
        });
        if with_invalid {
            inst.invalid = None;
        }
    } else {
        for s in inst.samples.iter_mut().filter(|s| wanted(s)).take(valid) {
            s.sample_state = SampleState::Read;
        }
        if let Some(s) = inst.invalid.as_mut().filter(|_| with_invalid) {
            s.sample_state = SampleState::Read;
        }
    }
    inst.view = ViewState::NotNew;
    Contribution { total, valid }
}

/// The SampleInfo of stored sample `s` of instance `handle`, whose view state, instance state
/// and generation are `of_instance`; its ranks 0 until [`set_ranks`].
#[inline(always)]
fn stored_info(
    s: &StoredSample,
    handle: KeyHash,
    (view, state, generation): (ViewState, InstanceState, u32),
) -> SampleInfo {
    SampleInfo {
        sample_state: s.sample_state,
        view_state: view,
        instance_state: state,
        disposed_generation_count: s.disposed_generation_count,
        no_writers_generation_count: s.no_writers_generation_count,
        sample_rank: 0,
        generation_rank: 0,
        absolute_generation_rank: generation.saturating_sub(s.generation()),
        source_timestamp: s.source_timestamp,
        instance_handle: handle,
        publication_handle: s.writer,
        valid_data: s.payload.is_some(),
        reception_time: s.reception_time,
    }
}

/// sample_rank and generation_rank of one instance's run in a returned collection.
fn set_ranks(run: &mut [Sample]) {
    let gen = |s: &Sample| {
        s.info
            .disposed_generation_count
            .saturating_add(s.info.no_writers_generation_count)
    };
    let newest = run.last().map_or(0, gen);
    let n = run.len();
    for (i, s) in run.iter_mut().enumerate() {
        s.info.sample_rank = u32::try_from(n - 1 - i).unwrap_or(u32::MAX);
        s.info.generation_rank = newest.saturating_sub(gen(s));
    }
}

/// When `inst`'s autopurge delay runs out, if it has one and something to purge.
fn purge_due(lifecycle: &ReaderDataLifecycle, inst: &ReaderInstance) -> Option<Instant> {
    let delay = match inst.state {
        InstanceState::Alive => None,
        InstanceState::NotAliveDisposed => {
            if inst.samples.is_empty() && inst.invalid.is_none() {
                None
            } else {
                lifecycle.autopurge_disposed_samples_delay
            }
        }
        InstanceState::NotAliveNoWriters => lifecycle.autopurge_nowriter_samples_delay,
    }?;
    Some(inst.not_alive_since + delay)
}
