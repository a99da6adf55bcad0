//! PHP's regular-expression functions (ext/pcre/php_pcre.c) over PCRE2,
//! the library PHP itself uses: the `preg_*` functions, their constants,
//! and the per-thread module state (the compiled-pattern cache and
//! `preg_last_error()`), kept in the executor globals' type-erased
//! `pcre` slot. Patterns are JIT-compiled where PCRE2 can (PHP's
//! `pcre.jit=1`), with PHP's JIT stack and its default backtrack and
//! recursion limits.

mod ffi;
mod matching;
mod replace;
mod split;

use std::collections::VecDeque;
use std::rc::Rc;

use hashbrown::HashMap;
use minizts_core::{PhpStr, Value};
use minizts_globals::{eg, Globals};

use crate::builtins::Args;
use crate::error::{warning, VmResult};
use ffi::{Code, MatchContext, MatchData};
use matching::{preg_grep, preg_match, preg_match_all};
use replace::{preg_filter, preg_replace, preg_replace_callback, preg_replace_callback_array};
use split::preg_split;

crate::builtin_table! {
    "preg_match", ["pattern", "subject", "matches", "flags", "offset"], 2, 0b100, preg_match;
    "preg_match_all", ["pattern", "subject", "matches", "flags", "offset"], 2, 0b100, preg_match_all;
    "preg_replace", ["pattern", "replacement", "subject", "limit", "count"], 3, 0b10000, preg_replace;
    "preg_filter", ["pattern", "replacement", "subject", "limit", "count"], 3, 0b10000, preg_filter;
    "preg_replace_callback", ["pattern", "callback", "subject", "limit", "count", "flags"], 3, 0b10000, preg_replace_callback;
    "preg_replace_callback_array", ["pattern", "subject", "limit", "count", "flags"], 2, 0b1000, preg_replace_callback_array;
    "preg_split", ["pattern", "subject", "limit", "flags"], 2, 0, preg_split;
    "preg_quote", ["str", "delimiter"], 1, 0, preg_quote;
    "preg_grep", ["pattern", "array", "flags"], 2, 0, preg_grep;
    "preg_last_error", [], 0, 0, preg_last_error;
    "preg_last_error_msg", [], 0, 0, preg_last_error_msg;
}

const PREG_PATTERN_ORDER: i64 = 1;
const PREG_SET_ORDER: i64 = 2;
const PREG_OFFSET_CAPTURE: i64 = 1 << 8;
const PREG_UNMATCHED_AS_NULL: i64 = 1 << 9;
const PREG_SPLIT_NO_EMPTY: i64 = 1;
const PREG_SPLIT_DELIM_CAPTURE: i64 = 1 << 1;
const PREG_SPLIT_OFFSET_CAPTURE: i64 = 1 << 2;
const PREG_GREP_INVERT: i64 = 1;

/// `preg_last_error()`'s codes.
const NO_ERROR: i64 = 0;
const INTERNAL_ERROR: i64 = 1;
const BACKTRACK_LIMIT_ERROR: i64 = 2;
const RECURSION_LIMIT_ERROR: i64 = 3;
const BAD_UTF8_ERROR: i64 = 4;
const BAD_UTF8_OFFSET_ERROR: i64 = 5;
const JIT_STACKLIMIT_ERROR: i64 = 6;

/// PHP's `PCRE_CACHE_SIZE`: when the cache holds this many patterns, the
/// oldest eighth is dropped.
const CACHE_SIZE: usize = 4096;

/// The module's constants, for the compiler's constant table.
pub(crate) fn constants() -> Vec<(&'static str, Value)> {
    let version = ffi::version();
    let number = version.split(' ').next().unwrap_or("");
    let (major, minor) = number.split_once('.').unwrap_or((number, "0"));
    vec![
        ("PREG_PATTERN_ORDER", Value::Int(PREG_PATTERN_ORDER)),
        ("PREG_SET_ORDER", Value::Int(PREG_SET_ORDER)),
        ("PREG_OFFSET_CAPTURE", Value::Int(PREG_OFFSET_CAPTURE)),
        ("PREG_UNMATCHED_AS_NULL", Value::Int(PREG_UNMATCHED_AS_NULL)),
        ("PREG_SPLIT_NO_EMPTY", Value::Int(PREG_SPLIT_NO_EMPTY)),
        ("PREG_SPLIT_DELIM_CAPTURE", Value::Int(PREG_SPLIT_DELIM_CAPTURE)),
        ("PREG_SPLIT_OFFSET_CAPTURE", Value::Int(PREG_SPLIT_OFFSET_CAPTURE)),
        ("PREG_GREP_INVERT", Value::Int(PREG_GREP_INVERT)),
        ("PREG_NO_ERROR", Value::Int(NO_ERROR)),
        ("PREG_INTERNAL_ERROR", Value::Int(INTERNAL_ERROR)),
        ("PREG_BACKTRACK_LIMIT_ERROR", Value::Int(BACKTRACK_LIMIT_ERROR)),
        ("PREG_RECURSION_LIMIT_ERROR", Value::Int(RECURSION_LIMIT_ERROR)),
        ("PREG_BAD_UTF8_ERROR", Value::Int(BAD_UTF8_ERROR)),
        ("PREG_BAD_UTF8_OFFSET_ERROR", Value::Int(BAD_UTF8_OFFSET_ERROR)),
        ("PREG_JIT_STACKLIMIT_ERROR", Value::Int(JIT_STACKLIMIT_ERROR)),
        ("PCRE_VERSION", Value::str(version.as_str())),
        ("PCRE_VERSION_MAJOR", Value::Int(major.parse().unwrap_or(0))),
        ("PCRE_VERSION_MINOR", Value::Int(minor.parse().unwrap_or(0))),
        ("PCRE_JIT_SUPPORT", Value::Bool(true)),
    ]
}

/// A compiled pattern with what the functions need to know about it.
pub(crate) struct Pattern {
    code: Code,
    /// Groups plus one (the whole match): PHP's `num_subpats`.
    groups: usize,
    /// The name of each group by number, when the pattern has names.
    names: Option<Vec<Option<PhpStr>>>,
    /// The `u` modifier: UTF-8 subjects, advancing by characters.
    utf: bool,
}

impl Pattern {
    /// The byte length of the character at `at` (one byte without `u`;
    /// in `u` mode the subject was checked to be valid UTF-8).
    fn unit_len(&self, subject: &[u8], at: usize) -> usize {
        if !self.utf {
            return 1;
        }
        let mut end = at + 1;
        while end < subject.len() && subject[end] & 0xc0 == 0x80 {
            end += 1;
        }
        end - at
    }

    /// The options of a subject's first match: PCRE2 checks UTF-8 there.
    fn first_options(&self) -> u32 {
        if self.utf {
            0
        } else {
            ffi::PCRE2_NO_UTF_CHECK
        }
    }
}

/// PHP's `PCRE_G` for this thread (see the module docs).
struct PcreGlobals {
    cache: HashMap<Vec<u8>, Rc<Pattern>>,
    /// The cache's keys, oldest first (PHP drops the oldest when full).
    order: VecDeque<Vec<u8>>,
    error: i64,
    backtrack_limit: i64,
    recursion_limit: i64,
    jit: bool,
    /// Built from the settings on first use, and again after they change.
    context: Option<Rc<MatchContext>>,
}

impl PcreGlobals {
    fn new() -> PcreGlobals {
        PcreGlobals {
            cache: HashMap::new(),
            order: VecDeque::new(),
            error: NO_ERROR,
            backtrack_limit: 1_000_000,
            recursion_limit: 100_000,
            jit: true,
            context: None,
        }
    }
}

/// Runs `f` on this thread's module state, creating it on first use. `f`
/// runs with EG borrowed: it must not call back into scripts.
fn with_state<G: Globals, R>(g: G, f: impl FnOnce(&mut PcreGlobals) -> R) -> R {
    eg!(g, |eg| {
        let slot = eg.pcre.get_or_insert_with(|| Box::new(PcreGlobals::new()));
        if !slot.is::<PcreGlobals>() {
            *slot = Box::new(PcreGlobals::new());
        }
        match slot.downcast_mut::<PcreGlobals>() {
            Some(state) => f(state),
            None => f(&mut PcreGlobals::new()),
        }
    })
}

fn set_error<G: Globals>(g: G, code: i64) {
    with_state(g, |s| s.error = code);
}

/// PHP's `pcre_handle_exec_error`: the `preg_last_error()` code for a
/// failed match's PCRE2 code.
fn set_exec_error<G: Globals>(g: G, rc: i32) {
    let code = match rc {
        ffi::PCRE2_ERROR_MATCHLIMIT => BACKTRACK_LIMIT_ERROR,
        ffi::PCRE2_ERROR_DEPTHLIMIT => RECURSION_LIMIT_ERROR,
        ffi::PCRE2_ERROR_BADUTFOFFSET => BAD_UTF8_OFFSET_ERROR,
        ffi::PCRE2_ERROR_JIT_STACKLIMIT => JIT_STACKLIMIT_ERROR,
        rc if (ffi::PCRE2_ERROR_UTF8_ERR21..=ffi::PCRE2_ERROR_UTF8_ERR1).contains(&rc) => BAD_UTF8_ERROR,
        _ => INTERNAL_ERROR,
    };
    set_error(g, code);
}

fn last_error<G: Globals>(g: G) -> i64 {
    with_state(g, |s| s.error)
}

/// The match context in force (limits and JIT stack).
fn context<G: Globals>(g: G) -> Option<Rc<MatchContext>> {
    with_state(g, |s| {
        if s.context.is_none() {
            let limit = |v: i64| v.clamp(0, i64::from(u32::MAX)) as u32;
            s.context = MatchContext::new(limit(s.backtrack_limit), limit(s.recursion_limit), s.jit).map(Rc::new);
        }
        s.context.clone()
    })
}

/// One subject's matching: the pattern, its match data and the context.
struct Matcher<'a> {
    pattern: &'a Pattern,
    subject: &'a [u8],
    data: MatchData,
    context: Rc<MatchContext>,
}

impl<'a> Matcher<'a> {
    /// `None` (with PHP's internal error) if PCRE2 could not allocate.
    fn new<G: Globals>(g: G, pattern: &'a Pattern, subject: &'a [u8]) -> Option<Matcher<'a>> {
        let made = context(g).and_then(|context| Some((context, MatchData::new(&pattern.code)?)));
        match made {
            Some((context, data)) => Some(Matcher {
                pattern,
                subject,
                data,
                context,
            }),
            None => {
                set_error(g, INTERNAL_ERROR);
                None
            }
        }
    }

    fn exec(&mut self, start: usize, options: u32) -> i32 {
        if start > self.subject.len() {
            return ffi::PCRE2_ERROR_BADOFFSET;
        }
        self.data
            .run(&self.pattern.code, self.subject, start, options, &self.context)
    }

    /// The retry after an empty match: a non-empty match at the same
    /// place (Perl's /g rule).
    fn exec_not_empty(&mut self, start: usize) -> i32 {
        self.exec(
            start,
            ffi::PCRE2_NO_UTF_CHECK | ffi::PCRE2_NOTEMPTY_ATSTART | ffi::PCRE2_ANCHORED,
        )
    }

    fn ovector(&self) -> &[usize] {
        self.data.ovector()
    }

    fn mark(&self) -> Option<Vec<u8>> {
        self.data.mark(&self.pattern.code)
    }
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// PHP's `pcre_get_compiled_regex_cache`: the delimiters and modifiers
/// of `regex`, compiled (or found in the cache). On failure the warning
/// PHP gives has been printed, the last error is PREG_INTERNAL_ERROR, and
/// the caller returns false or null.
fn compile<G: Globals>(g: G, func: &str, regex: &[u8]) -> Option<Rc<Pattern>> {
    if let Some(p) = with_state(g, |s| s.cache.get(regex).cloned()) {
        return Some(p);
    }
    let fail = |msg: String| {
        warning(g, &format!("{func}(): {msg}"));
        set_error(g, INTERNAL_ERROR);
        None
    };
    let end = regex.len();
    let mut p = 0;
    while p < end && is_space(regex[p]) {
        p += 1;
    }
    if p >= end {
        return fail("Empty regular expression".into());
    }
    let start_delim = regex[p];
    p += 1;
    if start_delim.is_ascii_alphanumeric() || start_delim == b'\\' || start_delim == 0 {
        return fail("Delimiter must not be alphanumeric, backslash, or NUL".into());
    }
    let end_delim = match start_delim {
        b'(' => b')',
        b'[' => b']',
        b'{' => b'}',
        b'<' => b'>',
        d => d,
    };
    let mut pp = p;
    if start_delim == end_delim {
        while pp < end {
            if regex[pp] == b'\\' && pp + 1 < end {
                pp += 1;
            } else if regex[pp] == end_delim {
                break;
            }
            pp += 1;
        }
    } else {
        let mut depth = 1;
        while pp < end {
            if regex[pp] == b'\\' && pp + 1 < end {
                pp += 1;
            } else if regex[pp] == end_delim {
                depth -= 1;
                if depth <= 0 {
                    break;
                }
            } else if regex[pp] == start_delim {
                depth += 1;
            }
            pp += 1;
        }
    }
    if pp >= end {
        let d = end_delim as char;
        return if start_delim == end_delim {
            fail(format!("No ending delimiter '{d}' found"))
        } else {
            fail(format!("No ending matching delimiter '{d}' found"))
        };
    }
    let pattern = &regex[p..pp];
    let mut options = 0;
    let mut eval = false;
    for &m in &regex[pp + 1..] {
        options |= match m {
            b'i' => ffi::PCRE2_CASELESS,
            b'm' => ffi::PCRE2_MULTILINE,
            b'n' => ffi::PCRE2_NO_AUTO_CAPTURE,
            b's' => ffi::PCRE2_DOTALL,
            b'x' => ffi::PCRE2_EXTENDED,
            b'A' => ffi::PCRE2_ANCHORED,
            b'D' => ffi::PCRE2_DOLLAR_ENDONLY,
            b'S' | b'X' | b' ' | b'\n' | b'\r' => 0,
            b'U' => ffi::PCRE2_UNGREEDY,
            b'u' => ffi::PCRE2_UTF | ffi::PCRE2_UCP,
            b'J' => ffi::PCRE2_DUPNAMES,
            b'e' => {
                eval = true;
                0
            }
            0 => return fail("NUL is not a valid modifier".into()),
            c => return fail(format!("Unknown modifier '{}'", c as char)),
        };
    }
    if eval {
        return fail("The /e modifier is no longer supported, use preg_replace_callback instead".into());
    }
    let code = match Code::new(pattern, options) {
        Ok(code) => code,
        Err(e) => return fail(format!("Compilation failed: {} at offset {}", e.message(), e.offset)),
    };
    if with_state(g, |s| s.jit) {
        code.jit_compile();
    }
    let groups = code.capture_count() as usize + 1;
    let named = code.names();
    let names = (!named.is_empty()).then(|| {
        let mut names = vec![None; groups];
        for (n, name) in named {
            if let Some(slot) = names.get_mut(n) {
                *slot = Some(PhpStr::from(name));
            }
        }
        names
    });
    let compiled = Rc::new(Pattern {
        code,
        groups,
        names,
        utf: options & ffi::PCRE2_UTF != 0,
    });
    with_state(g, |s| {
        if s.cache.len() >= CACHE_SIZE {
            for _ in 0..CACHE_SIZE / 8 {
                if let Some(k) = s.order.pop_front() {
                    s.cache.remove(&k);
                }
            }
        }
        s.cache.insert(regex.to_vec(), compiled.clone());
        s.order.push_back(regex.to_vec());
    });
    Some(compiled)
}

/// `ini_get` of a `pcre.*` setting (`None`: not one of them).
pub(crate) fn ini_value<G: Globals>(g: G, name: &[u8]) -> Option<String> {
    with_state(g, |s| match name {
        b"pcre.backtrack_limit" => Some(s.backtrack_limit.to_string()),
        b"pcre.recursion_limit" => Some(s.recursion_limit.to_string()),
        b"pcre.jit" => Some(if s.jit { "1" } else { "0" }.into()),
        _ => None,
    })
}

/// `ini_set` of a `pcre.*` setting (for the rest of the request; the
/// state is per request).
pub(crate) fn ini_set<G: Globals>(g: G, name: &[u8], value: &str) {
    let number = super::misc::atol(value);
    with_state(g, |s| {
        match name {
            b"pcre.backtrack_limit" => s.backtrack_limit = number,
            b"pcre.recursion_limit" => s.recursion_limit = number,
            b"pcre.jit" => {
                let v = value.trim().to_ascii_lowercase();
                s.jit = matches!(v.as_str(), "on" | "yes" | "true") || super::misc::atol(&v) != 0;
            }
            _ => return,
        }
        s.context = None;
    });
}

fn preg_quote<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let delim = if a.has(1) && !a.value(1).is_null() {
        a.str(g, 1)?.first().copied()
    } else {
        None
    };
    let mut out = Vec::with_capacity(s.len());
    for &c in s.iter() {
        match c {
            b'.' | b'\\' | b'+' | b'*' | b'?' | b'[' | b'^' | b']' | b'$' | b'(' | b')' | b'{' | b'}' | b'=' | b'!'
            | b'>' | b'<' | b'|' | b':' | b'-' | b'#' => {
                out.push(b'\\');
                out.push(c);
            }
            0 => out.extend_from_slice(b"\\000"),
            c if Some(c) == delim => {
                out.push(b'\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    if out.len() == s.len() {
        return Ok(Value::Str(s));
    }
    Ok(Value::str(out))
}

fn preg_last_error<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    Ok(Value::Int(last_error(g)))
}

fn preg_last_error_msg<G: Globals>(g: G, _a: &mut Args) -> VmResult<Value> {
    let msg = match last_error(g) {
        NO_ERROR => "No error",
        INTERNAL_ERROR => "Internal error",
        BAD_UTF8_ERROR => "Malformed UTF-8 characters, possibly incorrectly encoded",
        BAD_UTF8_OFFSET_ERROR => "The offset did not correspond to the beginning of a valid UTF-8 code point",
        BACKTRACK_LIMIT_ERROR => "Backtrack limit exhausted",
        RECURSION_LIMIT_ERROR => "Recursion limit exhausted",
        JIT_STACKLIMIT_ERROR => "JIT stack limit exhausted",
        _ => "Unknown error",
    };
    Ok(Value::str(msg))
}
