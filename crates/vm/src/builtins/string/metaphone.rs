//! `metaphone`: Michael G Schwern's metaphone as ext/standard/metaphone.c
//! has it (the traditional variant). The C code reads a NUL-terminated
//! string, so a NUL byte ends the word here too, and its `ctype` calls
//! run in the C locale (ASCII letters only).

use minizts_core::Value;
use minizts_globals::Globals;

use crate::builtins::Args;
use crate::error::VmResult;

/// The letter classes, for A..Z: 1 vowel, 2 passed through unchanged,
/// 4 forms a diphthong before H, 8 makes C and G soft, 16 keeps GH from
/// becoming F.
const CODES: [u8; 26] = [
    1, 16, 4, 16, 9, 2, 4, 16, 9, 2, 0, 2, 2, 2, 1, 4, 0, 2, 4, 4, 1, 0, 0, 0, 8, 0,
];

fn encode(c: u8) -> u8 {
    if c.is_ascii_alphabetic() {
        CODES[usize::from(c.to_ascii_uppercase() - b'A')]
    } else {
        0
    }
}

fn is_vowel(c: u8) -> bool {
    encode(c) & 1 != 0
}

fn affects_h(c: u8) -> bool {
    encode(c) & 4 != 0
}

fn makes_soft(c: u8) -> bool {
    encode(c) & 8 != 0
}

fn no_gh_to_f(c: u8) -> bool {
    encode(c) & 16 != 0
}

/// `SH` and `TH` as the C code encodes them.
const SH: u8 = b'X';
const TH: u8 = b'0';

pub(super) fn metaphone<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let max = a.opt_int(g, 1, 0)?;
    if max < 0 {
        return a.value_error(1, "must be greater than or equal to 0");
    }
    let max = usize::try_from(max).unwrap_or(usize::MAX);
    Ok(Value::str(phonize(&s, max)))
}

fn phonize(word: &[u8], max: usize) -> Vec<u8> {
    // The C string ends at its first NUL.
    let word = &word[..word.iter().position(|&c| c == 0).unwrap_or(word.len())];
    let at = |i: usize| word.get(i).map_or(0, |c| c.to_ascii_uppercase());
    let mut out = Vec::new();
    let mut w = 0usize;
    while !at(w).is_ascii_alphabetic() {
        if at(w) == 0 {
            return out;
        }
        w += 1;
    }
    let next = at(w + 1);
    match at(w) {
        b'A' => {
            if next == b'E' {
                out.push(b'E');
                w += 2;
            } else {
                out.push(b'A');
                w += 1;
            }
        }
        b'G' | b'K' | b'P' if next == b'N' => {
            out.push(b'N');
            w += 2;
        }
        b'W' => {
            if next == b'R' {
                out.push(b'R');
                w += 2;
            } else if next == b'H' || is_vowel(next) {
                out.push(b'W');
                w += 2;
            }
        }
        b'X' => {
            out.push(b'S');
            w += 1;
        }
        c @ (b'E' | b'I' | b'O' | b'U') => {
            out.push(c);
            w += 1;
        }
        _ => {}
    }
    while at(w) != 0 && (max == 0 || out.len() < max) {
        let cur = at(w);
        let back = |n: usize| if w >= n { at(w - n) } else { 0 };
        let prev = back(1);
        let next = at(w + 1);
        let after_next = if next != 0 { at(w + 2) } else { 0 };
        // `Lookahead`: the letter `n` on, or the terminator before it.
        let ahead = |n: usize| at((w + n).min(word.len()));
        let mut skip = 0;
        if !cur.is_ascii_alphabetic() || (cur == prev && cur != b'C') {
            w += 1;
            continue;
        }
        match cur {
            b'B' if prev != b'M' => out.push(b'B'),
            b'C' => {
                if makes_soft(next) {
                    if after_next == b'A' && next == b'I' {
                        out.push(SH);
                    } else if prev != b'S' {
                        out.push(b'S');
                    }
                } else if next == b'H' {
                    out.push(SH);
                    skip += 1;
                } else {
                    out.push(b'K');
                }
            }
            b'D' => {
                if next == b'G' && makes_soft(after_next) {
                    out.push(b'J');
                    skip += 1;
                } else {
                    out.push(b'T');
                }
            }
            b'G' => {
                if next == b'H' {
                    if !(no_gh_to_f(back(3)) || back(4) == b'H') {
                        out.push(b'F');
                        skip += 1;
                    }
                } else if next == b'N' {
                    let is_break = !after_next.is_ascii_alphabetic();
                    if !(is_break || (after_next == b'E' && ahead(3) == b'D')) {
                        out.push(b'K');
                    }
                } else if makes_soft(next) && prev != b'G' {
                    out.push(b'J');
                } else {
                    out.push(b'K');
                }
            }
            b'H' if is_vowel(next) && !affects_h(prev) => out.push(b'H'),
            b'K' if prev != b'C' => out.push(b'K'),
            b'P' => out.push(if next == b'H' { b'F' } else { b'P' }),
            b'Q' => out.push(b'K'),
            b'S' => {
                if next == b'I' && (after_next == b'O' || after_next == b'A') {
                    out.push(SH);
                } else if next == b'H' {
                    out.push(SH);
                    skip += 1;
                } else {
                    out.push(b'S');
                }
            }
            b'T' => {
                if next == b'I' && (after_next == b'O' || after_next == b'A') {
                    out.push(SH);
                } else if next == b'H' {
                    out.push(TH);
                    skip += 1;
                } else if !(next == b'C' && after_next == b'H') {
                    out.push(b'T');
                }
            }
            b'V' => out.push(b'F'),
            b'W' if is_vowel(next) => out.push(b'W'),
            b'X' => out.extend_from_slice(b"KS"),
            b'Y' if is_vowel(next) => out.push(b'Y'),
            b'Z' => out.push(b'S'),
            b'F' | b'J' | b'L' | b'M' | b'N' | b'R' => out.push(cur),
            _ => {}
        }
        w += skip + 1;
    }
    out
}
