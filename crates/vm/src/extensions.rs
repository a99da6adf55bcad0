//! Extensions: shared objects loaded at run time through the C ABI of
//! `minizts-ext-api` (PHP's `dl()`/`extension=`), kept loaded for the life
//! of the process.
//!
//! Loading (`load_all`) opens each library, checks its entry (API
//! version, a unique module name, function names that clash with nothing),
//! registers its module globals with the resource manager's id-indexed
//! path (so they work across `dlopen` under every strategy), runs its
//! module startup hook and publishes the process-wide [`Registry`]. From
//! then on extension functions are builtins to the compiler: their ids
//! follow the builtins' ids, and `builtins::call` hands them to [`call`].
//! Request hooks run in `run_request`; module globals are built for each
//! thread by the resource manager and reached by extensions through the
//! table the active strategy hands them (`Globals::resources`).

use std::ffi::{c_void, CStr};
use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::OnceLock;

use minizts_core::Value;
use minizts_ext_api::{CallInfo, GetModule, Handler, HookInfo, ModuleEntry, API_VERSION, GET_MODULE, SUCCESS};
use minizts_globals::resources::{self, ResourceId, ThreadResources};
use minizts_globals::Globals;

use crate::builtins::BuiltinInfo;
use crate::call::builtin_arity;
use crate::error::{fatal, VmResult};

pub mod host;

/// A loaded module.
pub struct Module {
    pub name: String,
    pub version: String,
    /// The path it was loaded from.
    pub path: String,
    /// Its functions' names, as scripts call them.
    pub functions: Vec<String>,
    /// Its module globals' resource id and size, if it has any.
    pub globals: Option<(ResourceId, usize)>,
    entry: &'static ModuleEntry,
}

/// An extension function, as the VM dispatches it.
struct ExtFunction {
    info: &'static BuiltinInfo,
    handler: Handler,
    module: &'static str,
}

/// Every loaded module and function (immutable once published).
pub struct Registry {
    pub modules: Vec<Module>,
    functions: Vec<ExtFunction>,
}

static REGISTRY: OnceLock<Registry> = OnceLock::new();

/// The loaded extensions (None when none were loaded).
#[inline]
pub fn registry() -> Option<&'static Registry> {
    REGISTRY.get()
}

/// Why an extension could not be loaded: one line, PHP's wording where
/// PHP has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError(pub String);

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LoadError {}

/// What `minizts ext-info` prints: an entry as the library declares it.
pub struct EntryInfo {
    pub name: String,
    pub version: String,
    pub api_version: u32,
    /// (name, parameters, required)
    pub functions: Vec<(String, Vec<String>, u32)>,
    pub globals_size: usize,
    pub hooks: Vec<&'static str>,
}

/// The size of a 64-bit little-endian ELF file's TLS segment (`PT_TLS`
/// `p_memsz`), for the static-TLS error message.
fn tls_segment_size(path: &str) -> Option<u64> {
    let f = std::fs::read(path).ok()?;
    let u16_at = |o: usize| Some(u16::from_le_bytes(f.get(o..o + 2)?.try_into().ok()?));
    let u32_at = |o: usize| Some(u32::from_le_bytes(f.get(o..o + 4)?.try_into().ok()?));
    let u64_at = |o: usize| Some(u64::from_le_bytes(f.get(o..o + 8)?.try_into().ok()?));
    if f.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let (phoff, phentsize, phnum) = (u64_at(0x20)? as usize, u16_at(0x36)? as usize, u16_at(0x38)? as usize);
    (0..phnum)
        .map(|i| phoff + i * phentsize)
        .find(|&ph| u32_at(ph) == Some(7))
        .and_then(|ph| u64_at(ph + 0x28))
}

/// The glibc remedy for a library whose initial-exec TLS does not fit.
fn static_tls_hint(path: &str) -> String {
    let block = match tls_segment_size(path) {
        Some(n) => format!("its initial-exec TLS block is {n} bytes, "),
        None => String::new(),
    };
    format!(
        "{block}more than glibc's static TLS surplus has left for libraries loaded after start-up; \
         start minizts with GLIBC_TUNABLES=glibc.rtld.optional_static_tls=N, N in bytes at least the block size \
         (docs/tls-models.md)"
    )
}

fn c_str(p: *const std::ffi::c_char) -> Option<String> {
    // SAFETY: the entry's strings are NUL-terminated statics (checked for
    // null here).
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// Opens `path` and returns its entry; the library is leaked (extensions
/// stay loaded for the life of the process, as in PHP).
fn open(path: &str) -> Result<&'static ModuleEntry, LoadError> {
    use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
    // SAFETY: loading runs the library's initialisers; extensions are
    // trusted code, as in PHP. RTLD_NOW reports missing symbols now, not
    // at the first call.
    let lib = match unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) } {
        Ok(lib) => lib,
        Err(e) => {
            let why = std::error::Error::source(&e).map_or_else(|| e.to_string(), |s| s.to_string());
            let mut text = format!("Unable to load dynamic library '{path}' ({why})");
            if why.contains("static TLS block") {
                text.push_str(&format!(": {}", static_tls_hint(path)));
            }
            return Err(LoadError(text));
        }
    };
    // SAFETY: the symbol's type is the ABI's `GetModule`.
    let get: GetModule = match unsafe { lib.get::<GetModule>(GET_MODULE.as_bytes()) } {
        Ok(sym) => *sym,
        Err(_) => {
            return Err(LoadError(format!(
                "Invalid library (maybe not a minizts extension) '{path}': no symbol {GET_MODULE}"
            )))
        }
    };
    // SAFETY: the library is never unloaded, so its code and statics live
    // as long as the process.
    let entry = unsafe { get() };
    std::mem::forget(lib);
    if entry.is_null() {
        return Err(LoadError(format!("'{path}': {GET_MODULE}() returned no module entry")));
    }
    // SAFETY: every API version starts with `api_version` and
    // `entry_size`; the rest is read only after both are checked.
    let (api, size) = unsafe { ((*entry).api_version, (*entry).entry_size) };
    if api != API_VERSION {
        return Err(LoadError(format!(
            "'{path}': Unable to initialize module: Module compiled with module API={api}, minizts compiled with module API={API_VERSION}; these options need to match"
        )));
    }
    if size as usize != std::mem::size_of::<ModuleEntry>() {
        return Err(LoadError(format!(
            "'{path}': Unable to initialize module: module entry of {size} bytes, expected {}",
            std::mem::size_of::<ModuleEntry>()
        )));
    }
    // SAFETY: the version and size match this host's `ModuleEntry`.
    let entry = unsafe { &*entry };
    if entry.name.is_null() || (entry.function_count > 0 && entry.functions.is_null()) {
        return Err(LoadError(format!(
            "'{path}': Unable to initialize module: malformed module entry"
        )));
    }
    Ok(entry)
}

fn functions(entry: &ModuleEntry) -> &'static [minizts_ext_api::FunctionEntry] {
    if entry.function_count == 0 {
        return &[];
    }
    // SAFETY: checked non-null in `open`; the library stays loaded.
    unsafe { std::slice::from_raw_parts(entry.functions, entry.function_count) }
}

fn params(f: &minizts_ext_api::FunctionEntry) -> Vec<String> {
    c_str(f.params)
        .unwrap_or_default()
        .split(',')
        .map(|p| p.trim().trim_start_matches('$').to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

/// Describes the extension at `path` without registering or starting it.
pub fn inspect(path: &str) -> Result<EntryInfo, LoadError> {
    let entry = open(path)?;
    let hooks = [
        ("module startup", entry.module_startup.is_some()),
        ("module shutdown", entry.module_shutdown.is_some()),
        ("request startup", entry.request_startup.is_some()),
        ("request shutdown", entry.request_shutdown.is_some()),
    ];
    Ok(EntryInfo {
        name: c_str(entry.name).unwrap_or_default(),
        version: c_str(entry.version).unwrap_or_default(),
        api_version: entry.api_version,
        functions: functions(entry)
            .iter()
            .map(|f| (c_str(f.name).unwrap_or_default(), params(f), f.required))
            .collect(),
        globals_size: entry.globals_size,
        hooks: hooks.iter().filter(|h| h.1).map(|h| h.0).collect(),
    })
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// Loads every extension in `paths` (in order), starts them, and publishes
/// the registry. Once per process; any failure loads nothing further and
/// is reported as one line.
pub fn load_all<G: Globals>(paths: &[String]) -> Result<&'static Registry, LoadError> {
    if REGISTRY.get().is_some() {
        return Err(LoadError("extensions are already loaded in this process".into()));
    }
    let mut modules: Vec<Module> = Vec::new();
    let mut fns: Vec<ExtFunction> = Vec::new();
    let builtin_names: hashbrown::HashSet<String> =
        crate::builtins::all().map(|b| b.name.to_ascii_lowercase()).collect();
    for path in paths {
        let entry = open(path)?;
        let name = c_str(entry.name).unwrap_or_default();
        if name.is_empty() {
            return Err(LoadError(format!(
                "'{path}': Unable to initialize module: empty module name"
            )));
        }
        if modules.iter().any(|m| m.name.eq_ignore_ascii_case(&name)) {
            return Err(LoadError(format!("Module \"{name}\" is already loaded ('{path}')")));
        }
        let module: &'static str = leak(name.clone());
        let mut names = Vec::new();
        for f in functions(entry) {
            let Some(fname) = c_str(f.name).filter(|n| !n.is_empty()) else {
                return Err(LoadError(format!(
                    "{name}: Function registration failed - a function without a name"
                )));
            };
            let lower = fname.to_ascii_lowercase();
            let clash = builtin_names.contains(&lower) || fns.iter().any(|e| e.info.name.eq_ignore_ascii_case(&fname));
            if clash {
                return Err(LoadError(format!(
                    "{name}: Function registration failed - duplicate name - {fname}"
                )));
            }
            let ps = params(f);
            let variadic = ps.last().is_some_and(|p| p.starts_with("..."));
            if f.required as usize > ps.len() || ps.len() > 200 {
                return Err(LoadError(format!(
                    "{name}: Function registration failed - {fname}() requires {} of {} parameters",
                    f.required,
                    ps.len()
                )));
            }
            let Some(handler) = f.handler else {
                return Err(LoadError(format!(
                    "{name}: Function registration failed - {fname}() has no handler"
                )));
            };
            if crate::builtins::count() + fns.len() >= usize::from(u16::MAX) {
                return Err(LoadError(format!(
                    "{name}: Function registration failed - more than {} functions in all",
                    usize::from(u16::MAX) - crate::builtins::count()
                )));
            }
            let params: Vec<&'static str> = ps.into_iter().map(leak).collect();
            let info: &'static BuiltinInfo = Box::leak(Box::new(BuiltinInfo {
                name: leak(fname.clone()),
                params: Box::leak(params.into_boxed_slice()),
                min: f.required as u8,
                by_ref: 0,
                variadic,
            }));
            fns.push(ExtFunction { info, handler, module });
            names.push(fname);
        }
        modules.push(Module {
            name,
            version: c_str(entry.version).unwrap_or_default(),
            path: path.clone(),
            functions: names,
            globals: None,
            entry,
        });
    }
    // Module globals: the id-indexed path of the resource manager, which
    // builds a block for each thread that starts (and for running ones).
    for m in &mut modules {
        let e = m.entry;
        if e.globals_size == 0 {
            continue;
        }
        let layout = std::alloc::Layout::from_size_align(e.globals_size, e.globals_align.max(1)).map_err(|_| {
            LoadError(format!(
                "{}: Unable to initialize module: bad module globals layout",
                m.name
            ))
        })?;
        let id = resources::manager()
            .allocate_id(
                leak(format!("{} globals", m.name)),
                layout,
                e.globals_ctor,
                e.globals_dtor,
            )
            .map_err(|err| LoadError(format!("{}: Unable to allocate module globals: {err}", m.name)))?;
        if !e.globals_id.is_null() {
            // SAFETY: the entry's id slot is a static atomic in the library.
            unsafe { (*e.globals_id).store(id, Ordering::Release) };
        }
        m.globals = Some((id, e.globals_size));
    }
    for m in &modules {
        if let Some(startup) = m.entry.module_startup {
            let info = HookInfo {
                host: host::table::<G>(),
                resources: std::ptr::null_mut(),
                globals: std::ptr::null_mut(),
            };
            // SAFETY: the hook is the extension's, called with valid info.
            if unsafe { startup(&info) } != SUCCESS {
                return Err(LoadError(format!("Unable to start up module '{}'", m.name)));
            }
        }
    }
    let reg = Registry {
        modules,
        functions: fns,
    };
    Ok(REGISTRY.get_or_init(|| reg))
}

/// Runs every module's shutdown hook (at process exit).
pub fn shutdown_modules<G: Globals>() {
    let Some(reg) = registry() else { return };
    for m in reg.modules.iter().rev() {
        if let Some(hook) = m.entry.module_shutdown {
            let info = HookInfo {
                host: host::table::<G>(),
                resources: std::ptr::null_mut(),
                globals: std::ptr::null_mut(),
            };
            // SAFETY: as for startup.
            unsafe { hook(&info) };
        }
    }
}

/// The id the first extension function gets (after every builtin).
pub(crate) fn first_id() -> usize {
    crate::builtins::count()
}

/// Extension function `index` as the compiler and messages see it.
pub(crate) fn info(index: usize) -> Option<&'static BuiltinInfo> {
    registry().and_then(|r| r.functions.get(index)).map(|f| f.info)
}

/// Every extension function: (name, info).
pub(crate) fn all_functions() -> impl Iterator<Item = &'static BuiltinInfo> {
    registry().into_iter().flat_map(|r| r.functions.iter().map(|f| f.info))
}

/// Calls extension function `index`.
pub(crate) fn call<G: Globals>(g: G, index: usize, args: &mut [Value]) -> VmResult<Value> {
    let Some(f) = registry().and_then(|r| r.functions.get(index)) else {
        return fatal("Call to an unknown extension function");
    };
    let n = args.len();
    if n < f.info.min as usize || f.info.max().is_some_and(|max| n > max) {
        return builtin_arity(f.info.name, f.info.min as usize, f.info.max(), n);
    }
    let mut state = host::HostCall {
        g,
        args,
        info: f.info,
        module: f.module,
        values: Vec::new(),
        keep: Vec::new(),
        ret: Value::Null,
        error: None,
        panic: None,
    };
    let info = CallInfo {
        host: host::table::<G>(),
        call: (&mut state as *mut host::HostCall<'_, G>).cast::<c_void>(),
        argc: n as u32,
        resources: g.resources().cast(),
    };
    // SAFETY: `info` and the state it points to live across the call; the
    // handler is the extension's, declared with the ABI's signature.
    unsafe { (f.handler)(&info) };
    if let Some(payload) = state.panic.take() {
        // The engine panicked inside a host function (a minizts bug): let
        // it unwind here, on the Rust side, where the request's guard
        // catches it.
        std::panic::resume_unwind(payload);
    }
    match state.error {
        Some(e) => Err(e),
        None => Ok(state.ret),
    }
}

thread_local! {
    /// Resources this module started for a strategy that keeps EG/CG
    /// elsewhere (`nts`, `tls`), so module globals exist on this thread.
    static STARTED: std::cell::Cell<*mut ThreadResources> = const { std::cell::Cell::new(std::ptr::null_mut()) };
}

/// Per-thread start-up for extensions: under strategies that do not use
/// the resource manager for EG/CG, give the thread a resource table for
/// the module globals (only when extensions are loaded).
pub(crate) fn thread_startup() {
    if registry().is_some() && resources::current().is_null() {
        STARTED.with(|s| s.set(resources::manager().thread_startup()));
    }
}

/// Undoes [`thread_startup`].
pub(crate) fn thread_shutdown() {
    let res = STARTED.with(|s| s.replace(std::ptr::null_mut()));
    if !res.is_null() {
        // SAFETY: this thread started `res` and nothing uses it any more
        // (the engine on this thread is shutting down).
        unsafe { resources::manager().thread_shutdown(res) };
    }
}

fn hook_info<G: Globals>(g: G, m: &Module) -> HookInfo {
    let res = g.resources();
    let globals = match (m.globals, res.is_null()) {
        // SAFETY: `res` is this thread's table, and the id was registered.
        (Some((id, _)), false) => unsafe { minizts_ext_api::module_globals_in::<c_void>(res.cast(), id) },
        _ => std::ptr::null_mut(),
    };
    HookInfo {
        host: host::table::<G>(),
        resources: res.cast(),
        globals,
    }
}

/// Runs every module's request startup hook (PHP's `RINIT`), in load
/// order.
pub(crate) fn request_startup<G: Globals>(g: G) -> VmResult<()> {
    let Some(reg) = registry() else { return Ok(()) };
    for m in &reg.modules {
        if let Some(hook) = m.entry.request_startup {
            let info = hook_info(g, m);
            // SAFETY: the hook is the extension's, called with valid info.
            if unsafe { hook(&info) } != SUCCESS {
                return fatal(format!(
                    "Unable to start request: module '{}' request startup failed",
                    m.name
                ));
            }
        }
    }
    Ok(())
}

/// Runs every module's request shutdown hook (PHP's `RSHUTDOWN`), in
/// reverse load order; failed requests too.
pub(crate) fn request_shutdown<G: Globals>(g: G) {
    let Some(reg) = registry() else { return };
    for m in reg.modules.iter().rev() {
        if let Some(hook) = m.entry.request_shutdown {
            let info = hook_info(g, m);
            // SAFETY: as for startup.
            unsafe { hook(&info) };
        }
    }
}
