//! `counter`: module globals in an extension. Each thread gets its own
//! [`CounterGlobals`] block from the host's resource manager (the
//! id-indexed path, which works for a library loaded with `dlopen` under
//! every globals strategy); the request startup hook resets the counter,
//! so a script always starts from zero, while `requests` keeps counting
//! the requests this thread has served.
//!
//! Functions reach the block the way the host passes it: through the
//! thread's resource table handed in with each call (`CallInfo::resources`,
//! PHP 5's `tsrm_ls`), indexed by the id the host wrote into
//! [`GLOBALS_ID`] at load.

use std::sync::atomic::AtomicUsize;

use minizts_ext_api::rust::{Call, HookCtx, Result, OK};
use minizts_ext_api::{export_module, function, hook, FunctionEntry, ModuleEntry, Status, Val};

/// This module's per-thread state.
#[derive(Default)]
pub struct CounterGlobals {
    /// Bumped by `counter_bump()`, reset at every request start.
    count: i64,
    /// Requests this thread has started.
    requests: i64,
    /// A heap value, so the destructor has something to free.
    log: Vec<i64>,
}

/// The resource id the host assigns (PHP's `counter_globals_id`).
static GLOBALS_ID: AtomicUsize = AtomicUsize::new(0);

fn globals<'a>(call: &Call<'a>) -> &'a mut CounterGlobals {
    // SAFETY: the block was registered as `CounterGlobals` under
    // GLOBALS_ID; calls on one thread do not overlap, and each function
    // holds the reference only while it runs.
    unsafe { &mut *call.globals_from_ctx::<CounterGlobals>(&GLOBALS_ID) }
}

fn request_startup(ctx: &HookCtx) -> Status {
    // SAFETY: the host passes this module's block.
    if let Some(g) = unsafe { ctx.globals::<CounterGlobals>() } {
        g.count = 0;
        g.requests += 1;
        g.log.clear();
    }
    OK
}

/// `counter_bump(int $by = 1): int` — adds to the counter, returns it.
fn bump(call: &Call) -> Result<Val> {
    let by = if call.argc() > 0 { call.long(0)? } else { 1 };
    let g = globals(call);
    g.count = g.count.wrapping_add(by);
    g.log.push(by);
    Ok(call.new_long(g.count))
}

/// `counter_get(): int` — the counter.
fn get(call: &Call) -> Result<Val> {
    Ok(call.new_long(globals(call).count))
}

/// `counter_requests(): int` — requests this thread has started.
fn requests(call: &Call) -> Result<Val> {
    Ok(call.new_long(globals(call).requests))
}

/// `counter_log(): array` — every amount bumped this request.
fn log(call: &Call) -> Result<Val> {
    let out = call.new_array();
    for &n in &globals(call).log {
        let v = call.new_long(n);
        call.push(out, v)?;
    }
    Ok(out)
}

/// `counter_via_host(): int` — the counter, found by asking the host for
/// the block (`HostApi::module_globals`) instead of the passed table.
fn via_host(call: &Call) -> Result<Val> {
    // SAFETY: as for `globals`.
    let g = unsafe { &*call.globals_from_host::<CounterGlobals>(&GLOBALS_ID) };
    Ok(call.new_long(g.count))
}

static FUNCTIONS: [FunctionEntry; 5] = [
    function!("counter_bump", "by", 0, bump),
    function!("counter_get", "", 0, get),
    function!("counter_requests", "", 0, requests),
    function!("counter_log", "", 0, log),
    function!("counter_via_host", "", 0, via_host),
];

export_module!(ModuleEntry::new(c"counter", c"0.1.0", &FUNCTIONS)
    .with_globals::<CounterGlobals>(&GLOBALS_ID)
    .with_request_hooks(hook!(request_startup), None));
