//! The digest algorithms of `hash()`: the cryptographic ones from
//! RustCrypto's crates, the checksums and non-cryptographic hashes (CRCs,
//! Adler-32, FNV, Jenkins' one-at-a-time) written out here as ext/hash
//! computes them, with the byte order of its digests.

use md5::Md5;
use sha1::Sha1;
use sha2::{Digest, Sha224, Sha256, Sha384, Sha512, Sha512_224, Sha512_256};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Algo {
    Md5,
    Sha1,
    Sha224,
    Sha256,
    Sha384,
    Sha512_224,
    Sha512_256,
    Sha512,
    Adler32,
    Crc32,
    Crc32b,
    Crc32c,
    Fnv132,
    Fnv1a32,
    Fnv164,
    Fnv1a64,
    Joaat,
}

impl Algo {
    /// The algorithms minizts has, in the order of PHP's `hash_algos()`
    /// (which lists more: md2, md4, sha3, ripemd, whirlpool, tiger,
    /// snefru, gost, murmur, xxHash and haval are not here).
    pub(super) const ALL: &'static [(&'static str, Algo)] = &[
        ("md5", Algo::Md5),
        ("sha1", Algo::Sha1),
        ("sha224", Algo::Sha224),
        ("sha256", Algo::Sha256),
        ("sha384", Algo::Sha384),
        ("sha512/224", Algo::Sha512_224),
        ("sha512/256", Algo::Sha512_256),
        ("sha512", Algo::Sha512),
        ("adler32", Algo::Adler32),
        ("crc32", Algo::Crc32),
        ("crc32b", Algo::Crc32b),
        ("crc32c", Algo::Crc32c),
        ("fnv132", Algo::Fnv132),
        ("fnv1a32", Algo::Fnv1a32),
        ("fnv164", Algo::Fnv164),
        ("fnv1a64", Algo::Fnv1a64),
        ("joaat", Algo::Joaat),
    ];

    /// The algorithm a name (any case, as PHP lowercases it) stands for.
    pub(super) fn find(name: &[u8]) -> Option<Algo> {
        Algo::ALL
            .iter()
            .find(|(n, _)| n.as_bytes().eq_ignore_ascii_case(name))
            .map(|&(_, a)| a)
    }

    /// The block size of a cryptographic algorithm (`hash_hmac`'s
    /// padding); `None` for the others, which PHP refuses for HMAC.
    pub(super) fn block_size(self) -> Option<usize> {
        match self {
            Algo::Md5 | Algo::Sha1 | Algo::Sha224 | Algo::Sha256 => Some(64),
            Algo::Sha384 | Algo::Sha512_224 | Algo::Sha512_256 | Algo::Sha512 => Some(128),
            _ => None,
        }
    }

    pub(super) fn digest(self, data: &[u8]) -> Vec<u8> {
        self.digest_parts(&[data])
    }

    /// The digest of the concatenation of `parts`, without making it.
    pub(super) fn digest_parts(self, parts: &[&[u8]]) -> Vec<u8> {
        fn with<D: Digest>(parts: &[&[u8]]) -> Vec<u8> {
            let mut d = D::new();
            for p in parts {
                d.update(p);
            }
            d.finalize().to_vec()
        }
        let bytes = parts.iter().flat_map(|p| p.iter().copied());
        match self {
            Algo::Md5 => with::<Md5>(parts),
            Algo::Sha1 => with::<Sha1>(parts),
            Algo::Sha224 => with::<Sha224>(parts),
            Algo::Sha256 => with::<Sha256>(parts),
            Algo::Sha384 => with::<Sha384>(parts),
            Algo::Sha512_224 => with::<Sha512_224>(parts),
            Algo::Sha512_256 => with::<Sha512_256>(parts),
            Algo::Sha512 => with::<Sha512>(parts),
            Algo::Adler32 => {
                let (mut s1, mut s2) = (1u32, 0u32);
                for b in bytes {
                    s1 = (s1 + b as u32) % 65521;
                    s2 = (s2 + s1) % 65521;
                }
                (s2 << 16 | s1).to_be_bytes().to_vec()
            }
            // The bzip2 CRC (MSB first), which ext/hash writes least
            // significant byte first.
            Algo::Crc32 => {
                let mut crc = !0u32;
                for b in bytes {
                    crc = crc << 8 ^ CRC32_BZIP2[((crc >> 24) as u8 ^ b) as usize];
                }
                (!crc).to_le_bytes().to_vec()
            }
            Algo::Crc32b => {
                let mut h = crc32fast::Hasher::new();
                for p in parts {
                    h.update(p);
                }
                h.finalize().to_be_bytes().to_vec()
            }
            Algo::Crc32c => {
                let mut crc = !0u32;
                for b in bytes {
                    crc = crc >> 8 ^ CRC32C[((crc as u8) ^ b) as usize];
                }
                (!crc).to_be_bytes().to_vec()
            }
            Algo::Fnv132 | Algo::Fnv1a32 => {
                let mut h = 0x811c_9dc5u32;
                for b in bytes {
                    if self == Algo::Fnv132 {
                        h = h.wrapping_mul(0x0100_0193) ^ b as u32;
                    } else {
                        h = (h ^ b as u32).wrapping_mul(0x0100_0193);
                    }
                }
                h.to_be_bytes().to_vec()
            }
            Algo::Fnv164 | Algo::Fnv1a64 => {
                let mut h = 0xcbf2_9ce4_8422_2325u64;
                for b in bytes {
                    if self == Algo::Fnv164 {
                        h = h.wrapping_mul(0x0000_0100_0000_01b3) ^ b as u64;
                    } else {
                        h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
                    }
                }
                h.to_be_bytes().to_vec()
            }
            Algo::Joaat => {
                let mut h = 0u32;
                for b in bytes {
                    h = h.wrapping_add(b as u32);
                    h = h.wrapping_add(h << 10);
                    h ^= h >> 6;
                }
                h = h.wrapping_add(h << 3);
                h ^= h >> 11;
                h = h.wrapping_add(h << 15);
                h.to_be_bytes().to_vec()
            }
        }
    }
}

/// The table of the MSB-first CRC-32 (polynomial 0x04C11DB7).
const CRC32_BZIP2: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = (i as u32) << 24;
        let mut k = 0;
        while k < 8 {
            c = if c & 0x8000_0000 != 0 {
                c << 1 ^ 0x04C1_1DB7
            } else {
                c << 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

/// The table of the reflected Castagnoli CRC-32 (polynomial 0x82F63B78).
const CRC32C: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { c >> 1 ^ 0x82F6_3B78 } else { c >> 1 };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};
