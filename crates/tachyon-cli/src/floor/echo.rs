//! The floor's pong: every datagram goes back to its sender as it came.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::{io, FloorArgs};
use crate::perf::Failure;

/// Echoes for `--warmup` + `--duration` seconds, or until `stop` is set.
pub fn run(a: &FloorArgs, stop: Option<&AtomicBool>) -> Result<(), Failure> {
    let ep = a.endpoint(a.bind, "pong")?;
    a.pin();
    let mut buf = vec![0u8; 65_536];
    let end = Instant::now() + Duration::from_secs_f64(a.warmup + a.duration);
    while Instant::now() < end && !stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
        let slice = (Instant::now() + Duration::from_millis(100)).min(end);
        if let Some((n, from)) = ep.recv_until(&mut buf, slice).map_err(io("recv"))? {
            ep.send_to(&buf[..n], from).map_err(io("send"))?;
        }
    }
    Ok(())
}
