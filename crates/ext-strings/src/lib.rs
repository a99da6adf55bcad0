//! `mzstr`: a small, useful minizts extension, and the example
//! docs/extensions.md walks through. Every function goes through the host
//! API only: arguments with PHP's coercions, values and arrays made by the
//! host, and `mzstr_map` calls a script callable back.

use minizts_ext_api::rust::{Call, Result};
use minizts_ext_api::{export_module, function, value_type, FunctionEntry, ModuleEntry, Val};

/// `mzstr_reverse_words(string $s): string` — the words (split on spaces)
/// in reverse order.
fn reverse_words(call: &Call) -> Result<Val> {
    let s = call.str(0)?;
    let words: Vec<&[u8]> = s.split(|&b| b == b' ').filter(|w| !w.is_empty()).collect();
    let out = words.iter().rev().copied().collect::<Vec<_>>().join(&b' ');
    Ok(call.new_str(&out))
}

/// `mzstr_caesar(string $s, int $shift = 13): string` — rotates ASCII
/// letters by `$shift` (negative shifts rotate back).
fn caesar(call: &Call) -> Result<Val> {
    let s = call.str(0)?;
    let shift = if call.argc() > 1 {
        call.long(1)?.rem_euclid(26) as u8
    } else {
        13
    };
    let out: Vec<u8> = s
        .iter()
        .map(|&c| match c {
            b'a'..=b'z' => b'a' + (c - b'a' + shift) % 26,
            b'A'..=b'Z' => b'A' + (c - b'A' + shift) % 26,
            _ => c,
        })
        .collect();
    Ok(call.new_str(&out))
}

/// `mzstr_chunks(string $s, int $size): array` — the string cut into
/// pieces of `$size` bytes (the last may be shorter).
fn chunks(call: &Call) -> Result<Val> {
    let s = call.str(0)?;
    let size = call.long(1)?;
    if size < 1 {
        return Err(call.fatal("mzstr_chunks(): Argument #2 ($size) must be greater than 0"));
    }
    let out = call.new_array();
    for piece in s.chunks(size as usize) {
        let v = call.new_str(piece);
        call.push(out, v)?;
    }
    Ok(out)
}

/// `mzstr_histogram(string $s): array` — byte => count, in order of first
/// appearance.
fn histogram(call: &Call) -> Result<Val> {
    let s = call.str(0)?;
    let mut counts: Vec<(u8, i64)> = Vec::new();
    for &b in s {
        match counts.iter_mut().find(|(c, _)| *c == b) {
            Some((_, n)) => *n += 1,
            None => counts.push((b, 1)),
        }
    }
    let out = call.new_array();
    for (b, n) in counts {
        let (k, v) = (call.new_str(&[b]), call.new_long(n));
        call.set(out, k, v)?;
    }
    Ok(out)
}

/// `mzstr_sum(array $values): int|float` — the sum of the numeric values
/// (ints stay ints while they fit, as `array_sum`).
fn sum(call: &Call) -> Result<Val> {
    let a = call.array(0)?;
    let (mut int, mut float, mut is_float) = (0i64, 0.0f64, false);
    for (_, v) in call.entries(a) {
        match call.value_type(v) {
            value_type::DOUBLE => {
                if !is_float {
                    float = int as f64;
                    is_float = true;
                }
                float += call.to_double(v);
            }
            _ => {
                let n = call.to_long(v);
                if is_float {
                    float += n as f64;
                } else if let Some(s) = int.checked_add(n) {
                    int = s;
                } else {
                    float = int as f64 + n as f64;
                    is_float = true;
                }
            }
        }
    }
    Ok(if is_float {
        call.new_double(float)
    } else {
        call.new_long(int)
    })
}

/// `mzstr_map(array $values, callable $f): array` — `$f($value, $key)` for
/// every element, keys kept: calls back into the script.
fn map(call: &Call) -> Result<Val> {
    let a = call.array(0)?;
    let f = call.callable(1)?;
    let out = call.new_array();
    for (k, v) in call.entries(a) {
        let r = call.call(f, &[v, k])?;
        call.set(out, k, r)?;
    }
    Ok(out)
}

/// `mzstr_echo_upper(string ...$parts): null` — echoes the parts upper-cased,
/// through the script's output buffers.
fn echo_upper(call: &Call) -> Result<Val> {
    for i in 0..call.argc() {
        let s = call.str(i)?;
        call.echo(&s.to_ascii_uppercase());
    }
    Ok(call.null())
}

static FUNCTIONS: [FunctionEntry; 7] = [
    function!("mzstr_reverse_words", "s", 1, reverse_words),
    function!("mzstr_caesar", "s,shift", 1, caesar),
    function!("mzstr_chunks", "s,size", 2, chunks),
    function!("mzstr_histogram", "s", 1, histogram),
    function!("mzstr_sum", "values", 1, sum),
    function!("mzstr_map", "values,callback", 2, map),
    function!("mzstr_echo_upper", "...parts", 0, echo_upper),
];

export_module!(ModuleEntry::new(c"mzstr", c"0.1.0", &FUNCTIONS));
