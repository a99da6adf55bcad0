//! The extension interface: a versioned C ABI between the `minizts` host
//! and extensions built as shared objects (`cdylib`), loaded at run time.
//!
//! Only `#[repr(C)]` types and `extern "C"` functions cross the boundary,
//! so an extension may be built by another compiler version (or in C). The
//! shape follows PHP's `zend_module_entry`:
//!
//! - the extension exports [`GET_MODULE`] (`minizts_get_module`), which
//!   returns its [`ModuleEntry`]: API version, name and version, its
//!   functions, module startup/shutdown and request startup/shutdown
//!   hooks, and its module globals (size, constructor, destructor, and
//!   where the host writes their resource id);
//! - the host hands every hook and function a [`HostApi`]: a table of host
//!   functions to read arguments, make values and arrays, set the return
//!   value, echo, raise warnings and fatal errors, call a script callable,
//!   and reach the engine state the API exposes (this thread's resource
//!   table and module globals).
//!
//! Values never cross the boundary: the host keeps them in the running
//! call and the extension holds [`Val`] handles (small integers) to them,
//! valid until the function returns. Arguments are handles `0..argc`.
//!
//! Module [`rust`] is the ergonomic layer for extensions written in Rust:
//! [`rust::Call`] wraps the raw table, [`function!`] turns a plain Rust
//! function into an `extern "C"` handler that catches panics, and
//! [`export_module!`] exports the entry.

use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::AtomicUsize;

pub mod rust;

/// The API version an extension was built against (PHP's
/// `ZEND_MODULE_API_NO`); the host refuses any other. Change it whenever a
/// `#[repr(C)]` type or [`HostApi`] changes.
pub const API_VERSION: u32 = 20261130;

/// The symbol every extension exports: `extern "C" fn() -> *const ModuleEntry`.
pub const GET_MODULE: &str = "minizts_get_module";

/// The type of [`GET_MODULE`].
pub type GetModule = unsafe extern "C" fn() -> *const ModuleEntry;

/// A handle to a value held by the host for the running call.
pub type Val = u32;

/// Returned where no value could be made (an error was raised).
pub const NO_VAL: Val = u32::MAX;

/// Value types, as [`HostApi::value_type`] reports them.
pub mod value_type {
    pub const NULL: u32 = 0;
    pub const BOOL: u32 = 1;
    pub const LONG: u32 = 2;
    pub const DOUBLE: u32 = 3;
    pub const STRING: u32 = 4;
    pub const ARRAY: u32 = 5;
    /// A closure (an object in PHP).
    pub const CLOSURE: u32 = 6;
}

/// Hook result: [`SUCCESS`] or [`FAILURE`] (PHP's `zend_result`).
pub type Status = i32;
pub const SUCCESS: Status = 0;
pub const FAILURE: Status = -1;

/// One thread's resource table, as the host's resource manager lays it out
/// (PHP's `tsrm_tls_entry`): `storage[id - 1]` is this thread's block of
/// resource `id`. Extensions that are handed this pointer (the `ctx`
/// path) or cache it (PHP's `ZEND_TSRMLS_CACHE`) reach their module
/// globals with [`module_globals_in`].
#[repr(C)]
pub struct ThreadResources {
    pub storage: *mut *mut c_void,
    pub fast: *mut c_void,
}

/// PHP's `TSRMG_BULK(id, T *)`: this thread's block of resource `id`,
/// given this thread's resource table; null for id 0 or a null table.
///
/// # Safety
/// `res` is the calling thread's live resource table and `id` a resource
/// id the host wrote (non-zero).
#[inline(always)]
pub unsafe fn module_globals_in<T>(res: *const ThreadResources, id: usize) -> *mut T {
    if id == 0 || res.is_null() {
        // No id written (the module has no globals) or no table: null,
        // never a read before the table.
        return std::ptr::null_mut();
    }
    // SAFETY: the caller's contract.
    unsafe { (*(*res).storage.add(id - 1)).cast() }
}

/// What a function handler receives.
#[repr(C)]
pub struct CallInfo {
    pub host: *const HostApi,
    /// The host's state for this call: pass it back to every host function.
    pub call: *mut c_void,
    /// Arguments passed: handles `0..argc`.
    pub argc: u32,
    /// This thread's resource table (PHP 5's `tsrm_ls`, passed in).
    pub resources: *mut ThreadResources,
}

/// What a module or request hook receives.
#[repr(C)]
pub struct HookInfo {
    pub host: *const HostApi,
    /// This thread's resource table.
    pub resources: *mut ThreadResources,
    /// This thread's block of the module's globals (null without globals).
    pub globals: *mut c_void,
}

/// A function handler.
pub type Handler = unsafe extern "C" fn(info: *const CallInfo);
/// A module or request hook.
pub type Hook = unsafe extern "C" fn(info: *const HookInfo) -> Status;
/// A module globals constructor or destructor.
pub type GlobalsHook = unsafe extern "C" fn(globals: *mut c_void);

/// One function an extension provides (PHP's `zend_function_entry`).
#[repr(C)]
pub struct FunctionEntry {
    /// The name scripts call it by (NUL-terminated).
    pub name: *const c_char,
    /// Parameter names, comma-separated, for PHP's messages; a last name
    /// written `...rest` takes any number of arguments.
    pub params: *const c_char,
    /// Arguments required.
    pub required: u32,
    /// Never null in a valid entry (the host refuses the module if it is).
    pub handler: Option<Handler>,
}

/// An extension's description (PHP's `zend_module_entry`).
#[repr(C)]
pub struct ModuleEntry {
    /// [`API_VERSION`] as the extension saw it.
    pub api_version: u32,
    /// `size_of::<ModuleEntry>()` as the extension saw it.
    pub entry_size: u32,
    /// The module's name (NUL-terminated), unique in a process.
    pub name: *const c_char,
    pub version: *const c_char,
    pub functions: *const FunctionEntry,
    pub function_count: usize,
    /// Once per process, after loading (PHP's `MINIT`).
    pub module_startup: Option<Hook>,
    /// Once per process, at exit (PHP's `MSHUTDOWN`).
    pub module_shutdown: Option<Hook>,
    /// At the start of every request (PHP's `RINIT`).
    pub request_startup: Option<Hook>,
    /// At the end of every request, failed ones too (PHP's `RSHUTDOWN`).
    pub request_shutdown: Option<Hook>,
    /// Module globals: a block of this size and alignment per thread,
    /// allocated through the host's resource manager (0: none).
    pub globals_size: usize,
    pub globals_align: usize,
    /// Builds a thread's block (PHP's `GINIT`); the block is zeroed first.
    pub globals_ctor: Option<GlobalsHook>,
    /// Tears it down at thread exit (PHP's `GSHUTDOWN`).
    pub globals_dtor: Option<GlobalsHook>,
    /// Where the host writes the globals' resource id (PHP's
    /// `ZEND_MODULE_GLOBALS(name)` id), or null.
    pub globals_id: *const AtomicUsize,
}

impl ModuleEntry {
    /// An entry with functions and nothing else; add hooks and globals
    /// with the `with_*` methods (all `const`, for a `static`).
    pub const fn new(name: &'static CStr, version: &'static CStr, functions: &'static [FunctionEntry]) -> ModuleEntry {
        ModuleEntry {
            api_version: API_VERSION,
            entry_size: std::mem::size_of::<ModuleEntry>() as u32,
            name: name.as_ptr(),
            version: version.as_ptr(),
            functions: functions.as_ptr(),
            function_count: functions.len(),
            module_startup: None,
            module_shutdown: None,
            request_startup: None,
            request_shutdown: None,
            globals_size: 0,
            globals_align: 1,
            globals_ctor: None,
            globals_dtor: None,
            globals_id: std::ptr::null(),
        }
    }

    /// Module globals of type `T`, built with `T::default()` for every
    /// thread and dropped at thread exit; the host writes their id to `id`.
    pub const fn with_globals<T: Default>(mut self, id: &'static AtomicUsize) -> ModuleEntry {
        // Never 0: a zero-sized type still gets a (1-byte) block and an id.
        self.globals_size = if std::mem::size_of::<T>() == 0 {
            1
        } else {
            std::mem::size_of::<T>()
        };
        self.globals_align = std::mem::align_of::<T>();
        self.globals_ctor = Some(rust::globals_ctor::<T>);
        self.globals_dtor = Some(rust::globals_dtor::<T>);
        self.globals_id = id;
        self
    }

    pub const fn with_module_hooks(mut self, startup: Option<Hook>, shutdown: Option<Hook>) -> ModuleEntry {
        self.module_startup = startup;
        self.module_shutdown = shutdown;
        self
    }

    pub const fn with_request_hooks(mut self, startup: Option<Hook>, shutdown: Option<Hook>) -> ModuleEntry {
        self.request_startup = startup;
        self.request_shutdown = shutdown;
        self
    }
}

// SAFETY: an entry is immutable after it is built; its pointers are to
// static strings and functions, and `globals_id` is an atomic.
unsafe impl Sync for ModuleEntry {}
// SAFETY: as above.
unsafe impl Sync for FunctionEntry {}

/// The host's functions, handed to every hook and handler. `call` is
/// [`CallInfo::call`]; every `*const u8` with a length is a byte string
/// (no NUL needed); strings the host returns stay valid until the call
/// returns.
#[repr(C)]
pub struct HostApi {
    /// [`API_VERSION`] as the host saw it.
    pub api_version: u32,
    /// `size_of::<HostApi>()` as the host saw it.
    pub size: u32,
    /// The active globals strategy (`tls`, `ctx`, …), NUL-terminated.
    pub strategy: unsafe extern "C" fn() -> *const c_char,

    // Engine state.
    /// This thread's resource table (PHP's `tsrm_get_ls_cache()`).
    pub thread_resources: unsafe extern "C" fn() -> *mut ThreadResources,
    /// This thread's block of resource `id`, looked up by the host.
    pub module_globals: unsafe extern "C" fn(id: usize) -> *mut c_void,
    /// Bytes the request has allocated (`memory_get_usage()`).
    pub memory_usage: unsafe extern "C" fn() -> usize,

    // Arguments, with PHP's coercions and TypeErrors for typed parameters.
    // On an error they raise it and return false / null / NO_VAL; the
    // handler should return at once.
    pub arg_long: unsafe extern "C" fn(call: *mut c_void, i: u32, out: *mut i64) -> bool,
    pub arg_double: unsafe extern "C" fn(call: *mut c_void, i: u32, out: *mut f64) -> bool,
    pub arg_bool: unsafe extern "C" fn(call: *mut c_void, i: u32, out: *mut bool) -> bool,
    pub arg_string: unsafe extern "C" fn(call: *mut c_void, i: u32, len: *mut usize) -> *const u8,
    /// An `array` parameter: its handle, or NO_VAL after a TypeError.
    pub arg_array: unsafe extern "C" fn(call: *mut c_void, i: u32) -> Val,
    /// A `callable` parameter: its handle, or NO_VAL after a TypeError.
    pub arg_callable: unsafe extern "C" fn(call: *mut c_void, i: u32) -> Val,

    // Values.
    pub value_type: unsafe extern "C" fn(call: *mut c_void, v: Val) -> u32,
    /// PHP's `(int)`, `(float)`, `(bool)` casts.
    pub to_long: unsafe extern "C" fn(call: *mut c_void, v: Val) -> i64,
    pub to_double: unsafe extern "C" fn(call: *mut c_void, v: Val) -> f64,
    pub to_bool: unsafe extern "C" fn(call: *mut c_void, v: Val) -> bool,
    /// PHP's `(string)` (warns for arrays); null after an error.
    pub to_string: unsafe extern "C" fn(call: *mut c_void, v: Val, len: *mut usize) -> *const u8,
    pub new_null: unsafe extern "C" fn(call: *mut c_void) -> Val,
    pub new_bool: unsafe extern "C" fn(call: *mut c_void, b: bool) -> Val,
    pub new_long: unsafe extern "C" fn(call: *mut c_void, n: i64) -> Val,
    pub new_double: unsafe extern "C" fn(call: *mut c_void, d: f64) -> Val,
    pub new_string: unsafe extern "C" fn(call: *mut c_void, s: *const u8, len: usize) -> Val,

    // Arrays.
    pub new_array: unsafe extern "C" fn(call: *mut c_void) -> Val,
    /// Elements in array `a` (0 for a non-array).
    pub array_count: unsafe extern "C" fn(call: *mut c_void, a: Val) -> usize,
    /// Iteration: the first element at or after `*cursor` (start at 0);
    /// writes handles to its key and value and moves `*cursor` past it.
    /// False at the end.
    pub array_next:
        unsafe extern "C" fn(call: *mut c_void, a: Val, cursor: *mut usize, key: *mut Val, value: *mut Val) -> bool,
    /// `$a[] = v`; false (and a warning or error) when it cannot.
    pub array_push: unsafe extern "C" fn(call: *mut c_void, a: Val, v: Val) -> bool,
    /// `$a[k] = v` with PHP's key normalisation.
    pub array_set: unsafe extern "C" fn(call: *mut c_void, a: Val, k: Val, v: Val) -> bool,

    // Results and diagnostics.
    pub set_return: unsafe extern "C" fn(call: *mut c_void, v: Val),
    pub echo: unsafe extern "C" fn(call: *mut c_void, s: *const u8, len: usize),
    /// A PHP warning at the script's current line.
    pub warning: unsafe extern "C" fn(call: *mut c_void, s: *const u8, len: usize),
    /// A fatal error: the request ends once the handler returns.
    pub fatal: unsafe extern "C" fn(call: *mut c_void, s: *const u8, len: usize),
    /// The handler panicked (the message says where): a fatal error that
    /// names the module and function.
    pub panicked: unsafe extern "C" fn(call: *mut c_void, s: *const u8, len: usize),
    /// Calls a script callable with `argc` arguments; writes the result's
    /// handle. False if the call failed (the error is raised; return).
    pub call: unsafe extern "C" fn(call: *mut c_void, f: Val, args: *const Val, argc: u32, result: *mut Val) -> bool,
}
