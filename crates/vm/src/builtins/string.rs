//! String functions, as PHP 8.2's ext/standard/string.c and friends
//! define them: byte strings throughout (case mapping is ASCII only, as
//! PHP 8.2's is locale-insensitive), PHP's parameter names, warnings and
//! ValueErrors.
//!
//! This file holds the table, the argument helpers the string functions
//! share, and the small functions; the larger families live in
//! submodules: searching and splitting (`search`), replacing (`replace`),
//! formatting and base conversion (`format`), HTML entities (`entities`),
//! escaping and text layout (`html`), comparisons and text metrics
//! (`compare`), the metaphone key (`metaphone`).

use std::rc::Rc;

use minizts_core::{PhpArray, PhpStr, Value};
use minizts_globals::Globals;

use crate::builtins::Args;
use crate::error::{deprecated, type_error, warning, VmResult};

mod compare;
mod csv;
mod entities;
mod escape;
mod format;
mod html;
mod metaphone;
mod path;
mod replace;
mod search;
mod tokens;

use compare::{
    count_chars, levenshtein, similar_text, soundex, strcasecmp, strcmp, strnatcasecmp, strnatcmp, strncasecmp,
    strncmp, substr_compare,
};
use csv::str_getcsv;
use entities::{
    get_html_translation_table, html_entity_decode, htmlentities, htmlspecialchars, htmlspecialchars_decode,
};
use escape::{addcslashes, escapeshellarg, escapeshellcmd, str_rot13, stripcslashes};
pub(crate) use format::format;
use format::{bin2hex, bindec, decbin, dechex, decoct, hex2bin, hexdec, number_format, octdec, sprintf, vsprintf};
use html::{addslashes, hebrev, nl2br, quotemeta, stripslashes, wordwrap};
use metaphone::metaphone;
use path::{basename, dirname, pathinfo};
use replace::{str_ireplace, str_replace, strtr, substr_replace};
use search::{
    chunk_split, explode, implode, str_contains, str_ends_with, str_split, str_starts_with, str_word_count, strcspn,
    stripos, stristr, strpbrk, strpos, strrchr, strripos, strrpos, strspn, strstr, substr, substr_count,
};
use tokens::{str_shuffle, strtok};

crate::builtin_table! {
    "strlen", ["string"], 1, 0, strlen;
    "str_repeat", ["string", "times"], 2, 0, str_repeat;
    "strtoupper", ["string"], 1, 0, strtoupper;
    "strtolower", ["string"], 1, 0, strtolower;
    "dechex", ["num"], 1, 0, dechex;
    "sprintf", ["format", "...values"], 1, 0, sprintf;
    "number_format", ["num", "decimals", "decimal_separator", "thousands_separator"], 1, 0, number_format;
    "vsprintf", ["format", "values"], 2, 0, vsprintf;
    "substr", ["string", "offset", "length"], 2, 0, substr;
    "strpos", ["haystack", "needle", "offset"], 2, 0, strpos;
    "stripos", ["haystack", "needle", "offset"], 2, 0, stripos;
    "strrpos", ["haystack", "needle", "offset"], 2, 0, strrpos;
    "strripos", ["haystack", "needle", "offset"], 2, 0, strripos;
    "strstr", ["haystack", "needle", "before_needle"], 2, 0, strstr;
    "strchr", ["haystack", "needle", "before_needle"], 2, 0, strstr;
    "stristr", ["haystack", "needle", "before_needle"], 2, 0, stristr;
    "strrchr", ["haystack", "needle"], 2, 0, strrchr;
    "strpbrk", ["string", "characters"], 2, 0, strpbrk;
    "str_contains", ["haystack", "needle"], 2, 0, str_contains;
    "str_starts_with", ["haystack", "needle"], 2, 0, str_starts_with;
    "str_ends_with", ["haystack", "needle"], 2, 0, str_ends_with;
    "substr_count", ["haystack", "needle", "offset", "length"], 2, 0, substr_count;
    "strspn", ["string", "characters", "offset", "length"], 2, 0, strspn;
    "strcspn", ["string", "characters", "offset", "length"], 2, 0, strcspn;
    "str_replace", ["search", "replace", "subject", "count"], 3, 8, str_replace;
    "str_ireplace", ["search", "replace", "subject", "count"], 3, 8, str_ireplace;
    "strtr", ["string", "from", "to"], 2, 0, strtr;
    "substr_replace", ["string", "replace", "offset", "length"], 3, 0, substr_replace;
    "str_pad", ["string", "length", "pad_string", "pad_type"], 2, 0, str_pad;
    "ucfirst", ["string"], 1, 0, ucfirst;
    "lcfirst", ["string"], 1, 0, lcfirst;
    "ucwords", ["string", "separators"], 1, 0, ucwords;
    "trim", ["string", "characters"], 1, 0, trim;
    "ltrim", ["string", "characters"], 1, 0, ltrim;
    "rtrim", ["string", "characters"], 1, 0, rtrim;
    "chop", ["string", "characters"], 1, 0, rtrim;
    "implode", ["separator", "array"], 1, 0, implode;
    "join", ["separator", "array"], 1, 0, implode;
    "explode", ["separator", "string", "limit"], 2, 0, explode;
    "str_split", ["string", "length"], 1, 0, str_split;
    "chunk_split", ["string", "length", "separator"], 1, 0, chunk_split;
    "str_word_count", ["string", "format", "characters"], 1, 0, str_word_count;
    "chr", ["codepoint"], 1, 0, chr;
    "ord", ["character"], 1, 0, ord;
    "hexdec", ["hex_string"], 1, 0, hexdec;
    "decbin", ["num"], 1, 0, decbin;
    "bindec", ["binary_string"], 1, 0, bindec;
    "decoct", ["num"], 1, 0, decoct;
    "octdec", ["octal_string"], 1, 0, octdec;
    "bin2hex", ["string"], 1, 0, bin2hex;
    "hex2bin", ["string"], 1, 0, hex2bin;
    "strrev", ["string"], 1, 0, strrev;
    "strtok", ["string", "token"], 1, 0, strtok;
    "str_shuffle", ["string"], 1, 0, str_shuffle;
    "basename", ["path", "suffix"], 1, 0, basename;
    "dirname", ["path", "levels"], 1, 0, dirname;
    "pathinfo", ["path", "flags"], 1, 0, pathinfo;
    "strcmp", ["string1", "string2"], 2, 0, strcmp;
    "strcasecmp", ["string1", "string2"], 2, 0, strcasecmp;
    "strncmp", ["string1", "string2", "length"], 3, 0, strncmp;
    "strncasecmp", ["string1", "string2", "length"], 3, 0, strncasecmp;
    "strnatcmp", ["string1", "string2"], 2, 0, strnatcmp;
    "strnatcasecmp", ["string1", "string2"], 2, 0, strnatcasecmp;
    "substr_compare", ["haystack", "needle", "offset", "length", "case_insensitive"], 3, 0, substr_compare;
    "similar_text", ["string1", "string2", "percent"], 2, 4, similar_text;
    "levenshtein", ["string1", "string2", "insertion_cost", "replacement_cost", "deletion_cost"], 2, 0, levenshtein;
    "soundex", ["string"], 1, 0, soundex;
    "metaphone", ["string", "max_phonemes"], 1, 0, metaphone;
    "count_chars", ["string", "mode"], 1, 0, count_chars;
    "hebrev", ["string", "max_chars_per_line"], 1, 0, hebrev;
    "nl2br", ["string", "use_xhtml"], 1, 0, nl2br;
    "wordwrap", ["string", "width", "break", "cut_long_words"], 1, 0, wordwrap;
    "htmlspecialchars", ["string", "flags", "encoding", "double_encode"], 1, 0, htmlspecialchars;
    "htmlspecialchars_decode", ["string", "flags"], 1, 0, htmlspecialchars_decode;
    "htmlentities", ["string", "flags", "encoding", "double_encode"], 1, 0, htmlentities;
    "html_entity_decode", ["string", "flags", "encoding"], 1, 0, html_entity_decode;
    "get_html_translation_table", ["table", "flags", "encoding"], 0, 0, get_html_translation_table;
    "addslashes", ["string"], 1, 0, addslashes;
    "stripslashes", ["string"], 1, 0, stripslashes;
    "quotemeta", ["string"], 1, 0, quotemeta;
    "addcslashes", ["string", "characters"], 2, 0, addcslashes;
    "stripcslashes", ["string"], 1, 0, stripcslashes;
    "str_rot13", ["string"], 1, 0, str_rot13;
    "str_getcsv", ["string", "separator", "enclosure", "escape"], 1, 0, str_getcsv;
    "escapeshellarg", ["arg"], 1, 0, escapeshellarg;
    "escapeshellcmd", ["command"], 1, 0, escapeshellcmd;
}

/// A parameter's name as PHP's messages print it.
fn param_name(a: &Args, i: usize) -> &'static str {
    let params = a.info.params;
    params
        .get(i)
        .or(params.last())
        .map_or("", |p| p.trim_start_matches("..."))
}

/// PHP's TypeError for parameter `i` of type `expected`.
fn arg_type_error<T>(a: &Args, i: usize, expected: &str, given: &Value) -> VmResult<T> {
    type_error(format!(
        "{}(): Argument #{} (${}) must be of type {expected}, {} given",
        a.name(),
        i + 1,
        param_name(a, i),
        crate::types::type_name(given)
    ))
}

/// PHP 8.1's deprecation for null passed to a non-nullable scalar
/// parameter of an internal function.
fn null_deprecated<G: Globals>(g: G, a: &Args, i: usize, ty: &str) {
    deprecated(
        g,
        &format!(
            "{}(): Passing null to parameter #{} (${}) of type {ty} is deprecated",
            a.name(),
            i + 1,
            param_name(a, i)
        ),
    );
}

/// An `array|string` parameter (scalars become strings, null is
/// deprecated and becomes "").
enum StrOrArray {
    Str(PhpStr),
    Arr(Rc<PhpArray>),
}

fn str_or_array<G: Globals>(g: G, a: &Args, i: usize) -> VmResult<StrOrArray> {
    let v = a.value(i);
    match &*v {
        Value::Arr(arr) => Ok(StrOrArray::Arr(arr.clone())),
        Value::Str(s) => Ok(StrOrArray::Str(s.clone())),
        Value::Int(_) | Value::Float(_) | Value::Bool(_) => Ok(StrOrArray::Str(crate::ops::to_str(g, &v)?)),
        Value::Null | Value::Undef => {
            null_deprecated(g, a, i, "array|string");
            Ok(StrOrArray::Str(PhpStr::empty()))
        }
        other => arg_type_error(a, i, "array|string", other),
    }
}

/// A `?int` parameter with default null: `None` when absent or null.
fn opt_nullable_int<G: Globals>(g: G, a: &Args, i: usize) -> VmResult<Option<i64>> {
    // The usual cases, without the `Cow` of `value`.
    match a.v.get(i) {
        None => return Ok(None),
        Some(Value::Int(n)) => return Ok(Some(*n)),
        Some(_) => {}
    }
    match &*a.value(i) {
        Value::Null | Value::Undef => Ok(None),
        v @ (Value::Arr(_) | Value::Closure(_)) => arg_type_error(a, i, "?int", v),
        v @ Value::Str(s) if minizts_core::numfmt::is_numeric_str(s).is_none() => arg_type_error(a, i, "?int", v),
        _ => a.int(g, i).map(Some),
    }
}

/// A `?string` parameter: `default` when absent or null.
fn opt_nullable_str<G: Globals>(g: G, a: &Args, i: usize, default: &[u8]) -> VmResult<PhpStr> {
    if !a.has(i) {
        return Ok(PhpStr::from(default));
    }
    match &*a.value(i) {
        Value::Null | Value::Undef => Ok(PhpStr::from(default)),
        v @ (Value::Arr(_) | Value::Closure(_)) => arg_type_error(a, i, "?string", v),
        _ => a.str(g, i),
    }
}

/// Stores `v` in by-reference parameter `i` if the caller passed it.
fn set_ref(a: &mut Args, i: usize, v: Value) {
    if a.has(i) {
        a.with_ref(i, |slot| *slot = v);
    }
}

use crate::limits::{check_string as check_alloc, string_buffer as safe_alloc};

/// PHP's `php_charmask`: the bytes listed in `list`, where `a..z` stands
/// for a range; warns (as `func()`) about malformed ranges and ignores
/// them, as PHP does.
fn charmask<G: Globals>(g: G, func: &str, list: &[u8]) -> [bool; 256] {
    let mut mask = [false; 256];
    let len = list.len();
    let mut i = 0;
    while i < len {
        let c = list[i];
        if i + 3 < len && list[i + 1] == b'.' && list[i + 2] == b'.' && list[i + 3] >= c {
            for b in c..=list[i + 3] {
                mask[b as usize] = true;
            }
            i += 4;
            continue;
        }
        if i + 1 < len && c == b'.' && list[i + 1] == b'.' {
            let why = if i == 0 {
                ", no character to the left of '..'"
            } else if i + 2 >= len {
                ", no character to the right of '..'"
            } else if list[i - 1] > list[i + 2] {
                ", '..'-range needs to be incrementing"
            } else {
                ""
            };
            warning(g, &format!("{func}(): Invalid '..'-range{why}"));
        } else {
            mask[c as usize] = true;
        }
        i += 1;
    }
    mask
}

fn str_value(bytes: Vec<u8>) -> Value {
    Value::Str(PhpStr::new(bytes))
}

fn strlen<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    if let Value::Str(s) = &*a.value(0) {
        return Ok(Value::Int(s.len() as i64));
    }
    Ok(Value::Int(a.str(g, 0)?.len() as i64))
}

fn str_repeat<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let times = a.int(g, 1)?;
    if times < 0 {
        return a.value_error(1, "must be greater than or equal to 0");
    }
    if s.is_empty() || times == 0 {
        return Ok(Value::Str(PhpStr::empty()));
    }
    let times = usize::try_from(times).unwrap_or(usize::MAX);
    let mut out = safe_alloc(g, s.len(), times, 0)?;
    let total = s.len() * times;
    out.extend_from_slice(&s);
    while out.len() < total {
        let n = out.len().min(total - out.len());
        out.extend_from_within(..n);
    }
    Ok(str_value(out))
}

fn strtoupper<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    Ok(str_value(a.str(g, 0)?.to_ascii_uppercase()))
}

fn strtolower<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    Ok(str_value(a.str(g, 0)?.to_ascii_lowercase()))
}

fn ucfirst<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let mut s = a.str(g, 0)?;
    if s.first().is_some_and(u8::is_ascii_lowercase) {
        s.make_mut()[0].make_ascii_uppercase();
    }
    Ok(Value::Str(s))
}

fn lcfirst<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let mut s = a.str(g, 0)?;
    if s.first().is_some_and(u8::is_ascii_uppercase) {
        s.make_mut()[0].make_ascii_lowercase();
    }
    Ok(Value::Str(s))
}

fn ucwords<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let delims = a.opt_str(g, 1, b" \t\r\n\x0c\x0b")?;
    if s.is_empty() {
        return Ok(Value::Str(s));
    }
    let mask = charmask(g, "ucwords", &delims);
    let mut out = s.to_vec();
    out[0].make_ascii_uppercase();
    for i in 1..out.len() {
        if mask[out[i - 1] as usize] {
            out[i].make_ascii_uppercase();
        }
    }
    Ok(str_value(out))
}

/// Which ends `trim` works on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ends {
    Left,
    Right,
    Both,
}

fn trim_impl<G: Globals>(g: G, a: &mut Args, ends: Ends) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let mask = if a.has(1) {
        let list = a.str(g, 1)?;
        charmask(g, a.name(), &list)
    } else {
        let mut m = [false; 256];
        for &c in b" \n\r\t\x0b\0" {
            m[c as usize] = true;
        }
        m
    };
    let mut start = 0;
    let mut end = s.len();
    if ends != Ends::Right {
        while start < end && mask[s[start] as usize] {
            start += 1;
        }
    }
    if ends != Ends::Left {
        while end > start && mask[s[end - 1] as usize] {
            end -= 1;
        }
    }
    if start == 0 && end == s.len() {
        return Ok(Value::Str(s));
    }
    Ok(Value::str(&s[start..end]))
}

fn trim<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    trim_impl(g, a, Ends::Both)
}

fn ltrim<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    trim_impl(g, a, Ends::Left)
}

fn rtrim<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    trim_impl(g, a, Ends::Right)
}

fn str_pad<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let length = a.int(g, 1)?;
    let pad = a.opt_str(g, 2, b" ")?;
    let pad_type = a.opt_int(g, 3, 1)?;
    // PHP checks the length before validating the other arguments.
    if length < 0 || length as u64 <= s.len() as u64 {
        return Ok(Value::Str(s));
    }
    if pad.is_empty() {
        return a.value_error(2, "must be a non-empty string");
    }
    if !(0..=2).contains(&pad_type) {
        return a.value_error(3, "must be STR_PAD_LEFT, STR_PAD_RIGHT, or STR_PAD_BOTH");
    }
    let fill = usize::try_from(length).unwrap_or(usize::MAX) - s.len();
    let mut out = safe_alloc(g, 1, s.len(), fill)?;
    let (left, right) = match pad_type {
        0 => (fill, 0),
        1 => (0, fill),
        _ => (fill / 2, fill - fill / 2),
    };
    out.extend(pad.iter().cycle().take(left));
    out.extend_from_slice(&s);
    out.extend(pad.iter().cycle().take(right));
    Ok(str_value(out))
}

fn strrev<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let mut s = a.str(g, 0)?.to_vec();
    s.reverse();
    Ok(str_value(s))
}

fn chr<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let c = a.int(g, 0)?;
    Ok(Value::Str(PhpStr::one_byte((c & 0xff) as u8)))
}

fn ord<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    Ok(Value::Int(s.first().copied().unwrap_or(0) as i64))
}
