//! Micro-benchmark of the response JSON writer (`careers_api::views::json`) against serde_json,
//! on a page of the list the load benchmark measures (docs/PERFORMANCE.md, session 11), and of
//! the page's own writer, which the list answers with (`write_json`, session 14).
//!
//! ```text
//! cargo bench -p bench --bench json -- --warm-up-time 1 --measurement-time 2
//! cargo bench -p bench --bench json -- --test      # smoke mode: each benchmark once
//! ```

use std::hint::black_box;

use careers_api::models::careers::job_application::sample_application_page;
use careers_api::views::json;
use criterion::{Criterion, criterion_group, criterion_main};

fn application_page(c: &mut Criterion) {
    let page = sample_application_page("Hello");
    let mut group = c.benchmark_group("application_page");
    group.bench_function("views_json", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(1024);
            json::to_writer(&mut out, black_box(&page)).expect("written");
            out
        })
    });
    group.bench_function("write_json", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(1024);
            black_box(&page).write_json(&mut out).expect("written");
            out
        })
    });
    group.bench_function("serde_json", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(1024);
            serde_json::to_writer(&mut out, black_box(&page)).expect("written");
            out
        })
    });
    group.finish();
}

criterion_group!(benches, application_page);
criterion_main!(benches);
