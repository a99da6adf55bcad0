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

use std::ffi::c_void;
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

/// Upper bounds on what a module entry may declare, checked before
/// anything it points at is read or anything it sizes is allocated: a
/// corrupt or hostile entry is refused with one line instead of taking
/// the process down.
pub mod limits {
    /// Bytes in any string of the entry (module name and version, function
    /// names, parameter lists), NUL excluded.
    pub const MAX_STRING: usize = 4096;
    /// Bytes of module globals (one block per engine thread; PHP's largest
    /// are a few kilobytes).
    pub const MAX_GLOBALS_SIZE: usize = 16 << 20;
    /// Alignment of module globals.
    pub const MAX_GLOBALS_ALIGN: usize = 4096;
}

/// The process's memory mappings (`/proc/self/maps`), so that what an
/// entry points at is known to be mapped with the right permissions
/// before it is read, written or called. `None` where the file cannot be
/// read: then only null pointers, alignment and bounds are checked.
struct Mappings(Option<Vec<Region>>);

struct Region {
    start: usize,
    end: usize,
    read: bool,
    write: bool,
    exec: bool,
}

impl Mappings {
    fn of_this_process() -> Mappings {
        let Ok(text) = std::fs::read_to_string("/proc/self/maps") else {
            return Mappings(None);
        };
        let regions = text
            .lines()
            .filter_map(|line| {
                let mut fields = line.split_ascii_whitespace();
                let (start, end) = fields.next()?.split_once('-')?;
                let perms = fields.next()?.as_bytes();
                Some(Region {
                    start: usize::from_str_radix(start, 16).ok()?,
                    end: usize::from_str_radix(end, 16).ok()?,
                    read: perms.first() == Some(&b'r'),
                    write: perms.get(1) == Some(&b'w'),
                    exec: perms.get(2) == Some(&b'x'),
                })
            })
            .collect();
        Mappings(Some(regions))
    }

    /// How many bytes from `addr` on lie in contiguous mappings that all
    /// have permission `ok` (unbounded when the mappings are unknown).
    fn extent(&self, addr: usize, ok: fn(&Region) -> bool) -> usize {
        let Some(regions) = &self.0 else { return usize::MAX };
        let Some(first) = regions.iter().position(|r| r.start <= addr && addr < r.end && ok(r)) else {
            return 0;
        };
        let mut end = regions[first].end;
        for r in &regions[first + 1..] {
            if r.start != end || !ok(r) {
                break;
            }
            end = r.end;
        }
        end - addr
    }

    fn readable(&self, addr: usize, len: usize) -> bool {
        self.extent(addr, |r| r.read) >= len
    }

    fn writable(&self, addr: usize, len: usize) -> bool {
        self.extent(addr, |r| r.read && r.write) >= len
    }

    fn code(&self, addr: usize) -> bool {
        self.extent(addr, |r| r.exec) > 0
    }
}

/// Checks a pointer field that holds `len` bytes of `T` (alignment and,
/// where known, mapping); `what` names it in the error.
fn check_ptr<T>(maps: &Mappings, p: *const T, len: usize, what: &str) -> Result<(), String> {
    let addr = p as usize;
    if addr & (std::mem::align_of::<T>() - 1) != 0 {
        return Err(format!("{what} ({addr:#x}) is not aligned for its type"));
    }
    if !maps.readable(addr, len) {
        return Err(format!("{what} ({addr:#x}, {len} bytes) is not in readable memory"));
    }
    Ok(())
}

/// Checks a function pointer field: it must point into executable memory.
fn check_code(maps: &Mappings, f: Option<usize>, what: &str) -> Result<(), String> {
    match f {
        Some(addr) if !maps.code(addr) => Err(format!("{what} ({addr:#x}) does not point at code")),
        _ => Ok(()),
    }
}

/// Reads a string field: null is `None`; otherwise it must be
/// NUL-terminated within [`limits::MAX_STRING`] bytes of readable memory
/// and valid UTF-8.
fn checked_str(maps: &Mappings, p: *const std::ffi::c_char, what: &str) -> Result<Option<String>, String> {
    if p.is_null() {
        return Ok(None);
    }
    let addr = p as usize;
    let limit = maps.extent(addr, |r| r.read).min(limits::MAX_STRING + 1);
    if limit == 0 {
        return Err(format!("{what} ({addr:#x}) is not in readable memory"));
    }
    let bytes = p.cast::<u8>();
    // SAFETY: the first `limit` bytes from `p` are mapped readable (or
    // the mappings are unknown and the entry is trusted that far); the
    // scan stops at the first NUL.
    let len = (0..limit).find(|&i| unsafe { *bytes.add(i) } == 0);
    let Some(len) = len else {
        return Err(if limit > limits::MAX_STRING {
            format!("{what} is not NUL-terminated within {} bytes", limits::MAX_STRING)
        } else {
            format!("{what} runs past the end of readable memory without a NUL")
        });
    };
    // SAFETY: the `len` bytes before the NUL were just read.
    let text = unsafe { std::slice::from_raw_parts(bytes, len) };
    match std::str::from_utf8(text) {
        Ok(s) => Ok(Some(s.to_string())),
        Err(_) => Err(format!("{what} is not valid UTF-8")),
    }
}

/// One function of a checked entry.
struct CheckedFunction {
    name: Option<String>,
    params: Vec<String>,
    required: u32,
    handler: Option<Handler>,
}

/// An entry whose every field was checked ([`check_entry`]): its strings
/// copied out, its functions read, its sizes within [`limits`].
struct Checked {
    entry: &'static ModuleEntry,
    name: String,
    version: Option<String>,
    functions: Vec<CheckedFunction>,
}

fn params(list: Option<String>) -> Vec<String> {
    list.unwrap_or_default()
        .split(',')
        .map(|p| p.trim().trim_start_matches('$').to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

/// Checks every field of the entry at `entry` (non-null) before anything
/// else reads it: the header first, then pointers, strings, counts and
/// sizes. The error names the field.
fn check_entry(entry: *const ModuleEntry) -> Result<Checked, String> {
    let maps = Mappings::of_this_process();
    // Every API version starts with `api_version` and `entry_size`.
    check_ptr(&maps, entry, 8, "the module entry")?;
    // SAFETY: those 8 bytes are readable and aligned (just checked).
    let (api, size) = unsafe { ((*entry).api_version, (*entry).entry_size) };
    if api != API_VERSION {
        return Err(format!(
            "Module compiled with module API={api}, minizts compiled with module API={API_VERSION}; these options need to match"
        ));
    }
    if size as usize != std::mem::size_of::<ModuleEntry>() {
        return Err(format!(
            "module entry of {size} bytes, expected {}",
            std::mem::size_of::<ModuleEntry>()
        ));
    }
    check_ptr(&maps, entry, std::mem::size_of::<ModuleEntry>(), "the module entry")?;
    // SAFETY: the version and size match this host's `ModuleEntry` and the
    // whole of it is readable; the library is never unloaded.
    let entry: &'static ModuleEntry = unsafe { &*entry };
    check_fields(&maps, entry).map_err(|why| format!("invalid module entry: {why}"))
}

/// The fields after the header, in the order a reader would reach them.
fn check_fields(maps: &Mappings, entry: &'static ModuleEntry) -> Result<Checked, String> {
    let name = match checked_str(maps, entry.name, "name")? {
        None => return Err("name is null".into()),
        Some(n) if n.is_empty() => return Err("name is empty".into()),
        Some(n) => n,
    };
    let version = checked_str(maps, entry.version, "version")?;
    let hooks = [
        (entry.module_startup.map(|f| f as usize), "module_startup"),
        (entry.module_shutdown.map(|f| f as usize), "module_shutdown"),
        (entry.request_startup.map(|f| f as usize), "request_startup"),
        (entry.request_shutdown.map(|f| f as usize), "request_shutdown"),
        (entry.globals_ctor.map(|f| f as usize), "globals_ctor"),
        (entry.globals_dtor.map(|f| f as usize), "globals_dtor"),
    ];
    for (f, what) in hooks {
        check_code(maps, f, what)?;
    }
    if entry.globals_size > 0 {
        if entry.globals_size > limits::MAX_GLOBALS_SIZE {
            return Err(format!(
                "globals_size = {} bytes, more than the {} allowed",
                entry.globals_size,
                limits::MAX_GLOBALS_SIZE
            ));
        }
        // 0 has always meant "no particular alignment".
        let align = entry.globals_align.max(1);
        if !align.is_power_of_two() || align > limits::MAX_GLOBALS_ALIGN {
            return Err(format!(
                "globals_align = {align}, not a power of two up to {}",
                limits::MAX_GLOBALS_ALIGN
            ));
        }
    }
    if !entry.globals_id.is_null() {
        let addr = entry.globals_id as usize;
        let size = std::mem::size_of::<std::sync::atomic::AtomicUsize>();
        if addr & (std::mem::align_of::<std::sync::atomic::AtomicUsize>() - 1) != 0 || !maps.writable(addr, size) {
            return Err(format!(
                "globals_id ({addr:#x}) is not an aligned, writable AtomicUsize"
            ));
        }
    }
    let count = entry.function_count;
    // Extension functions get ids after the builtins', in a 16-bit space.
    let ids_left = usize::from(u16::MAX).saturating_sub(crate::builtins::count());
    if count > ids_left {
        return Err(format!(
            "function_count = {count}, more than the {ids_left} function ids minizts has for extensions"
        ));
    }
    if count > 0 && entry.functions.is_null() {
        return Err(format!("functions is null with function_count = {count}"));
    }
    let table: &[minizts_ext_api::FunctionEntry] = if count == 0 {
        &[]
    } else {
        let bytes = count * std::mem::size_of::<minizts_ext_api::FunctionEntry>();
        check_ptr(maps, entry.functions, bytes, "functions")?;
        // SAFETY: non-null, aligned, `count` entries readable (checked);
        // the library stays loaded.
        unsafe { std::slice::from_raw_parts(entry.functions, count) }
    };
    let mut functions = Vec::with_capacity(count);
    for (i, f) in table.iter().enumerate() {
        check_code(maps, f.handler.map(|h| h as usize), &format!("functions[{i}].handler"))?;
        functions.push(CheckedFunction {
            name: checked_str(maps, f.name, &format!("functions[{i}].name"))?,
            params: params(checked_str(maps, f.params, &format!("functions[{i}].params"))?),
            required: f.required,
            handler: f.handler,
        });
    }
    Ok(Checked {
        entry,
        name,
        version,
        functions,
    })
}

/// Opens `path` and returns its checked entry; the library is leaked
/// (extensions stay loaded for the life of the process, as in PHP).
fn open(path: &str) -> Result<Checked, LoadError> {
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
    check_entry(entry).map_err(|why| LoadError(format!("'{path}': Unable to initialize module: {why}")))
}

/// Describes the extension at `path` without registering or starting it.
pub fn inspect(path: &str) -> Result<EntryInfo, LoadError> {
    let checked = open(path)?;
    let entry = checked.entry;
    let hooks = [
        ("module startup", entry.module_startup.is_some()),
        ("module shutdown", entry.module_shutdown.is_some()),
        ("request startup", entry.request_startup.is_some()),
        ("request shutdown", entry.request_shutdown.is_some()),
    ];
    Ok(EntryInfo {
        name: checked.name,
        version: checked.version.unwrap_or_default(),
        api_version: entry.api_version,
        functions: checked
            .functions
            .into_iter()
            .map(|f| (f.name.unwrap_or_default(), f.params, f.required))
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
        let checked = open(path)?;
        let entry = checked.entry;
        let name = checked.name;
        if modules.iter().any(|m| m.name.eq_ignore_ascii_case(&name)) {
            return Err(LoadError(format!("Module \"{name}\" is already loaded ('{path}')")));
        }
        let module: &'static str = leak(name.clone());
        let mut names = Vec::new();
        for f in checked.functions {
            let Some(fname) = f.name.filter(|n| !n.is_empty()) else {
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
            let ps = f.params;
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
            version: checked.version.unwrap_or_default(),
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
