//! `cargo bench --bench tls_models`: the per-call cost of each way the
//! tlsdemo extension keeps its per-thread counter (docs/tls-models.md),
//! under `--globals=tls` and `ctx`. Each iteration is one request of a
//! compiled script calling the variant's function 10,000 times, so the
//! reported time per element is one call (engine call path + host
//! dispatch + the TLS access); the empty loop and `abs()` give the scale.
//!
//! The extension is built on first use with the same cargo and profile,
//! into the directory this benchmark runs from.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use minizts_core::bytecode::Script;
use minizts_core::PhpStr;
use minizts_globals::memory::CountingAlloc;
use minizts_globals::{Ctx, Globals, Sink, Tls};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

const CALLS: u64 = 10_000;

const VARIANTS: [&str; 8] = [
    "empty_loop",
    "builtin_abs",
    "dynamic",
    "initial_exec",
    "module_globals",
    "host_accessor",
    "ctx",
    "tlsdesc",
];

/// Builds the tlsdemo extension next to this benchmark's binary.
fn tlsdemo() -> PathBuf {
    let exe = std::env::current_exe().expect("benchmark path");
    // target/<profile>/deps/tls_models-… → target/<profile>
    let profile_dir = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("profile directory")
        .to_path_buf();
    let profile = profile_dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("release")
        .to_string();
    let status = std::process::Command::new(env!("CARGO"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .env("CARGO_TARGET_DIR", profile_dir.parent().expect("target directory"))
        .args(["build", "--quiet", "-p", "minizts-ext-tlsdemo", "--profile"])
        .arg(if profile == "debug" { "dev" } else { profile.as_str() })
        .status()
        .expect("run cargo build -p minizts-ext-tlsdemo");
    assert!(status.success(), "building the tlsdemo extension failed");
    profile_dir.join("libminizts_ext_tlsdemo.so")
}

fn source(variant: &str) -> String {
    let call = match variant {
        "empty_loop" => String::new(),
        "builtin_abs" => "abs($i);".to_string(),
        v => format!("tlsdemo_{v}();"),
    };
    format!("<?php for ($i = 0; $i < {CALLS}; $i++) {{ {call} }}")
}

fn bench_strategy<G: Globals>(c: &mut Criterion) {
    let g: G = minizts_vm::thread_startup().expect("engine startup");
    let mut group = c.benchmark_group(format!("tls_models/{}", G::NAME));
    group.throughput(Throughput::Elements(CALLS));
    for v in VARIANTS {
        let src = source(v);
        let script: Arc<Script> = minizts_compiler::compile(g, src.as_bytes(), v).expect("compiles");
        let argv = [PhpStr::from(v)];
        let first = minizts_vm::run_request(g, script.clone(), &argv, Sink::Discard);
        assert_eq!(first.exit_status, 0, "{v} failed");
        group.bench_function(BenchmarkId::from_parameter(v), |b| {
            b.iter(|| minizts_vm::run_request(g, script.clone(), &argv, Sink::Discard).exit_status)
        });
    }
    group.finish();
    // SAFETY: `g` is not used after this.
    unsafe { minizts_vm::thread_shutdown(g) };
}

fn tls_models(c: &mut Criterion) {
    let lib = tlsdemo();
    // The host table the module startup hook sees does not matter here:
    // calls always get the running strategy's table.
    minizts_vm::extensions::load_all::<Tls>(&[lib.display().to_string()]).expect("load tlsdemo");
    bench_strategy::<Tls>(c);
    bench_strategy::<Ctx>(c);
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = tls_models
}
criterion_main!(benches);
