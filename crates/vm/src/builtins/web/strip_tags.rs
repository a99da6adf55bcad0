//! strip_tags: PHP's `php_strip_tags_ex` state machine, quirks and all
//! (quotes inside tags, `<?php … ?>`, `<!-- … -->`, `<!DOCTYPE>`, nested
//! `<`), and `php_tag_find` for the allowed tags.

use minizts_core::{PhpStr, Value};
use minizts_globals::Globals;

use crate::builtins::Args;
use crate::error::VmResult;
use crate::limits::Ticker;

/// C's `isspace` in the C locale.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// PHP's `php_tag_find`: whether the tag in `tag` (from `<` to `>`),
/// reduced to `<name>`, occurs in the (lowercased) allowed list.
fn tag_allowed(tag: &[u8], allow: &[u8]) -> bool {
    if tag.is_empty() {
        return false;
    }
    let mut norm = Vec::with_capacity(tag.len() + 1);
    let mut in_name = false;
    let mut t = 0;
    loop {
        // The buffer always ends in '>', which stops the loop.
        let c = tag.get(t).map_or(b'>', u8::to_ascii_lowercase);
        match c {
            b'<' => norm.push(c),
            b'>' => break,
            _ if !is_space(c) => {
                in_name = true;
                let prev = if t > 0 { tag[t - 1] } else { 0 };
                let next = tag.get(t + 1).copied().unwrap_or(0);
                // "</a>" and "<a/>" name the tag "<a>".
                if c != b'/' || (prev != b'<' && next != b'>') {
                    norm.push(c);
                }
            }
            _ if in_name => break,
            _ => {}
        }
        t += 1;
    }
    norm.push(b'>');
    // PHP searches the list as a C string.
    let allow = allow.split(|&c| c == 0).next().unwrap_or_default();
    allow.windows(norm.len()).any(|w| w == norm.as_slice())
}

/// PHP's `php_strip_tags_ex` (with `allow_tag_spaces` false, as
/// strip_tags calls it). The states: 0 text, 1 an HTML tag, 2 a PHP
/// block, 3 a `<!` declaration, 4 a comment.
fn strip<G: Globals>(g: G, buf: &[u8], allow: Option<&[u8]>) -> VmResult<Vec<u8>> {
    let mut out = Vec::with_capacity(buf.len());
    let mut tag: Vec<u8> = Vec::new();
    let mut state = 0u8;
    let (mut depth, mut br) = (0u32, 0i64);
    let (mut in_q, mut lc, mut is_xml) = (0u8, 0u8, false);
    let end = buf.len();
    let at = |i: usize| buf.get(i).copied().unwrap_or(0);
    let prev = |i: usize, back: usize| if i >= back { buf[i - back] } else { 0 };
    let mut ticker = Ticker::new();
    let mut p = 0;
    while p < end {
        ticker.tick(g)?;
        let c = buf[p];
        match state {
            0 => match c {
                0 => {}
                b'<' if in_q != 0 => {}
                b'<' if is_space(at(p + 1)) => out.push(c),
                b'<' => {
                    lc = b'<';
                    state = 1;
                    if allow.is_some() {
                        tag.push(b'<');
                    }
                }
                b'>' if depth > 0 => depth -= 1,
                b'>' if in_q != 0 => {}
                _ => out.push(c),
            },
            1 => {
                let mut regular = false;
                match c {
                    0 => {}
                    b'<' if in_q != 0 => {}
                    b'<' if is_space(at(p + 1)) => regular = true,
                    b'<' => depth += 1,
                    b'>' if depth > 0 => depth -= 1,
                    b'>' if in_q != 0 => {}
                    b'>' => {
                        lc = b'>';
                        if !(is_xml && prev(p, 1) == b'-') {
                            in_q = 0;
                            state = 0;
                            is_xml = false;
                            if let Some(allow) = allow {
                                tag.push(b'>');
                                if tag_allowed(&tag, allow) {
                                    out.extend_from_slice(&tag);
                                }
                                tag.clear();
                            }
                        }
                    }
                    b'"' | b'\'' => {
                        if p != 0 && (in_q == 0 || c == in_q) {
                            in_q = if in_q != 0 { 0 } else { c };
                        }
                        regular = true;
                    }
                    b'!' if prev(p, 1) == b'<' => {
                        state = 3;
                        lc = c;
                    }
                    b'?' if prev(p, 1) == b'<' => {
                        br = 0;
                        state = 2;
                    }
                    _ => regular = true,
                }
                if regular && allow.is_some() {
                    tag.push(c);
                }
            }
            2 => match c {
                b'(' if lc != b'"' && lc != b'\'' => {
                    lc = b'(';
                    br += 1;
                }
                b')' if lc != b'"' && lc != b'\'' => {
                    lc = b')';
                    br -= 1;
                }
                b'>' if depth > 0 => depth -= 1,
                b'>' if in_q != 0 => {}
                b'>' if br == 0 && lc != b'"' && prev(p, 1) == b'?' => {
                    in_q = 0;
                    state = 0;
                    tag.clear();
                }
                b'"' | b'\'' if p >= 1 && prev(p, 1) != b'\\' => {
                    if lc == c {
                        lc = 0;
                    } else if lc != b'\\' {
                        lc = c;
                    }
                    if in_q == 0 || c == in_q {
                        in_q = if in_q != 0 { 0 } else { c };
                    }
                }
                // "<?xml" is markup after all.
                b'l' | b'L'
                    if p > 4
                        && prev(p, 1).eq_ignore_ascii_case(&b'm')
                        && prev(p, 2).eq_ignore_ascii_case(&b'x')
                        && prev(p, 3) == b'?'
                        && prev(p, 4) == b'<' =>
                {
                    state = 1;
                    is_xml = true;
                }
                _ => {}
            },
            3 => match c {
                b'>' if depth > 0 => depth -= 1,
                b'>' if in_q != 0 => {}
                b'>' => {
                    in_q = 0;
                    state = 0;
                    tag.clear();
                }
                b'"' | b'\'' if p != 0 && prev(p, 1) != b'\\' && (in_q == 0 || c == in_q) => {
                    in_q = if in_q != 0 { 0 } else { c };
                }
                b'-' if p >= 2 && prev(p, 1) == b'-' && prev(p, 2) == b'!' => state = 4,
                // "<!DOCTYPE" is a tag.
                b'E' | b'e'
                    if p > 6
                        && prev(p, 1).eq_ignore_ascii_case(&b'p')
                        && prev(p, 2).eq_ignore_ascii_case(&b'y')
                        && prev(p, 3).eq_ignore_ascii_case(&b't')
                        && prev(p, 4).eq_ignore_ascii_case(&b'c')
                        && prev(p, 5).eq_ignore_ascii_case(&b'o')
                        && prev(p, 6).eq_ignore_ascii_case(&b'd') =>
                {
                    state = 1;
                }
                _ => {}
            },
            _ => {
                if c == b'>' && in_q == 0 && p >= 2 && prev(p, 1) == b'-' && prev(p, 2) == b'-' {
                    in_q = 0;
                    state = 0;
                    tag.clear();
                }
            }
        }
        p += 1;
    }
    Ok(out)
}

pub(super) fn strip_tags<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let allow: Option<Vec<u8>> = match &*a.value(1) {
        Value::Null | Value::Undef => None,
        Value::Arr(tags) => {
            let mut list = Vec::new();
            for v in tags.values() {
                list.push(b'<');
                list.extend_from_slice(&crate::ops::to_str(g, &v.deref())?);
                list.push(b'>');
            }
            (!list.is_empty()).then_some(list)
        }
        Value::Closure(_) => {
            return crate::error::type_error(
                "strip_tags(): Argument #2 ($allowed_tags) must be of type array|string|null, Closure given",
            )
        }
        _ => Some(a.str(g, 1)?.to_vec()),
    };
    let allow = allow.map(|l| l.to_ascii_lowercase());
    Ok(Value::Str(PhpStr::new(strip(g, &s, allow.as_deref())?)))
}
