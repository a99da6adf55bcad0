//! A small safe layer over PCRE2's C API (through `pcre2-sys`): compiled
//! patterns, match data and the match context, owning what PCRE2
//! allocates. The high-level `pcre2` crate hides the options and error
//! codes PHP's functions need (ANCHORED, NOTEMPTY_ATSTART at match time,
//! the limit errors), so the functions here keep PCRE2's own numbers.

use std::ptr::{self, NonNull};

use pcre2_sys::*;

pub use pcre2_sys::{
    PCRE2_ANCHORED, PCRE2_CASELESS, PCRE2_DOLLAR_ENDONLY, PCRE2_DOTALL, PCRE2_DUPNAMES, PCRE2_ERROR_BADOFFSET,
    PCRE2_ERROR_BADUTFOFFSET, PCRE2_ERROR_DEPTHLIMIT, PCRE2_ERROR_JIT_STACKLIMIT, PCRE2_ERROR_MATCHLIMIT,
    PCRE2_ERROR_NOMATCH, PCRE2_ERROR_UTF8_ERR1, PCRE2_ERROR_UTF8_ERR21, PCRE2_EXTENDED, PCRE2_MULTILINE,
    PCRE2_NOTEMPTY_ATSTART, PCRE2_NO_AUTO_CAPTURE, PCRE2_NO_UTF_CHECK, PCRE2_UCP, PCRE2_UNGREEDY, PCRE2_UNSET,
    PCRE2_UTF,
};

/// PHP's JIT stack: 32 KiB growing to 192 KiB (`PCRE_JIT_STACK_MIN_SIZE`
/// and `_MAX_SIZE` in php_pcre.c), so deep patterns fail the same way.
const JIT_STACK_MIN: usize = 32 * 1024;
const JIT_STACK_MAX: usize = 192 * 1024;

/// Why a pattern did not compile: PCRE2's error number and offset.
#[derive(Debug)]
pub struct CompileError {
    pub code: i32,
    pub offset: usize,
}

impl CompileError {
    /// PCRE2's message for the error.
    pub fn message(&self) -> String {
        error_message(self.code)
    }
}

/// PCRE2's text for an error number (compile or match).
pub fn error_message(code: i32) -> String {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is writable for its length, which is passed; PCRE2
    // writes at most that many bytes, NUL included.
    let n = unsafe { pcre2_get_error_message_8(code, buf.as_mut_ptr(), buf.len()) };
    let n = if n < 0 { 0 } else { n as usize };
    String::from_utf8_lossy(&buf[..n.min(buf.len())]).into_owned()
}

/// The library's version string (`PCRE_VERSION`), e.g. "10.42 2022-12-11".
pub fn version() -> String {
    let mut buf = [0u8; 64];
    // SAFETY: PCRE2_CONFIG_VERSION writes a NUL-terminated string of at
    // most 24 code units into the buffer.
    let n = unsafe { pcre2_config_8(PCRE2_CONFIG_VERSION, buf.as_mut_ptr().cast()) };
    let len = if n > 0 { (n as usize - 1).min(buf.len()) } else { 0 };
    String::from_utf8_lossy(&buf[..len]).into_owned()
}

/// A compiled pattern (`pcre2_code`), freed on drop.
pub struct Code {
    ptr: NonNull<pcre2_code_8>,
}

impl Code {
    /// Compiles `pattern` with `options`, with PHP's extra option
    /// ALLOW_LOOKAROUND_BSK (php_pcre.c sets it for PCRE2 10.38 and later).
    pub fn new(pattern: &[u8], options: u32) -> Result<Code, CompileError> {
        let (mut code, mut offset) = (0, 0);
        // SAFETY: a null general context means PCRE2's default malloc.
        let ctx = unsafe { pcre2_compile_context_create_8(ptr::null_mut()) };
        if !ctx.is_null() {
            // SAFETY: `ctx` was just created and is not shared.
            unsafe { pcre2_set_compile_extra_options_8(ctx, PCRE2_EXTRA_ALLOW_LOOKAROUND_BSK) };
        }
        // SAFETY: the pattern pointer is valid for `pattern.len()` bytes
        // (an explicit length, so NULs are allowed); the out-parameters
        // are live locals; a null context is allowed.
        let raw = unsafe { pcre2_compile_8(pattern.as_ptr(), pattern.len(), options, &mut code, &mut offset, ctx) };
        if !ctx.is_null() {
            // SAFETY: the compiled code does not keep the context.
            unsafe { pcre2_compile_context_free_8(ctx) };
        }
        match NonNull::new(raw) {
            Some(ptr) => Ok(Code { ptr }),
            None => Err(CompileError { code, offset }),
        }
    }

    /// JIT-compiles the pattern; whether JIT code now exists (matching
    /// then uses it by itself where the options allow).
    pub fn jit_compile(&self) -> bool {
        // SAFETY: `ptr` is a live compiled pattern owned by `self`.
        let rc = unsafe { pcre2_jit_compile_8(self.ptr.as_ptr(), PCRE2_JIT_COMPLETE) };
        rc == 0 && self.info_usize(PCRE2_INFO_JITSIZE) > 0
    }

    fn info_u32(&self, what: u32) -> u32 {
        let mut out: u32 = 0;
        // SAFETY: these `what`s write one `uint32_t` to the pointer.
        let rc = unsafe { pcre2_pattern_info_8(self.ptr.as_ptr(), what, (&mut out as *mut u32).cast()) };
        if rc < 0 {
            0
        } else {
            out
        }
    }

    fn info_usize(&self, what: u32) -> usize {
        let mut out: usize = 0;
        // SAFETY: PCRE2_INFO_JITSIZE writes one `size_t` to the pointer.
        let rc = unsafe { pcre2_pattern_info_8(self.ptr.as_ptr(), what, (&mut out as *mut usize).cast()) };
        if rc < 0 {
            0
        } else {
            out
        }
    }

    /// How many capture groups the pattern has.
    pub fn capture_count(&self) -> u32 {
        self.info_u32(PCRE2_INFO_CAPTURECOUNT)
    }

    /// The named groups: (group number, name), in name-table order.
    pub fn names(&self) -> Vec<(usize, Vec<u8>)> {
        let count = self.info_u32(PCRE2_INFO_NAMECOUNT) as usize;
        let size = self.info_u32(PCRE2_INFO_NAMEENTRYSIZE) as usize;
        if count == 0 || size < 3 {
            return Vec::new();
        }
        let mut table: *const u8 = ptr::null();
        // SAFETY: PCRE2_INFO_NAMETABLE writes one pointer.
        let rc = unsafe {
            pcre2_pattern_info_8(
                self.ptr.as_ptr(),
                PCRE2_INFO_NAMETABLE,
                (&mut table as *mut *const u8).cast(),
            )
        };
        if rc < 0 || table.is_null() {
            return Vec::new();
        }
        // SAFETY: the name table is `count` entries of `size` bytes inside
        // the compiled pattern, which `self` keeps alive while the slice is
        // read.
        let bytes = unsafe { std::slice::from_raw_parts(table, count * size) };
        bytes
            .chunks_exact(size)
            .map(|e| {
                let n = usize::from(e[0]) << 8 | usize::from(e[1]);
                let name = &e[2..];
                let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
                (n, name[..end].to_vec())
            })
            .collect()
    }
}

impl Drop for Code {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from pcre2_compile and is freed once, here.
        unsafe { pcre2_code_free_8(self.ptr.as_ptr()) };
    }
}

/// The match context: the backtrack (match) and depth limits, and the
/// JIT stack JIT matches run on.
pub struct MatchContext {
    ptr: NonNull<pcre2_match_context_8>,
    jit_stack: Option<NonNull<pcre2_jit_stack_8>>,
}

impl MatchContext {
    /// A context with PHP's `pcre.backtrack_limit` and
    /// `pcre.recursion_limit` (`None` if PCRE2 could not allocate one).
    pub fn new(match_limit: u32, depth_limit: u32, jit: bool) -> Option<MatchContext> {
        // SAFETY: a null general context means PCRE2's default malloc.
        let ptr = NonNull::new(unsafe { pcre2_match_context_create_8(ptr::null_mut()) })?;
        let mut ctx = MatchContext { ptr, jit_stack: None };
        // SAFETY: `ctx.ptr` is a live context owned by `ctx`.
        unsafe { pcre2_set_match_limit_8(ctx.ptr.as_ptr(), match_limit) };
        // SAFETY: as above.
        unsafe { pcre2_set_depth_limit_8(ctx.ptr.as_ptr(), depth_limit) };
        if jit {
            // SAFETY: a null general context means PCRE2's default malloc.
            let stack = unsafe { pcre2_jit_stack_create_8(JIT_STACK_MIN, JIT_STACK_MAX, ptr::null_mut()) };
            if let Some(stack) = NonNull::new(stack) {
                // SAFETY: the stack lives as long as the context (both are
                // freed in `drop`, the context first).
                unsafe { pcre2_jit_stack_assign_8(ctx.ptr.as_ptr(), None, stack.as_ptr().cast()) };
                ctx.jit_stack = Some(stack);
            }
        }
        Some(ctx)
    }
}

impl Drop for MatchContext {
    fn drop(&mut self) {
        // SAFETY: both were created by `new` and are freed once, here.
        unsafe { pcre2_match_context_free_8(self.ptr.as_ptr()) };
        if let Some(stack) = self.jit_stack {
            // SAFETY: as above; no context refers to it any more.
            unsafe { pcre2_jit_stack_free_8(stack.as_ptr()) };
        }
    }
}

/// Match data (the offset vector) sized for one pattern.
pub struct MatchData {
    ptr: NonNull<pcre2_match_data_8>,
    pairs: usize,
}

impl MatchData {
    /// Match data with room for every group of `code` (`None` if PCRE2
    /// could not allocate it).
    pub fn new(code: &Code) -> Option<MatchData> {
        // SAFETY: `code` is a live compiled pattern; the match data does
        // not keep a pointer to it (only its size is read).
        let ptr = NonNull::new(unsafe { pcre2_match_data_create_from_pattern_8(code.ptr.as_ptr(), ptr::null_mut()) })?;
        // SAFETY: `ptr` is live match data.
        let pairs = unsafe { pcre2_get_ovector_count_8(ptr.as_ptr()) } as usize;
        Some(MatchData { ptr, pairs })
    }

    /// Runs `code` on `subject` from `start` with match-time `options`:
    /// PCRE2's return code (the number of pairs set, 0 if the vector was
    /// too small, or a negative error).
    pub fn run(&mut self, code: &Code, subject: &[u8], start: usize, options: u32, ctx: &MatchContext) -> i32 {
        // SAFETY: `subject` is valid for its length (PCRE2 reads no more;
        // an empty slice's dangling pointer is never read), `self` is
        // match data sized for `code`, and the context is live.
        unsafe {
            pcre2_match_8(
                code.ptr.as_ptr(),
                subject.as_ptr(),
                subject.len(),
                start,
                options,
                self.ptr.as_ptr(),
                ctx.ptr.as_ptr(),
            )
        }
    }

    /// The offset vector: start and end of the match and of each group
    /// (`PCRE2_UNSET` for a group that did not take part).
    pub fn ovector(&self) -> &[usize] {
        // SAFETY: the vector has `pairs` pairs of `size_t` and lives as
        // long as the match data, which the returned slice borrows.
        unsafe { std::slice::from_raw_parts(pcre2_get_ovector_pointer_8(self.ptr.as_ptr()), 2 * self.pairs) }
    }

    /// The last `(*MARK:NAME)` passed by the match, if any. It points into
    /// the compiled pattern, so it is copied out while `code` is alive.
    pub fn mark(&self, _code: &Code) -> Option<Vec<u8>> {
        // SAFETY: the match data is live.
        let p = unsafe { pcre2_get_mark_8(self.ptr.as_ptr()) };
        if p.is_null() {
            return None;
        }
        // SAFETY: a mark is NUL-terminated and preceded by its length
        // byte, inside the compiled pattern, which `_code` keeps alive.
        let len = unsafe { *p.sub(1) } as usize;
        // SAFETY: as above, `len` bytes follow `p`.
        Some(unsafe { std::slice::from_raw_parts(p, len) }.to_vec())
    }
}

impl Drop for MatchData {
    fn drop(&mut self) {
        // SAFETY: created by `new`, freed once, here.
        unsafe { pcre2_match_data_free_8(self.ptr.as_ptr()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> MatchContext {
        MatchContext::new(1_000_000, 100_000, true).unwrap()
    }

    #[test]
    fn compiles_and_matches_with_groups_and_names() {
        let code = Code::new(b"(?<year>\\d{4})-(\\d\\d)", 0).unwrap();
        assert_eq!(code.capture_count(), 2);
        assert_eq!(code.names(), vec![(1, b"year".to_vec())]);
        let mut md = MatchData::new(&code).unwrap();
        let rc = md.run(&code, b"on 2024-05!", 0, 0, &ctx());
        assert_eq!(rc, 3);
        assert_eq!(&md.ovector()[..6], &[3, 10, 3, 7, 8, 10]);
        assert_eq!(md.run(&code, b"none", 0, 0, &ctx()), PCRE2_ERROR_NOMATCH);
    }

    #[test]
    fn reports_compile_errors_with_offsets() {
        let e = Code::new(b"a(b", 0).err().unwrap();
        assert_eq!(e.offset, 3);
        assert_eq!(e.message(), "missing closing parenthesis");
    }

    #[test]
    fn bad_utf8_and_limits_are_errors() {
        let code = Code::new(b".", PCRE2_UTF).unwrap();
        let mut md = MatchData::new(&code).unwrap();
        let rc = md.run(&code, b"\xff", 0, 0, &ctx());
        assert!((PCRE2_ERROR_UTF8_ERR21..=PCRE2_ERROR_UTF8_ERR1).contains(&rc));
        let code = Code::new(b"(?:\\D+|<\\d+>)*[!?]", 0).unwrap();
        let mut md = MatchData::new(&code).unwrap();
        let tight = MatchContext::new(100, 100, false).unwrap();
        let rc = md.run(&code, b"foobar foobar foobar", 0, 0, &tight);
        assert_eq!(rc, PCRE2_ERROR_MATCHLIMIT);
    }

    #[test]
    fn marks_and_empty_subjects() {
        let code = Code::new(b"(*MARK:here)x?", 0).unwrap();
        let mut md = MatchData::new(&code).unwrap();
        assert_eq!(md.run(&code, b"", 0, 0, &ctx()), 1);
        assert_eq!(md.mark(&code), Some(b"here".to_vec()));
        assert!(version().starts_with("10."));
    }
}
