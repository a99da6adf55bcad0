//! Names whose bytes are not UTF-8.
//!
//! A PHP name (of a variable, function or constant) is bytes,
//! `[a-zA-Z_\x80-\xff][a-zA-Z0-9_\x80-\xff]*`, so a Latin-1 script may
//! call a variable `$café` with the single byte 0xE9. The AST, the
//! compiler's tables and the bytecode hold names as `str`, so such a name
//! travels escaped: every byte that is not part of valid UTF-8 becomes the
//! private-use character U+10FF00 + byte (U+10FF80 to U+10FFFF). The bytes
//! of a character that is itself in that range are escaped the same way,
//! which keeps the mapping one-to-one: [`to_bytes`] gives back exactly the
//! bytes of the source. Names that are valid UTF-8, which is nearly all of
//! them, stay as they are and are borrowed, not copied.
//!
//! Where a name meets a PHP string (constant and function lookup keys,
//! `__FUNCTION__`), [`to_bytes`] turns it back into PHP's bytes.

use std::borrow::Cow;

/// The first of the escape characters minus 0x80; byte `b` (0x80 or
/// more) travels as `ESCAPE_BASE + b`.
const ESCAPE_BASE: u32 = 0x10_FF00;

fn is_escape(c: char) -> bool {
    (ESCAPE_BASE + 0x80..=ESCAPE_BASE + 0xff).contains(&(c as u32))
}

fn escape(b: u8) -> char {
    // `b` is at least 0x80 (ASCII is always valid UTF-8), so the value is
    // in U+10FF80..=U+10FFFF: a valid scalar value, never a surrogate.
    char::from_u32(ESCAPE_BASE + b as u32).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// A name's bytes as the `str` the engine carries.
pub fn from_bytes(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(s) = std::str::from_utf8(bytes) {
        if !s.chars().any(is_escape) {
            return Cow::Borrowed(s);
        }
    }
    let mut out = String::with_capacity(bytes.len() * 4);
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if is_escape(c) {
                let mut buf = [0u8; 4];
                out.extend(c.encode_utf8(&mut buf).bytes().map(escape));
            } else {
                out.push(c);
            }
        }
        out.extend(chunk.invalid().iter().copied().map(escape));
    }
    Cow::Owned(out)
}

/// The bytes of a name made by [`from_bytes`]: the name as PHP sees it.
pub fn to_bytes(name: &str) -> Cow<'_, [u8]> {
    // Every escape character's UTF-8 form starts with 0xF4.
    if !name.as_bytes().contains(&0xF4) || !name.chars().any(is_escape) {
        return Cow::Borrowed(name.as_bytes());
    }
    let mut out = Vec::with_capacity(name.len());
    for c in name.chars() {
        if is_escape(c) {
            out.push((c as u32 - ESCAPE_BASE) as u8);
        } else {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_names_are_borrowed() {
        assert!(matches!(from_bytes(b"caf\xc3\xa9"), Cow::Borrowed("café")));
        assert!(matches!(to_bytes("café"), Cow::Borrowed(b"caf\xc3\xa9")));
    }

    #[test]
    fn latin1_bytes_round_trip() {
        for bytes in [
            &b"caf\xe9"[..],
            b"\xff\x80x",
            b"a\xc3",
            b"\xc3\xa9\xe9",
            // The escape characters themselves, written in UTF-8.
            "x\u{10FFE9}".as_bytes(),
        ] {
            let name = from_bytes(bytes);
            assert_eq!(&*to_bytes(&name), bytes, "{bytes:?}");
        }
    }

    #[test]
    fn distinct_bytes_stay_distinct() {
        let latin1 = from_bytes(b"caf\xe9");
        let utf8 = from_bytes("caf\u{10FFE9}".as_bytes());
        assert_ne!(latin1, utf8);
        assert_ne!(latin1, "café");
    }
}
