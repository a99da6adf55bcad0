//! HTML entities: htmlspecialchars, htmlentities, their decoders and
//! get_html_translation_table, as PHP 8.2's ext/standard/html.c has them:
//! its charsets (UTF-8 and the single-byte ones mapped to Unicode, the
//! East Asian multi-byte ones only validated), document types, flags and
//! quirks. The entity tables come from PHP itself ([`tables`]).

use minizts_core::{Key, PhpArray, PhpStr, Value};
use minizts_globals::Globals;

use super::{opt_nullable_str, safe_alloc, str_value};
use crate::builtins::Args;
use crate::error::{notice, warning, VmResult};
use crate::limits::Ticker;

mod tables;

// PHP's ENT_* flag bits.
const QUOTE_SINGLE: i64 = 1;
const QUOTE_DOUBLE: i64 = 2;
const IGNORE: i64 = 4;
const SUBSTITUTE: i64 = 8;
const DISALLOWED: i64 = 128;
const DOC_MASK: i64 = 16 | 32;
const DOC_HTML401: i64 = 0;
const DOC_XML1: i64 = 16;
const DOC_XHTML: i64 = 32;
const DOC_HTML5: i64 = 48;
/// ENT_QUOTES | ENT_SUBSTITUTE | ENT_HTML401
const DEFAULT_FLAGS: i64 = 3 | 8;

/// PHP's `entity_charset`, in its order (the order is what PHP's
/// `CHARSET_*` tests compare against).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Charset {
    Utf8,
    Latin1,
    Cp1252,
    Latin9,
    Cp1251,
    Iso8859_5,
    Cp866,
    MacRoman,
    Koi8r,
    Big5,
    Gb2312,
    Big5Hkscs,
    Sjis,
    EucJp,
}

/// The names PHP accepts for each charset (compared ignoring case).
const CHARSET_NAMES: &[(&str, Charset)] = &[
    ("ISO-8859-1", Charset::Latin1),
    ("ISO8859-1", Charset::Latin1),
    ("ISO-8859-15", Charset::Latin9),
    ("ISO8859-15", Charset::Latin9),
    ("utf-8", Charset::Utf8),
    ("cp1252", Charset::Cp1252),
    ("Windows-1252", Charset::Cp1252),
    ("1252", Charset::Cp1252),
    ("BIG5", Charset::Big5),
    ("950", Charset::Big5),
    ("GB2312", Charset::Gb2312),
    ("936", Charset::Gb2312),
    ("Big5-HKSCS", Charset::Big5Hkscs),
    ("Shift_JIS", Charset::Sjis),
    ("SJIS", Charset::Sjis),
    ("932", Charset::Sjis),
    ("SJIS-win", Charset::Sjis),
    ("CP932", Charset::Sjis),
    ("EUCJP", Charset::EucJp),
    ("EUC-JP", Charset::EucJp),
    ("eucJP-win", Charset::EucJp),
    ("KOI8-R", Charset::Koi8r),
    ("koi8-ru", Charset::Koi8r),
    ("koi8r", Charset::Koi8r),
    ("cp1251", Charset::Cp1251),
    ("Windows-1251", Charset::Cp1251),
    ("win-1251", Charset::Cp1251),
    ("iso8859-5", Charset::Iso8859_5),
    ("iso-8859-5", Charset::Iso8859_5),
    ("cp866", Charset::Cp866),
    ("866", Charset::Cp866),
    ("ibm866", Charset::Cp866),
    ("MacRoman", Charset::MacRoman),
];

impl Charset {
    /// Whether bytes (UTF-8: characters) are Unicode code points as they
    /// are (`CHARSET_UNICODE_COMPAT`).
    fn unicode_compat(self) -> bool {
        self <= Charset::Latin1
    }

    /// The East Asian charsets, which PHP only validates
    /// (`CHARSET_PARTIAL_SUPPORT`).
    fn partial(self) -> bool {
        self >= Charset::Big5
    }

    /// The upper half of a single-byte charset other than ISO-8859-1.
    fn table(self) -> Option<&'static [u16; 128]> {
        match self {
            Charset::Cp1252
            | Charset::Latin9
            | Charset::Cp1251
            | Charset::Iso8859_5
            | Charset::Cp866
            | Charset::MacRoman
            | Charset::Koi8r => Some(&tables::SINGLE_BYTE[self as usize - Charset::Cp1252 as usize]),
            _ => None,
        }
    }

    /// PHP's `map_to_unicode` (0xFFFF: no such character).
    fn char_to_unicode(self, c: u32) -> u32 {
        let Some(table) = self.table() else { return c };
        match c {
            // PHP's MacRoman table leaves out the controls.
            0..=0x1f | 0x7f if self == Charset::MacRoman => 0xffff,
            0..=0x7f => c,
            0x80..=0xff => table[c as usize - 0x80] as u32,
            _ => 0xffff,
        }
    }

    /// PHP's `map_from_unicode`: the character for code point `cp`, if
    /// this charset has one.
    fn unicode_to_char(self, cp: u32) -> Option<u32> {
        match self {
            Charset::Utf8 => Some(cp),
            Charset::Latin1 => (cp <= 0xff).then_some(cp),
            Charset::Sjis | Charset::EucJp => ((0x20..=0x7d).contains(&cp) && cp != 0x5c).then_some(cp),
            Charset::Big5 | Charset::Big5Hkscs | Charset::Gb2312 => (0x20..=0x7d).contains(&cp).then_some(cp),
            _ => {
                if cp == 0x7f && self == Charset::MacRoman {
                    return None;
                }
                if cp <= 0x7f {
                    return Some(cp);
                }
                let table = self.table()?;
                table.iter().position(|&u| u as u32 == cp).map(|i| i as u32 + 0x80)
            }
        }
    }
}

/// PHP's `determine_charset`: the charset named `hint` (read as a C
/// string; empty or absent: the default, UTF-8), warning about names it
/// does not know.
fn determine_charset<G: Globals>(g: G, func: &str, hint: &[u8]) -> Charset {
    let name = hint.split(|&c| c == 0).next().unwrap_or_default();
    if name.is_empty() {
        return Charset::Utf8;
    }
    if let Some(&(_, cs)) = CHARSET_NAMES
        .iter()
        .find(|(n, _)| n.as_bytes().eq_ignore_ascii_case(name))
    {
        return cs;
    }
    warning(
        g,
        &format!(
            "{func}(): Charset \"{}\" is not supported, assuming UTF-8",
            String::from_utf8_lossy(name)
        ),
    );
    Charset::Utf8
}

fn utf8_lead(c: u8) -> bool {
    c < 0x80 || (0xc2..=0xf4).contains(&c)
}

fn utf8_trail(c: u8) -> bool {
    (0x80..=0xbf).contains(&c)
}

/// PHP's `get_next_char`: the character at `*pos` (a code point for
/// UTF-8, the byte sequence's value otherwise), moving `*pos` past it; or
/// `None` for an invalid sequence, with `*pos` past the bytes PHP skips.
fn next_char(cs: Charset, s: &[u8], pos: &mut usize) -> Option<u32> {
    let p = *pos;
    let r = decode_at(cs, &s[p..]);
    match r {
        Ok((c, n)) => {
            *pos = p + n;
            Some(c)
        }
        Err(n) => {
            *pos = p + n;
            None
        }
    }
}

/// The character at the start of `s` and its length, or `Err(n)`: an
/// invalid sequence of which PHP skips `n` bytes.
fn decode_at(cs: Charset, s: &[u8]) -> Result<(u32, usize), usize> {
    let c = s[0];
    let avail = s.len();
    let b = |i: usize| s[i] as u32;
    match cs {
        Charset::Utf8 => {
            // PHP follows UTR #36's advice: an invalid sequence does not
            // swallow a byte that could start a valid one.
            if c < 0x80 {
                Ok((c as u32, 1))
            } else if c < 0xc2 {
                Err(1)
            } else if c < 0xe0 {
                if avail < 2 {
                    return Err(1);
                }
                if !utf8_trail(s[1]) {
                    return Err(if utf8_lead(s[1]) { 1 } else { 2 });
                }
                Ok((((c as u32 & 0x1f) << 6) | (b(1) & 0x3f), 2))
            } else if c < 0xf0 {
                if avail < 3 || !utf8_trail(s[1]) || !utf8_trail(s[2]) {
                    return Err(if avail < 2 || utf8_lead(s[1]) {
                        1
                    } else if avail < 3 || utf8_lead(s[2]) {
                        2
                    } else {
                        3
                    });
                }
                let cp = ((c as u32 & 0x0f) << 12) | ((b(1) & 0x3f) << 6) | (b(2) & 0x3f);
                if cp < 0x800 || (0xd800..=0xdfff).contains(&cp) {
                    return Err(3);
                }
                Ok((cp, 3))
            } else if c < 0xf5 {
                if avail < 4 || !utf8_trail(s[1]) || !utf8_trail(s[2]) || !utf8_trail(s[3]) {
                    return Err(if avail < 2 || utf8_lead(s[1]) {
                        1
                    } else if avail < 3 || utf8_lead(s[2]) {
                        2
                    } else if avail < 4 || utf8_lead(s[3]) {
                        3
                    } else {
                        4
                    });
                }
                let cp = ((c as u32 & 0x07) << 18) | ((b(1) & 0x3f) << 12) | ((b(2) & 0x3f) << 6) | (b(3) & 0x3f);
                if !(0x10000..=0x10ffff).contains(&cp) {
                    return Err(4);
                }
                Ok((cp, 4))
            } else {
                Err(1)
            }
        }
        Charset::Big5 | Charset::Big5Hkscs => {
            if !(0x81..=0xfe).contains(&c) {
                return Ok((c as u32, 1));
            }
            if avail < 2 {
                return Err(1);
            }
            let next = s[1];
            if (0x40..=0x7e).contains(&next) || (0xa1..=0xfe).contains(&next) {
                Ok(((c as u32) << 8 | next as u32, 2))
            } else if cs == Charset::Big5 || (next != 0x80 && next != 0xff) {
                Err(1)
            } else {
                Err(2)
            }
        }
        Charset::Gb2312 => {
            // Bytes that are neither a character nor a lead byte.
            let stray = |b: u8| matches!(b, 0x8e | 0x8f | 0xa0 | 0xff);
            if stray(c) {
                return Err(1);
            }
            if !(0xa1..=0xfe).contains(&c) {
                return Ok((c as u32, 1));
            }
            if avail < 2 {
                return Err(1);
            }
            let next = s[1];
            if (0xa1..=0xfe).contains(&next) {
                Ok(((c as u32) << 8 | next as u32, 2))
            } else if stray(next) {
                Err(2)
            } else {
                Err(1)
            }
        }
        Charset::Sjis => {
            if (0x81..=0x9f).contains(&c) || (0xe0..=0xfc).contains(&c) {
                if avail < 2 {
                    return Err(1);
                }
                let next = s[1];
                if (0x40..=0xfc).contains(&next) && next != 0x7f {
                    Ok(((c as u32) << 8 | next as u32, 2))
                } else if next < 0x40 || next == 0x7f {
                    Err(1)
                } else {
                    Err(2)
                }
            } else if c < 0x80 || (0xa1..=0xdf).contains(&c) {
                Ok((c as u32, 1))
            } else {
                Err(1)
            }
        }
        Charset::EucJp => {
            let bad_trail = |n: u8| if n != 0xa0 && n != 0xff { 1 } else { 2 };
            if (0xa1..=0xfe).contains(&c) {
                if avail < 2 {
                    return Err(1);
                }
                let next = s[1];
                if (0xa1..=0xfe).contains(&next) {
                    Ok(((c as u32) << 8 | next as u32, 2))
                } else {
                    Err(bad_trail(next))
                }
            } else if c == 0x8e {
                if avail < 2 {
                    return Err(1);
                }
                let next = s[1];
                if (0xa1..=0xdf).contains(&next) {
                    Ok(((c as u32) << 8 | next as u32, 2))
                } else {
                    Err(bad_trail(next))
                }
            } else if c == 0x8f {
                let ok = |i: usize| (0xa1..=0xfe).contains(&s[i]);
                if avail < 3 || !ok(1) || !ok(2) {
                    let edge = |i: usize| s[i] == 0xa0 || s[i] == 0xff;
                    return Err(if avail < 2 || !edge(1) {
                        1
                    } else if avail < 3 || !edge(2) {
                        2
                    } else {
                        3
                    });
                }
                Ok(((c as u32) << 16 | b(1) << 8 | b(2), 3))
            } else if c != 0xa0 && c != 0xff {
                Ok((c as u32, 1))
            } else {
                Err(1)
            }
        }
        _ => Ok((c as u32, 1)),
    }
}

/// PHP's `write_octet_sequence`: character `code` in charset `cs`
/// (single-byte charsets keep the low byte, as PHP's does).
fn write_char(out: &mut Vec<u8>, cs: Charset, code: u32) {
    if cs != Charset::Utf8 {
        out.push(code as u8);
        return;
    }
    if code < 0x80 {
        out.push(code as u8);
    } else if code < 0x800 {
        out.extend_from_slice(&[0xc0 | (code >> 6) as u8, 0x80 | (code & 0x3f) as u8]);
    } else if code < 0x10000 {
        out.extend_from_slice(&[
            0xe0 | (code >> 12) as u8,
            0x80 | ((code >> 6) & 0x3f) as u8,
            0x80 | (code & 0x3f) as u8,
        ]);
    } else {
        out.extend_from_slice(&[
            0xf0 | ((code >> 18) & 0x07) as u8,
            0x80 | ((code >> 12) & 0x3f) as u8,
            0x80 | ((code >> 6) & 0x3f) as u8,
            0x80 | (code & 0x3f) as u8,
        ]);
    }
}

/// PHP's `unicode_cp_is_allowed`: whether a document type allows code
/// point `cp` literally.
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
fn numeric_entity_allowed(cp: u32, doctype: i64) -> bool {
    match doctype {
        DOC_HTML401 => cp <= 0x10ffff,
        DOC_HTML5 => {
            let nonchar = (cp & 0xffff) >= 0xfffe || (0xfdd0..=0xfdef).contains(&cp);
            (0x20..=0x7e).contains(&cp)
                || matches!(cp, 0x09 | 0x0a | 0x0c)
                || ((0xa0..=0x10ffff).contains(&cp) && !nonchar)
        }
        _ => cp_allowed(cp, doctype),
    }
}

/// PHP's `process_numeric_entity` on the text after `&#`: the code point
/// and the position of the `;` that ends it.
fn numeric_entity(s: &[u8], mut p: usize) -> Option<(u32, usize)> {
    let hex = matches!(s.get(p), Some(b'x' | b'X'));
    if hex {
        p += 1;
    }
    let digit = |c: Option<&u8>| c.is_some_and(|c| if hex { c.is_ascii_hexdigit() } else { c.is_ascii_digit() });
    if !digit(s.get(p)) {
        return None;
    }
    // strtol in base 16 takes a "0x" of its own.
    if hex && s[p] == b'0' && matches!(s.get(p + 1), Some(b'x' | b'X')) && digit(s.get(p + 2)) {
        p += 2;
    }
    let radix = if hex { 16 } else { 10 };
    let mut code: u64 = 0;
    while digit(s.get(p)) {
        // strtol saturates: too big is simply too big.
        code = (code * radix + (s[p] as char).to_digit(radix as u32).unwrap_or(0) as u64).min(u64::MAX / 32);
        p += 1;
    }
    if s.get(p) != Some(&b';') || code > 0x10ffff {
        return None;
    }
    Some((code as u32, p))
}

/// PHP's `process_named_entity_html` on the text after `&`: the name's
/// end, where its `;` is.
fn named_entity(s: &[u8], p: usize) -> Option<usize> {
    let len = s[p.min(s.len())..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric())
        .count();
    (len > 0 && s.get(p + len) == Some(&b';')).then_some(p + len)
}

/// The names an entity lookup knows (PHP's inverse maps).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Names {
    Html5,
    Html401,
    /// amp, gt, lt, quot and apos.
    BasicApos,
    /// amp, gt, lt, quot.
    BasicNoApos,
}

/// PHP's `unescape_inverse_map`.
fn names_for(all: bool, flags: i64) -> Names {
    match (all, flags & DOC_MASK) {
        (true, DOC_HTML401 | DOC_XHTML) => Names::Html401,
        (true, DOC_HTML5) => Names::Html5,
        (false, DOC_HTML401) => Names::BasicNoApos,
        _ => Names::BasicApos,
    }
}

/// PHP's `resolve_named_entity_html`: the code point(s) of `&name;`.
fn resolve_name(names: Names, name: &[u8]) -> Option<(u32, u32)> {
    let table = match names {
        Names::Html5 => tables::HTML5_NAMES,
        Names::Html401 => tables::HTML401_NAMES,
        Names::BasicApos | Names::BasicNoApos => {
            return match name {
                b"amp" => Some((0x26, 0)),
                b"gt" => Some((0x3e, 0)),
                b"lt" => Some((0x3c, 0)),
                b"quot" => Some((0x22, 0)),
                b"apos" if names == Names::BasicApos => Some((0x27, 0)),
                _ => None,
            };
        }
    };
    let i = table.binary_search_by(|e| e.0.as_bytes().cmp(name)).ok()?;
    Some((table[i].1, table[i].2))
}

/// Which entities the encoder writes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Encode {
    Html5,
    Html401,
    BasicApos,
    BasicNoApos,
}

impl Encode {
    fn for_doctype(all: bool, doctype: i64) -> Encode {
        match (all, doctype) {
            (true, DOC_HTML5) => Encode::Html5,
            (true, _) => Encode::Html401,
            (false, DOC_HTML401) => Encode::BasicNoApos,
            (false, _) => Encode::BasicApos,
        }
    }

    fn table(self) -> &'static [(u32, u32, &'static str)] {
        match self {
            Encode::Html5 => tables::HTML5_ENCODE,
            _ => tables::HTML401_ENCODE,
        }
    }

    /// The basic entities (htmlspecialchars'), by character.
    fn basic(self, c: u32) -> Option<&'static str> {
        match c {
            0x22 => Some("quot"),
            0x26 => Some("amp"),
            0x27 if self == Encode::BasicNoApos => Some("#039"),
            0x27 => Some("apos"),
            0x3c => Some("lt"),
            0x3e => Some("gt"),
            _ => None,
        }
    }
}

/// The rows of `table` for code point `cp`.
fn rows(table: &'static [(u32, u32, &'static str)], cp: u32) -> &'static [(u32, u32, &'static str)] {
    let start = table.partition_point(|e| e.0 < cp);
    let len = table[start..].iter().take_while(|e| e.0 == cp).count();
    &table[start..start + len]
}

/// PHP's `find_entity_for_char`: the entity for `cp`, which may take the
/// next character along (`*cursor` moves past it then).
fn find_entity(
    table: &'static [(u32, u32, &'static str)],
    cp: u32,
    cs: Charset,
    s: &[u8],
    cursor: &mut usize,
) -> Option<&'static str> {
    let rows = rows(table, cp);
    let own = rows.iter().find(|e| e.1 == 0).map(|e| e.2);
    if rows.iter().all(|e| e.1 == 0) {
        return own;
    }
    let before = *cursor;
    if before < s.len() {
        if let Some(next) = next_char(cs, s, cursor) {
            if let Some(e) = rows.iter().find(|e| e.1 != 0 && e.1 == next) {
                return Some(e.2);
            }
        }
    }
    *cursor = before;
    own
}

/// PHP's `php_escape_html_entities_ex`; `all` for htmlentities.
fn escape<G: Globals>(
    g: G,
    func: &str,
    s: &[u8],
    all: bool,
    flags: i64,
    cs: Charset,
    double_encode: bool,
) -> VmResult<Vec<u8>> {
    let doctype = flags & DOC_MASK;
    if all && cs.partial() {
        notice(
            g,
            &format!(
                "{func}(): Only basic entities substitution is supported for multi-byte encodings \
                 other than UTF-8; functionality is equivalent to htmlspecialchars"
            ),
        );
    }
    let all = all && !cs.partial() && doctype != DOC_XML1;
    let encode = Encode::for_doctype(all, doctype);
    let to_uni = all && !cs.unicode_compat();
    // Named entities are recognised by the full tables even when only the
    // basic ones are written.
    let names = names_for(true, flags);
    let replacement: &[u8] = if cs == Charset::Utf8 {
        "\u{fffd}".as_bytes()
    } else {
        b"&#xFFFD;"
    };
    // PHP's first guess is twice the text (its first memory-limit
    // check); entities can make the result longer still, which the
    // ticker's checks catch as it grows.
    let mut out = if s.len() < 64 {
        Vec::with_capacity(128)
    } else {
        safe_alloc(g, s.len(), 2, 0)?
    };
    let mut ticker = Ticker::new();
    let mut cursor = 0;
    while cursor < s.len() {
        ticker.tick(g)?;
        let before = cursor;
        let Some(mut c) = next_char(cs, s, &mut cursor) else {
            if flags & IGNORE != 0 {
                continue;
            }
            if flags & SUBSTITUTE != 0 {
                out.extend_from_slice(replacement);
                continue;
            }
            return Ok(Vec::new());
        };
        let mut seq = &s[before..cursor];
        if c == u32::from(b'&') {
            if !double_encode {
                if let Some(end) = valid_entity(s, cursor, flags, names) {
                    out.push(b'&');
                    out.extend_from_slice(&s[cursor..=end]);
                    cursor = end + 1;
                    continue;
                }
            }
            out.extend_from_slice(b"&amp;");
            continue;
        }
        let skip_quote = (c == 0x27 && flags & QUOTE_SINGLE == 0) || (c == 0x22 && flags & QUOTE_DOUBLE == 0);
        if !skip_quote {
            let mut unmapped = false;
            let entity = if all {
                if to_uni {
                    c = cs.char_to_unicode(c);
                    unmapped = c == 0xffff;
                }
                if unmapped {
                    None
                } else {
                    find_entity(encode.table(), c, cs, s, &mut cursor)
                }
            } else {
                encode.basic(c)
            };
            if let Some(name) = entity {
                out.push(b'&');
                out.extend_from_slice(name.as_bytes());
                out.push(b';');
                continue;
            }
            if !unmapped && flags & DISALLOWED != 0 {
                // Without a map to Unicode, PHP trusts only the ASCII range.
                let ok = if cs.unicode_compat() || to_uni {
                    cp_allowed(c, doctype)
                } else {
                    c > 0x7d || cp_allowed(c, doctype)
                };
                if !ok {
                    seq = replacement;
                }
            }
        }
        out.extend_from_slice(seq);
    }
    Ok(out)
}

/// With `double_encode: false`, whether the `&` before `p` starts an
/// entity to keep: the position of its `;`.
fn valid_entity(s: &[u8], p: usize, flags: i64, names: Names) -> Option<usize> {
    let doctype = flags & DOC_MASK;
    if s.get(p) == Some(&b'#') {
        let (code, end) = numeric_entity(s, p + 1)?;
        if flags & DISALLOWED != 0 && !numeric_entity_allowed(code, doctype) {
            return None;
        }
        return Some(end);
    }
    let end = named_entity(s, p)?;
    let name = &s[p..end];
    // XHTML uses HTML 4.01's names, which lack &apos;.
    if resolve_name(names, name).is_none() && !(doctype == DOC_XHTML && name == b"apos") {
        return None;
    }
    Some(end)
}

/// PHP's `php_unescape_html_entities`; `all` for html_entity_decode.
fn unescape<G: Globals>(g: G, func: &str, s: &PhpStr, all: bool, flags: i64, hint: &[u8]) -> VmResult<Value> {
    if !s.contains(&b'&') {
        return Ok(Value::Str(s.clone()));
    }
    let cs = if all {
        determine_charset(g, func, hint)
    } else {
        Charset::Latin1
    };
    let names = names_for(all, flags);
    let doctype = flags & DOC_MASK;
    let mut out = Vec::with_capacity(s.len());
    let mut ticker = Ticker::new();
    let mut p = 0;
    while p < s.len() {
        // Every entity is at least four bytes long.
        if s[p] != b'&' || p + 3 >= s.len() {
            out.push(s[p]);
            p += 1;
            continue;
        }
        ticker.tick(g)?;
        let decoded = if s[p + 1] == b'#' {
            numeric_entity(s, p + 2).and_then(|(code, end)| {
                let basic = code < 64 && Encode::BasicApos.basic(code).is_some();
                let ok = (all || basic) && cp_allowed(code, doctype) && !(doctype == DOC_HTML5 && code == 0x0d);
                ok.then_some((code, 0, end))
            })
        } else {
            named_entity(s, p + 1).and_then(|end| {
                let name = &s[p + 1..end];
                match resolve_name(names, name) {
                    Some((c1, c2)) => Some((c1, c2, end)),
                    None if doctype == DOC_XHTML && name == b"apos" => Some((0x27, 0, end)),
                    None => None,
                }
            })
        };
        let decoded = decoded.and_then(|(code, code2, end)| {
            if (code == 0x27 && flags & QUOTE_SINGLE == 0) || (code == 0x22 && flags & QUOTE_DOUBLE == 0) {
                return None;
            }
            if cs == Charset::Utf8 {
                return Some((code, code2, end));
            }
            let code = cs.unicode_to_char(code)?;
            (code2 == 0).then_some((code, 0, end))
        });
        match decoded {
            Some((code, code2, end)) => {
                write_char(&mut out, cs, code);
                if code2 != 0 {
                    write_char(&mut out, cs, code2);
                }
                p = end + 1;
            }
            None => {
                out.push(b'&');
                p += 1;
            }
        }
    }
    Ok(str_value(out))
}

/// htmlspecialchars and htmlentities.
fn html_entities<G: Globals>(g: G, a: &mut Args, all: bool) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let flags = a.opt_int(g, 1, DEFAULT_FLAGS)?;
    let hint = opt_nullable_str(g, a, 2, b"")?;
    let double_encode = a.opt_bool(g, 3, true)?;
    let cs = determine_charset(g, a.name(), &hint);
    Ok(str_value(escape(g, a.name(), &s, all, flags, cs, double_encode)?))
}

pub(super) fn htmlspecialchars<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    html_entities(g, a, false)
}

pub(super) fn htmlentities<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    html_entities(g, a, true)
}

pub(super) fn htmlspecialchars_decode<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let flags = a.opt_int(g, 1, DEFAULT_FLAGS)?;
    unescape(g, a.name(), &s, false, flags, b"")
}

pub(super) fn html_entity_decode<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let flags = a.opt_int(g, 1, DEFAULT_FLAGS)?;
    let hint = opt_nullable_str(g, a, 2, b"")?;
    unescape(g, a.name(), &s, true, flags, &hint)
}

pub(super) fn get_html_translation_table<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let table = a.opt_int(g, 0, 0)?;
    let flags = a.opt_int(g, 1, DEFAULT_FLAGS)?;
    let hint = a.opt_str(g, 2, b"UTF-8")?;
    let cs = determine_charset(g, a.name(), &hint);
    let doctype = flags & DOC_MASK;
    let all = table != 0 && !cs.partial() && doctype != DOC_XML1;
    let encode = Encode::for_doctype(all, doctype);
    let skip = |c: u32| (c == 0x27 && flags & QUOTE_SINGLE == 0) || (c == 0x22 && flags & QUOTE_DOUBLE == 0);
    let mut out = PhpArray::new();
    let mut add = |key: Vec<u8>, name: &str| {
        out.insert(Key::from_bytes(&key), Value::str(format!("&{name};")));
    };
    if !all {
        for c in [0x22, 0x26, 0x27, 0x3c, 0x3e] {
            if let (false, Some(name)) = (skip(c), encode.basic(c)) {
                add(vec![c as u8], name);
            }
        }
    } else if cs.unicode_compat() {
        // PHP walks its tables up to U+FF for ISO-8859-1.
        let limit = if cs == Charset::Latin1 { 0x100 } else { 0x1e000 };
        for &(c1, c2, name) in encode.table() {
            if c1 >= limit || skip(c1) {
                continue;
            }
            let mut key = Vec::new();
            write_char(&mut key, cs, c1);
            if c2 != 0 {
                write_char(&mut key, cs, c2);
            }
            add(key, name);
        }
    } else {
        for byte in 0..=0xffu32 {
            if skip(byte) {
                continue;
            }
            let cp = cs.char_to_unicode(byte);
            for &(_, c2, name) in rows(encode.table(), cp) {
                if c2 == 0 {
                    add(vec![byte as u8], name);
                } else if let Some(second) = cs.unicode_to_char(c2) {
                    add(vec![byte as u8, second as u8], name);
                }
            }
        }
    }
    Ok(Value::arr(out))
}
