//! bcrypt as php-src's crypt_blowfish.c computes it, on RustCrypto's
//! Blowfish (its `bcrypt` feature gives the EksBlowfish steps). Written
//! here: the setting's parsing, and `BF_set_key`'s treatment of bytes
//! with the high bit set, which differs between the `$2x$` (the old
//! sign-extension bug), `$2a$` (the bug's countermeasure) and
//! `$2b$`/`$2y$` (correct) variants. The crate cycles the key bytes it
//! is given, so the key is handed over already expanded to its 18 words.

use blowfish::Blowfish;

const BF_ITOA64: &[u8; 64] = b"./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

fn bf_atoi(c: u8) -> Option<u32> {
    BF_ITOA64.iter().position(|&x| x == c).map(|v| v as u32)
}

/// `BF_decode`: 22 characters to 16 bytes, or `None` at any other.
fn decode_salt(s: &[u8]) -> Option<[u8; 16]> {
    let mut out = Vec::with_capacity(18);
    let mut chars = s.iter().copied();
    while out.len() < 16 {
        let c1 = bf_atoi(chars.next()?)?;
        let c2 = bf_atoi(chars.next()?)?;
        out.push((c1 << 2 | (c2 & 0x30) >> 4) as u8);
        if out.len() >= 16 {
            break;
        }
        let c3 = bf_atoi(chars.next()?)?;
        out.push(((c2 & 0x0f) << 4 | (c3 & 0x3c) >> 2) as u8);
        let c4 = bf_atoi(chars.next()?)?;
        out.push(((c3 & 0x03) << 6 | c4) as u8);
    }
    out.try_into().ok()
}

/// 16 random bytes as a salt's 22 characters.
pub(super) fn encode_salt(out: &mut Vec<u8>, raw: &[u8; 16]) {
    encode(out, raw);
}

/// `BF_encode`.
fn encode(out: &mut Vec<u8>, src: &[u8]) {
    let mut i = 0;
    while i < src.len() {
        let c1 = src[i] as usize;
        i += 1;
        out.push(BF_ITOA64[c1 >> 2]);
        let mut c1 = (c1 & 0x03) << 4;
        if i >= src.len() {
            out.push(BF_ITOA64[c1]);
            break;
        }
        let c2 = src[i] as usize;
        i += 1;
        c1 |= c2 >> 4;
        out.push(BF_ITOA64[c1]);
        let mut c1 = (c2 & 0x0f) << 2;
        if i >= src.len() {
            out.push(BF_ITOA64[c1]);
            break;
        }
        let c2 = src[i] as usize;
        i += 1;
        c1 |= c2 >> 6;
        out.push(BF_ITOA64[c1]);
        out.push(BF_ITOA64[c2 & 0x3f]);
    }
}

/// `BF_set_key`: the expanded key words and the ones the initial state
/// gets (which differ in the `$2a$` countermeasure's flag).
fn set_key(key: &[u8], bug: bool, safety: bool) -> ([u32; 18], [u32; 18]) {
    let mut expanded = [0u32; 18];
    let (mut sign, mut diff) = (0u32, 0u32);
    // The key is read with its terminating NUL, cyclically.
    let mut ptr = 0;
    for word in expanded.iter_mut() {
        let (mut correct, mut buggy) = (0u32, 0u32);
        for j in 0..4 {
            let c = key.get(ptr).copied().unwrap_or(0);
            correct = correct << 8 | c as u32;
            buggy = buggy << 8 | (c as i8 as i32 as u32);
            if j != 0 {
                sign |= buggy & 0x80;
            }
            ptr = if c == 0 { 0 } else { ptr + 1 };
        }
        diff |= correct ^ buggy;
        *word = if bug { buggy } else { correct };
    }
    diff |= diff >> 16;
    diff &= 0xffff;
    diff += 0xffff;
    sign <<= 9;
    sign &= !diff & if safety { 0x10000 } else { 0 };
    let mut initial = expanded;
    initial[0] ^= sign;
    (expanded, initial)
}

fn words_to_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_be_bytes()).collect()
}

/// `BF_crypt` on a setting `$2?$NN$` + 22 salt characters; the key ends
/// at its first NUL.
pub(super) fn crypt(key: &[u8], setting: &[u8]) -> Option<Vec<u8>> {
    let at = |i: usize| setting.get(i).copied().unwrap_or(0);
    let (bug, safety) = match at(2) {
        b'a' => (false, true),
        b'b' | b'y' => (false, false),
        b'x' => (true, false),
        _ => return None,
    };
    let (d1, d2) = (at(4), at(5));
    if at(0) != b'$'
        || at(1) != b'2'
        || at(3) != b'$'
        || !(b'0'..=b'3').contains(&d1)
        || !d2.is_ascii_digit()
        || (d1 == b'3' && d2 > b'1')
        || at(6) != b'$'
    {
        return None;
    }
    let log = (d1 - b'0') as u32 * 10 + (d2 - b'0') as u32;
    if log < 4 {
        return None;
    }
    let salt = decode_salt(setting.get(7..)?)?;
    let (expanded, initial) = set_key(key, bug, safety);
    let (expanded, initial) = (words_to_bytes(&expanded), words_to_bytes(&initial));

    let mut state = Blowfish::bc_init_state();
    state.salted_expand_key(&salt, &initial);
    for _ in 0..1u64 << log {
        state.bc_expand_key(&expanded);
        state.bc_expand_key(&salt);
    }
    let mut ctext = [0u32; 6];
    let magic = b"OrpheanBeholderScryDoubt";
    for i in (0..6).step_by(2) {
        let word = |k: usize| u32::from_be_bytes(magic[4 * k..4 * k + 4].try_into().unwrap_or_default());
        let mut lr = [word(i), word(i + 1)];
        for _ in 0..64 {
            lr = state.bc_encrypt(lr);
        }
        ctext[i] = lr[0];
        ctext[i + 1] = lr[1];
    }
    let mut out = setting[..28].to_vec();
    // The 22nd salt character holds only two bits; PHP normalises it.
    out.push(BF_ITOA64[bf_atoi(setting[28]).unwrap_or(0) as usize & 0x30]);
    encode(&mut out, &words_to_bytes(&ctext)[..23]);
    Some(out)
}
