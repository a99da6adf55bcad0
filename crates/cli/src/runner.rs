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
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
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

/// Latencies in constant memory (so the runner's own footprint stays
/// flat over millions of requests): a log-linear histogram with 64
/// buckets per power of two of nanoseconds, about 1.6 % resolution.
struct Histogram {
    counts: Vec<u64>,
    total: u64,
    max: Duration,
}

const SUB: u32 = 64;

impl Histogram {
    fn new() -> Histogram {
        Histogram {
            counts: vec![0; (64 * SUB) as usize],
            total: 0,
            max: Duration::ZERO,
        }
    }

    fn bucket(ns: u64) -> usize {
        if ns < u64::from(SUB) {
            return ns as usize;
        }
        let exp = 63 - ns.leading_zeros(); // >= 6
        let frac = (ns >> (exp - 6)) & u64::from(SUB - 1);
        ((exp - 5) * SUB) as usize + frac as usize
    }

    /// The upper end of bucket `b`, in nanoseconds.
    fn upper(b: usize) -> u64 {
        let b = b as u64;
        let sub = u64::from(SUB);
        if b < sub {
            return b;
        }
        let exp = b / sub + 5;
        let frac = b % sub;
        ((sub + frac + 1) << (exp - 6)) - 1
    }

    fn record(&mut self, d: Duration) {
        let ns = d.as_nanos().min(u128::from(u64::MAX)) as u64;
        self.counts[Self::bucket(ns)] += 1;
        self.total += 1;
        self.max = self.max.max(d);
    }

    fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
        self.max = self.max.max(other.max);
    }

    fn percentile(&self, p: f64) -> Duration {
        if self.total == 0 {
            return Duration::ZERO;
        }
        let rank = ((p / 100.0) * self.total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Duration::from_nanos(Self::upper(b)).min(self.max);
            }
        }
        self.max
    }
}

/// One worker's results.
struct Tally {
    latencies: Histogram,
    failed: usize,
}

fn start<G: Globals>(plan: &Plan) -> Result<G, String> {
    let g: G = minizts_vm::thread_startup().map_err(|e| e.to_string())?;
    let configured = (plan.configure)(minizts_globals::eg!(g));
    if let Err(e) = configured {
        // SAFETY: `g` is not used after this.
        unsafe { minizts_vm::thread_shutdown(g) };
        return Err(e);
    }
    Ok(g)
}

/// One worker: requests until the shared counter runs out. Returns what
/// it did, and why it stopped early if it could not start an engine.
fn worker<G: Globals>(
    plan: &Plan,
    script: Option<&Arc<Script>>,
    next: &AtomicUsize,
    outputs: &Mutex<Vec<Option<Vec<u8>>>>,
) -> (Tally, Option<String>) {
    let mut tally = Tally {
        latencies: Histogram::new(),
        failed: 0,
    };
    let error = work::<G>(plan, script, next, outputs, &mut tally).err();
    (tally, error)
}

fn work<G: Globals>(
    plan: &Plan,
    script: Option<&Arc<Script>>,
    next: &AtomicUsize,
    outputs: &Mutex<Vec<Option<Vec<u8>>>>,
    tally: &mut Tally,
) -> Result<(), String> {
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
            None => match start::<G>(plan) {
                Ok(g) => {
                    engine = Some(g);
                    g
                }
                Err(e) => {
                    // This request was taken and cannot run.
                    tally.failed += 1;
                    tally.latencies.record(t0.elapsed());
                    return Err(e);
                }
            },
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
        tally.latencies.record(t0.elapsed());
        if !ok {
            tally.failed += 1;
        }
    }
    if let Some(g) = engine {
        // SAFETY: the handle is not used after this.
        unsafe { minizts_vm::thread_shutdown(g) };
    }
    Ok(())
}

/// Starts the worker threads and waits for them. Every thread is started
/// before any takes a request: if one cannot be (too many threads for
/// the process's limits, each with its large stack), the ones started
/// stop without running anything, the reason is printed as one line,
/// and the result is `None`.
fn run_workers<G: Globals>(
    plan: &Plan,
    script: Option<&Arc<Script>>,
    next: &AtomicUsize,
    outputs: &Mutex<Vec<Option<Vec<u8>>>>,
) -> Option<Vec<(Tally, Option<String>)>> {
    // Held for writing while threads start; each worker waits to read it.
    let gate = RwLock::new(());
    let refused = AtomicBool::new(false);
    std::thread::scope(|s| {
        let starting = gate.write().unwrap_or_else(|e| e.into_inner());
        let mut handles = Vec::new();
        let mut failure = None;
        for k in 0..plan.threads {
            let (gate, refused) = (&gate, &refused);
            let spawned = std::thread::Builder::new()
                .name(format!("minizts-worker-{k}"))
                .stack_size(crate::ENGINE_STACK)
                .spawn_scoped(s, move || {
                    drop(gate.read().unwrap_or_else(|e| e.into_inner()));
                    (!refused.load(Ordering::Acquire)).then(|| worker::<G>(plan, script, next, outputs))
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    failure = Some((k, e));
                    break;
                }
            }
        }
        if failure.is_some() {
            refused.store(true, Ordering::Release);
        }
        drop(starting);
        let results: Vec<_> = handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    let empty = Tally {
                        latencies: Histogram::new(),
                        failed: 0,
                    };
                    Some((empty, Some("a worker thread panicked".into())))
                })
            })
            .collect();
        if let Some((k, e)) = failure {
            let room = match k {
                0 => "no worker thread can be started here".to_string(),
                _ => format!("use --threads {k} or fewer"),
            };
            eprintln!(
                "minizts: cannot start worker thread {} of {} (each needs {} MiB of stack): {e}; no request was run: {room}",
                k + 1,
                plan.threads,
                crate::ENGINE_STACK >> 20
            );
            return None;
        }
        Some(results.into_iter().flatten().collect())
    })
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Runs the plan under strategy `G`; returns the process exit status: 1
/// if any request failed, 2 if the run could not start as asked (bad
/// counts, `nts` with several threads, a worker thread that cannot be
/// started), with one line on stderr saying why.
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
    let mut kept = Vec::new();
    if plan.output == KeepOutput::All && kept.try_reserve_exact(plan.requests).is_err() {
        eprintln!(
            "minizts: cannot keep the output of {} requests (--output=all): out of memory; use fewer --requests or --output=discard",
            plan.requests
        );
        return 2;
    }
    kept.resize(
        if plan.output == KeepOutput::All {
            plan.requests
        } else {
            0
        },
        None,
    );
    let outputs = Mutex::new(kept);
    let t0 = Instant::now();
    let Some(results) = run_workers::<G>(plan, script.as_ref(), &next, &outputs) else {
        return 2;
    };
    let wall = t0.elapsed();
    let mut latencies = Histogram::new();
    let mut failed = 0;
    for (t, error) in results {
        latencies.merge(&t.latencies);
        failed += t.failed;
        if let Some(e) = error {
            eprintln!("minizts: a worker stopped: {e}");
        }
    }
    // Requests no worker got to (every worker stopped early) failed too.
    let done = latencies.total as usize;
    failed += plan.requests.saturating_sub(done);
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
    let (p50, p99, max) = (latencies.percentile(50.0), latencies.percentile(99.0), latencies.max);
    if plan.json {
        println!(
            "{{\"strategy\":\"{}\",\"threads\":{},\"requests\":{},\"failed\":{},\"thread_init\":\"{}\",\"lock\":\"{}\",\"dtoa\":\"{}\",\"cache\":{},\"wall_s\":{:.6},\"requests_per_s\":{:.1},\"p50_us\":{:.2},\"p99_us\":{:.2},\"max_us\":{:.2}}}",
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
            us(p50),
            us(p99),
            us(max)
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
            "wall: {:.3} s, {:.1} requests/s; latency p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
            wall.as_secs_f64(),
            rps,
            us(p50),
            us(p99),
            us(max)
        );
    }
    u8::from(failed > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_cover_their_values_within_two_percent() {
        for ns in [
            0u64,
            1,
            63,
            64,
            65,
            100,
            999,
            1_000,
            12_345,
            1_000_000,
            987_654_321,
            1 << 40,
        ] {
            let b = Histogram::bucket(ns);
            let up = Histogram::upper(b);
            assert!(up >= ns, "{ns}: bucket {b} ends at {up}");
            assert!(up as f64 <= ns as f64 * 1.02 + 1.0, "{ns}: bucket {b} ends at {up}");
            if b > 0 {
                assert!(Histogram::upper(b - 1) < ns, "{ns}: the bucket before also covers it");
            }
        }
        let mut h = Histogram::new();
        for us in 1..=100u64 {
            h.record(Duration::from_micros(us));
        }
        let p50 = h.percentile(50.0).as_nanos() as f64;
        let p99 = h.percentile(99.0).as_nanos() as f64;
        assert!((50_000.0..=51_000.0).contains(&p50), "{p50}");
        assert!((99_000.0..=100_000.0).contains(&p99), "{p99}");
        assert_eq!(h.percentile(100.0), Duration::from_micros(100));
    }
}
