//! One writer and one reader back to back in one thread (write → poll_transmit →
//! handle_datagram → take, acknowledgements included): nanoseconds per sample.

#[path = "../tests/common/back_to_back.rs"]
mod back_to_back;

use back_to_back::BackToBack;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn endpoint(c: &mut Criterion) {
    let mut g = c.benchmark_group("BackToBack");
    for (name, reliable) in [("best_effort", false), ("reliable", true)] {
        for size in [32usize, 1024] {
            let mut t = BackToBack::new(reliable, size);
            for _ in 0..1000 {
                t.step();
            }
            g.throughput(Throughput::Elements(1));
            g.bench_function(format!("{name}/{size}B"), |b| b.iter(|| t.step()));
        }
    }
    g.finish();
}

criterion_group!(benches, endpoint);
criterion_main!(benches);
