//! Scheduling of the calling thread: CPU affinity and `SCHED_FIFO` priority, the safe face of
//! `sched_setaffinity`/`sched_setscheduler` (the unsafe calls live in the private `sys`
//! module) for runtimes that pin their threads. Linux only.
//!
//! ```no_run
//! use tachyon_transport::thread;
//! thread::set_affinity(&[0])?;
//! thread::set_fifo_priority(50)?; // EPERM without CAP_SYS_NICE or an RLIMIT_RTPRIO
//! assert_eq!(thread::affinity(thread::current_id())?, vec![0]);
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io;

use crate::sys;

/// The kernel's thread id (`gettid`), as `/proc/self/task/<tid>` names it.
pub type ThreadId = i32;

/// A thread's scheduling policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Policy {
    /// `SCHED_OTHER`: the default time-sharing policy.
    Other,
    /// `SCHED_FIFO` with this priority (1 to 99).
    Fifo(u8),
    /// `SCHED_RR` with this priority.
    RoundRobin(u8),
    /// Another policy (`SCHED_BATCH`, `SCHED_IDLE`, `SCHED_DEADLINE`), by its number.
    Unknown(i32),
}

/// The calling thread's kernel id.
pub fn current_id() -> ThreadId {
    sys::gettid()
}

/// Lets the calling thread run only on `cpus`. `EINVAL` when none of them exists (or is
/// allowed to this process), as the kernel says.
pub fn set_affinity(cpus: &[u16]) -> io::Result<()> {
    sys::sched_setaffinity(0, cpus)
}

/// The CPUs thread `tid` may run on, in increasing order.
pub fn affinity(tid: ThreadId) -> io::Result<Vec<u16>> {
    sys::sched_getaffinity(tid)
}

/// Puts the calling thread under `SCHED_FIFO` at `priority` (1 to 99; others are `EINVAL`).
/// `EPERM` without `CAP_SYS_NICE` or a large enough `RLIMIT_RTPRIO`.
pub fn set_fifo_priority(priority: u8) -> io::Result<()> {
    if !(1..=99).contains(&priority) {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    sys::sched_setscheduler(0, libc::SCHED_FIFO, libc::c_int::from(priority))
}

/// The scheduling policy of thread `tid`.
pub fn policy(tid: ThreadId) -> io::Result<Policy> {
    let (policy, prio) = sys::sched_getscheduler(tid)?;
    let prio = u8::try_from(prio).unwrap_or(u8::MAX);
    Ok(match policy {
        libc::SCHED_OTHER => Policy::Other,
        libc::SCHED_FIFO => Policy::Fifo(prio),
        libc::SCHED_RR => Policy::RoundRobin(prio),
        p => Policy::Unknown(p),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affinity_of_a_new_thread_is_what_it_set() {
        let allowed = affinity(current_id()).expect("getaffinity of ourselves");
        let first = *allowed.first().expect("a thread runs on some CPU");
        let got = std::thread::spawn(move || {
            set_affinity(&[first]).expect("setaffinity to an allowed CPU");
            (affinity(current_id()), affinity(0))
        })
        .join()
        .expect("thread");
        assert_eq!(got.0.expect("by tid"), vec![first]);
        assert_eq!(got.1.expect("by 0"), vec![first]);
        // The spawning thread was not touched.
        assert_eq!(affinity(current_id()).expect("again"), allowed);
    }

    #[test]
    fn impossible_settings_are_errors_not_panics() {
        std::thread::spawn(|| {
            assert_eq!(
                set_affinity(&[u16::MAX]).map_err(|e| e.raw_os_error()),
                Err(Some(libc::EINVAL))
            );
            assert_eq!(
                set_fifo_priority(0).map_err(|e| e.raw_os_error()),
                Err(Some(libc::EINVAL))
            );
            assert_eq!(policy(current_id()).expect("policy"), Policy::Other);
        })
        .join()
        .expect("thread");
    }

    #[test]
    fn fifo_priority_applies_when_permitted() {
        std::thread::spawn(|| match set_fifo_priority(10) {
            Ok(()) => assert_eq!(policy(current_id()).expect("policy"), Policy::Fifo(10)),
            Err(e) => assert_eq!(e.raw_os_error(), Some(libc::EPERM), "{e}"),
        })
        .join()
        .expect("thread");
    }
}
