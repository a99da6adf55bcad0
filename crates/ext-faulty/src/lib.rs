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
//!
//! Entries with absurd fields, which the host must refuse before it reads
//! or allocates what they describe: `globals-huge` (a petabyte of module
//! globals), `globals-align` (alignment 3), `functions-huge` (a trillion
//! functions), `functions-null` (functions without a table),
//! `functions-unmapped` (a table at an address nothing is mapped at),
//! `name-unterminated` (a name with no NUL in the first 8 KiB),
//! `name-utf8` (a name that is not UTF-8), `name-null` (no name),
//! `function-name-unterminated` (likewise, for a function's name),
//! `globals-id-unmapped` (the id slot at an unmapped address),
//! `handler-not-code` (a handler pointing at data).

use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::OnceLock;

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

static GLOBALS_HUGE: ModuleEntry = ModuleEntry {
    globals_size: 1 << 50,
    ..ModuleEntry::new(c"faulty", c"0.1.0", &FUNCTIONS).with_globals::<Sequence>(&SEQUENCE_ID)
};

static GLOBALS_ALIGN: ModuleEntry = ModuleEntry {
    globals_align: 3,
    ..ModuleEntry::new(c"faulty", c"0.1.0", &FUNCTIONS).with_globals::<Sequence>(&SEQUENCE_ID)
};

static FUNCTIONS_HUGE: ModuleEntry = ModuleEntry {
    function_count: 1 << 40,
    ..ModuleEntry::new(c"faulty", c"0.1.0", &FUNCTIONS)
};

static FUNCTIONS_NULL: ModuleEntry = ModuleEntry {
    functions: std::ptr::null(),
    ..ModuleEntry::new(c"faulty", c"0.1.0", &FUNCTIONS)
};

/// Below `vm.mmap_min_addr`: never mapped.
const UNMAPPED: usize = 0x1000;

static FUNCTIONS_UNMAPPED: ModuleEntry = ModuleEntry {
    functions: UNMAPPED as *const FunctionEntry,
    ..ModuleEntry::new(c"faulty", c"0.1.0", &FUNCTIONS)
};

/// Bytes with no NUL among them, longer than any name the host accepts.
static NO_NUL: [u8; 8192] = [b'n'; 8192];

static NAME_UNTERMINATED: ModuleEntry = ModuleEntry {
    name: NO_NUL.as_ptr().cast(),
    ..ModuleEntry::new(c"faulty", c"0.1.0", &FUNCTIONS)
};

static NAME_UTF8: ModuleEntry = ModuleEntry::new(c"faulty\xff", c"0.1.0", &FUNCTIONS);

static NAME_NULL: ModuleEntry = ModuleEntry {
    name: std::ptr::null(),
    ..ModuleEntry::new(c"faulty", c"0.1.0", &FUNCTIONS)
};

static UNTERMINATED_FUNCTION: [FunctionEntry; 2] = [
    function!("faulty_warn", "", 0, warn),
    FunctionEntry {
        name: NO_NUL.as_ptr().cast(),
        ..function!("faulty_fatal", "", 0, fatal)
    },
];

static FUNCTION_NAME_UNTERMINATED: ModuleEntry = ModuleEntry::new(c"faulty", c"0.1.0", &UNTERMINATED_FUNCTION);

static GLOBALS_ID_UNMAPPED: ModuleEntry = ModuleEntry {
    globals_id: UNMAPPED as *const AtomicUsize,
    ..ModuleEntry::new(c"faulty", c"0.1.0", &FUNCTIONS).with_globals::<Sequence>(&SEQUENCE_ID)
};

/// An entry whose one "handler" is the address of data, not of a
/// function (built at run time: a constant cannot hold such a pointer).
fn handler_not_code() -> &'static ModuleEntry {
    static ENTRY: OnceLock<&'static ModuleEntry> = OnceLock::new();
    ENTRY.get_or_init(|| {
        // SAFETY: never called: the host refuses the entry because the
        // address is not in executable memory, which is what this tests.
        let handler = unsafe { std::mem::transmute::<*const u8, minizts_ext_api::Handler>(NO_NUL.as_ptr()) };
        let functions: &'static [FunctionEntry] = Box::leak(Box::new([FunctionEntry {
            handler: Some(handler),
            ..function!("faulty_warn", "", 0, warn)
        }]));
        Box::leak(Box::new(ModuleEntry {
            functions: functions.as_ptr(),
            function_count: functions.len(),
            ..ModuleEntry::new(c"faulty", c"0.1.0", &[])
        }))
    })
}

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
        Ok("globals-huge") => &GLOBALS_HUGE,
        Ok("globals-align") => &GLOBALS_ALIGN,
        Ok("functions-huge") => &FUNCTIONS_HUGE,
        Ok("functions-null") => &FUNCTIONS_NULL,
        Ok("functions-unmapped") => &FUNCTIONS_UNMAPPED,
        Ok("name-unterminated") => &NAME_UNTERMINATED,
        Ok("name-utf8") => &NAME_UTF8,
        Ok("name-null") => &NAME_NULL,
        Ok("function-name-unterminated") => &FUNCTION_NAME_UNTERMINATED,
        Ok("globals-id-unmapped") => &GLOBALS_ID_UNMAPPED,
        Ok("handler-not-code") => handler_not_code(),
        _ => &GOOD,
    }
}
