//! `cargo bench`: every script in `bench-scripts/` under every globals
//! strategy, in one run, with criterion. Each strategy's engine is started
//! once; each iteration is one request (the script compiled once, run with
//! its output discarded), so the figures are execution only, as a server
//! would see per request.
//!
//! The defaults keep the whole run to a few minutes on two cores; criterion's
//! own flags change them, e.g. `cargo bench -- --sample-size 30` for tighter
//! intervals, or `cargo bench -- 'bench.mz/'` for one script.

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

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = scripts
}
criterion_main!(benches);
