//! HTML and escaping: htmlspecialchars and its decoder, nl2br, wordwrap,
//! addslashes, stripslashes, quotemeta.

use minizts_core::Value;
use minizts_globals::Globals;

use super::{opt_nullable_str, safe_alloc, str_value};
use crate::builtins::Args;
use crate::error::{warning, VmResult};
use crate::limits::Ticker;

// PHP's ENT_* flag bits.
const QUOTE_SINGLE: i64 = 1;
const QUOTE_DOUBLE: i64 = 2;
const IGNORE: i64 = 4;
const SUBSTITUTE: i64 = 8;
const DISALLOWED: i64 = 128;
const DOC_MASK: i64 = 16 | 32;
const DOC_HTML401: i64 = 0;
const DOC_XML1: i64 = 16;
const DOC_HTML5: i64 = 48;
/// ENT_QUOTES | ENT_SUBSTITUTE | ENT_HTML401
const DEFAULT_FLAGS: i64 = 3 | 8;

/// The named entities of HTML 4.01, space-separated, which
/// `double_encode: false` leaves alone (anything else after `&` is
/// escaped).
const HTML401_ENTITIES: &str =
    "AElig Aacute Acirc Agrave Alpha Aring Atilde Auml Beta Ccedil Chi Dagger Delta ETH Eacute Ecirc \
    Egrave Epsilon Eta Euml Gamma Iacute Icirc Igrave Iota Iuml Kappa Lambda Mu Ntilde Nu OElig Oacute \
    Ocirc Ograve Omega Omicron Oslash Otilde Ouml Phi Pi Prime Psi Rho Scaron Sigma THORN Tau Theta \
    Uacute Ucirc Ugrave Upsilon Uuml Xi Yacute Yuml Zeta aacute acirc acute aelig agrave alefsym alpha \
    amp and ang aring asymp atilde auml bdquo beta brvbar bull cap ccedil cedil cent chi circ clubs \
    cong copy crarr cup curren dArr dagger darr deg delta diams divide eacute ecirc egrave empty emsp \
    ensp epsilon equiv eta eth euml euro exist fnof forall frac12 frac14 frac34 frasl gamma ge gt hArr \
    harr hearts hellip iacute icirc iexcl igrave image infin int iota iquest isin iuml kappa lArr \
    lambda lang laquo larr lceil ldquo le lfloor lowast loz lrm lsaquo lsquo lt macr mdash micro middot \
    minus mu nabla nbsp ndash ne ni not notin nsub ntilde nu oacute ocirc oelig ograve oline omega \
    omicron oplus or ordf ordm oslash otilde otimes ouml para part permil perp phi pi piv plusmn pound \
    prime prod prop psi quot rArr radic rang raquo rarr rceil rdquo real reg rfloor rho rlm rsaquo \
    rsquo sbquo scaron sdot sect shy sigma sigmaf sim spades sub sube sum sup sup1 sup2 sup3 supe szlig \
    tau there4 theta thetasym thinsp thorn tilde times trade uArr uacute uarr ucirc ugrave uml upsih \
    upsilon uuml weierp xi yacute yen yuml zeta zwj zwnj";

/// The length of the UTF-8 character at the start of `s`, or `Err(n)`:
/// an invalid sequence of which PHP's `get_next_char` skips `n` bytes.
fn utf8_char(s: &[u8]) -> Result<usize, usize> {
    let lead = |c: u8| c < 0x80 || (0xc2..=0xf4).contains(&c);
    let trail = |i: usize| s.get(i).is_some_and(|&c| (0x80..=0xbf).contains(&c));
    let c = s[0];
    let avail = s.len();
    let need = match c {
        0..=0x7f => return Ok(1),
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return Err(1),
    };
    if avail < need || !(1..need).all(trail) {
        // PHP skips up to the first byte that could start a character.
        for k in 1..need {
            match s.get(k) {
                Some(&b) if !lead(b) => {}
                _ => return Err(k),
            }
        }
        return Err(need);
    }
    let cp = match need {
        2 => return Ok(2),
        3 => ((c as u32 & 0x0f) << 12) | ((s[1] as u32 & 0x3f) << 6) | (s[2] as u32 & 0x3f),
        _ => {
            ((c as u32 & 0x07) << 18)
                | ((s[1] as u32 & 0x3f) << 12)
                | ((s[2] as u32 & 0x3f) << 6)
                | (s[3] as u32 & 0x3f)
        }
    };
    let bad = match need {
        3 => cp < 0x800 || (0xd800..=0xdfff).contains(&cp),
        _ => !(0x10000..=0x10ffff).contains(&cp),
    };
    if bad {
        Err(need)
    } else {
        Ok(need)
    }
}

/// How htmlspecialchars reads the bytes of a charset.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Charset {
    /// Validated; code points checked by ENT_DISALLOWED.
    Utf8,
    /// Bytes are code points (ISO-8859-1).
    Latin1,
    /// Any other charset PHP knows: bytes pass through. (PHP validates
    /// the East Asian multi-byte charsets and maps the others to Unicode
    /// for ENT_DISALLOWED; minizts does neither.)
    Other,
}

/// The charset PHP calls `name` (any case); `None` for a name PHP does
/// not know.
fn charset(name: &[u8]) -> Option<Charset> {
    const OTHERS: &[&str] = &[
        "iso-8859-15",
        "iso8859-15",
        "cp1252",
        "windows-1252",
        "1252",
        "cp1251",
        "windows-1251",
        "win-1251",
        "iso8859-5",
        "iso-8859-5",
        "cp866",
        "866",
        "ibm866",
        "koi8-r",
        "koi8-ru",
        "koi8r",
        "macroman",
        "big5",
        "950",
        "gb2312",
        "936",
        "big5-hkscs",
        "shift_jis",
        "sjis",
        "932",
        "sjis-win",
        "cp932",
        "euc-jp",
        "eucjp",
        "eucjp-win",
    ];
    let lower = name.to_ascii_lowercase();
    match lower.as_slice() {
        b"utf-8" => Some(Charset::Utf8),
        b"iso-8859-1" | b"iso8859-1" => Some(Charset::Latin1),
        other => OTHERS.iter().any(|n| n.as_bytes() == other).then_some(Charset::Other),
    }
}

/// PHP's `unicode_cp_is_allowed`: whether a document type allows code
/// point `cp` literally (ENT_DISALLOWED replaces the others).
fn cp_allowed(cp: u32, doctype: i64) -> bool {
    let nonchar = (cp & 0xffff) >= 0xfffe || (0xfdd0..=0xfdef).contains(&cp);
    match doctype {
        DOC_HTML401 => {
            (0x20..=0x7e).contains(&cp)
                || matches!(cp, 0x09 | 0x0a | 0x0d)
                || (0xa0..=0xd7ff).contains(&cp)
                || (0xe000..=0x10ffff).contains(&cp)
        }
        DOC_HTML5 => {
            (0x20..=0x7e).contains(&cp)
                || matches!(cp, 0x09 | 0x0a | 0x0c | 0x0d)
                || (0xa0..=0xd7ff).contains(&cp)
                || ((0xe000..=0x10ffff).contains(&cp) && !nonchar)
        }
        _ => {
            (0x20..=0xd7ff).contains(&cp)
                || matches!(cp, 0x09 | 0x0a | 0x0d)
                || ((0xe000..=0x10ffff).contains(&cp) && cp != 0xfffe && cp != 0xffff)
        }
    }
}

/// PHP's `numeric_entity_is_allowed`: whether `&#cp;` may stay as it is
/// under ENT_DISALLOWED with `double_encode: false`.
fn numeric_entity_allowed(cp: u64, doctype: i64) -> bool {
    match doctype {
        DOC_HTML401 => cp <= 0x10ffff,
        DOC_HTML5 => {
            let nonchar = (cp & 0xffff) >= 0xfffe || (0xfdd0..=0xfdef).contains(&cp);
            (0x20..=0x7e).contains(&cp)
                || matches!(cp, 0x09 | 0x0a | 0x0c)
                || ((0xa0..=0x10ffff).contains(&cp) && !nonchar)
        }
        _ => u32::try_from(cp).is_ok_and(|cp| cp_allowed(cp, doctype)),
    }
}

/// The code point of the valid UTF-8 sequence `s`.
fn decode_utf8(s: &[u8]) -> u32 {
    match s.len() {
        1 => s[0] as u32,
        2 => ((s[0] as u32 & 0x1f) << 6) | (s[1] as u32 & 0x3f),
        3 => ((s[0] as u32 & 0x0f) << 12) | ((s[1] as u32 & 0x3f) << 6) | (s[2] as u32 & 0x3f),
        _ => {
            ((s[0] as u32 & 0x07) << 18)
                | ((s[1] as u32 & 0x3f) << 12)
                | ((s[2] as u32 & 0x3f) << 6)
                | (s[3] as u32 & 0x3f)
        }
    }
}

/// The length of a valid entity body after `&` (up to and excluding the
/// `;`), as `double_encode: false` recognises them.
fn entity_len(rest: &[u8], doctype: i64, disallowed: bool) -> Option<usize> {
    if rest.first() == Some(&b'#') {
        let hex = rest.get(1).is_some_and(|&c| c == b'x' || c == b'X');
        let start = if hex { 2 } else { 1 };
        let digits = rest[start..]
            .iter()
            .take_while(|c| if hex { c.is_ascii_hexdigit() } else { c.is_ascii_digit() })
            .count();
        if digits == 0 || rest.get(start + digits) != Some(&b';') {
            return None;
        }
        let text = std::str::from_utf8(&rest[start..start + digits]).ok()?;
        // strtol saturates, so overlong numbers are simply too big.
        let code = u64::from_str_radix(text, if hex { 16 } else { 10 }).unwrap_or(u64::MAX);
        let ok = code <= 0x10ffff && (!disallowed || numeric_entity_allowed(code, doctype));
        return ok.then_some(start + digits);
    }
    let name_len = rest.iter().take_while(|c| c.is_ascii_alphanumeric()).count();
    if name_len == 0 || rest.get(name_len) != Some(&b';') {
        return None;
    }
    let name = &rest[..name_len];
    // XML 1.0 has only the basic entities. PHP checks HTML 5 names against
    // its much longer table; the HTML 4.01 names and &apos; stand in here.
    let known = match doctype {
        DOC_XML1 => matches!(name, b"amp" | b"lt" | b"gt" | b"quot" | b"apos"),
        _ => HTML401_ENTITIES.split(' ').any(|e| e.as_bytes() == name) || (doctype != DOC_HTML401 && name == b"apos"),
    };
    known.then_some(name_len)
}

pub(super) fn htmlspecialchars<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let flags = a.opt_int(g, 1, DEFAULT_FLAGS)?;
    let charset = opt_nullable_str(g, a, 2, b"")?;
    let double_encode = a.opt_bool(g, 3, true)?;
    let cs = if charset.is_empty() {
        Charset::Utf8
    } else {
        self::charset(&charset).unwrap_or_else(|| {
            warning(
                g,
                &format!(
                    "htmlspecialchars(): Charset \"{}\" is not supported, assuming UTF-8",
                    // PHP prints the name as a C string.
                    String::from_utf8_lossy(charset.split(|&c| c == 0).next().unwrap_or_default())
                ),
            );
            Charset::Utf8
        })
    };
    let disallowed = flags & DISALLOWED != 0;
    let doctype = flags & DOC_MASK;
    let apos: &[u8] = if doctype == DOC_HTML401 { b"&#039;" } else { b"&apos;" };
    let mut out = Vec::with_capacity(s.len() + s.len() / 8);
    // Entities make the result up to six times the text: the memory
    // limit is checked as they are written.
    let mut ticker = Ticker::new();
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if cs == Charset::Utf8 && c >= 0x80 {
            match utf8_char(&s[i..]) {
                Ok(n) => {
                    if disallowed && !cp_allowed(decode_utf8(&s[i..i + n]), doctype) {
                        out.extend_from_slice("\u{fffd}".as_bytes());
                    } else {
                        out.extend_from_slice(&s[i..i + n]);
                    }
                    i += n;
                }
                Err(n) => {
                    if flags & IGNORE != 0 {
                    } else if flags & SUBSTITUTE != 0 {
                        out.extend_from_slice("\u{fffd}".as_bytes());
                    } else {
                        return Ok(Value::str(""));
                    }
                    i += n;
                }
            }
            continue;
        }
        i += 1;
        match c {
            b'&' => {
                ticker.tick(g)?;
                if !double_encode {
                    if let Some(n) = entity_len(&s[i..], doctype, disallowed) {
                        out.push(b'&');
                        out.extend_from_slice(&s[i..=i + n]);
                        i += n + 1;
                        continue;
                    }
                }
                out.extend_from_slice(b"&amp;");
            }
            b'"' if flags & QUOTE_DOUBLE != 0 => {
                ticker.tick(g)?;
                out.extend_from_slice(b"&quot;");
            }
            b'\'' if flags & QUOTE_SINGLE != 0 => {
                ticker.tick(g)?;
                out.extend_from_slice(apos);
            }
            b'<' => {
                ticker.tick(g)?;
                out.extend_from_slice(b"&lt;");
            }
            b'>' => {
                ticker.tick(g)?;
                out.extend_from_slice(b"&gt;");
            }
            // Other charsets map bytes through tables; only the C0 controls
            // are surely the same code points.
            _ if disallowed && (cs == Charset::Utf8 || cs == Charset::Latin1 || c < 0x20) => {
                if cp_allowed(c as u32, doctype) {
                    out.push(c);
                } else if cs == Charset::Utf8 {
                    out.extend_from_slice("\u{fffd}".as_bytes());
                } else {
                    out.extend_from_slice(b"&#xFFFD;");
                }
            }
            _ => out.push(c),
        }
    }
    Ok(str_value(out))
}

pub(super) fn htmlspecialchars_decode<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let flags = a.opt_int(g, 1, DEFAULT_FLAGS)?;
    let doctype = flags & DOC_MASK;
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] != b'&' {
            out.push(s[i]);
            i += 1;
            continue;
        }
        let rest = &s[i + 1..];
        let semi = rest.iter().position(|&c| c == b';');
        let decoded = semi.and_then(|end| {
            let body = &rest[..end];
            let code = if let Some(num) = body.strip_prefix(b"#") {
                let (digits, radix) = match num.first() {
                    Some(b'x' | b'X') => (&num[1..], 16),
                    _ => (num, 10),
                };
                let valid = !digits.is_empty()
                    && digits.iter().all(|c| {
                        if radix == 16 {
                            c.is_ascii_hexdigit()
                        } else {
                            c.is_ascii_digit()
                        }
                    });
                if !valid {
                    return None;
                }
                let text = std::str::from_utf8(digits).ok()?;
                let code = u64::from_str_radix(text, radix).unwrap_or(u64::MAX);
                match code {
                    34 | 38 | 39 | 60 | 62 => code as u8,
                    _ => return None,
                }
            } else {
                match body {
                    b"amp" => b'&',
                    b"quot" => b'"',
                    b"lt" => b'<',
                    b"gt" => b'>',
                    b"apos" if doctype != DOC_HTML401 => b'\'',
                    _ => return None,
                }
            };
            let allowed = match code {
                b'\'' => flags & QUOTE_SINGLE != 0,
                b'"' => flags & QUOTE_DOUBLE != 0,
                _ => true,
            };
            allowed.then_some((code, end))
        });
        match decoded {
            Some((c, end)) => {
                out.push(c);
                i += end + 2;
            }
            None => {
                out.push(b'&');
                i += 1;
            }
        }
    }
    Ok(str_value(out))
}

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
