//! Criterion benchmark of the result path: `cargo bench -p contract-runtime --bench pipeline`.
//! For the side-by-side ratios in one run, see BENCHMARKS.md.

use std::hint::black_box;

use contract_runtime::pipeline::{CallContext, Pipeline};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

#[path = "support/workload.rs"]
mod workload;

fn paths(c: &mut Criterion) {
    let pipeline = Pipeline::builder().build();
    let ctx = CallContext::new("ticket_page", serde_json::json!({}));
    let mut group = c.benchmark_group("result_path");
    for n in [1usize, 100, 1_000, 10_000] {
        let page = workload::page(n);
        let value = serde_json::to_value(&page).unwrap();
        group.bench_with_input(BenchmarkId::new("floor_to_vec", n), &page, |b, p| {
            b.iter(|| workload::floor(black_box(p)));
        });
        group.bench_with_input(BenchmarkId::new("rmcp_like_unvalidated", n), &page, |b, p| {
            b.iter(|| workload::rmcp_like(black_box(p)));
        });
        group.bench_with_input(BenchmarkId::new("validated_pipeline", n), &page, |b, p| {
            b.iter(|| workload::validated(&pipeline, &ctx, black_box(p)));
        });
        group.bench_with_input(BenchmarkId::new("validated_call_with_clone", n), &page, |b, p| {
            b.iter(|| workload::validated_call(&pipeline, &ctx, black_box(p)));
        });
        group.bench_with_input(BenchmarkId::new("validation_only", n), &value, |b, v| {
            b.iter(|| workload::validate_only(black_box(v)));
        });
    }
    group.finish();
}

criterion_group!(benches, paths);
criterion_main!(benches);
