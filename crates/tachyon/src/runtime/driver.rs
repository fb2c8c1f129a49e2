//! The driver thread: waits for datagrams and the next protocol timer, feeds them to the
//! participant, sends what became due.

use std::time::Duration as StdDuration;

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use tachyon_transport::{RecvBatch, SocketId};

use super::{Shared, MAX_DATAGRAM};

/// The waker's token.
pub(super) const WAKE: Token = Token(usize::MAX);

/// Datagrams taken per `recvmmsg`.
const BATCH: usize = 32;

pub(super) fn run(shared: &Shared, mut poll: Poll) {
    let sockets = shared.transport.sockets();
    for (id, fd) in &sockets {
        if let Err(e) =
            poll.registry()
                .register(&mut SourceFd(fd), Token(id.index()), Interest::READABLE)
        {
            tracing::error!(socket = ?id, error = %e, "cannot watch socket; it will not receive");
        }
    }
    let mut events = Events::with_capacity(16);
    // Receive slots as large as a UDP datagram can be: peers may send more than we do.
    let mut batch = RecvBatch::new(BATCH, tachyon_transport::MAX_UDP_PAYLOAD.max(MAX_DATAGRAM));
    loop {
        if shared.stopped() {
            return;
        }
        // Listeners queued by the last round (or by a user thread's flush, which woke us).
        shared.dispatch_listeners();
        let timeout = {
            let mut st = shared.lock();
            let now = shared.now();
            if st.participant.poll_timeout().is_some_and(|t| t <= now) {
                st.participant.handle_timeout(now);
            }
            st.flush(shared, now);
            st.participant.poll_timeout().map(|t| {
                StdDuration::from_nanos(t.saturating_duration_since(shared.now()).as_nanos() as u64)
            })
        };
        if let Err(e) = poll.poll(&mut events, timeout) {
            if e.kind() != std::io::ErrorKind::Interrupted {
                tracing::error!(error = %e, "poll failed; the runtime stops");
                return;
            }
        }
        for ev in events.iter() {
            if ev.token() == WAKE {
                continue;
            }
            let Some(id) = SocketId::from_index(ev.token().0) else {
                continue;
            };
            receive(shared, id, &mut batch);
        }
    }
}

/// Drains one socket (edge-triggered): every batch is handed to the participant under one
/// lock, then what became due is sent.
fn receive(shared: &Shared, id: SocketId, batch: &mut RecvBatch) {
    loop {
        match shared.transport.recv_batch(id, batch) {
            Ok(0) => return,
            Ok(_) => {
                let mut st = shared.lock();
                let now = shared.now();
                for (source, bytes) in batch.iter() {
                    st.participant.handle_datagram(now, source, bytes);
                }
                st.flush(shared, now);
                drop(st);
                shared.dispatch_listeners();
            }
            Err(e) => {
                tracing::debug!(socket = ?id, error = %e, "receive failed");
                return;
            }
        }
    }
}
