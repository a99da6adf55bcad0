//! Escaping and text layout: nl2br, wordwrap, addslashes, stripslashes,
//! quotemeta, hebrev (the entity functions are in `entities`).

use minizts_core::Value;
use minizts_globals::Globals;

use super::{safe_alloc, str_value};
use crate::builtins::Args;
use crate::error::VmResult;

pub(super) fn nl2br<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let xhtml = a.opt_bool(g, 1, true)?;
    let br: &[u8] = if xhtml { b"<br />" } else { b"<br>" };
    let mut breaks = 0;
    let mut i = 0;
    while i < s.len() {
        if let (b'\r' | b'\n', Some(b'\r' | b'\n')) = (s[i], s.get(i + 1)) {
            if s[i] != s[i + 1] {
                i += 1;
            }
        }
        if s[i] == b'\r' || s[i] == b'\n' {
            breaks += 1;
        }
        i += 1;
    }
    if breaks == 0 {
        return Ok(Value::Str(s));
    }
    let mut out = safe_alloc(g, breaks, br.len(), s.len())?;
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c == b'\r' || c == b'\n' {
            out.extend_from_slice(br);
            // "\r\n" and "\n\r" are one line break.
            if let Some(&next) = s.get(i + 1) {
                if (next == b'\r' || next == b'\n') && next != c {
                    out.push(c);
                    i += 1;
                }
            }
        }
        out.push(s[i]);
        i += 1;
    }
    Ok(str_value(out))
}

pub(super) fn wordwrap<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let text = a.str(g, 0)?;
    let width = a.opt_int(g, 1, 75)?;
    let brk = a.opt_str(g, 2, b"\n")?;
    let cut = a.opt_bool(g, 3, false)?;
    if text.is_empty() {
        return Ok(Value::Str(text));
    }
    if brk.is_empty() {
        return a.value_error(2, "cannot be empty");
    }
    if width == 0 && cut {
        return a.value_error(3, "cannot be true when argument #2 ($width) is 0");
    }
    let len = text.len() as i64;
    // Positions are i64 as in PHP, where the width may be negative.
    let (mut laststart, mut lastspace) = (0i64, 0i64);
    if brk.len() == 1 && !cut {
        let b = brk[0];
        let mut out = text.to_vec();
        for current in 0..len {
            let c = text[current as usize];
            if c == b {
                laststart = current + 1;
                lastspace = current + 1;
            } else if c == b' ' {
                if current - laststart >= width {
                    out[current as usize] = b;
                    laststart = current + 1;
                }
                lastspace = current;
            } else if current - laststart >= width && laststart != lastspace {
                out[lastspace as usize] = b;
                laststart = lastspace + 1;
            }
        }
        return Ok(str_value(out));
    }
    // PHP's first estimate of the result (it grows the buffer if needed).
    let mut out = if width > 0 {
        safe_alloc(g, text.len() / width as usize + 1, brk.len(), text.len())?
    } else {
        safe_alloc(g, text.len(), brk.len() + 1, 0)?
    };
    let slice = |from: i64, to: i64| &text[from as usize..to as usize];
    let mut current = 0i64;
    while current < len {
        let c = text[current as usize];
        if c == brk[0] && current + (brk.len() as i64) < len && text[current as usize..].starts_with(&brk) {
            out.extend_from_slice(slice(laststart, current + brk.len() as i64));
            current += brk.len() as i64 - 1;
            laststart = current + 1;
            lastspace = current + 1;
        } else if c == b' ' {
            if current - laststart >= width {
                out.extend_from_slice(slice(laststart, current));
                out.extend_from_slice(&brk);
                laststart = current + 1;
            }
            lastspace = current;
        } else if current - laststart >= width && cut && laststart >= lastspace {
            out.extend_from_slice(slice(laststart, current));
            out.extend_from_slice(&brk);
            laststart = current;
            lastspace = current;
        } else if current - laststart >= width && laststart < lastspace {
            out.extend_from_slice(slice(laststart, lastspace));
            out.extend_from_slice(&brk);
            laststart = lastspace + 1;
            lastspace = laststart;
        }
        current += 1;
    }
    if laststart != current {
        out.extend_from_slice(slice(laststart, current));
    }
    Ok(str_value(out))
}

pub(super) fn addslashes<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    if !s.iter().any(|c| matches!(c, b'\'' | b'"' | b'\\' | 0)) {
        return Ok(Value::Str(s));
    }
    let mut out = Vec::with_capacity(s.len() + 8);
    for &c in s.iter() {
        match c {
            0 => out.extend_from_slice(b"\\0"),
            b'\'' | b'"' | b'\\' => {
                out.push(b'\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    Ok(str_value(out))
}

pub(super) fn stripslashes<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let mut out = Vec::with_capacity(s.len());
    let mut it = s.iter();
    while let Some(&c) = it.next() {
        if c == b'\\' {
            match it.next() {
                Some(b'0') => out.push(0),
                Some(&d) => out.push(d),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    Ok(str_value(out))
}

pub(super) fn quotemeta<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let mut out = Vec::with_capacity(s.len());
    for &c in s.iter() {
        if matches!(
            c,
            b'.' | b'\\' | b'+' | b'*' | b'?' | b'[' | b'^' | b']' | b'$' | b'(' | b')'
        ) {
            out.push(b'\\');
        }
        out.push(c);
    }
    Ok(str_value(out))
}

/// `hebrev`: logical Hebrew (ISO-8859-8 letters 224..250) to visual,
/// then broken into lines of at most `max_chars_per_line`, as
/// ext/standard/string.c does it, byte for byte.
pub(super) fn hebrev<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let max_chars = a.opt_int(g, 1, 0)?;
    Ok(str_value(hebrev_bytes(&s, max_chars)))
}

fn hebrev_bytes(s: &[u8], max_chars: i64) -> Vec<u8> {
    let len = s.len();
    if len == 0 {
        return Vec::new();
    }
    let is_heb = |c: u8| (224..=250).contains(&c);
    let blank = |c: u8| c == b' ' || c == b'\t';
    let newline = |c: u8| c == b'\n' || c == b'\r';
    // The C string's terminator is read too.
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let mut heb = vec![0u8; len + 1];
    let mut target = len; // one past the next byte written, going down
    let mut put = |c: u8| {
        if target > 0 {
            target -= 1;
            heb[target] = c;
        }
    };
    let (mut start, mut end) = (0usize, 0usize);
    let mut hebrew_block = is_heb(s[0]);
    loop {
        if hebrew_block {
            while end < len - 1 {
                let c = at(end + 1);
                if !(is_heb(c) || blank(c) || c.is_ascii_punctuation() || c == b'\n') {
                    break;
                }
                end += 1;
            }
            for &c in &s[start..=end.min(len - 1)] {
                put(match c {
                    b'(' => b')',
                    b')' => b'(',
                    b'[' => b']',
                    b']' => b'[',
                    b'{' => b'}',
                    b'}' => b'{',
                    b'<' => b'>',
                    b'>' => b'<',
                    b'\\' => b'/',
                    b'/' => b'\\',
                    c => c,
                });
            }
        } else {
            while end < len - 1 && !is_heb(at(end + 1)) && at(end + 1) != b'\n' {
                end += 1;
            }
            while end > start {
                let c = s[end];
                if !(blank(c) || c.is_ascii_punctuation()) || c == b'/' || c == b'-' {
                    break;
                }
                end -= 1;
            }
            // Copied backwards into a buffer filled backwards: the block
            // keeps its order.
            if start <= end {
                for &c in s[start..=end].iter().rev() {
                    put(c);
                }
            }
        }
        hebrew_block = !hebrew_block;
        // An empty block left `end` one before `start`.
        start = end + 1;
        if end >= len - 1 {
            break;
        }
    }
    heb.truncate(len);
    heb.push(0);

    let mut out = Vec::with_capacity(len);
    let (mut begin, mut end) = (len - 1, len - 1);
    loop {
        let mut count: i64 = 0;
        while (max_chars == 0 || (max_chars > 0 && count < max_chars)) && begin > 0 {
            count += 1;
            begin -= 1;
            if newline(heb[begin]) {
                while begin > 0 && newline(heb[begin - 1]) {
                    begin -= 1;
                    count += 1;
                }
                break;
            }
        }
        if max_chars >= 0 && count == max_chars {
            // Try not to break a word.
            let (mut n, mut b) = (count, begin);
            while n > 0 {
                if blank(heb[b]) || newline(heb[b]) {
                    break;
                }
                b += 1;
                n -= 1;
            }
            if n > 0 {
                begin = b;
            }
        }
        let orig = begin;
        if blank(heb[begin]) {
            heb[begin] = b'\n';
        }
        while begin <= end && newline(heb[begin]) {
            begin += 1;
        }
        if begin <= end {
            out.extend_from_slice(&heb[begin..=end]);
        }
        let mut i = orig;
        while i <= end && newline(heb[i]) {
            out.push(heb[i]);
            i += 1;
        }
        begin = orig;
        if begin == 0 {
            break;
        }
        begin -= 1;
        end = begin;
    }
    out.truncate(len);
    out
}
