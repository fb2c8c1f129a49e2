//! What every benchmark of the `tachyon` command measures and how it reports it: the
//! `tachyon-perf/1` JSON record of `bench/SCHEMA.md`, the live line each second and the
//! table at the end.

mod latency;
mod process;
mod report;
mod throughput;

pub use latency::{Interval, LatencyRecorder, LatencySummary};
pub use process::{ProcessSummary, Usage};
pub use report::{emit, live_line, RunConfig, RunResult};
pub use throughput::{BulkSummary, ThroughputCounter, ThroughputSummary};
