//! MD5-crypt (php_crypt_r.c's `php_md5_crypt_r`) and Drepper's
//! SHA-256/SHA-512 crypt (crypt_sha256.c, crypt_sha512.c), on
//! RustCrypto's digests. The schemes are short and fixed by their
//! specifications; what is PHP's own is the salt parsing: the salt ends
//! at `$` or its 8th (MD5) or 16th (SHA) character, and a `rounds=` out
//! of range fails instead of being clamped.

use md5::Md5;
use sha2::{Digest, Sha256, Sha512};

use super::ITOA64;

/// `b64_from_24bit`/`to64`: `n` characters of `v`, low bits first.
fn to64(out: &mut Vec<u8>, mut v: u32, n: usize) {
    for _ in 0..n {
        out.push(ITOA64[(v & 0x3f) as usize]);
        v >>= 6;
    }
}

/// Four characters for each triple of digest bytes.
fn encode_groups(out: &mut Vec<u8>, d: &[u8], groups: &[[usize; 3]]) {
    for &[a, b, c] in groups {
        to64(out, (d[a] as u32) << 16 | (d[b] as u32) << 8 | d[c] as u32, 4);
    }
}

/// `$1$`: `salt` is the setting, its magic included or not.
pub(super) fn md5_crypt(pw: &[u8], setting: &[u8]) -> Vec<u8> {
    let sp = setting.strip_prefix(b"$1$").unwrap_or(setting);
    let salt = &sp[..sp.iter().take(8).position(|&c| c == b'$').unwrap_or(sp.len().min(8))];

    let mut ctx = Md5::new();
    ctx.update(pw);
    ctx.update(b"$1$");
    ctx.update(salt);
    let fin = Md5::new()
        .chain_update(pw)
        .chain_update(salt)
        .chain_update(pw)
        .finalize();
    let mut left = pw.len();
    while left > 0 {
        ctx.update(&fin[..left.min(16)]);
        left = left.saturating_sub(16);
    }
    let mut i = pw.len();
    while i > 0 {
        ctx.update(if i & 1 != 0 { &[0u8][..] } else { &pw[..1] });
        i >>= 1;
    }
    let mut fin = ctx.finalize();
    for i in 0..1000 {
        let mut c = Md5::new();
        if i & 1 != 0 {
            c.update(pw);
        } else {
            c.update(fin);
        }
        if i % 3 != 0 {
            c.update(salt);
        }
        if i % 7 != 0 {
            c.update(pw);
        }
        if i & 1 != 0 {
            c.update(fin);
        } else {
            c.update(pw);
        }
        fin = c.finalize();
    }
    let mut out = b"$1$".to_vec();
    out.extend_from_slice(salt);
    out.push(b'$');
    encode_groups(
        &mut out,
        &fin,
        &[[0, 6, 12], [1, 7, 13], [2, 8, 14], [3, 9, 15], [4, 10, 5]],
    );
    to64(&mut out, fin[11] as u32, 2);
    out
}

const ROUNDS_DEFAULT: u64 = 5000;
const ROUNDS_MIN: u64 = 1000;
const ROUNDS_MAX: u64 = 999_999_999;

/// The SHA-crypt schemes: their magic, digest and output order.
pub(super) trait ShaCrypt: Digest + Clone {
    const MAGIC: &'static [u8];
    const GROUPS: &'static [[usize; 3]];
    /// The last characters, from the bytes left over.
    fn tail(out: &mut Vec<u8>, d: &[u8]);
}

impl ShaCrypt for Sha256 {
    const MAGIC: &'static [u8] = b"$5$";
    const GROUPS: &'static [[usize; 3]] = &[
        [0, 10, 20],
        [21, 1, 11],
        [12, 22, 2],
        [3, 13, 23],
        [24, 4, 14],
        [15, 25, 5],
        [6, 16, 26],
        [27, 7, 17],
        [18, 28, 8],
        [9, 19, 29],
    ];
    fn tail(out: &mut Vec<u8>, d: &[u8]) {
        to64(out, (d[31] as u32) << 8 | d[30] as u32, 3);
    }
}

impl ShaCrypt for Sha512 {
    const MAGIC: &'static [u8] = b"$6$";
    const GROUPS: &'static [[usize; 3]] = &[
        [0, 21, 42],
        [22, 43, 1],
        [44, 2, 23],
        [3, 24, 45],
        [25, 46, 4],
        [47, 5, 26],
        [6, 27, 48],
        [28, 49, 7],
        [50, 8, 29],
        [9, 30, 51],
        [31, 52, 10],
        [53, 11, 32],
        [12, 33, 54],
        [34, 55, 13],
        [56, 14, 35],
        [15, 36, 57],
        [37, 58, 16],
        [59, 17, 38],
        [18, 39, 60],
        [40, 61, 19],
        [62, 20, 41],
    ];
    fn tail(out: &mut Vec<u8>, d: &[u8]) {
        to64(out, d[63] as u32, 2);
    }
}

/// `strtoul` on the digits at the start of `s`: the value (saturated)
/// and how many bytes it took.
fn strtoul(s: &[u8]) -> (u64, usize) {
    let n = s.iter().take_while(|c| c.is_ascii_digit()).count();
    let v = s[..n]
        .iter()
        .fold(0u64, |acc, &c| acc.saturating_mul(10).saturating_add((c - b'0') as u64));
    (v, n)
}

/// `$5$`/`$6$`; `None` for a `rounds=` out of range or without digits.
pub(super) fn sha_crypt<D: ShaCrypt>(key: &[u8], setting: &[u8]) -> Option<Vec<u8>> {
    let mut salt = setting.strip_prefix(D::MAGIC).unwrap_or(setting);
    let mut rounds = None;
    if let Some(num) = salt.strip_prefix(b"rounds=") {
        let (n, len) = strtoul(num);
        if num.get(len) == Some(&b'$') {
            if len == 0 || !(ROUNDS_MIN..=ROUNDS_MAX).contains(&n) {
                return None;
            }
            rounds = Some(n);
            salt = &num[len + 1..];
        }
    }
    let salt = &salt[..salt
        .iter()
        .take(16)
        .position(|&c| c == b'$')
        .unwrap_or(salt.len().min(16))];
    let len = <D as Digest>::output_size();

    let b = D::new()
        .chain_update(key)
        .chain_update(salt)
        .chain_update(key)
        .finalize();
    let mut ctx = D::new().chain_update(key).chain_update(salt);
    let mut cnt = key.len();
    while cnt > len {
        ctx.update(&b);
        cnt -= len;
    }
    ctx.update(&b[..cnt]);
    let mut cnt = key.len();
    while cnt > 0 {
        if cnt & 1 != 0 {
            ctx.update(&b);
        } else {
            ctx.update(key);
        }
        cnt >>= 1;
    }
    let mut a = ctx.finalize();

    let mut dp = D::new();
    for _ in 0..key.len() {
        dp.update(key);
    }
    let dp = dp.finalize();
    let p: Vec<u8> = dp.iter().copied().cycle().take(key.len()).collect();
    let mut ds = D::new();
    for _ in 0..16 + a[0] as usize {
        ds.update(salt);
    }
    let ds = ds.finalize();
    let s: Vec<u8> = ds.iter().copied().cycle().take(salt.len()).collect();

    for r in 0..rounds.unwrap_or(ROUNDS_DEFAULT) {
        let mut c = D::new();
        if r & 1 != 0 {
            c.update(&p);
        } else {
            c.update(&a);
        }
        if r % 3 != 0 {
            c.update(&s);
        }
        if r % 7 != 0 {
            c.update(&p);
        }
        if r & 1 != 0 {
            c.update(&a);
        } else {
            c.update(&p);
        }
        a = c.finalize();
    }

    let mut out = D::MAGIC.to_vec();
    if let Some(n) = rounds {
        out.extend_from_slice(format!("rounds={n}$").as_bytes());
    }
    out.extend_from_slice(salt);
    out.push(b'$');
    encode_groups(&mut out, &a, D::GROUPS);
    D::tail(&mut out, &a);
    Some(out)
}
