//! Perl-style string increment, what `$s++` does to a non-numeric string
//! (`increment_string()` in php-src).

/// The result of `$s++` for a string that is **not** numeric.
///
/// The engine must first check [`super::is_numeric_str`]: numeric strings
/// (`"9"`, `" 1.5"`, `"1e3"`) are incremented as numbers and become int or
/// float. Leading-numeric strings such as `"1a"` are not numeric and come
/// here (`"1a"` -> `"1b"`).
///
/// Rules: the last alphanumeric run is incremented like an odometer with
/// the digit ranges `a-z`, `A-Z`, `0-9` (`"a"` -> `"b"`, `"Az"` -> `"Ba"`,
/// `"a9"` -> `"b0"`); a carry out of the first character prepends `a`, `A`
/// or `1` according to that character (`"z"` -> `"aa"`, `"Zz"` -> `"AAa"`,
/// `"9z"` -> `"10a"`). Any other byte stops the carry and is left alone
/// (`"a!"` stays `"a!"`, `"!z"` -> `"!a"`). The empty string becomes `"1"`.
/// (`$s--` on a non-numeric string does nothing, except that `""`
/// becomes `-1`.)
pub fn str_increment(s: &[u8]) -> Vec<u8> {
    if s.is_empty() {
        return b"1".to_vec();
    }
    let mut out = s.to_vec();
    // The kind of the last character that wrapped, to pick the prefix.
    let mut last = 0u8;
    let mut carry = false;
    for pos in (0..out.len()).rev() {
        let (low, high, first) = match out[pos] {
            b'a'..=b'z' => (b'a', b'z', b'a'),
            b'A'..=b'Z' => (b'A', b'Z', b'A'),
            b'0'..=b'9' => (b'0', b'9', b'1'),
            _ => {
                carry = false;
                break;
            }
        };
        last = first;
        if out[pos] == high {
            out[pos] = low;
            carry = true;
        } else {
            out[pos] += 1;
            carry = false;
            break;
        }
    }
    if carry {
        out.insert(0, last);
    }
    out
}
