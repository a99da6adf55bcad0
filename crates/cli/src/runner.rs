//! `minizts run --threads N --requests M`: many requests on many threads,
//! in the spirit of `php-cgi -T`. The script is compiled once and the
//! immutable compiled form is shared by every worker (`--no-cache`
//! recompiles it at every request instead, like PHP without opcache).
//! Each worker starts its own engine (EG, CG and module globals through
//! the active strategy), then runs requests — request startup, execute,
//! request shutdown — taking request numbers from a shared counter until
//! all are done. `--thread-init=per-request` tears the thread's engine
//! down after every request and starts it again at the next, the way
//! FrankenPHP called `ts_resource()` per request before its fix (seed 002).
//!
//! A failed request (a fatal error, a limit, an extension panic, a
//! non-zero exit status, a panic inside the engine) counts as failed and
//! the worker goes on with a clean engine.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use minizts_core::bytecode::Script;
use minizts_core::PhpStr;
use minizts_globals::{Globals, Sink};

/// How a worker thread gets its engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ThreadInit {
    /// Once per thread (FrankenPHP after its fix, php-fpm, Apache workers).
    PerThread,
    /// At every request: free the thread's engine at request end, start it
    /// again through the shared tables at the next request start.
    PerRequest,
}

impl ThreadInit {
    pub fn name(self) -> &'static str {
        match self {
            ThreadInit::PerThread => "per-thread",
            ThreadInit::PerRequest => "per-request",
        }
    }
}

/// What happens to each request's output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum KeepOutput {
    /// Thrown away.
    Discard,
    /// Kept, and printed after the run in request order.
    All,
}

/// The runner's settings.
pub struct Plan<'a> {
    pub threads: usize,
    pub requests: usize,
    pub no_cache: bool,
    pub thread_init: ThreadInit,
    pub output: KeepOutput,
    pub json: bool,
    pub src: &'a [u8],
    pub file: &'a str,
    /// `$argv` (made into engine strings on each worker).
    pub argv: &'a [String],
    /// Applies `-d` settings to a fresh engine.
    pub configure: &'a (dyn Fn(&mut minizts_globals::ExecutorGlobals) -> Result<(), String> + Sync),
    /// For the report.
    pub strategy: &'a str,
    pub lock: &'a str,
    pub dtoa: &'a str,
}

/// One worker's results.
#[derive(Default)]
struct Tally {
    latencies: Vec<Duration>,
    failed: usize,
}

fn start<G: Globals>(plan: &Plan) -> Result<G, String> {
    let g: G = minizts_vm::thread_startup().map_err(|e| e.to_string())?;
    (plan.configure)(minizts_globals::eg!(g))?;
    Ok(g)
}

/// One worker: requests until the shared counter runs out.
fn worker<G: Globals>(
    plan: &Plan,
    script: Option<&Arc<Script>>,
    next: &AtomicUsize,
    outputs: &Mutex<Vec<Option<Vec<u8>>>>,
) -> Result<Tally, String> {
    let mut tally = Tally::default();
    let argv: Vec<PhpStr> = plan.argv.iter().map(|a| PhpStr::from(a.as_str())).collect();
    let per_request = plan.thread_init == ThreadInit::PerRequest;
    let mut engine: Option<G> = if per_request { None } else { Some(start::<G>(plan)?) };
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= plan.requests {
            break;
        }
        let t0 = Instant::now();
        let g = match engine {
            Some(g) => g,
            None => {
                let g = start::<G>(plan)?;
                engine = Some(g);
                g
            }
        };
        let keep = plan.output == KeepOutput::All;
        let result = catch_unwind(AssertUnwindSafe(|| {
            let script = match script {
                Some(s) => s.clone(),
                None => match minizts_compiler::compile(g, plan.src, plan.file) {
                    Ok(s) => s,
                    Err(e) => {
                        eprint!("{}", crate::compile_error_text(&e, plan.file));
                        return (false, None);
                    }
                },
            };
            let sink = if keep { Sink::Capture(Vec::new()) } else { Sink::Discard };
            let outcome = minizts_vm::run_request(g, script, &argv, sink);
            let ok = outcome.error.is_none() && outcome.exit_status == 0;
            let out = match outcome.sink {
                Sink::Capture(buf) => Some(buf),
                _ => None,
            };
            (ok, out)
        }));
        let ok = match result {
            Ok((ok, out)) => {
                if let Some(out) = out {
                    outputs.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(out);
                }
                ok
            }
            Err(_) => {
                // A bug in minizts: report it, and give this thread a
                // fresh engine rather than trust the old one.
                eprintln!(
                    "minizts: internal error in request {i} (the engine panicked); restarting this worker's engine"
                );
                if let Some(g) = engine.take() {
                    // SAFETY: the handle is not used after this.
                    unsafe { minizts_vm::thread_shutdown(g) };
                }
                false
            }
        };
        if per_request {
            if let Some(g) = engine.take() {
                // SAFETY: the handle is not used after this.
                unsafe { minizts_vm::thread_shutdown(g) };
            }
        } else if engine.is_none() {
            engine = Some(start::<G>(plan)?);
        }
        tally.latencies.push(t0.elapsed());
        if !ok {
            tally.failed += 1;
        }
    }
    if let Some(g) = engine {
        // SAFETY: the handle is not used after this.
        unsafe { minizts_vm::thread_shutdown(g) };
    }
    Ok(tally)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Runs the plan under strategy `G`; returns the process exit status (1
/// if any request failed).
pub fn run<G: Globals>(plan: &Plan) -> u8 {
    if plan.threads == 0 || plan.requests == 0 {
        eprintln!("minizts: --threads and --requests must be at least 1");
        return 2;
    }
    if G::NAME == "nts" && plan.threads > 1 {
        eprintln!(
            "minizts: the 'nts' globals strategy allows only one engine thread; use --threads 1 or another strategy (--globals=help)"
        );
        return 2;
    }
    // Compile once, on this thread's engine, then let it go (under `nts`
    // the one engine slot is needed by the worker).
    let script = if plan.no_cache {
        None
    } else {
        let g = match start::<G>(plan) {
            Ok(g) => g,
            Err(e) => {
                eprintln!("minizts: {e}");
                return 2;
            }
        };
        let r = minizts_compiler::compile(g, plan.src, plan.file);
        // SAFETY: `g` is not used after this.
        unsafe { minizts_vm::thread_shutdown(g) };
        match r {
            Ok(s) => Some(s),
            Err(e) => {
                eprint!("{}", crate::compile_error_text(&e, plan.file));
                return 255;
            }
        }
    };
    let next = AtomicUsize::new(0);
    let outputs = Mutex::new(vec![
        None;
        if plan.output == KeepOutput::All {
            plan.requests
        } else {
            0
        }
    ]);
    let t0 = Instant::now();
    let results: Vec<Result<Tally, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..plan.threads)
            .map(|k| {
                let (script, next, outputs) = (script.as_ref(), &next, &outputs);
                std::thread::Builder::new()
                    .name(format!("minizts-worker-{k}"))
                    .stack_size(crate::ENGINE_STACK)
                    .spawn_scoped(s, move || worker::<G>(plan, script, next, outputs))
                    .expect("start a worker thread")
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("a worker thread panicked".into())))
            .collect()
    });
    let wall = t0.elapsed();
    let mut latencies = Vec::with_capacity(plan.requests);
    let mut failed = 0;
    for r in results {
        match r {
            Ok(t) => {
                latencies.extend(t.latencies);
                failed += t.failed;
            }
            Err(e) => {
                eprintln!("minizts: a worker could not start its engine: {e}");
                failed += 1;
            }
        }
    }
    let done = latencies.len();
    failed += plan.requests.saturating_sub(done).min(plan.requests);
    latencies.sort();
    if plan.output == KeepOutput::All {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        for o in outputs
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .into_iter()
            .flatten()
        {
            let _ = out.write_all(&o);
        }
        let _ = out.flush();
    }
    let rps = done as f64 / wall.as_secs_f64().max(1e-9);
    let (p50, p99, max) = (
        percentile(&latencies, 50.0),
        percentile(&latencies, 99.0),
        latencies.last().copied().unwrap_or_default(),
    );
    if plan.json {
        println!(
            "{{\"strategy\":\"{}\",\"threads\":{},\"requests\":{},\"failed\":{},\"thread_init\":\"{}\",\"lock\":\"{}\",\"dtoa\":\"{}\",\"cache\":{},\"wall_s\":{:.6},\"requests_per_s\":{:.1},\"p50_ms\":{:.4},\"p99_ms\":{:.4},\"max_ms\":{:.4}}}",
            plan.strategy,
            plan.threads,
            plan.requests,
            failed,
            plan.thread_init.name(),
            plan.lock,
            plan.dtoa,
            !plan.no_cache,
            wall.as_secs_f64(),
            rps,
            ms(p50),
            ms(p99),
            ms(max)
        );
    } else {
        println!(
            "requests: {} ({} failed) on {} thread(s); --globals={} --thread-init={} --lock={} --dtoa={}{}",
            plan.requests,
            failed,
            plan.threads,
            plan.strategy,
            plan.thread_init.name(),
            plan.lock,
            plan.dtoa,
            if plan.no_cache { " --no-cache" } else { "" }
        );
        println!(
            "wall: {:.3} s, {:.1} requests/s; latency p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
            wall.as_secs_f64(),
            rps,
            ms(p50),
            ms(p99),
            ms(max)
        );
    }
    u8::from(failed > 0)
}
