//! Extensions in plain Rust: [`Call`] wraps the host table for one call,
//! [`function!`](crate::function) turns `fn(&Call) -> Result<Val>` into an
//! `extern "C"` handler, [`hook!`](crate::hook) does the same for module
//! and request hooks, and [`export_module!`](crate::export_module) exports
//! the entry.
//!
//! A panic must never unwind across `extern "C"` (that aborts the whole
//! process), so every generated handler runs the function under
//! `catch_unwind` and reports a panic to the host, which ends that request
//! with a fatal error naming the module and function. The panic hook of
//! the extension's own copy of std is replaced with one that only records
//! the message and location, so nothing else reaches stderr.

use std::cell::RefCell;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Once;

use crate::{CallInfo, HookInfo, HostApi, Status, ThreadResources, Val, FAILURE, NO_VAL, SUCCESS};

/// The host has raised an error (a TypeError, a fatal error, a failed
/// callback): return it, and the host reports it when the handler returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Raised;

pub type Result<T> = std::result::Result<T, Raised>;

/// One call of an extension function.
pub struct Call<'a> {
    info: &'a CallInfo,
    host: &'a HostApi,
}

fn ok(b: bool) -> Result<()> {
    if b {
        Ok(())
    } else {
        Err(Raised)
    }
}

fn val(v: Val) -> Result<Val> {
    if v == NO_VAL {
        Err(Raised)
    } else {
        Ok(v)
    }
}

impl<'a> Call<'a> {
    /// # Safety
    /// `info` is what the host passed to the handler, used only during it.
    pub unsafe fn from_raw(info: *const CallInfo) -> Call<'a> {
        // SAFETY: the host passes valid pointers for the call's duration.
        unsafe {
            Call {
                info: &*info,
                host: &*(*info).host,
            }
        }
    }

    pub fn host(&self) -> &'a HostApi {
        self.host
    }

    fn raw(&self) -> *mut c_void {
        self.info.call
    }

    /// Arguments passed.
    pub fn argc(&self) -> usize {
        self.info.argc as usize
    }

    /// Argument `i` as a handle (`i < argc`).
    pub fn arg(&self, i: usize) -> Val {
        i as Val
    }

    /// This thread's resource table, as the host passed it in.
    pub fn resources(&self) -> *mut ThreadResources {
        self.info.resources
    }

    /// An `int` parameter (PHP's coercions and TypeError).
    pub fn long(&self, i: usize) -> Result<i64> {
        let mut out = 0;
        // SAFETY: `raw` is this call's state; `out` is a valid place.
        ok(unsafe { (self.host.arg_long)(self.raw(), i as u32, &mut out) })?;
        Ok(out)
    }

    /// A `float` parameter.
    pub fn double(&self, i: usize) -> Result<f64> {
        let mut out = 0.0;
        // SAFETY: as for `long`.
        ok(unsafe { (self.host.arg_double)(self.raw(), i as u32, &mut out) })?;
        Ok(out)
    }

    /// A `bool` parameter.
    pub fn bool(&self, i: usize) -> Result<bool> {
        let mut out = false;
        // SAFETY: as for `long`.
        ok(unsafe { (self.host.arg_bool)(self.raw(), i as u32, &mut out) })?;
        Ok(out)
    }

    /// A `string` parameter; the bytes live until the call returns.
    pub fn str(&self, i: usize) -> Result<&'a [u8]> {
        let mut len = 0;
        // SAFETY: as for `long`.
        let p = unsafe { (self.host.arg_string)(self.raw(), i as u32, &mut len) };
        // SAFETY: the host keeps the bytes alive for the call.
        (!p.is_null())
            .then(|| unsafe { std::slice::from_raw_parts(p, len) })
            .ok_or(Raised)
    }

    /// An `array` parameter.
    pub fn array(&self, i: usize) -> Result<Val> {
        // SAFETY: as for `long`.
        val(unsafe { (self.host.arg_array)(self.raw(), i as u32) })
    }

    /// A `callable` parameter.
    pub fn callable(&self, i: usize) -> Result<Val> {
        // SAFETY: as for `long`.
        val(unsafe { (self.host.arg_callable)(self.raw(), i as u32) })
    }

    /// One of [`crate::value_type`].
    pub fn value_type(&self, v: Val) -> u32 {
        // SAFETY: handles are checked by the host.
        unsafe { (self.host.value_type)(self.raw(), v) }
    }

    pub fn to_long(&self, v: Val) -> i64 {
        // SAFETY: as for `value_type`.
        unsafe { (self.host.to_long)(self.raw(), v) }
    }

    pub fn to_double(&self, v: Val) -> f64 {
        // SAFETY: as for `value_type`.
        unsafe { (self.host.to_double)(self.raw(), v) }
    }

    pub fn to_bool(&self, v: Val) -> bool {
        // SAFETY: as for `value_type`.
        unsafe { (self.host.to_bool)(self.raw(), v) }
    }

    /// PHP's `(string)`; the bytes live until the call returns.
    pub fn to_str(&self, v: Val) -> Result<&'a [u8]> {
        let mut len = 0;
        // SAFETY: as for `value_type`.
        let p = unsafe { (self.host.to_string)(self.raw(), v, &mut len) };
        // SAFETY: the host keeps the bytes alive for the call.
        (!p.is_null())
            .then(|| unsafe { std::slice::from_raw_parts(p, len) })
            .ok_or(Raised)
    }

    pub fn null(&self) -> Val {
        // SAFETY: `raw` is this call's state.
        unsafe { (self.host.new_null)(self.raw()) }
    }

    pub fn new_bool(&self, b: bool) -> Val {
        // SAFETY: as for `null`.
        unsafe { (self.host.new_bool)(self.raw(), b) }
    }

    pub fn new_long(&self, n: i64) -> Val {
        // SAFETY: as for `null`.
        unsafe { (self.host.new_long)(self.raw(), n) }
    }

    pub fn new_double(&self, d: f64) -> Val {
        // SAFETY: as for `null`.
        unsafe { (self.host.new_double)(self.raw(), d) }
    }

    pub fn new_str(&self, s: &[u8]) -> Val {
        // SAFETY: `s` is valid for its length.
        unsafe { (self.host.new_string)(self.raw(), s.as_ptr(), s.len()) }
    }

    pub fn new_array(&self) -> Val {
        // SAFETY: as for `null`.
        unsafe { (self.host.new_array)(self.raw()) }
    }

    /// Elements in array `a`.
    pub fn count(&self, a: Val) -> usize {
        // SAFETY: as for `value_type`.
        unsafe { (self.host.array_count)(self.raw(), a) }
    }

    /// Every (key, value) of array `a`, in order.
    pub fn entries(&self, a: Val) -> impl Iterator<Item = (Val, Val)> + '_ {
        let mut cursor = 0usize;
        std::iter::from_fn(move || {
            let (mut k, mut v) = (NO_VAL, NO_VAL);
            // SAFETY: as for `value_type`; the out-pointers are valid places.
            unsafe { (self.host.array_next)(self.raw(), a, &mut cursor, &mut k, &mut v) }.then_some((k, v))
        })
    }

    /// `$a[] = v`.
    pub fn push(&self, a: Val, v: Val) -> Result<()> {
        // SAFETY: as for `value_type`.
        ok(unsafe { (self.host.array_push)(self.raw(), a, v) })
    }

    /// `$a[k] = v`.
    pub fn set(&self, a: Val, k: Val, v: Val) -> Result<()> {
        // SAFETY: as for `value_type`.
        ok(unsafe { (self.host.array_set)(self.raw(), a, k, v) })
    }

    /// Writes `s` to the script's output (through its output buffers).
    pub fn echo(&self, s: &[u8]) {
        // SAFETY: `s` is valid for its length.
        unsafe { (self.host.echo)(self.raw(), s.as_ptr(), s.len()) }
    }

    /// A PHP warning at the script's current line.
    pub fn warning(&self, message: &str) {
        // SAFETY: as for `echo`.
        unsafe { (self.host.warning)(self.raw(), message.as_ptr(), message.len()) }
    }

    /// A fatal error; returns the [`Raised`] to return.
    pub fn fatal(&self, message: &str) -> Raised {
        // SAFETY: as for `echo`.
        unsafe { (self.host.fatal)(self.raw(), message.as_ptr(), message.len()) };
        Raised
    }

    /// Calls script callable `f` with `args`.
    pub fn call(&self, f: Val, args: &[Val]) -> Result<Val> {
        let mut out = NO_VAL;
        // SAFETY: `args` is valid for its length, `out` a valid place.
        ok(unsafe { (self.host.call)(self.raw(), f, args.as_ptr(), args.len() as u32, &mut out) })?;
        Ok(out)
    }

    /// This thread's block of the module globals registered with `id`,
    /// found by a host call (the "ask the host each time" path).
    ///
    /// # Safety
    /// `T` is the type the module registered with `id`; no other
    /// reference to the block is alive while the result is used.
    pub unsafe fn globals_from_host<T>(&self, id: &AtomicUsize) -> *mut T {
        // SAFETY: the caller's contract; the host wrote `id` at load.
        unsafe { (self.host.module_globals)(id.load(Ordering::Relaxed)).cast() }
    }

    /// The same block, found through the resource table the host passed
    /// in with the call (PHP 5's `TSRMG(id, T *, …)` with `tsrm_ls`).
    ///
    /// # Safety
    /// As for [`Call::globals_from_host`].
    pub unsafe fn globals_from_ctx<T>(&self, id: &AtomicUsize) -> *mut T {
        // SAFETY: the caller's contract; `resources` is this thread's.
        unsafe { crate::module_globals_in(self.info.resources, id.load(Ordering::Relaxed)) }
    }
}

/// A module or request hook's view.
pub struct HookCtx<'a> {
    info: &'a HookInfo,
}

impl<'a> HookCtx<'a> {
    /// # Safety
    /// `info` is what the host passed to the hook, used only during it.
    pub unsafe fn from_raw(info: *const HookInfo) -> HookCtx<'a> {
        HookCtx {
            // SAFETY: the host passes a valid pointer for the hook's
            // duration, which the caller promises bounds the context's use.
            info: unsafe { &*info },
        }
    }

    pub fn host(&self) -> &'a HostApi {
        // SAFETY: the host table is static.
        unsafe { &*self.info.host }
    }

    pub fn resources(&self) -> *mut ThreadResources {
        self.info.resources
    }

    /// This thread's module globals (request hooks only).
    ///
    /// # Safety
    /// `T` is the module's globals type and no other reference to the
    /// block is alive while the result is used.
    pub unsafe fn globals<T>(&self) -> Option<&'a mut T> {
        // SAFETY: the caller's contract.
        unsafe { self.info.globals.cast::<T>().as_mut() }
    }
}

thread_local! {
    /// The last panic's message and location, recorded by our hook.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

static QUIET_HOOK: Once = Once::new();

/// Replaces this copy of std's panic hook with one that records instead
/// of printing (the host reports the panic as a fatal error).
fn install_panic_hook() {
    QUIET_HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let message = match info.payload().downcast_ref::<&str>() {
                Some(s) => s.to_string(),
                None => match info.payload().downcast_ref::<String>() {
                    Some(s) => s.clone(),
                    None => "Box<dyn Any>".to_string(),
                },
            };
            let text = match info.location() {
                Some(l) => format!("{message} (at {}:{})", l.file(), l.line()),
                None => message,
            };
            let _ = LAST_PANIC.try_with(|p| *p.borrow_mut() = Some(text));
        }))
    });
}

fn take_panic() -> String {
    LAST_PANIC
        .try_with(|p| p.borrow_mut().take())
        .ok()
        .flatten()
        .unwrap_or_else(|| "unknown panic".to_string())
}

/// Runs `f` for the handler `function!` generated.
///
/// # Safety
/// `info` is what the host passed to the handler.
pub unsafe fn dispatch(info: *const CallInfo, f: fn(&Call<'_>) -> Result<Val>) {
    install_panic_hook();
    // SAFETY: the caller's contract.
    let call = unsafe { Call::from_raw(info) };
    match catch_unwind(AssertUnwindSafe(|| f(&call))) {
        // SAFETY: `raw` is this call's state.
        Ok(Ok(v)) => unsafe { (call.host.set_return)(call.raw(), v) },
        Ok(Err(Raised)) => {}
        Err(_) => {
            let text = take_panic();
            // SAFETY: as above.
            unsafe { (call.host.panicked)(call.raw(), text.as_ptr(), text.len()) }
        }
    }
}

/// Runs `f` for the hook `hook!` generated; a panic is a failure.
///
/// # Safety
/// `info` is what the host passed to the hook.
pub unsafe fn dispatch_hook(info: *const HookInfo, f: fn(&HookCtx<'_>) -> Status) -> Status {
    install_panic_hook();
    // SAFETY: the caller's contract.
    let ctx = unsafe { HookCtx::from_raw(info) };
    catch_unwind(AssertUnwindSafe(|| f(&ctx))).unwrap_or_else(|_| {
        let _ = take_panic();
        FAILURE
    })
}

/// The constructor [`crate::ModuleEntry::with_globals`] registers.
///
/// # Safety
/// `p` is a block of `T`'s size and alignment that the host just zeroed.
pub unsafe extern "C" fn globals_ctor<T: Default>(p: *mut c_void) {
    install_panic_hook();
    // A panicking `default()` would leave the block unusable; abort is
    // what unwinding into the host would do anyway, so say it clearly.
    match catch_unwind(T::default) {
        // SAFETY: the caller's contract.
        Ok(v) => unsafe { p.cast::<T>().write(v) },
        Err(_) => {
            eprintln!(
                "minizts extension: module globals constructor panicked: {}",
                take_panic()
            );
            std::process::abort();
        }
    }
}

/// The destructor [`crate::ModuleEntry::with_globals`] registers.
///
/// # Safety
/// `p` holds a `T` built by [`globals_ctor`], dropped once.
pub unsafe extern "C" fn globals_dtor<T: Default>(p: *mut c_void) {
    install_panic_hook();
    // SAFETY: the caller's contract.
    let _ = catch_unwind(AssertUnwindSafe(|| unsafe { p.cast::<T>().drop_in_place() }));
}

/// A [`crate::FunctionEntry`] for a Rust function
/// `fn(&Call) -> Result<Val>`: `function!("name", "param1,param2", required, path)`.
#[macro_export]
macro_rules! function {
    ($name:literal, $params:literal, $required:literal, $f:path) => {
        $crate::FunctionEntry {
            name: concat!($name, "\0").as_ptr().cast(),
            params: concat!($params, "\0").as_ptr().cast(),
            required: $required,
            handler: {
                unsafe extern "C" fn handler(info: *const $crate::CallInfo) {
                    // SAFETY: the host calls handlers with a valid `info`.
                    unsafe { $crate::rust::dispatch(info, $f) }
                }
                Some(handler)
            },
        }
    };
}

/// A hook (`Option<Hook>`) for a Rust function `fn(&HookCtx) -> Status`.
#[macro_export]
macro_rules! hook {
    ($f:path) => {{
        unsafe extern "C" fn hook(info: *const $crate::HookInfo) -> $crate::Status {
            // SAFETY: the host calls hooks with a valid `info`.
            unsafe { $crate::rust::dispatch_hook(info, $f) }
        }
        Some(hook as $crate::Hook)
    }};
}

/// Exports a module: `export_module!(ModuleEntry::new(…)…);` defines the
/// entry as a `static` and the `minizts_get_module` symbol returning it.
#[macro_export]
macro_rules! export_module {
    ($entry:expr) => {
        static MINIZTS_MODULE_ENTRY: $crate::ModuleEntry = $entry;

        /// The entry point the host looks up (`minizts_ext_api::GET_MODULE`).
        #[no_mangle]
        pub extern "C" fn minizts_get_module() -> *const $crate::ModuleEntry {
            &MINIZTS_MODULE_ENTRY
        }
    };
}

/// A successful hook.
pub const OK: Status = SUCCESS;
