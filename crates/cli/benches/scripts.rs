//! `cargo bench`: every script in `bench-scripts/` under every globals
//! strategy, in one run, with criterion. Each strategy's engine is started
//! once; each iteration is one request (the script compiled once, run with
//! its output discarded), so the figures are execution only, as a server
//! would see per request.
//!
//! The default run (`cargo bench --bench scripts`, once built): 10
//! samples, 2 s warm-up and 10 s measurement per benchmark, 36 benchmarks
//! (6 scripts × 6 strategies), about 10 minutes on the project's shared
//! 2-core machine. Measured there: the hello.mz group, 16 s a benchmark
//! (warm-up, measurement, analysis and plots; json_floats.mz, as fast, was
//! not timed), and bench.mz under tls, 17 s. A request of arrays.mz, bench.mz, calls.mz
//! or strings.mz takes 0.5 to 0.8 s, so criterion's 1 s a sample (10 s /
//! 10 samples) rounds up to 2 requests a sample: 11 to 16 s of measurement
//! and 14 to 18 s a benchmark (bench.mz under tls: 20 requests of 0.76 s).
//! With the first request of each script under each strategy, made outside
//! the measurement to check that it succeeds (also when a filter skips the
//! benchmark), about 17 s: 12 × 16 s + 24 × 14–18 s + 17 s ≈ 10 minutes.
//! A request over 1 s (a slower build, a loaded machine) makes criterion
//! warn that it cannot complete 10 samples in 10 s and take 10 requests.
//!
//! `MINIZTS_BENCH_LONG=1 cargo bench --bench scripts` is the longer, more
//! precise run, about 40 minutes: 50 samples, 3 s warm-up and 45 s
//! measurement per benchmark (0.9 s per sample, so again 2 requests a
//! sample for the slow scripts: 55 to 80 s of measurement for them).
//!
//! Criterion's own flags change either, e.g. `cargo bench -- --sample-size
//! 30`, or `cargo bench --bench scripts -- 'bench.mz/'` for one script.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use minizts_core::bytecode::Script;
use minizts_core::PhpStr;
use minizts_globals::memory::CountingAlloc;
use minizts_globals::{strategies, with_strategy, Globals, Sink};

// The allocator the `minizts` binary uses, so allocation costs the same.
#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

fn bench_scripts() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench-scripts");
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("bench-scripts/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "mz"))
        // tls_models.mz measures an extension's calls and needs it loaded:
        // scripts/tls-models.sh runs it.
        .filter(|p| !p.ends_with("tls_models.mz"))
        .collect();
    scripts.sort();
    scripts
}

/// Starts strategy `G`'s engine on this thread, benchmarks one request of
/// `src` per iteration, and shuts the engine down.
fn bench_one<G: Globals>(c: &mut Criterion, group: &str, file: &Path, src: &[u8]) {
    let g: G = minizts_vm::thread_startup().expect("engine startup");
    let name = file.display().to_string();
    let script: Arc<Script> = minizts_compiler::compile(g, src, &name).expect("bench scripts compile");
    let argv = [PhpStr::from(name.as_str())];
    // A first request outside the measurement: the script must succeed.
    let outcome = minizts_vm::run_request(g, script.clone(), &argv, Sink::Discard);
    assert_eq!(outcome.exit_status, 0, "{name} failed under --globals={}", G::NAME);
    let mut group = c.benchmark_group(group);
    group.bench_function(BenchmarkId::from_parameter(G::NAME), |b| {
        b.iter(|| minizts_vm::run_request(g, script.clone(), &argv, Sink::Discard).exit_status)
    });
    group.finish();
    drop(script);
    // SAFETY: `g` is not used after this.
    unsafe { minizts_vm::thread_shutdown(g) };
}

fn scripts(c: &mut Criterion) {
    for file in bench_scripts() {
        let src = std::fs::read(&file).expect("read bench script");
        let group = file.file_name().unwrap().to_string_lossy().into_owned();
        for (name, _) in strategies::ALL {
            with_strategy!(name, |G| bench_one::<G>(c, &group, &file, &src));
        }
    }
}

/// The default run, or with `MINIZTS_BENCH_LONG=1` (any value but empty
/// or `0`) the longer one; see the module doc for what each takes.
fn config() -> Criterion {
    let long = std::env::var("MINIZTS_BENCH_LONG").is_ok_and(|v| !v.is_empty() && v != "0");
    let (samples, warm_up, measurement) = if long { (50, 3, 45) } else { (10, 2, 10) };
    Criterion::default()
        .sample_size(samples)
        .warm_up_time(Duration::from_secs(warm_up))
        .measurement_time(Duration::from_secs(measurement))
}

criterion_group! {
    name = benches;
    config = config();
    targets = scripts
}
criterion_main!(benches);
