//! URLs and query strings: parse_url (PHP's `php_url_parse_ex2`), the
//! four percent-encoding functions, http_build_query and parse_str (with
//! the request-variable name rules of PHP's `php_register_variable_ex`).

use std::collections::HashSet;
use std::rc::Rc;

use minizts_core::{Key, PhpArray, PhpStr, Value};
use minizts_globals::Globals;

use crate::builtins::Args;
use crate::error::{type_error, warning, VmResult};
use crate::limits::Ticker;

/// PHP's `PHP_QUERY_RFC3986`: spaces as `%20`, `~` left alone.
const QUERY_RFC3986: i64 = 2;

/// The parts of a URL, as `php_url` holds them.
#[derive(Default)]
struct Url {
    scheme: Option<Vec<u8>>,
    host: Option<Vec<u8>>,
    port: Option<u16>,
    user: Option<Vec<u8>>,
    pass: Option<Vec<u8>>,
    path: Option<Vec<u8>>,
    query: Option<Vec<u8>>,
    fragment: Option<Vec<u8>>,
}

/// A component as PHP stores it: control characters become `_`.
fn part(s: &[u8]) -> Option<Vec<u8>> {
    Some(
        s.iter()
            .map(|&c| if c < 0x20 || c == 0x7f { b'_' } else { c })
            .collect(),
    )
}

/// C's `strtol` in base 10 on a port's text: its value if it has digits
/// (leading blanks and a sign are allowed, trailing junk ignored).
fn port_value(s: &[u8]) -> Option<i64> {
    let mut i = 0;
    while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r') {
        i += 1;
    }
    let neg = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let digits = s[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    // At most five characters reach here: no overflow.
    let n = s[i..i + digits].iter().fold(0i64, |n, &c| n * 10 + i64::from(c - b'0'));
    Some(if neg { -n } else { n })
}

fn find(s: &[u8], from: usize, to: usize, c: u8) -> Option<usize> {
    s[from..to].iter().position(|&b| b == c).map(|i| from + i)
}

fn rfind(s: &[u8], from: usize, to: usize, c: u8) -> Option<usize> {
    s[from..to].iter().rposition(|&b| b == c).map(|i| from + i)
}

/// How parsing goes on after the scheme.
enum Next {
    Port(usize),
    Host,
    Path,
}

/// PHP's `php_url_parse_ex2`; `None` for a URL it rejects. The control
/// flow follows PHP's gotos.
fn parse(s: &[u8]) -> Option<Url> {
    let mut url = Url::default();
    let ue = s.len();
    let mut start = 0;
    let colon = find(s, 0, ue, b':');
    let next = match colon {
        Some(e) if e != 0 => 'scheme: {
            let valid = s[..e]
                .iter()
                .all(|&c| c.is_ascii_alphanumeric() || c == b'+' || c == b'.' || c == b'-');
            if !valid {
                // Before any query or fragment, ':' starts a port.
                let stop = s.iter().position(|&c| c == b'?' || c == b'#').unwrap_or(ue);
                if e + 1 < ue && e < stop {
                    break 'scheme Next::Port(e);
                } else if s.starts_with(b"//") {
                    start = 2;
                    break 'scheme Next::Host;
                } else {
                    break 'scheme Next::Path;
                }
            }
            if e + 1 == ue {
                url.scheme = part(&s[..e]);
                return Some(url);
            }
            if s[e + 1] != b'/' {
                // "host:80" rather than "mailto:x".
                let digits = s[e + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
                let p = e + 1 + digits;
                if (p == ue || s[p] == b'/') && p - e < 7 {
                    break 'scheme Next::Port(e);
                }
                url.scheme = part(&s[..e]);
                start = e + 1;
                break 'scheme Next::Path;
            }
            url.scheme = part(&s[..e]);
            if e + 2 < ue && s[e + 2] == b'/' {
                start = e + 3;
                if s[..e].eq_ignore_ascii_case(b"file") && e + 3 < ue && s[e + 3] == b'/' {
                    // file:///c:/dir keeps the drive letter in the path.
                    if e + 5 < ue && s[e + 5] == b':' {
                        start = e + 4;
                    }
                    break 'scheme Next::Path;
                }
                Next::Host
            } else {
                start = e + 1;
                Next::Path
            }
        }
        Some(e) => Next::Port(e),
        None if s.starts_with(b"//") => {
            start = 2;
            Next::Host
        }
        None => Next::Path,
    };
    let next = match next {
        Next::Port(e) => {
            let p = e + 1;
            let digits = s[p..].iter().take(6).take_while(|c| c.is_ascii_digit()).count();
            let pp = p + digits;
            if digits > 0 && digits < 6 && (pp == ue || s[pp] == b'/') {
                match port_value(&s[p..pp]) {
                    Some(port @ 0..=65535) => {
                        url.port = Some(port as u16);
                        if s[start..].starts_with(b"//") {
                            start += 2;
                        }
                    }
                    _ => return None,
                }
                Next::Host
            } else if digits == 0 && pp == ue {
                return None;
            } else if s[start..].starts_with(b"//") {
                start += 2;
                Next::Host
            } else {
                Next::Path
            }
        }
        other => other,
    };
    if let Next::Host = next {
        let mut e = ue;
        for c in [b'/', b'?', b'#'] {
            if let Some(p) = find(s, start, e, c) {
                e = p;
            }
        }
        if let Some(at) = rfind(s, start, e, b'@') {
            match find(s, start, at, b':') {
                Some(pp) => {
                    url.user = part(&s[start..pp]);
                    url.pass = part(&s[pp + 1..at]);
                }
                None => url.user = part(&s[start..at]),
            }
            start = at + 1;
        }
        // An IPv6 address in brackets has colons of its own.
        let colon = if start < ue && s[start] == b'[' && e > 0 && s[e - 1] == b']' {
            None
        } else {
            rfind(s, start, e.max(start), b':')
        };
        let host_end = match colon {
            Some(p) => {
                if url.port.is_none_or(|p| p == 0) {
                    let digits = &s[p + 1..e];
                    if digits.len() > 5 {
                        return None;
                    }
                    if !digits.is_empty() {
                        match port_value(digits) {
                            Some(port @ 0..=65535) => url.port = Some(port as u16),
                            _ => return None,
                        }
                    }
                }
                p
            }
            None => e,
        };
        if host_end <= start {
            return None;
        }
        url.host = part(&s[start..host_end]);
        if e == ue {
            return Some(url);
        }
        start = e;
    }
    // The path, query and fragment.
    let mut e = ue;
    if let Some(p) = find(s, start, e, b'#') {
        url.fragment = part(&s[p + 1..e]);
        e = p;
    }
    if let Some(p) = find(s, start, e, b'?') {
        url.query = part(&s[p + 1..e]);
        e = p;
    }
    if start < e || start == ue {
        url.path = part(&s[start..e]);
    }
    Some(url)
}

pub(super) fn parse_url<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let component = a.opt_int(g, 1, -1)?;
    let Some(url) = parse(&s) else {
        return Ok(Value::Bool(false));
    };
    let str_of = |v: Option<Vec<u8>>| v.map_or(Value::Null, |v| Value::Str(PhpStr::new(v)));
    if component > -1 {
        return Ok(match component {
            0 => str_of(url.scheme),
            1 => str_of(url.host),
            2 => url.port.map_or(Value::Null, |p| Value::Int(p.into())),
            3 => str_of(url.user),
            4 => str_of(url.pass),
            5 => str_of(url.path),
            6 => str_of(url.query),
            7 => str_of(url.fragment),
            _ => {
                return a.value_error(
                    1,
                    &format!("must be a valid URL component identifier, {component} given"),
                )
            }
        });
    }
    let text = |v: Option<Vec<u8>>| v.map(|v| Value::Str(PhpStr::new(v)));
    let parts = [
        ("scheme", text(url.scheme)),
        ("host", text(url.host)),
        ("port", url.port.map(|p| Value::Int(p.into()))),
        ("user", text(url.user)),
        ("pass", text(url.pass)),
        ("path", text(url.path)),
        ("query", text(url.query)),
        ("fragment", text(url.fragment)),
    ];
    let mut out = PhpArray::new();
    for (k, v) in parts {
        if let Some(v) = v {
            out.insert(Key::from_bytes(k.as_bytes()), v);
        }
    }
    Ok(Value::arr(out))
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// PHP's `php_url_encode` (`raw: false`) and `php_raw_url_encode`.
fn encode_into(out: &mut Vec<u8>, s: &[u8], raw: bool) {
    for &c in s {
        if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_') || (raw && c == b'~') {
            out.push(c);
        } else if c == b' ' && !raw {
            out.push(b'+');
        } else {
            out.extend_from_slice(&[b'%', HEX[(c >> 4) as usize], HEX[(c & 15) as usize]]);
        }
    }
}

fn hex_val(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// PHP's `php_url_decode` (`raw: false`: `+` is a space) and
/// `php_raw_url_decode`.
pub(super) fn decode(s: &[u8], raw: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c == b'+' && !raw {
            out.push(b' ');
        } else if let (b'%', Some(h), Some(l)) = (
            c,
            s.get(i + 1).and_then(|&c| hex_val(c)),
            s.get(i + 2).and_then(|&c| hex_val(c)),
        ) {
            out.push(h << 4 | l);
            i += 2;
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}

fn encode_fn<G: Globals>(g: G, a: &mut Args, raw: bool) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    // Every byte may become three.
    let mut out = crate::limits::string_buffer(g, s.len(), 3, 0)?;
    encode_into(&mut out, &s, raw);
    Ok(Value::Str(PhpStr::new(out)))
}

pub(super) fn urlencode<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    encode_fn(g, a, false)
}

pub(super) fn rawurlencode<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    encode_fn(g, a, true)
}

pub(super) fn urldecode<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    Ok(Value::Str(PhpStr::new(decode(&a.str(g, 0)?, false))))
}

pub(super) fn rawurldecode<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    Ok(Value::Str(PhpStr::new(decode(&a.str(g, 0)?, true))))
}

/// How deeply nested arrays http_build_query walks.
const MAX_QUERY_DEPTH: usize = 100_000;

/// What http_build_query carries down its recursion.
struct Query<'a> {
    out: Vec<u8>,
    sep: &'a [u8],
    raw: bool,
    /// The arrays being walked, which PHP's recursion guard skips when
    /// met again inside themselves.
    walking: HashSet<*const PhpArray>,
    /// The objects being walked, likewise.
    objects: Vec<minizts_core::Obj>,
    ticker: Ticker,
}

impl Query<'_> {
    /// PHP's `php_url_encode_hash_ex`: `prefix` is the key so far
    /// (`a%5Bb` for `a[b]`), `num_prefix` is for the top level's int keys.
    fn walk<G: Globals>(&mut self, g: G, arr: &PhpArray, num_prefix: &[u8], prefix: Option<&[u8]>) -> VmResult<()> {
        let ptr = arr as *const PhpArray;
        if self.walking.contains(&ptr) {
            return Ok(());
        }
        // Each level recurses on the native stack (the keys alone would
        // need gigabytes by then).
        if self.walking.len() >= MAX_QUERY_DEPTH {
            return crate::error::fatal(format!(
                "minizts: array nested too deeply to build a query (more than {MAX_QUERY_DEPTH} levels)"
            ));
        }
        self.walking.insert(ptr);
        let r = self.walk_entries(g, arr, num_prefix, prefix);
        self.walking.remove(&ptr);
        r
    }

    fn walk_entries<G: Globals>(
        &mut self,
        g: G,
        arr: &PhpArray,
        num_prefix: &[u8],
        prefix: Option<&[u8]>,
    ) -> VmResult<()> {
        for (k, v) in arr.iter() {
            self.ticker.tick(g)?;
            let v = v.deref();
            // The key as it appears in the query: encoded if a string,
            // after the numeric prefix if an int, inside brackets below
            // the top level.
            let mut key = Vec::new();
            if let Some(p) = prefix {
                key.extend_from_slice(p);
            }
            match k {
                minizts_core::array::KeyRef::Str(s) => encode_into(&mut key, s, self.raw),
                minizts_core::array::KeyRef::Int(n) => {
                    key.extend_from_slice(num_prefix);
                    key.extend_from_slice(n.to_string().as_bytes());
                }
            }
            if prefix.is_some() {
                key.extend_from_slice(b"%5D");
            }
            match &*v {
                Value::Arr(inner) => {
                    key.extend_from_slice(b"%5B");
                    let inner = Rc::clone(inner);
                    self.walk(g, &inner, b"", Some(&key))?;
                }
                // An object's properties: those the calling scope sees (a
                // closure has none).
                Value::Obj(o) => {
                    if self.objects.iter().any(|w| minizts_core::Obj::ptr_eq(w, o)) {
                        continue;
                    }
                    key.extend_from_slice(b"%5B");
                    let inner = visible_props(g, o);
                    self.objects.push(o.clone());
                    let r = self.walk(g, &inner, b"", Some(&key));
                    self.objects.pop();
                    r?;
                }
                Value::Closure(_) => {}
                Value::Null | Value::Undef => {}
                scalar => {
                    if !self.out.is_empty() {
                        self.out.extend_from_slice(self.sep);
                    }
                    self.out.extend_from_slice(&key);
                    self.out.push(b'=');
                    match scalar {
                        Value::Bool(b) => self.out.push(if *b { b'1' } else { b'0' }),
                        Value::Int(n) => self.out.extend_from_slice(n.to_string().as_bytes()),
                        other => {
                            let s = crate::ops::to_str(g, other)?;
                            encode_into(&mut self.out, &s, self.raw);
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

pub(super) fn http_build_query<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let data = a.value(0).into_owned();
    let mut top = None;
    let arr = match data {
        Value::Arr(arr) => arr,
        Value::Obj(o) => {
            let props = Rc::new(visible_props(g, &o));
            top = Some(o);
            props
        }
        Value::Closure(_) => return Ok(Value::str("")),
        other => {
            return type_error(format!(
                "http_build_query(): Argument #1 ($data) must be of type array, {} given",
                other.type_name()
            ))
        }
    };
    let num_prefix = a.opt_str(g, 1, b"")?;
    let sep = if a.has(2) && !matches!(&*a.value(2), Value::Null | Value::Undef) {
        a.str(g, 2)?
    } else {
        PhpStr::from("&")
    };
    let enc = a.opt_int(g, 3, 1)?;
    // PHP reads the separator as a C string.
    let sep = sep.split(|&c| c == 0).next().unwrap_or_default();
    let mut q = Query {
        out: Vec::new(),
        sep,
        raw: enc == QUERY_RFC3986,
        walking: HashSet::new(),
        objects: top.into_iter().collect(),
        ticker: Ticker::new(),
    };
    q.walk(g, &arr, &num_prefix, None)?;
    Ok(Value::Str(PhpStr::new(q.out)))
}

/// PHP's `max_input_vars` and `max_input_nesting_level` defaults.
const MAX_INPUT_VARS: usize = 1000;
const MAX_NESTING: usize = 64;

/// PHP's `php_register_variable_ex`: stores `val` in `top` under the
/// request-variable name `name` (`a[b][]` and the like).
fn register(top: &mut PhpArray, name: &[u8], val: Value) {
    // PHP reads the name as a C string, after leading spaces.
    let name = name.split(|&c| c == 0).next().unwrap_or_default();
    let lead = name.iter().take_while(|&&c| c == b' ').count();
    let mut var: Vec<u8> = name[lead..].to_vec();
    let bracket = var.iter().position(|&c| c == b'[');
    let base_len = bracket.unwrap_or(var.len());
    for c in &mut var[..base_len] {
        if *c == b' ' || *c == b'.' {
            *c = b'_';
        }
    }
    if base_len == 0 {
        return;
    }
    let Some(open) = bracket else {
        set_plain(top, Some(&var), val);
        return;
    };
    // The keys of `[...]` groups; an unclosed one ends the chain.
    let base = var[..base_len].to_vec();
    let mut keys: Vec<Option<Vec<u8>>> = Vec::new();
    let mut ip = open;
    loop {
        let index_start = ip + 1;
        let lone_space = var.get(index_start).is_some_and(|&c| matches!(c, b'\t'..=b'\r' | b' '))
            && var.get(index_start + 1) == Some(&b']');
        let (key, close) = if var.get(index_start) == Some(&b']') {
            (None, index_start)
        } else if lone_space {
            // PHP takes "[ ]" for "[]" (one blank, of any kind).
            (None, index_start + 1)
        } else {
            match find(&var, index_start, var.len(), b']') {
                Some(close) => (Some(var[index_start..close].to_vec()), close),
                None => {
                    if keys.is_empty() {
                        // Not an index after all: the name is plain, with
                        // the bracket and what PHP forbids made '_'.
                        let mut plain = var.clone();
                        plain[open] = b'_';
                        for c in &mut plain[index_start..] {
                            if matches!(*c, b' ' | b'.' | b'[') {
                                *c = b'_';
                            }
                        }
                        set_plain(top, Some(&plain), val);
                        return;
                    }
                    break;
                }
            }
        };
        keys.push(key);
        if keys.len() > MAX_NESTING {
            // PHP drops the variable and what it had stored under its name
            // (the warning only shows with display_errors off).
            top.remove(&Key::from_bytes(&base));
            return;
        }
        ip = close + 1;
        if var.get(ip) != Some(&b'[') {
            break;
        }
    }
    // Walk down, making arrays where needed, then store.
    let mut table: &mut PhpArray = top;
    let mut index: Option<Vec<u8>> = Some(base);
    for key in keys {
        let slot = match &index {
            None => {
                if table.push(Value::empty_array()).is_err() {
                    return;
                }
                let last = table.len() - 1;
                let Some(pos) = table.iter().nth(last).map(|(k, _)| k.to_key()) else {
                    return;
                };
                match table.get_mut(&pos) {
                    Some(s) => s,
                    None => return,
                }
            }
            Some(name) => {
                let (slot, _) = table.entry(Key::from_bytes(name));
                if !matches!(slot.deref().as_ref(), Value::Arr(_)) {
                    *slot = Value::empty_array();
                }
                slot
            }
        };
        let Some(next) = slot.array_mut() else { return };
        table = next;
        index = key;
    }
    set_plain(table, index.as_deref(), val);
}

/// Stores a value under a final key (`None`: appended).
fn set_plain(table: &mut PhpArray, key: Option<&[u8]>, val: Value) {
    match key {
        None => {
            let _ = table.push(val);
        }
        Some(k) => table.insert(Key::from_bytes(k), val),
    }
}

pub(super) fn parse_str<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    // PHP works on a C string.
    let s = s.split(|&c| c == 0).next().unwrap_or_default();
    let mut out = PhpArray::new();
    let mut count = 0;
    let mut ticker = Ticker::new();
    for pair in s.split(|&c| c == b'&').filter(|p| !p.is_empty()) {
        ticker.tick(g)?;
        count += 1;
        if count > MAX_INPUT_VARS {
            warning(
                g,
                &format!(
                    "parse_str(): Input variables exceeded {MAX_INPUT_VARS}. To increase the limit change \
                     max_input_vars in php.ini."
                ),
            );
            break;
        }
        let (name, val) = match pair.iter().position(|&c| c == b'=') {
            Some(eq) => (&pair[..eq], decode(&pair[eq + 1..], false)),
            None => (pair, Vec::new()),
        };
        register(&mut out, &decode(name, false), Value::Str(PhpStr::new(val)));
    }
    a.with_ref(1, |slot| *slot = Value::arr(out));
    Ok(Value::Null)
}

/// The properties of `o` that the calling scope may read.
fn visible_props<G: Globals>(g: G, o: &minizts_core::Obj) -> PhpArray {
    crate::objects::props_array(g, o, crate::objects::scope(g).as_ref())
}
