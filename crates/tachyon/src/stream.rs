//! The async reader API: [`DataReader::stream`] (a [`Stream`] of samples) and
//! [`DataReader::wait_for_data_async`] (a future that resolves when data is there).
//!
//! Both work on any executor (tokio, async-std, smol, a hand-written `block_on`) and take
//! nothing from it: no thread is spawned, nothing blocks. A pending stream or future
//! registers its task's [`Waker`](std::task::Waker) with the participant's notification
//! mechanism — the one [`WaitSet`](crate::WaitSet)s use — and the thread that changes the
//! reader's state (the driver thread receiving data, or the thread closing the participant)
//! wakes it. The library depends on `futures-core` for the `Stream` trait only.
//!
//! ```no_run
//! # use tachyon::prelude::*;
//! # #[derive(DdsType, Debug)] struct Hello { #[key] id: u32 }
//! # async fn run(reader: DataReader<Hello>) -> Result<(), Error> {
//! use futures_core::Stream;
//! use std::pin::Pin;
//! use std::task::{Context, Poll};
//!
//! let mut samples = reader.stream();
//! // With `futures::StreamExt` or `tokio_stream::StreamExt`: `while let Some(s) = samples.next().await`.
//! let next = std::future::poll_fn(|cx: &mut Context<'_>| Pin::new(&mut samples).poll_next(cx));
//! if let Some(sample) = next.await {
//!     println!("{:?}", sample?.data);
//! }
//! # Ok(()) }
//! ```

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_core::{FusedStream, Stream};
use tachyon_proto::history::Query;

use crate::error::Error;
use crate::runtime::notify::Signal;
use crate::subscription::{DataReader, Readable, Sample};

impl<T: Readable> DataReader<T> {
    /// A [`Stream`] of the samples this reader receives, taken from it in reception order
    /// (across instances; ties broken by source timestamp), then `None` once the
    /// participant is closed and everything received before was yielded.
    ///
    /// The stream *takes*: each sample comes once, and a plain `take` on the same reader
    /// competes with it. Whenever its buffer is empty it takes everything the reader holds,
    /// so memory stays bounded by the reader's own HISTORY and RESOURCE_LIMITS. Items are
    /// [`Sample`]s with their [`SampleInfo`](crate::SampleInfo): an instance disposed, or
    /// left without writers, arrives as a sample without data (`data: None`) whose
    /// `info.instance_state` says so. An `Err` item (a failed take) ends the stream.
    pub fn stream(&self) -> SampleStream<T> {
        self.clone().into_stream()
    }

    /// The reader turned into its [`stream`](Self::stream) (the stream keeps it alive).
    pub fn into_stream(self) -> SampleStream<T> {
        let signal = Arc::new(Signal::default());
        self.inner
            .runtime
            .shared
            .observers
            .add(&signal, Some(self.inner.id));
        SampleStream {
            reader: self,
            signal,
            buffer: VecDeque::new(),
            done: false,
        }
    }

    /// A future resolving to `Ok(())` as soon as the reader holds a sample not yet read
    /// (at once if it does already), or to [`Error::AlreadyDeleted`] once the participant
    /// is closed. The async [`wait_for_data`](Self::wait_for_data); put a timeout around it
    /// with the executor's timer.
    pub fn wait_for_data_async(&self) -> DataAvailable<T> {
        DataAvailable {
            reader: self.clone(),
            signal: None,
        }
    }
}

/// The samples of a [`DataReader`] as a [`Stream`] ([`DataReader::stream`]).
pub struct SampleStream<T> {
    reader: DataReader<T>,
    signal: Arc<Signal>,
    /// Taken from the reader, in reception order, not yet yielded.
    buffer: VecDeque<Sample<T>>,
    /// The participant is closed (or a take failed): nothing more comes.
    done: bool,
}

impl<T> std::fmt::Debug for SampleStream<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SampleStream")
            .field("reader", &self.reader)
            .field("buffered", &self.buffer.len())
            .field("done", &self.done)
            .finish()
    }
}

// Nothing in the stream is address-sensitive.
impl<T> Unpin for SampleStream<T> {}

impl<T> SampleStream<T> {
    /// The reader the stream takes from.
    pub fn reader(&self) -> &DataReader<T> {
        &self.reader
    }
}

impl<T: Readable> SampleStream<T> {
    /// Takes whatever the reader holds into the buffer, oldest reception first; returns
    /// whether anything came.
    fn refill(&mut self) -> Result<bool, Error> {
        let mut got = self.reader.take_with(&Query::ANY)?;
        if got.is_empty() {
            return Ok(false);
        }
        // `take` groups by instance; the stream promises reception order (stable sort:
        // samples of one instance keep their order).
        got.sort_by_key(|s| (s.info.reception_time, s.info.source_timestamp));
        self.buffer.extend(got);
        Ok(true)
    }

    /// One attempt: a buffered sample, a refill, the end, or nothing yet.
    fn next_ready(&mut self) -> Option<Option<Result<Sample<T>, Error>>> {
        if let Some(s) = self.buffer.pop_front() {
            return Some(Some(Ok(s)));
        }
        if self.done {
            return Some(None);
        }
        match self.refill() {
            Ok(true) => self.buffer.pop_front().map(|s| Some(Ok(s))),
            Ok(false) => None,
            Err(e) => {
                self.done = true;
                Some(Some(Err(e)))
            }
        }
    }
}

impl<T: Readable> Stream for SampleStream<T> {
    type Item = Result<Sample<T>, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if let Some(item) = this.next_ready() {
            return Poll::Ready(item);
        }
        // Nothing there. Register first, then look again: a sample arriving in between
        // wakes the waker just registered, so none is missed. (Registering only now keeps
        // the stream's own takes from waking itself while it is busy.)
        this.signal.register(cx.waker());
        if let Some(item) = this.next_ready() {
            return Poll::Ready(item);
        }
        if this.reader.inner.runtime.shared.stopped() {
            // Closed and drained: the shutdown's notification came after the last sample.
            this.done = true;
            return Poll::Ready(None);
        }
        Poll::Pending
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.done {
            (self.buffer.len(), Some(self.buffer.len()))
        } else {
            (self.buffer.len(), None)
        }
    }
}

impl<T: Readable> FusedStream for SampleStream<T> {
    fn is_terminated(&self) -> bool {
        self.done && self.buffer.is_empty()
    }
}

impl<T> Drop for SampleStream<T> {
    fn drop(&mut self) {
        let id = Some(self.reader.inner.id);
        self.reader
            .inner
            .runtime
            .shared
            .observers
            .remove(&self.signal, id);
    }
}

/// The future of [`DataReader::wait_for_data_async`].
#[must_use = "futures do nothing unless awaited"]
pub struct DataAvailable<T> {
    reader: DataReader<T>,
    /// Registered with the runtime's observers from the first `Pending` on.
    signal: Option<Arc<Signal>>,
}

impl<T> std::fmt::Debug for DataAvailable<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataAvailable")
            .field("reader", &self.reader)
            .finish_non_exhaustive()
    }
}

impl<T> Unpin for DataAvailable<T> {}

impl<T: Readable> DataAvailable<T> {
    fn check(&self) -> Option<Result<(), Error>> {
        if self.reader.has_unread() {
            Some(Ok(()))
        } else if self.reader.inner.runtime.shared.stopped() {
            Some(Err(Error::AlreadyDeleted))
        } else {
            None
        }
    }
}

impl<T: Readable> Future for DataAvailable<T> {
    type Output = Result<(), Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if let Some(r) = this.check() {
            return Poll::Ready(r);
        }
        let observers = &this.reader.inner.runtime.shared.observers;
        let signal = this.signal.get_or_insert_with(|| {
            let s = Arc::new(Signal::default());
            observers.add(&s, Some(this.reader.inner.id));
            s
        });
        signal.register(cx.waker());
        match this.check() {
            Some(r) => Poll::Ready(r),
            None => Poll::Pending,
        }
    }
}

impl<T> Drop for DataAvailable<T> {
    fn drop(&mut self) {
        if let Some(s) = &self.signal {
            let id = Some(self.reader.inner.id);
            self.reader.inner.runtime.shared.observers.remove(s, id);
        }
    }
}
