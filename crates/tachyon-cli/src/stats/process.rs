//! CPU time and peak memory of this process, from `/proc/self` (no `unsafe` needed).

use std::time::Instant;

use serde::Serialize;

/// Linux reports CPU times in clock ticks of `sysconf(_SC_CLK_TCK)`, 100 on every
/// architecture Linux supports today.
const TICKS_PER_SECOND: f64 = 100.0;

/// CPU use over the measured part and the process's peak RSS (`bench/SCHEMA.md`, `process`).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct ProcessSummary {
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
    /// (user + system) / wall time × 100: 100 is one CPU busy all along.
    pub cpu_percent: f64,
    pub peak_rss_kib: Option<u64>,
}

/// A reading of the process's CPU times.
#[derive(Clone, Copy, Debug)]
pub struct Usage {
    at: Instant,
    user_s: f64,
    sys_s: f64,
}

impl Usage {
    pub fn now() -> Usage {
        let (user_s, sys_s) = cpu_times().unwrap_or((0.0, 0.0));
        Usage {
            at: Instant::now(),
            user_s,
            sys_s,
        }
    }

    /// What was used since `self`.
    pub fn since(self) -> ProcessSummary {
        let end = Usage::now();
        let wall = end.at.duration_since(self.at).as_secs_f64();
        let user = (end.user_s - self.user_s).max(0.0);
        let sys = (end.sys_s - self.sys_s).max(0.0);
        ProcessSummary {
            cpu_user_s: user,
            cpu_sys_s: sys,
            cpu_percent: if wall > 0.0 {
                (user + sys) / wall * 100.0
            } else {
                0.0
            },
            peak_rss_kib: peak_rss_kib(),
        }
    }
}

/// User and system CPU seconds of the whole process (fields 14 and 15 of `/proc/self/stat`).
fn cpu_times() -> Option<(f64, f64)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split_ascii_whitespace().skip(11);
    let user: f64 = fields.next()?.parse().ok()?;
    let sys: f64 = fields.next()?.parse().ok()?;
    Some((user / TICKS_PER_SECOND, sys / TICKS_PER_SECOND))
}

/// `VmHWM` of `/proc/self/status`: the peak resident set size.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_ascii_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_work_shows_as_cpu_time_and_rss_is_read() {
        let start = Usage::now();
        let (u0, s0) = cpu_times().expect("/proc/self/stat");
        // Burn CPU until the kernel's count moved by 50 ms (however busy the machine is).
        let cap = Instant::now();
        let mut x = 0u64;
        while cpu_times().map_or(0.0, |(u, s)| u + s - u0 - s0) < 0.05 {
            for _ in 0..100_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            assert!(cap.elapsed().as_secs() < 30, "no CPU time counted");
        }
        std::hint::black_box(x);
        let s = start.since();
        assert!(s.cpu_user_s + s.cpu_sys_s >= 0.05, "{s:?}");
        assert!(s.cpu_percent > 0.0, "{s:?}");
        assert!(s.peak_rss_kib.unwrap_or(0) > 0);
    }
}
