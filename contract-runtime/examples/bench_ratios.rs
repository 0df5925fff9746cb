//! Prints the cost of each result path as a ratio to the floor (`serde_json::to_vec` of
//! the typed result), side by side, in one run:
//!
//! ```text
//! cargo run --release -p contract-runtime --all-features --example bench_ratios
//! ```
//!
//! Each figure is the median of many rounds; each round times a short batch of calls
//! (about 0.1 ms of the floor's work, one call from 1,000 items up), and the paths are
//! interleaved round by round so that noise hits them alike. Short batches matter on a
//! shared machine: a sample shorter than the scheduler's time slice is mostly either
//! untouched or visibly preempted, and the median picks the untouched ones; a long
//! sample is preempted every time. The numbers are for reading, not for asserting.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use contract_runtime::cache::InMemoryCache;
use contract_runtime::limits::Limits;
use contract_runtime::pipeline::{CallContext, Pipeline};
use contract_runtime::wire::ToolError;
use contract_runtime::ToolOutput;
use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::CallToolResponse;

/// Rounds per size: the median of this many is robust to the bursts of a shared machine.
const ROUNDS: usize = 101;

#[path = "../benches/support/workload.rs"]
mod workload;

/// Times every path in `paths` for `rounds` rounds, interleaved, and returns the median
/// time per call of each.
fn medians(paths: &mut [&mut dyn FnMut()], batch: u32, rounds: usize) -> Vec<Duration> {
    for f in paths.iter_mut() {
        f(); // warm up
    }
    let mut samples = vec![Vec::with_capacity(rounds); paths.len()];
    let count = paths.len();
    let mut order: Vec<usize> = (0..count).collect();
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..rounds {
        // A new order every round (Fisher-Yates, a fixed-seed xorshift): a path that
        // frees many small allocations (a dropped `Value` tree) leaves allocator work
        // (glibc consolidates its fast bins at the next large request) to whatever runs
        // next. In a fixed or rotating order that is always the same path, which then
        // looks slow for another's cost: a cache hit after `to_value` measured 0.73x at
        // 1,000 items instead of about 0.01x. Shuffled, each path follows every other in
        // turn and the median is its own cost.
        for i in (1..count).rev() {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            #[allow(clippy::cast_possible_truncation)]
            let j = (seed % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        for &p in &order {
            let start = Instant::now();
            for _ in 0..batch {
                paths[p]();
            }
            samples[p].push(start.elapsed() / batch);
        }
    }
    samples
        .into_iter()
        .map(|mut s| {
            s.sort();
            s[rounds / 2]
        })
        .collect()
}

/// rmcp's own `Json<T>` path, unvalidated and done by rmcp itself: the handler returns
/// `Json(page)` (so the page is moved in: a clone here), rmcp converts it to
/// `structuredContent` and the text block, and the transport writes the result.
fn rmcp_json(page: &workload::TicketPage) -> Vec<u8> {
    let Ok(CallToolResponse::Complete(result)) = rmcp::Json(page.clone()).into_call_tool_result() else {
        panic!("rmcp's Json failed")
    };
    serde_json::to_vec(&result).expect("serializes")
}

fn main() {
    let fast = Pipeline::builder().build();
    let value_path = Pipeline::builder().fast_path(false).build();
    // Room for the 10,000-item page with its wire bytes (about 5.6 MB): the default
    // 64 MiB keeps entries up to an eighth of that per shard on 2 cores.
    let cached = Pipeline::builder().cache(Arc::new(InMemoryCache::builder().max_bytes(256 << 20).build())).build();
    let ctx = CallContext::new("ticket_page", serde_json::json!({}));
    let contract = workload::TicketPage::contract();
    println!("fast path for the workload's contract: {:?}", contract.fast_path());
    println!(
        "{:>7} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "items",
        "floor",
        "clone",
        "rmcp Json",
        "Value",
        "fast",
        "fast write",
        "wire write",
        "to_value",
        "cache hit",
        "hit copied"
    );
    let id = serde_json::json!(42);
    for n in [1usize, 100, 1_000, 10_000] {
        let page = workload::page(n);
        // The cache holds this size's page; the first call fills it.
        let key_ctx = CallContext::new("ticket_page", serde_json::json!({ "n": n }));
        let fill = cached.call_sync(&key_ctx, || Ok::<_, ToolError>(page.clone()));
        assert!(!fill.is_error(), "{}", fill.text());
        // The first hit writes the entry's wire bytes; every later one shares them.
        let first = cached.call_sync(&key_ctx, || Ok::<_, ToolError>(page.clone()));
        assert_eq!(first.cache_status(), contract_runtime::wire::CacheStatus::Hit);
        let judged = fast.process(&ctx, contract, &page);
        // The two paths must put the same bytes on the wire.
        assert_eq!(workload::validated(&fast, &ctx, &page), workload::validated(&value_path, &ctx, &page));
        // About the same short time per sample: fewer calls for bigger pages.
        let batch = u32::try_from((1_000 / n.max(1)).clamp(1, 500)).unwrap_or(1);
        let limits = Limits::default();
        let times = medians(
            &mut [
                &mut || drop(black_box(workload::floor(black_box(&page)))),
                &mut || drop(black_box(black_box(&page).clone())),
                &mut || drop(black_box(rmcp_json(black_box(&page)))),
                &mut || drop(black_box(workload::validated(&value_path, &ctx, black_box(&page)))),
                &mut || drop(black_box(workload::validated(&fast, &ctx, black_box(&page)))),
                &mut || drop(black_box(contract_runtime::fused::write(contract, black_box(&page), &limits))),
                &mut || drop(black_box(black_box(&judged).to_wire_bytes())),
                &mut || drop(black_box(serde_json::to_value(black_box(&page)))),
                &mut || {
                    let hit = cached.call_sync(&key_ctx, || Ok::<_, ToolError>(page.clone()));
                    drop(black_box(hit.to_jsonrpc_response(black_box(&id))));
                },
                &mut || {
                    let hit = cached.call_sync(&key_ctx, || Ok::<_, ToolError>(page.clone()));
                    drop(black_box(hit.to_wire_bytes()));
                },
            ],
            batch,
            ROUNDS,
        );
        let floor = times[0];
        let ratio = |d: &Duration| format!("{:.2}x", d.as_secs_f64() / floor.as_secs_f64());
        let cells: Vec<String> = times[1..].iter().map(ratio).collect();
        println!(
            "{n:>7} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
            format!("{floor:.2?}"),
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            cells[4],
            cells[5],
            cells[6],
            cells[7],
            cells[8]
        );
    }
    println!(
        "\nratios to the floor (serde_json::to_vec of the typed result). clone: cloning the page, which rmcp's \
         Json takes by value. rmcp Json: rmcp's own Json<T> (to_value, then CallToolResult::structured writes the text \
         from the value), the result serialized, unvalidated; the clone included. Value: our pipeline with \
         fast_path(false), handler output to wire bytes. fast: the same pipeline with the fast path (default). \
         fast write: the validating serializer alone. wire write: to_wire_bytes alone of a fast-path result (the \
         text block escaped, the payload raw). to_value: serde_json::to_value alone, what the fast path no longer \
         pays. cache hit: call_sync served from the in-memory cache, then the JSON-RPC response as pieces a transport \
         writes in turn (the entry's wire bytes shared, not copied). hit copied: the same hit to to_wire_bytes, one \
         buffer holding a copy of the entry's bytes."
    );
}
