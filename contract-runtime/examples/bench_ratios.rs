//! Prints the cost of each result path as a ratio to the floor (`serde_json::to_vec` of
//! the typed result), side by side, in one run:
//!
//! ```text
//! cargo run --release -p contract-runtime --example bench_ratios
//! ```
//!
//! Each figure is the median of several rounds; each round times a batch of calls.
//! The numbers are for reading, not for asserting: the machine is shared and noisy.

use std::hint::black_box;
use std::time::{Duration, Instant};

use contract_runtime::pipeline::{CallContext, Pipeline};

#[path = "../benches/support/workload.rs"]
mod workload;

fn median_per_call(mut f: impl FnMut(), batch: u32, rounds: usize) -> Duration {
    f(); // warm up
    let mut samples: Vec<Duration> = (0..rounds)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..batch {
                f();
            }
            start.elapsed() / batch
        })
        .collect();
    samples.sort();
    samples[rounds / 2]
}

fn main() {
    let pipeline = Pipeline::builder().build();
    let ctx = CallContext::new("ticket_page", serde_json::json!({}));
    println!(
        "{:>7} {:>12} {:>12} {:>12} {:>12} {:>12}",
        "items", "floor", "rmcp-like", "validated", "validation", "+ clone"
    );
    for n in [1usize, 100, 1_000, 10_000] {
        let page = workload::page(n);
        let value = serde_json::to_value(&page).expect("serializes");
        // About the same wall time per size: fewer calls for bigger pages.
        let batch = u32::try_from((20_000 / n.max(1)).clamp(3, 2_000)).unwrap_or(3);
        let rounds = 15;
        // Interleave the paths round by round, so that noise hits them alike.
        let floor = median_per_call(|| drop(black_box(workload::floor(black_box(&page)))), batch, rounds);
        let rmcp = median_per_call(|| drop(black_box(workload::rmcp_like(black_box(&page)))), batch, rounds);
        let ours =
            median_per_call(|| drop(black_box(workload::validated(&pipeline, &ctx, black_box(&page)))), batch, rounds);
        let valid = median_per_call(|| _ = black_box(workload::validate_only(black_box(&value))), batch, rounds);
        let call = median_per_call(
            || drop(black_box(workload::validated_call(&pipeline, &ctx, black_box(&page)))),
            batch,
            rounds,
        );
        let ratio = |d: Duration| d.as_secs_f64() / floor.as_secs_f64();
        println!(
            "{n:>7} {:>12} {:>11.2}x {:>11.2}x {:>11.2}x {:>11.2}x",
            format!("{floor:.2?}"),
            ratio(rmcp),
            ratio(ours),
            ratio(valid),
            ratio(call),
        );
    }
    println!(
        "\nratios to the floor (serde_json::to_vec of the typed result). rmcp-like: to_value + to_string + result + serialize, \
         unvalidated. validated: our pipeline from the handler's output to wire bytes. validation: is_valid alone. \
         + clone: validated through call_sync with a handler that clones the page."
    );
}
