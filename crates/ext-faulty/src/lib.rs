//! `faulty`: an extension that misbehaves on request, so the host's
//! handling of broken extensions can be tested (tests/extensions.rs).
//!
//! `MINIZTS_FAULTY` chooses the entry `minizts_get_module` returns:
//! unset — a valid module whose functions panic, raise errors and call
//! back; `api` — built for another module API; `clash` — a function named
//! like a builtin (`strlen`); `null` — no entry at all; `rinit` — request
//! startup fails; `rinit-panic` — request startup panics; `minit` — module
//! startup fails; `trace` — a valid module whose module globals and hooks
//! report each call on stderr (constructor, request startup, request
//! shutdown, destructor), so their order can be checked.

use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

use minizts_ext_api::rust::{Call, HookCtx, Result, OK};
use minizts_ext_api::{function, hook, FunctionEntry, ModuleEntry, Status, Val, FAILURE};

/// `faulty_panic(string $message)`: panics with the message.
fn panic_with(call: &Call) -> Result<Val> {
    let m = String::from_utf8_lossy(call.str(0)?).into_owned();
    panic!("{m}");
}

/// `faulty_fatal()`: raises a fatal error through the host.
fn fatal(call: &Call) -> Result<Val> {
    Err(call.fatal("faulty_fatal(): the extension gave up"))
}

/// `faulty_warn()`: a warning, then 1.
fn warn(call: &Call) -> Result<Val> {
    call.warning("faulty_warn(): something looks odd");
    Ok(call.new_long(1))
}

/// `faulty_call(callable $f, mixed ...$args)`: `$f(...$args)`.
fn call_back(call: &Call) -> Result<Val> {
    let f = call.callable(0)?;
    let args: Vec<Val> = (1..call.argc()).map(|i| call.arg(i)).collect();
    call.call(f, &args)
}

/// `faulty_index(int $i)`: indexes a 3-element array (panics past it).
fn index(call: &Call) -> Result<Val> {
    let data = [10i64, 20, 30];
    let i = call.long(0)? as usize;
    Ok(call.new_long(data[i]))
}

/// Requests started in this process (numbered from 0 in start order).
static SEQUENCE: AtomicI64 = AtomicI64::new(0);

/// This thread's current request number.
#[derive(Default)]
struct Sequence {
    current: i64,
}

static SEQUENCE_ID: AtomicUsize = AtomicUsize::new(0);

fn ok_hook(ctx: &HookCtx) -> Status {
    // SAFETY: the valid entry registers `Sequence` globals.
    if let Some(g) = unsafe { ctx.globals::<Sequence>() } {
        g.current = SEQUENCE.fetch_add(1, Ordering::Relaxed);
    }
    OK
}

/// `faulty_sequence(): int` — this request's number in start order across
/// the process (0, 1, 2, … over all threads): lets a test make exactly
/// every k-th request of a multi-threaded run fail.
fn sequence(call: &Call) -> Result<Val> {
    // SAFETY: the valid entry registers `Sequence` globals.
    let g = unsafe { &*call.globals_from_ctx::<Sequence>(&SEQUENCE_ID) };
    Ok(call.new_long(g.current))
}

fn failing_hook(_: &HookCtx) -> Status {
    FAILURE
}

fn panicking_hook(_: &HookCtx) -> Status {
    panic!("request startup exploded")
}

/// Module globals that say when they are built and dropped.
struct Traced {
    requests: u32,
}

impl Default for Traced {
    fn default() -> Self {
        eprintln!("faulty: globals constructor");
        Traced { requests: 0 }
    }
}

impl Drop for Traced {
    fn drop(&mut self) {
        eprintln!("faulty: globals destructor after {} request(s)", self.requests);
    }
}

static TRACED_ID: AtomicUsize = AtomicUsize::new(0);

fn trace_rinit(ctx: &HookCtx) -> Status {
    // SAFETY: this module registered `Traced` globals.
    let g = unsafe { ctx.globals::<Traced>() }.expect("module globals");
    g.requests += 1;
    eprintln!("faulty: request startup");
    OK
}

fn trace_rshutdown(_: &HookCtx) -> Status {
    eprintln!("faulty: request shutdown");
    OK
}

fn trace_minit(_: &HookCtx) -> Status {
    eprintln!("faulty: module startup");
    OK
}

fn trace_mshutdown(_: &HookCtx) -> Status {
    eprintln!("faulty: module shutdown");
    OK
}

/// `faulty_missing_arg(...$any)`: reads argument #3 whether or not it
/// was passed (an extension bug the host must report, not hide).
fn missing_arg(call: &Call) -> Result<Val> {
    let n = call.long(2)?;
    Ok(call.new_long(n))
}

static FUNCTIONS: [FunctionEntry; 7] = [
    function!("faulty_missing_arg", "...any", 0, missing_arg),
    function!("faulty_sequence", "", 0, sequence),
    function!("faulty_panic", "message", 1, panic_with),
    function!("faulty_fatal", "", 0, fatal),
    function!("faulty_warn", "", 0, warn),
    function!("faulty_call", "callback,...args", 1, call_back),
    function!("faulty_index", "i", 1, index),
];

static CLASHING: [FunctionEntry; 1] = [function!("strlen", "string", 1, warn)];

static GOOD: ModuleEntry = ModuleEntry::new(c"faulty", c"0.1.0", &FUNCTIONS)
    .with_globals::<Sequence>(&SEQUENCE_ID)
    .with_request_hooks(hook!(ok_hook), None);

static OLD_API: ModuleEntry = ModuleEntry {
    api_version: 20200101,
    ..ModuleEntry::new(c"faulty", c"0.1.0", &FUNCTIONS)
};

static CLASH: ModuleEntry = ModuleEntry::new(c"faulty", c"0.1.0", &CLASHING);

static RINIT_FAILS: ModuleEntry =
    ModuleEntry::new(c"faulty", c"0.1.0", &FUNCTIONS).with_request_hooks(hook!(failing_hook), None);

static RINIT_PANICS: ModuleEntry =
    ModuleEntry::new(c"faulty", c"0.1.0", &FUNCTIONS).with_request_hooks(hook!(panicking_hook), None);

static MINIT_FAILS: ModuleEntry =
    ModuleEntry::new(c"faulty", c"0.1.0", &FUNCTIONS).with_module_hooks(hook!(failing_hook), None);

static TRACE: ModuleEntry = ModuleEntry::new(c"faulty", c"0.1.0", &FUNCTIONS)
    .with_globals::<Traced>(&TRACED_ID)
    .with_module_hooks(hook!(trace_minit), hook!(trace_mshutdown))
    .with_request_hooks(hook!(trace_rinit), hook!(trace_rshutdown));

/// The entry point, choosing the entry from `MINIZTS_FAULTY`.
#[no_mangle]
pub extern "C" fn minizts_get_module() -> *const ModuleEntry {
    match std::env::var("MINIZTS_FAULTY").as_deref() {
        Ok("api") => &OLD_API,
        Ok("clash") => &CLASH,
        Ok("null") => std::ptr::null(),
        Ok("rinit") => &RINIT_FAILS,
        Ok("rinit-panic") => &RINIT_PANICS,
        Ok("minit") => &MINIT_FAILS,
        Ok("trace") => &TRACE,
        _ => &GOOD,
    }
}
