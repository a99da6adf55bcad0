//! Traditional and extended (BSDi) DES crypt, as php-src's
//! crypt_freesec.c computes them: DES with the salt swapping bits of the
//! expansion, iterated on a zero block. No maintained crate has the
//! salted variant (RustCrypto's `des` is plain DES), so the cipher is
//! written out here from FIPS 46's tables, with the S-boxes and P folded
//! into lookup tables at compile time so that extended DES's millions of
//! iterations stay fast.

use super::ITOA64;

const IP: [u8; 64] = [
    58, 50, 42, 34, 26, 18, 10, 2, 60, 52, 44, 36, 28, 20, 12, 4, 62, 54, 46, 38, 30, 22, 14, 6, 64, 56, 48, 40, 32,
    24, 16, 8, 57, 49, 41, 33, 25, 17, 9, 1, 59, 51, 43, 35, 27, 19, 11, 3, 61, 53, 45, 37, 29, 21, 13, 5, 63, 55, 47,
    39, 31, 23, 15, 7,
];

const E: [u8; 48] = [
    32, 1, 2, 3, 4, 5, 4, 5, 6, 7, 8, 9, 8, 9, 10, 11, 12, 13, 12, 13, 14, 15, 16, 17, 16, 17, 18, 19, 20, 21, 20, 21,
    22, 23, 24, 25, 24, 25, 26, 27, 28, 29, 28, 29, 30, 31, 32, 1,
];

const P: [u8; 32] = [
    16, 7, 20, 21, 29, 12, 28, 17, 1, 15, 23, 26, 5, 18, 31, 10, 2, 8, 24, 14, 32, 27, 3, 9, 19, 13, 30, 6, 22, 11, 4,
    25,
];

const PC1: [u8; 56] = [
    57, 49, 41, 33, 25, 17, 9, 1, 58, 50, 42, 34, 26, 18, 10, 2, 59, 51, 43, 35, 27, 19, 11, 3, 60, 52, 44, 36, 63, 55,
    47, 39, 31, 23, 15, 7, 62, 54, 46, 38, 30, 22, 14, 6, 61, 53, 45, 37, 29, 21, 13, 5, 28, 20, 12, 4,
];

const PC2: [u8; 48] = [
    14, 17, 11, 24, 1, 5, 3, 28, 15, 6, 21, 10, 23, 19, 12, 4, 26, 8, 16, 7, 27, 20, 13, 2, 41, 52, 31, 37, 47, 55, 30,
    40, 51, 45, 33, 48, 44, 49, 39, 56, 34, 53, 46, 42, 50, 36, 29, 32,
];

const SHIFTS: [u8; 16] = [1, 1, 2, 2, 2, 2, 2, 2, 1, 2, 2, 2, 2, 2, 2, 1];

const S: [[u8; 64]; 8] = [
    [
        14, 4, 13, 1, 2, 15, 11, 8, 3, 10, 6, 12, 5, 9, 0, 7, 0, 15, 7, 4, 14, 2, 13, 1, 10, 6, 12, 11, 9, 5, 3, 8, 4,
        1, 14, 8, 13, 6, 2, 11, 15, 12, 9, 7, 3, 10, 5, 0, 15, 12, 8, 2, 4, 9, 1, 7, 5, 11, 3, 14, 10, 0, 6, 13,
    ],
    [
        15, 1, 8, 14, 6, 11, 3, 4, 9, 7, 2, 13, 12, 0, 5, 10, 3, 13, 4, 7, 15, 2, 8, 14, 12, 0, 1, 10, 6, 9, 11, 5, 0,
        14, 7, 11, 10, 4, 13, 1, 5, 8, 12, 6, 9, 3, 2, 15, 13, 8, 10, 1, 3, 15, 4, 2, 11, 6, 7, 12, 0, 5, 14, 9,
    ],
    [
        10, 0, 9, 14, 6, 3, 15, 5, 1, 13, 12, 7, 11, 4, 2, 8, 13, 7, 0, 9, 3, 4, 6, 10, 2, 8, 5, 14, 12, 11, 15, 1, 13,
        6, 4, 9, 8, 15, 3, 0, 11, 1, 2, 12, 5, 10, 14, 7, 1, 10, 13, 0, 6, 9, 8, 7, 4, 15, 14, 3, 11, 5, 2, 12,
    ],
    [
        7, 13, 14, 3, 0, 6, 9, 10, 1, 2, 8, 5, 11, 12, 4, 15, 13, 8, 11, 5, 6, 15, 0, 3, 4, 7, 2, 12, 1, 10, 14, 9, 10,
        6, 9, 0, 12, 11, 7, 13, 15, 1, 3, 14, 5, 2, 8, 4, 3, 15, 0, 6, 10, 1, 13, 8, 9, 4, 5, 11, 12, 7, 2, 14,
    ],
    [
        2, 12, 4, 1, 7, 10, 11, 6, 8, 5, 3, 15, 13, 0, 14, 9, 14, 11, 2, 12, 4, 7, 13, 1, 5, 0, 15, 10, 3, 9, 8, 6, 4,
        2, 1, 11, 10, 13, 7, 8, 15, 9, 12, 5, 6, 3, 0, 14, 11, 8, 12, 7, 1, 14, 2, 13, 6, 15, 0, 9, 10, 4, 5, 3,
    ],
    [
        12, 1, 10, 15, 9, 2, 6, 8, 0, 13, 3, 4, 14, 7, 5, 11, 10, 15, 4, 2, 7, 12, 9, 5, 6, 1, 13, 14, 0, 11, 3, 8, 9,
        14, 15, 5, 2, 8, 12, 3, 7, 0, 4, 10, 1, 13, 11, 6, 4, 3, 2, 12, 9, 5, 15, 10, 11, 14, 1, 7, 6, 0, 8, 13,
    ],
    [
        4, 11, 2, 14, 15, 0, 8, 13, 3, 12, 9, 7, 5, 10, 6, 1, 13, 0, 11, 7, 4, 9, 1, 10, 14, 3, 5, 12, 2, 15, 8, 6, 1,
        4, 11, 13, 12, 3, 7, 14, 10, 15, 6, 8, 0, 5, 9, 2, 6, 11, 13, 8, 1, 4, 10, 7, 9, 5, 0, 15, 14, 2, 3, 12,
    ],
    [
        13, 2, 8, 4, 6, 15, 11, 1, 10, 9, 3, 14, 5, 0, 12, 7, 1, 15, 13, 8, 10, 3, 7, 4, 12, 5, 6, 11, 0, 14, 9, 2, 7,
        11, 4, 1, 9, 12, 14, 2, 0, 6, 10, 13, 15, 3, 5, 8, 2, 1, 14, 7, 4, 10, 8, 13, 15, 12, 9, 0, 3, 5, 6, 11,
    ],
];

/// Bit `n` (1 = most significant) of a `width`-bit value.
const fn bit(v: u64, width: u32, n: u8) -> u64 {
    (v >> (width - n as u32)) & 1
}

/// Applies a FIPS permutation table to a `width`-bit value.
fn permute(v: u64, width: u32, table: &[u8]) -> u64 {
    table.iter().fold(0, |acc, &n| acc << 1 | bit(v, width, n))
}

/// S-box `i` followed by P, for each 6-bit input.
const SP: [[u32; 64]; 8] = {
    let mut out = [[0u32; 64]; 8];
    let mut i = 0;
    while i < 8 {
        let mut six = 0;
        while six < 64 {
            let row = (six >> 4 & 2) | (six & 1);
            let col = (six >> 1) & 15;
            let s = (S[i][row * 16 + col] as u64) << (28 - 4 * i);
            let mut p = 0u32;
            let mut k = 0;
            while k < 32 {
                p = p << 1 | bit(s, 32, P[k]) as u32;
                k += 1;
            }
            out[i][six] = p;
            six += 1;
        }
        i += 1;
    }
    out
};

/// The expansion E of each byte of the half block, by byte position.
const EXPAND: [[u64; 256]; 4] = {
    let mut out = [[0u64; 256]; 4];
    let mut pos = 0;
    while pos < 4 {
        let mut b = 0;
        while b < 256 {
            let r = (b as u64) << (24 - 8 * pos);
            let mut e = 0u64;
            let mut k = 0;
            while k < 48 {
                e = e << 1 | bit(r, 32, E[k]);
                k += 1;
            }
            out[pos][b] = e;
            b += 1;
        }
        pos += 1;
    }
    out
};

/// A key schedule and a salt: the state of freesec's `des_setkey` and
/// `setup_salt`.
struct Des {
    subkeys: [u64; 16],
    /// Bit `23 - i` set: salt bit `i` swaps expansion bits `i` and `i + 24`.
    saltbits: u64,
}

impl Des {
    fn new(key: [u8; 8]) -> Des {
        let cd = permute(u64::from_be_bytes(key), 64, &PC1);
        let (mut c, mut d) = (cd >> 28, cd & 0x0fff_ffff);
        let mut subkeys = [0; 16];
        for (k, &shift) in subkeys.iter_mut().zip(&SHIFTS) {
            c = (c << shift | c >> (28 - shift)) & 0x0fff_ffff;
            d = (d << shift | d >> (28 - shift)) & 0x0fff_ffff;
            *k = permute(c << 28 | d, 56, &PC2);
        }
        Des { subkeys, saltbits: 0 }
    }

    fn set_salt(&mut self, salt: u32) {
        self.saltbits = (0..24)
            .filter(|i| salt >> i & 1 != 0)
            .fold(0, |acc, i| acc | 1 << (23 - i));
    }

    /// `count` encryptions of `block`, chained (freesec's `do_des`).
    fn crypt(&self, block: u64, count: u32) -> u64 {
        let ip = permute(block, 64, &IP);
        let (mut l, mut r) = ((ip >> 32) as u32, ip as u32);
        for _ in 0..count {
            for &k in &self.subkeys {
                let e = r.to_be_bytes();
                let e = EXPAND[0][e[0] as usize]
                    | EXPAND[1][e[1] as usize]
                    | EXPAND[2][e[2] as usize]
                    | EXPAND[3][e[3] as usize];
                let swap = ((e >> 24) ^ e) & self.saltbits;
                let x = (e ^ swap ^ swap << 24) ^ k;
                let f = (0..8).fold(0, |f, i| f | SP[i][(x >> (42 - 6 * i)) as usize & 63]);
                (l, r) = (r, l ^ f);
            }
            (l, r) = (r, l);
        }
        let pre = (l as u64) << 32 | r as u64;
        // The final permutation is IP's inverse.
        let mut out = 0u64;
        for (i, &n) in IP.iter().enumerate() {
            out |= bit(pre, 64, (i + 1) as u8) << (64 - n as u32);
        }
        out
    }
}

/// freesec's `ascii_to_bin`: a salt character's value, whatever it is.
fn ascii_to_bin(c: u8) -> u32 {
    let c = c as i8 as i32;
    let v = if c >= b'a' as i32 {
        c - (b'a' as i32 - 38)
    } else if c >= b'A' as i32 {
        c - (b'A' as i32 - 12)
    } else {
        c - b'.' as i32
    };
    (v & 0x3f) as u32
}

/// `count` characters of a strict base-64 number (extended DES), or
/// `None` for a character outside the alphabet.
fn strict_b64(s: &[u8]) -> Option<u32> {
    s.iter().enumerate().try_fold(0, |acc, (i, &c)| {
        let v = ascii_to_bin(c);
        (ITOA64[v as usize] == c).then_some(acc | v << (6 * i))
    })
}

/// The key bytes: each character shifted up a bit, zero padded.
fn key_block(key: &[u8]) -> [u8; 8] {
    let mut block = [0u8; 8];
    for (b, &c) in block.iter_mut().zip(key) {
        *b = c << 1;
    }
    block
}

/// `_crypt_extended_r`: `key` and `setting` end at their first NUL.
pub(super) fn crypt(key: &[u8], setting: &[u8]) -> Option<Vec<u8>> {
    let at = |i: usize| setting.get(i).copied().unwrap_or(0);
    let mut des = Des::new(key_block(key));
    let (count, salt, mut out);
    if at(0) == b'_' {
        if setting.len() < 9 {
            return None;
        }
        count = strict_b64(&setting[1..5])?;
        if count == 0 {
            return None;
        }
        salt = strict_b64(&setting[5..9])?;
        // Keys past 8 characters are folded in: the key encrypted with
        // itself, XORed with the next 8 characters.
        let mut block = key_block(key);
        for chunk in key.chunks(8).skip(1) {
            block = des.crypt(u64::from_be_bytes(block), 1).to_be_bytes();
            for (b, &c) in block.iter_mut().zip(chunk) {
                *b ^= c << 1;
            }
            des = Des::new(block);
        }
        out = setting[..9].to_vec();
    } else {
        count = 25;
        let unsafe_char = |c: u8| c == 0 || c == b'\n' || c == b':';
        if unsafe_char(at(0)) || unsafe_char(at(1)) {
            return None;
        }
        salt = ascii_to_bin(at(1)) << 6 | ascii_to_bin(at(0));
        out = vec![at(0), at(1)];
    }
    des.set_salt(salt);
    let r = des.crypt(0, count);
    // 64 bits as 11 characters, the last holding 4 bits shifted up by 2.
    let (r0, r1) = ((r >> 32) as u32, r as u32);
    let groups = [(r0 >> 8, 4), ((r0 << 16) | (r1 >> 16), 4), (r1 << 2, 3)];
    for (v, n) in groups {
        for i in (0..n).rev() {
            out.push(ITOA64[(v >> (6 * i)) as usize & 0x3f]);
        }
    }
    Some(out)
}
