//! Executor globals (PHP's `zend_executor_globals`): the VM stack and call
//! frames, the interrupt flag, the request's symbol, function and constant
//! tables, the output-buffer stack, error state and limits.
//!
//! Everything a request creates lives here and is dropped by
//! [`ExecutorGlobals::request_shutdown`]; what outlives requests (the
//! stack's memory, settings) stays for the thread.

use std::io::Write;
use std::ptr;
use std::rc::Rc;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use hashbrown::HashMap;
use minizts_core::bytecode::{FuncId, Function, Op, Reg, Script};
use minizts_core::numfmt::MtRand;
use minizts_core::value::Closure;
use minizts_core::{PhpArray, PhpRef, PhpStr, Value};

/// Why the VM should stop at its next check (PHP's `EG(vm_interrupt)`).
/// The VM tests `pending` at every backward jump and call; whoever sets it
/// (the time-limit watchdog, from another thread, or the allocator when
/// the memory limit is passed) says why in the other fields.
#[derive(Default)]
pub struct Interrupt {
    pub pending: AtomicBool,
    pub timed_out: AtomicBool,
    /// Set while a time limit is armed: builtins then publish their line
    /// in `line`, for the hard timeout's message (written by the watchdog
    /// thread while the request is stuck inside one).
    pub watched: AtomicBool,
    pub line: std::sync::atomic::AtomicU32,
}

impl Interrupt {
    /// The time limit expired (called from the watchdog thread).
    pub fn time_out(&self) {
        self.timed_out.store(true, std::sync::atomic::Ordering::Relaxed);
        self.pending.store(true, std::sync::atomic::Ordering::Release);
    }

    pub fn clear(&self) {
        self.timed_out.store(false, std::sync::atomic::Ordering::Relaxed);
        self.pending.store(false, std::sync::atomic::Ordering::Relaxed);
        self.line.store(0, std::sync::atomic::Ordering::Relaxed);
    }
}

/// One entry of the per-thread runtime cache (PHP's `run_time_cache`): a
/// call or constant site's last resolution.
#[derive(Clone, Debug, Default)]
pub enum CacheEntry {
    #[default]
    Empty,
    /// A user function of the current script.
    Function(FuncId),
    /// A builtin, by id.
    Builtin(u16),
    /// A constant's value (constants never change once defined).
    Constant(Value),
    /// What a property instruction found last: on an object of class
    /// `class`, code of scope `scope` (class id + 1, 0: none) reaches the
    /// declared property in `slot` (PHP caches the class and the
    /// property's offset).
    Prop { class: u32, scope: u32, slot: u32 },
    /// What a method call's `INIT_METHOD` found last: on an object of
    /// class `class`, from scope `scope`, the name is `method` (not
    /// `__call`).
    Method {
        class: u32,
        scope: u32,
        method: Rc<minizts_core::object::Method>,
    },
    /// What an instruction that names a class (`new C`, `C instanceof`)
    /// found last from a frame with these scopes: the class. A name binds
    /// to one class for the whole request, and `self`/`parent`/`static`
    /// follow from the frame's scopes.
    Class {
        at: FrameScopes,
        class: Rc<minizts_core::Class>,
    },
    /// What a static call's `INIT_STATIC_METHOD` found last from a frame
    /// with these scopes: `method`, called on class `called` (an id), with
    /// the frame's `$this` passed on if `this_class` is its class (id + 1;
    /// 0: the method is static, no `$this`).
    StaticCall {
        at: FrameScopes,
        method: Rc<minizts_core::object::Method>,
        called: u32,
        this_class: u32,
    },
    /// A class constant's value as `FETCH_CLASS_CONST` read it last from
    /// a frame with these scopes (a constant's value is computed once).
    /// `of`: the class id of the object the instruction's operand held
    /// (`$obj::NAME`, PHP's polymorphic cache of one), or
    /// [`CacheEntry::NAMED_CLASS`] for a class the instruction names.
    ClassConst { at: FrameScopes, of: u32, value: Value },
    /// The static property a `FETCH_STATIC_PROP` reached last from a
    /// frame with these scopes.
    /// `typed`: the property has a type (writes are the general path's).
    StaticProp { at: FrameScopes, slot: PhpRef, typed: bool },
    /// The main script's variable (CV) that `$GLOBALS['name']` with a
    /// constant name reached last (the main script is the request's
    /// first frame, and its variables do not move).
    GlobalVar { cv: u32 },
    /// The class (id) that the one class name of a type check's type
    /// (`VERIFY_ARG`, `VERIFY_RETURN`) stands for: PHP keeps the class a
    /// type names in the check's cache slot, and tests an object against
    /// it.
    TypeClass { class: u32 },
    /// The array a `LOAD_ARRAY` built from its constant literal, shared
    /// by every execution in the request.
    Array(Rc<minizts_core::PhpArray>),
}

impl CacheEntry {
    /// `ClassConst`'s `of` for an instruction that names its class.
    pub const NAMED_CLASS: u32 = u32::MAX;
}

/// The scopes of a frame that decide what a class member lookup finds:
/// the class scope (visibility, `self`, `parent`) and the called scope
/// (`static`), as class ids + 1 (0: none), as in [`Frame`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameScopes {
    pub scope: u32,
    pub called: u32,
}

impl FrameScopes {
    /// The running frame's (none outside a call).
    #[inline]
    pub fn of_top(frames: &[Frame]) -> FrameScopes {
        frames.last().map_or(FrameScopes::default(), |f| FrameScopes {
            scope: f.scope,
            called: f.called,
        })
    }
}

/// What a name in the function table refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FunctionRef {
    User(FuncId),
    Builtin(u16),
}

/// The request's classes: linked classes by id, and their names.
#[derive(Default)]
pub struct ClassTable {
    pub list: Vec<std::rc::Rc<minizts_core::Class>>,
    /// Lower-case name to id.
    pub by_name: HashMap<Box<[u8]>, minizts_core::object::ClassId>,
    /// Declarations already run, as (id of their script's first function,
    /// index in its classes): the statement of a class declared early
    /// does nothing.
    pub declared: hashbrown::HashSet<(FuncId, u32)>,
}

impl ClassTable {
    /// The class named `lc_name` (lower case), if declared.
    pub fn find(&self, lc_name: &[u8]) -> Option<&std::rc::Rc<minizts_core::Class>> {
        self.by_name.get(lc_name).map(|&id| &self.list[id as usize])
    }

    /// Class `id`.
    pub fn get(&self, id: minizts_core::object::ClassId) -> &std::rc::Rc<minizts_core::Class> {
        &self.list[id as usize]
    }
}

/// A call frame (PHP's `zend_execute_data`).
pub struct Frame {
    /// The function running.
    pub func: FuncId,
    /// The same function, as a pointer into the running script's
    /// functions, which outlive every frame of the request: a return
    /// reloads its caller's function with one read instead of an indexed
    /// lookup through the script.
    pub function: *const Function,
    /// Its register window on the VM stack.
    pub base: *mut Value,
    /// The end (one past the last slot) of the stack chunk holding the
    /// window: a call checks that the callee's window fits below it.
    pub chunk: *mut Value,
    /// The instruction executing in this frame, as a pointer into its
    /// function's code (PHP's `opline`): saved at calls, where execution
    /// resumes after the next one, and before anything that reports the
    /// current line. A new frame's is its first instruction. Pointers, not
    /// indexes, so saving and resuming need no arithmetic;
    /// [`Function::index_of`] turns one into an index for messages.
    ///
    /// [`Function::index_of`]: minizts_core::bytecode::Function::index_of
    pub pc: *const Op,
    /// The caller's register that receives the return value.
    pub ret: Reg,
    /// How many arguments were passed.
    pub argc: u16,
    /// The closure object, when running one (it owns the static slots).
    /// This must stay the frame's only owning field: a return takes it
    /// out with `ptr::read` and then forgets the frame's slot, so any
    /// other field with a destructor would leak or be freed twice.
    pub closure: Option<Rc<Closure>>,
    /// Whether returning from this frame goes back to native code (a
    /// builtin calling a callback) rather than to the caller's bytecode.
    pub native: bool,
    /// The class the running code belongs to (`self::`, visibility), as
    /// its id + 1; 0 outside classes.
    pub scope: u32,
    /// The class the call was made on (`static::`), id + 1; 0 if none.
    pub called: u32,
}

/// One chunk of the VM stack: registers owned through a raw pointer.
///
/// The VM keeps raw pointers to registers (frame bases, window ends)
/// while the stack's bookkeeping runs, so the stack never makes a
/// reference to a chunk's registers (a `Box<[Value]>` or a `&mut [Value]`
/// would assert that it is the only way to them, and invalidate the VM's
/// pointers under Rust's aliasing rules; Miri found exactly that). Every
/// access goes through the pointer the allocation returned.
struct Chunk {
    start: ptr::NonNull<Value>,
    len: usize,
}

impl Chunk {
    fn new(len: usize) -> Chunk {
        let boxed: Box<[Value]> = vec![Value::Undef; len].into_boxed_slice();
        let start = ptr::NonNull::new(Box::into_raw(boxed).cast::<Value>()).expect("a boxed slice is never null");
        Chunk { start, len }
    }

    fn start(&self) -> *mut Value {
        self.start.as_ptr()
    }

    /// One past the last register (the chunk's identity for windows).
    fn end(&self) -> *mut Value {
        self.start.as_ptr().wrapping_add(self.len)
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        let slice = ptr::slice_from_raw_parts_mut(self.start.as_ptr(), self.len);
        // SAFETY: `start..start+len` came from `Box::into_raw` of a boxed
        // slice of this length and is freed once, here; the VM holds no
        // window in a chunk that is dropped (windows of a chunk belong to
        // frames that returned before it is replaced or the stack reset).
        drop(unsafe { Box::from_raw(slice) });
    }
}

/// The VM stack: register windows in chunks that never move, so a pointer
/// to a register stays valid while its frame lives, even when deeper calls
/// need more chunks (PHP's VM stack pages).
pub struct VmStack {
    chunks: Vec<Chunk>,
    /// Slots allowed in all chunks together (the nesting limit).
    max_slots: usize,
    /// The highest window end handed out this request, as an address
    /// (`reset` clears the first chunk up to it; windows in a later chunk
    /// at higher addresses make it clear the whole first chunk).
    high: *mut Value,
}

/// The VM stack is full: calls nest too deeply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StackOverflow {
    /// The limit, in bytes, for the error message.
    pub limit_bytes: usize,
}

impl VmStack {
    const FIRST_CHUNK: usize = 16 * 1024;
    const CHUNK: usize = 64 * 1024;

    pub fn new(max_slots: usize) -> VmStack {
        VmStack {
            chunks: Vec::new(),
            max_slots,
            high: ptr::null_mut(),
        }
    }

    pub fn set_max_slots(&mut self, max_slots: usize) {
        self.max_slots = max_slots;
    }

    /// Where the first frame goes: its window, and the end of its chunk.
    pub fn bottom(&mut self, n: usize) -> Result<(*mut Value, *mut Value), StackOverflow> {
        if self.chunks.is_empty() {
            let size = n.max(Self::FIRST_CHUNK);
            self.chunks.push(Chunk::new(size));
        }
        let end = self.chunks[0].end();
        let base = self.chunks[0].start();
        // SAFETY: `base` is the start of chunk 0 and nothing is kept; the
        // window goes to the next chunk if it does not fit.
        unsafe { self.window(end, base, 0, n, n) }
    }

    /// A window of `n` registers starting at `at` (in the chunk that ends at
    /// `chunk`; returned with the end of the chunk it went to),
    /// keeping the `keep` values already at `at` (the arguments). If it
    /// does not fit in the chunk, the window goes to the start of the next
    /// chunk and the kept values move with it. Registers `keep..cvs` (the
    /// callee's other variables) are cleared; the rest (temporaries, which
    /// the compiler always writes before reading) keep whatever valid
    /// value they hold, like PHP's uninitialised TMP slots: whoever writes
    /// one drops the old value, and the frame's return frees the counted
    /// ones.
    ///
    /// # Safety
    /// `at` must point into the chunk that ends at `chunk` (or be `chunk`
    /// itself), with the `keep` values from `at` inside it, and no
    /// reference to the window's registers may be alive.
    #[inline(always)]
    pub unsafe fn window(
        &mut self,
        chunk: *mut Value,
        at: *mut Value,
        keep: usize,
        cvs: usize,
        n: usize,
    ) -> Result<(*mut Value, *mut Value), StackOverflow> {
        // SAFETY: forwarded from the caller.
        let (chunk, base) = unsafe { self.reserve(chunk, at, keep, n) }?;
        // SAFETY: `base..base+n` is the window just reserved.
        unsafe { clear_variables(base, keep, cvs.min(n)) };
        Ok((chunk, base))
    }

    /// [`VmStack::window`] without clearing the variables when the window
    /// stays where it is: the caller clears them with [`clear_variables`]
    /// once it has recorded the window (a call pushes its frame first, so
    /// the clearing loop, which may drop values, does not keep the rest of
    /// the call's state alive across it).
    ///
    /// # Safety
    /// As for [`VmStack::window`].
    #[inline(always)]
    pub unsafe fn reserve(
        &mut self,
        chunk: *mut Value,
        at: *mut Value,
        keep: usize,
        n: usize,
    ) -> Result<(*mut Value, *mut Value), StackOverflow> {
        debug_assert!(at.wrapping_add(keep) <= chunk);
        if self.reserve_in_chunk(chunk, at, n) {
            return Ok((chunk, at));
        }
        // SAFETY: forwarded from the caller.
        unsafe { self.window_in_next_chunk(chunk, at, keep, n) }
    }

    /// The fast half of [`VmStack::reserve`]: whether the window of `n`
    /// registers at `at` fits in the chunk that ends at `chunk`, where it
    /// then is (the VM's hot loop takes a call only then, and otherwise
    /// leaves it to the general path).
    #[inline(always)]
    pub fn reserve_in_chunk(&mut self, chunk: *mut Value, at: *mut Value, n: usize) -> bool {
        // Compared as addresses: `at + n` may lie past the chunk, where an
        // in-bounds `add` would be undefined.
        let end = at.wrapping_add(n);
        if end > chunk {
            return false;
        }
        // Only chunk 0 survives a request; a window in a later chunk can
        // only make `reset` clear more of chunk 0 than needed.
        if end > self.high {
            self.high = end;
        }
        true
    }

    /// The window did not fit its chunk: it goes to the next one.
    ///
    /// # Safety
    /// As for [`VmStack::window`].
    #[cold]
    #[inline(never)]
    unsafe fn window_in_next_chunk(
        &mut self,
        chunk: *mut Value,
        at: *mut Value,
        keep: usize,
        n: usize,
    ) -> Result<(*mut Value, *mut Value), StackOverflow> {
        let c = self
            .chunks
            .iter()
            .position(|ch| ch.end() == chunk)
            .expect("the window's chunk is one of the stack's");
        let next = c + 1;
        let below: usize = self.chunks[..next].iter().map(|ch| ch.len).sum();
        let size = n.max(Self::CHUNK);
        if below + size > self.max_slots {
            return Err(StackOverflow {
                limit_bytes: self.max_slots * std::mem::size_of::<Value>(),
            });
        }
        if self.chunks.len() <= next {
            self.chunks.push(Chunk::new(size));
        } else if self.chunks[next].len < n {
            // Frames above chunk `c` have all returned (frames are LIFO),
            // so the chunk is free to replace.
            self.chunks[next] = Chunk::new(size);
            self.chunks.truncate(next + 1);
        }
        let base = self.chunks[next].start();
        for i in 0..keep {
            // SAFETY: `at+i` is in chunk `c` (the caller's contract).
            let from = unsafe { at.add(i) };
            // SAFETY: `base+i` is in chunk `next` (its size is at least
            // `n > i`).
            let to = unsafe { base.add(i) };
            // SAFETY: both are live registers in two allocations, so they
            // never overlap.
            unsafe { ptr::swap(from, to) };
        }
        // SAFETY: `base..base+n` lies in chunk `next` (its size ≥ n).
        unsafe { clear_variables(base, keep, n) };
        Ok((self.chunks[next].end(), base))
    }

    /// The end of the window `base..base+n` as a place for a nested frame
    /// (a callback called by a builtin).
    ///
    /// # Safety
    /// `base..base+n` must be a window this stack handed out.
    pub unsafe fn after(&self, base: *mut Value, n: usize) -> *mut Value {
        // SAFETY: windows lie inside one chunk, so `base+n` is at most one
        // past its end.
        unsafe { base.add(n) }
    }

    /// Drops every value and frees chunks beyond the first. Only the part
    /// of the first chunk windows reached is cleared: returning frames
    /// leave scalars behind and a new window clears only its variables,
    /// so that part may still hold values, and the rest never did.
    pub fn reset(&mut self) {
        self.chunks.truncate(1);
        if let Some(first) = self.chunks.first() {
            let start = first.start() as usize;
            let reached = (self.high as usize).saturating_sub(start) / std::mem::size_of::<Value>();
            let used = reached.min(first.len);
            // SAFETY: `0..used` lies in the first chunk; at a reset no
            // frame runs, so nothing else refers to its registers.
            unsafe { clear_variables(first.start(), 0, used) };
        }
        self.high = ptr::null_mut();
    }

    /// Bytes of stack currently allocated.
    pub fn allocated_bytes(&self) -> usize {
        self.chunks.iter().map(|c| c.len).sum::<usize>() * std::mem::size_of::<Value>()
    }
}

/// Sets registers `keep..n` of the window at `base` to `Undef`, dropping
/// what they held (a new window's variables, past its arguments).
///
/// # Safety
/// `base..base+n` must be valid registers of one chunk, with no other
/// reference to them alive.
#[inline]
pub unsafe fn clear_variables(base: *mut Value, keep: usize, n: usize) {
    for i in keep..n {
        // SAFETY: `i < n`, inside the caller's window.
        let slot = unsafe { base.add(i) };
        // SAFETY: a valid register with no other reference alive (the
        // caller's promise).
        unsafe { &mut *slot }.clear();
    }
}

/// Where output goes when no output buffer is active.
pub enum Sink {
    /// The process's standard output, through a buffer flushed when it
    /// grows, on `flush()`, before anything is written to stderr, and at
    /// the end.
    Stdout(Vec<u8>),
    /// Kept in memory (a request's output, tests).
    Capture(Vec<u8>),
    /// Thrown away (benchmarks).
    Discard,
}

impl Sink {
    fn write(&mut self, bytes: &[u8]) {
        match self {
            Sink::Stdout(buf) => {
                buf.extend_from_slice(bytes);
                if buf.len() >= 64 * 1024 {
                    let mut out = std::io::stdout().lock();
                    let _ = out.write_all(buf);
                    let _ = out.flush();
                    buf.clear();
                }
            }
            Sink::Capture(buf) => buf.extend_from_slice(bytes),
            Sink::Discard => {}
        }
    }
}

/// Where warnings and error messages go (PHP's `display_errors=stderr`).
pub enum ErrorSink {
    /// The process's standard error (after flushing pending stdout).
    Stderr,
    /// Kept in memory (a request of many, tests).
    Capture(Vec<u8>),
    /// Thrown away.
    Discard,
}

/// PHP's output layer: a stack of output buffers over a sink.
pub struct Output {
    /// `ob_start()` buffers, innermost last.
    pub buffers: Vec<Vec<u8>>,
    pub sink: Sink,
}

impl Output {
    pub fn new(sink: Sink) -> Output {
        Output {
            buffers: Vec::new(),
            sink,
        }
    }

    /// Writes to the innermost buffer, or the sink.
    #[inline]
    pub fn write(&mut self, bytes: &[u8]) {
        match self.buffers.last_mut() {
            Some(buf) => buf.extend_from_slice(bytes),
            None => self.sink.write(bytes),
        }
    }

    /// Sends buffered stdout bytes to the process's stdout.
    pub fn flush_sink(&mut self) {
        if let Sink::Stdout(buf) = &mut self.sink {
            if !buf.is_empty() {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(buf);
                let _ = out.flush();
                buf.clear();
            }
        }
    }

    /// Flushes every output buffer into the sink (what PHP does at the end
    /// of a request, even after a fatal error), then the sink itself.
    pub fn end_all(&mut self) {
        while let Some(buf) = self.buffers.pop() {
            self.write(&buf);
        }
        self.flush_sink();
    }
}

/// PHP's built-in `include_path` on Debian (PHP_INCLUDE_PATH).
pub const DEFAULT_INCLUDE_PATH: &str = ".:/usr/share/php";

/// Settings PHP keeps in ini entries.
#[derive(Clone, Debug)]
pub struct Settings {
    /// `precision`: significant digits when a float becomes a string.
    pub precision: i32,
    /// `memory_limit` in bytes (`None`: unlimited).
    pub memory_limit: Option<usize>,
    /// `max_execution_time` (zero: none).
    pub max_execution_time: std::time::Duration,
    /// `error_reporting` (E_ALL by default).
    pub error_reporting: i64,
    /// `include_path`: the folders a relative `include` searches, `:`
    /// separated (`.` is the working directory).
    pub include_path: String,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            precision: 14,
            memory_limit: Some(128 * 1024 * 1024),
            max_execution_time: std::time::Duration::ZERO,
            error_reporting: E_ALL,
            include_path: DEFAULT_INCLUDE_PATH.to_string(),
        }
    }
}

/// `E_ALL`.
pub const E_ALL: i64 = 32767;

/// The executor globals (see the module docs).
pub struct ExecutorGlobals {
    /// The big-integer freelist of float formatting under
    /// `--dtoa=per-thread` (PHP 8.4 keeps dtoa's freelist in EG since
    /// php-src #13974; before, it was process-wide behind a mutex).
    pub dtoa_freelist: minizts_core::numfmt::bigdtoa::Freelist,
    // The VM.
    pub stack: VmStack,
    pub frames: Vec<Frame>,
    /// Set (from any thread) to make the VM stop at its next check.
    pub interrupt: Interrupt,
    /// How many nested VM loops run (builtins calling back into scripts).
    pub native_depth: u32,
    /// Set once the main script has finished: shutdown functions run with
    /// only its frame left (it holds the globals), and no script code is
    /// active while a builtin runs as one (PHP's "[no active file]").
    pub script_ended: bool,

    // The request.
    /// The request's script and those its `eval()`s compiled, with their
    /// functions by id.
    pub code: crate::code::Code,
    pub runtime_cache: Vec<CacheEntry>,
    /// User functions declared this request (lowercase name).
    pub functions: HashMap<Box<[u8]>, FuncId>,
    /// Constants defined this request (`define`, `const`).
    pub constants: HashMap<Box<[u8]>, Value>,
    /// Global variables that top-level code has no register for (created
    /// by `global $x` in a function or by name), each a `Value::Ref`, in
    /// the order they were made (the order `$GLOBALS` lists them in).
    pub extra_globals: PhpArray,
    /// Static variables of named functions: `statics[func][slot]`.
    pub statics: Vec<Vec<Option<PhpRef>>>,
    /// Static variables of trait methods, per (function, class scope + 1):
    /// each class using a trait has its own copy of the method.
    pub trait_statics: HashMap<(FuncId, u32), Vec<Option<PhpRef>>>,
    /// `$argv` for the script.
    pub argv: Vec<PhpStr>,
    pub output: Output,
    /// Where diagnostics go.
    pub errors: ErrorSink,
    /// The `error_reporting` level in force (0 inside `@`).
    pub error_reporting: i64,
    pub settings: Settings,
    /// The settings as they were before the request (`ini_set` and
    /// friends change `settings` for one request only).
    pub saved_settings: Option<Settings>,
    /// Small module globals of the standard builtins, reset per request.
    pub basic: BasicGlobals,
    /// `set_error_handler`'s state and the diagnostics waiting for it.
    pub user_errors: UserErrors,
    /// `exit()`'s status.
    pub exit_status: i32,
    pub mt_rand: Option<MtRand>,
    /// The request's objects (PHP's `EG(objects_store)`): handles and
    /// the destructors due.
    pub objects: std::rc::Rc<minizts_core::ObjectStore>,
    /// The request's classes (PHP's `EG(class_table)`).
    pub classes: ClassTable,
    /// The pending exception (PHP's `EG(exception)`): what a builtin
    /// threw, until the VM's test after the call takes it to its handler,
    /// and what the handler search (`ZEND_HANDLE_EXCEPTION`) carries,
    /// until a `catch` clause takes it or a `finally` puts it aside.
    /// `None` everywhere else.
    pub exception: Option<Value>,
    /// The watchdog timer of the request's time limit, if one is armed
    /// (`vm::timer`).
    pub time_limit: Option<u64>,
    /// The cycle collector: every reference the request made, and its
    /// figures (PHP's `GC_G`).
    pub gc: minizts_core::gc::Collector,
    /// The peak of memory use this request (bytes), for
    /// `memory_get_peak_usage`.
    pub memory_base: usize,
    /// The regex functions' module globals (PHP's `PCRE_G`: the compiled
    /// pattern cache, `preg_last_error()`'s code, the `pcre.*` settings).
    /// Type-erased so that this crate does not depend on PCRE2: the VM's
    /// `builtins::pcre` module owns the type and creates it on first use.
    /// Dropped at request startup and shutdown, as PHP's CLI keeps its
    /// pattern cache per request (`per_request_cache`).
    pub pcre: Option<Box<dyn std::any::Any>>,
    /// `register_shutdown_function`'s callbacks and their arguments, in
    /// order (PHP's `BG(user_shutdown_function_names)`).
    pub shutdown_functions: Vec<(Value, Vec<Value>)>,
    /// SPL's autoloaders (PHP's `spl_autoload_functions`) and the
    /// classes being autoloaded (`EG(in_autoload)`).
    pub autoload: Autoload,
}

/// One autoloader `spl_autoload_register` installed.
pub struct Autoloader {
    /// The callable as it was given (what `spl_autoload_functions`
    /// lists).
    pub callable: Value,
    /// What PHP compares to find it again (its function, object, calling
    /// class and closure), written by the VM as bytes.
    pub identity: Box<[u8]>,
    /// The call resolved when it was registered (the VM's `Callee`,
    /// type-erased as this crate does not know it): PHP resolves it once,
    /// so a private method registered from its class stays callable.
    pub resolved: std::rc::Rc<dyn std::any::Any>,
}

/// The request's autoloading state.
#[derive(Default)]
pub struct Autoload {
    /// The autoloaders, in the order they are tried.
    pub functions: Vec<Autoloader>,
    /// Lower-case names of the classes whose autoloaders are running: an
    /// autoloader is not run again for the class it is loading.
    pub in_progress: hashbrown::HashSet<Box<[u8]>>,
    /// `spl_autoload_extensions()`'s list, when a script set one.
    pub extensions: Option<PhpStr>,
}

/// The standard builtins' small per-request state, as PHP keeps it in
/// module globals (`BG`, `ARRAYG`, `JSON_G`): per thread under ZTS, and
/// reset by request startup and shutdown.
#[derive(Default)]
pub struct BasicGlobals {
    /// `assert()`'s settings (`ASSERTG`) and `zend.assertions`.
    pub assert: AssertSettings,
    /// `strtok`'s string and where its next token starts
    /// (`BG(strtok_string)`, `BG(strtok_last)`).
    pub strtok: Option<(PhpStr, usize)>,
    /// Whether this user sort has printed the deprecation of a bool
    /// comparator result (`ARRAYG(compare_deprecation_thrown)`).
    pub sort_bool_deprecation_shown: bool,
    /// `json_last_error()`'s code (`JSON_G(error_code)`).
    pub json_error: u32,
    /// The text `ini_set` gave the settings that keep it as written
    /// (`ini_get` returns it; the effective value lives elsewhere).
    pub ini_text: Vec<IniText>,
}

/// A setting's name and the text a script gave it.
pub type IniText = (Box<[u8]>, Box<[u8]>);

/// `assert()`'s settings: `zend.assertions` (1 runs assertions, 0 skips
/// them, -1 would not compile them) and ext/standard's `assert.*`.
pub struct AssertSettings {
    pub assertions: i64,
    pub active: bool,
    pub exception: bool,
    pub warning: bool,
    pub bail: bool,
    /// The callback `assert_options(ASSERT_CALLBACK, …)` set (PHP's
    /// `ASSERTG(callback)`); the `assert.callback` setting's name is used
    /// while there is none.
    pub callback: Option<Value>,
}

impl Default for AssertSettings {
    fn default() -> AssertSettings {
        AssertSettings {
            assertions: 1,
            active: true,
            exception: true,
            warning: true,
            bail: false,
            callback: None,
        }
    }
}

impl BasicGlobals {
    /// The text a script gave setting `name`, if it set it.
    pub fn ini_text(&self, name: &[u8]) -> Option<&[u8]> {
        self.ini_text.iter().find(|(n, _)| &**n == name).map(|(_, v)| &**v)
    }

    /// Records (`Some`) or forgets (`None`) the text of setting `name`.
    pub fn set_ini_text(&mut self, name: &[u8], text: Option<&[u8]>) {
        self.ini_text.retain(|(n, _)| &**n != name);
        if let Some(t) = text {
            self.ini_text.push((name.into(), t.into()));
        }
    }
}

/// A user error handler as `set_error_handler` installs it: the callable
/// and the levels it takes (`EG(user_error_handler)` and
/// `EG(user_error_handler_error_reporting)`).
#[derive(Clone)]
pub struct UserErrorHandler {
    pub callback: Value,
    pub levels: i64,
}

/// A warning, notice or deprecation that a user handler is to see.
///
/// The handler runs at the VM's next check (after the instruction or
/// builtin that raised it), not inside it: diagnostics are raised deep in
/// the engine, where running script code could change the very values
/// the engine is in the middle of working on.
pub struct PendingError {
    /// PHP's `E_*` bit.
    pub level: i64,
    pub message: String,
    pub file: Option<Box<str>>,
    pub line: u32,
}

/// The last diagnostic PHP's own handler saw, for `error_get_last`.
#[derive(Clone)]
pub struct LastError {
    pub level: i64,
    pub message: String,
    pub file: Option<Box<str>>,
    pub line: u32,
}

/// The user error handlers of the request.
#[derive(Default)]
pub struct UserErrors {
    /// The handler in force; `None` while none is set, and while it runs
    /// (so that it is not called for its own diagnostics).
    pub handler: Option<UserErrorHandler>,
    /// Those `set_error_handler` replaced, for `restore_error_handler`
    /// (`EG(user_error_handlers)`).
    pub stack: Vec<Option<UserErrorHandler>>,
    /// Diagnostics for the handler, in the order they were raised; the
    /// interrupt flag is set while there are any.
    pub pending: Vec<PendingError>,
    /// `error_get_last()`.
    pub last: Option<LastError>,
    /// `set_exception_handler`'s callable (`EG(user_exception_handler)`),
    /// and those it replaced, for `restore_exception_handler`
    /// (`EG(user_exception_handlers)`).
    pub exception_handler: Option<Value>,
    pub exception_handlers: Vec<Option<Value>>,
}

impl ExecutorGlobals {
    pub fn new() -> ExecutorGlobals {
        ExecutorGlobals {
            dtoa_freelist: minizts_core::numfmt::bigdtoa::Freelist::new(),
            stack: VmStack::new(16 * 1024 * 1024),
            frames: Vec::new(),
            interrupt: Interrupt::default(),
            native_depth: 0,
            code: Default::default(),
            runtime_cache: Vec::new(),
            functions: HashMap::new(),
            constants: HashMap::new(),
            extra_globals: PhpArray::new(),
            statics: Vec::new(),
            trait_statics: HashMap::new(),
            argv: Vec::new(),
            output: Output::new(Sink::Stdout(Vec::new())),
            errors: ErrorSink::Stderr,
            error_reporting: E_ALL,
            settings: Settings::default(),
            saved_settings: None,
            basic: BasicGlobals::default(),
            user_errors: UserErrors::default(),
            exit_status: 0,
            mt_rand: None,
            objects: std::rc::Rc::new(minizts_core::ObjectStore::default()),
            classes: ClassTable::default(),
            exception: None,
            time_limit: None,
            gc: minizts_core::gc::Collector::new(),
            memory_base: 0,
            pcre: None,
            shutdown_functions: Vec::new(),
            autoload: Autoload::default(),
            script_ended: false,
        }
    }

    /// Prepares for running `script` (PHP's `init_executor`).
    pub fn request_startup(&mut self, script: Arc<Script>, sink: Sink) {
        self.runtime_cache.clear();
        self.statics.clear();
        self.trait_statics.clear();
        self.code.clear();
        self.add_script(script);
        self.output = Output::new(sink);
        self.saved_settings = Some(self.settings.clone());
        self.basic = BasicGlobals::default();
        self.user_errors = UserErrors::default();
        self.pcre = None;
        self.error_reporting = self.settings.error_reporting;
        self.exit_status = 0;
        // SAFETY: the flag is a field of these globals, which outlive the
        // request; request shutdown detaches the store before anything
        // else can happen to them.
        self.objects = unsafe { minizts_core::ObjectStore::new(&self.interrupt.pending) };
        self.classes = ClassTable::default();
        self.autoload = Autoload::default();
        self.exception = None;
        self.native_depth = 0;
        self.script_ended = false;
        self.interrupt.clear();
    }

    /// Makes `script` (the request's, or an `eval()`'s) runnable: its
    /// functions by id, their static variables, its cache slots.
    pub fn add_script(&mut self, script: Arc<Script>) {
        self.runtime_cache.resize(
            (script.cache_slots as usize).max(self.runtime_cache.len()),
            CacheEntry::Empty,
        );
        self.statics
            .resize_with(self.statics.len() + script.functions.len(), Vec::new);
        self.code.add(script);
    }

    /// The request's script.
    pub fn script(&self) -> Option<&Arc<Script>> {
        self.code.main()
    }

    /// Frames whose room a thread keeps between requests.
    const KEPT_FRAMES: usize = 256;

    /// Drops everything the request made (PHP's `shutdown_executor`) and
    /// returns the sink with whatever it captured. Values go before the
    /// script, whose interned strings they may point to.
    pub fn request_shutdown(&mut self) -> Sink {
        self.output.end_all();
        self.shutdown_functions.clear();
        self.frames.clear();
        // A request that recursed deeply leaves a large frame list behind,
        // which would count against the next request's memory limit.
        self.frames.shrink_to(Self::KEPT_FRAMES);
        self.stack.reset();
        self.runtime_cache.clear();
        self.functions.clear();
        self.constants.clear();
        self.extra_globals = PhpArray::new();
        self.statics.clear();
        self.trait_statics.clear();
        self.argv.clear();
        self.pcre = None;
        self.basic = BasicGlobals::default();
        self.user_errors = UserErrors::default();
        self.autoload = Autoload::default();
        self.exception = None;
        self.objects.detach();
        // Objects that only cycles keep alive (the cycle collector does
        // not follow objects yet) are freed by emptying every object
        // still alive: what they hold goes, and with it the cycles.
        let live = self.objects.live();
        for o in &live {
            o.set_flag(minizts_core::Object::DESTRUCTED, true);
        }
        for o in &live {
            let props = std::mem::take(&mut *o.props.borrow_mut());
            let dynamic = o.dynamic.borrow_mut().take();
            drop((props, dynamic));
        }
        drop(live);
        self.classes = ClassTable::default();
        // Last, what only cycles still hold.
        self.gc.free_all();
        let sink = std::mem::replace(&mut self.output, Output::new(Sink::Discard)).sink;
        if let Some(settings) = self.saved_settings.take() {
            self.settings = settings;
        }
        self.code.clear();
        sink
    }
}

impl Default for ExecutorGlobals {
    fn default() -> Self {
        ExecutorGlobals::new()
    }
}

// A test's unsafe block states one invariant for the steps it groups.
#[cfg(test)]
#[allow(clippy::multiple_unsafe_ops_per_block)]
mod tests {
    use super::*;

    fn is_str(v: &Value, s: &[u8]) -> bool {
        matches!(v, Value::Str(t) if &**t == s)
    }

    #[test]
    // One invariant covers every block (stated below).
    #[allow(clippy::undocumented_unsafe_blocks)]
    fn windows_fit_below_their_chunk_end_or_move_to_the_next_chunk() {
        let mut stack = VmStack::new(1 << 20);
        let (end0, base) = stack.bottom(4).unwrap();
        // SAFETY (this test): every pointer is into a chunk of `stack`,
        // which lives to the end, and no reference outlives its use.
        assert_eq!(unsafe { end0.offset_from(base) }, VmStack::FIRST_CHUNK as isize);
        // A window inside chunk 0 keeps its argument and clears its CVs.
        let at = unsafe { base.add(4) };
        unsafe { *at = Value::Int(7) };
        unsafe { *at.add(1) = Value::Int(8) };
        let (end, b) = unsafe { stack.window(end0, at, 1, 2, 3) }.unwrap();
        assert_eq!((end, b), (end0, at));
        assert!(matches!(unsafe { &*b }, Value::Int(7)));
        assert!(matches!(unsafe { &*b.add(1) }, Value::Undef));
        // One that would cross the chunk's end moves to a new chunk, and
        // its kept values move with it.
        let at = unsafe { end0.sub(2) };
        unsafe { *at = Value::str("x") };
        let (end1, b1) = unsafe { stack.window(end0, at, 1, 1, 8) }.unwrap();
        assert_ne!(end1, end0);
        assert_eq!(unsafe { end1.offset_from(b1) }, VmStack::CHUNK as isize);
        assert!(is_str(unsafe { &*b1 }, b"x"));
        // A window that exactly fills the rest of a chunk stays in it.
        let at = unsafe { end1.sub(4) };
        let (end, b) = unsafe { stack.window(end1, at, 0, 0, 4) }.unwrap();
        assert_eq!((end, b), (end1, at));
        // Reset drops what the windows of chunk 0 left behind and frees
        // the later chunks.
        unsafe { *base.add(5) = Value::str("y") };
        stack.reset();
        assert!(matches!(unsafe { &*base.add(5) }, Value::Undef));
        assert_eq!(
            stack.allocated_bytes(),
            VmStack::FIRST_CHUNK * std::mem::size_of::<Value>()
        );
    }

    #[test]
    // One invariant covers every block (stated below).
    #[allow(clippy::undocumented_unsafe_blocks)]
    fn later_chunks_are_found_by_their_end_reused_and_replaced_when_small() {
        let mut stack = VmStack::new(1 << 22);
        let (end0, _) = stack.bottom(4).unwrap();
        // SAFETY (this test): every pointer is into a live chunk of
        // `stack`; a chunk that is replaced is not touched again.
        let (end1, _) = unsafe { stack.window(end0, end0.sub(1), 0, 0, 8) }.unwrap();
        // From chunk 1 to a new chunk 2, carrying a kept value.
        let at = unsafe { end1.sub(1) };
        unsafe { *at = Value::str("kept") };
        let (end2, b2) = unsafe { stack.window(end1, at, 1, 1, 8) }.unwrap();
        assert!(end2 != end1 && end2 != end0);
        assert!(is_str(unsafe { &*b2 }, b"kept"));
        assert_eq!(stack.chunks.len(), 3);
        // After the frames in chunk 2 return, the next move out of chunk 1
        // reuses chunk 2 as it is.
        let (again, b) = unsafe { stack.window(end1, end1.sub(1), 0, 0, 8) }.unwrap();
        assert_eq!((again, b), (end2, b2));
        // A window larger than chunk 2 replaces it with one big enough
        // and drops the chunks above it.
        unsafe { stack.window(end2, end2.sub(1), 0, 0, 8) }.unwrap();
        assert_eq!(stack.chunks.len(), 4);
        let big = VmStack::CHUNK + 100;
        let (endb, bb) = unsafe { stack.window(end1, end1.sub(1), 0, 0, big) }.unwrap();
        assert_eq!(unsafe { endb.offset_from(bb) }, big as isize);
        assert_eq!(stack.chunks.len(), 3);
        stack.reset();
        assert_eq!(stack.chunks.len(), 1);
    }

    #[test]
    fn a_window_past_the_slot_limit_is_an_overflow() {
        let mut stack = VmStack::new(VmStack::FIRST_CHUNK + 10);
        let (end0, _) = stack.bottom(4).unwrap();
        // SAFETY: two registers below the end of chunk 0, inside it.
        let at = unsafe { end0.sub(2) };
        // SAFETY: `at` is in chunk 0; nothing is kept.
        let r = unsafe { stack.window(end0, at, 0, 0, 8) };
        assert_eq!(
            r.err(),
            Some(StackOverflow {
                limit_bytes: (VmStack::FIRST_CHUNK + 10) * std::mem::size_of::<Value>()
            })
        );
    }
}
