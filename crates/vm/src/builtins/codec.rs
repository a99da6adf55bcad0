//! Encodings and digests, as PHP 8.2's ext/standard (base64.c, md5.c,
//! sha1.c, crc32.c, var.c, var_unserializer.re, pack.c) and ext/hash
//! define them: `base64_*`, `md5`, `sha1`, `crc32`, `hash`,
//! `hash_hmac` and their algorithm lists, `serialize`/`unserialize` and
//! `pack`/`unpack`.
//!
//! This file holds the table, base64 and the digest builtins; the digest
//! algorithms (`hash`), the serializer (`serialize`), the unserializer
//! (`unserialize`) and the binary packer (`pack`) live in submodules.
//!
//! `hash_algos()` lists only the algorithms minizts has (see `hash`), so
//! it is shorter than PHP's list.

use minizts_core::{PhpArray, PhpStr, Value};
use minizts_globals::Globals;

use crate::builtins::Args;
use crate::error::VmResult;
use crate::limits::string_buffer;

mod crypt;
mod hash;
mod pack;
mod serialize;
mod text;
mod unserialize;

pub(crate) use crypt::constants as crypt_constants;
use crypt::{crypt, password_algos, password_get_info, password_hash, password_needs_rehash, password_verify};
use hash::Algo;
use pack::{pack, unpack};
use serialize::serialize;
use text::{convert_uudecode, convert_uuencode, quoted_printable_decode, quoted_printable_encode};
use unserialize::unserialize;

crate::builtin_table! {
    "base64_encode", ["string"], 1, 0, base64_encode;
    "base64_decode", ["string", "strict"], 1, 0, base64_decode;
    "md5", ["string", "binary"], 1, 0, md5;
    "sha1", ["string", "binary"], 1, 0, sha1;
    "crc32", ["string"], 1, 0, crc32;
    "hash", ["algo", "data", "binary", "options"], 2, 0, hash;
    "hash_algos", [], 0, 0, hash_algos;
    "hash_hmac", ["algo", "data", "key", "binary"], 3, 0, hash_hmac;
    "hash_hmac_algos", [], 0, 0, hash_hmac_algos;
    "hash_hkdf", ["algo", "key", "length", "info", "salt"], 2, 0, hash_hkdf;
    "serialize", ["value"], 1, 0, serialize;
    "unserialize", ["data", "options"], 1, 0, unserialize;
    "pack", ["format", "...values"], 1, 0, pack;
    "unpack", ["format", "string", "offset"], 2, 0, unpack;
    "crypt", ["string", "salt"], 2, 0, crypt;
    "password_hash", ["password", "algo", "options"], 2, 0, password_hash;
    "password_verify", ["password", "hash"], 2, 0, password_verify;
    "password_get_info", ["hash"], 1, 0, password_get_info;
    "password_needs_rehash", ["hash", "algo", "options"], 2, 0, password_needs_rehash;
    "password_algos", [], 0, 0, password_algos;
    "quoted_printable_encode", ["string"], 1, 0, quoted_printable_encode;
    "quoted_printable_decode", ["string"], 1, 0, quoted_printable_decode;
    "convert_uuencode", ["string"], 1, 0, convert_uuencode;
    "convert_uudecode", ["string"], 1, 0, convert_uudecode;
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// `base64_reverse_table`: a digit's value, `WS` for the whitespace that
/// strict decoding skips, `BAD` for everything else.
const WS: i8 = -1;
const BAD: i8 = -2;
const BASE64_REVERSE: [i8; 256] = {
    let mut t = [BAD; 256];
    let mut i = 0;
    while i < 64 {
        t[BASE64[i] as usize] = i as i8;
        i += 1;
    }
    t[b'\t' as usize] = WS;
    t[b'\n' as usize] = WS;
    t[b'\r' as usize] = WS;
    t[b' ' as usize] = WS;
    t
};

fn base64_encode<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    // zend_string_safe_alloc((len + 2) / 3, 4, 0): PHP's size check.
    let mut out = string_buffer(g, s.len().div_ceil(3), 4, 0)?;
    for chunk in s.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        out.push(BASE64[(n >> 18) as usize & 63]);
        out.push(BASE64[(n >> 12) as usize & 63]);
        out.push(if chunk.len() > 1 {
            BASE64[(n >> 6) as usize & 63]
        } else {
            b'='
        });
        out.push(if chunk.len() > 2 { BASE64[n as usize & 63] } else { b'=' });
    }
    Ok(Value::Str(PhpStr::new(out)))
}

/// `php_base64_decode_impl`: digits anywhere, padding counted wherever it
/// is; strict mode refuses other bytes, digits after padding, a lone
/// last digit and padding of the wrong length.
fn base64_decode<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let strict = a.opt_bool(g, 1, false)?;
    let mut out = string_buffer(g, 0, 0, s.len())?;
    let (mut i, mut padding) = (0usize, 0usize);
    let mut acc = 0u8;
    for &c in s.iter() {
        if c == b'=' {
            padding += 1;
            continue;
        }
        let ch = BASE64_REVERSE[c as usize];
        if ch < 0 {
            if !strict || ch == WS {
                continue;
            }
            return Ok(Value::Bool(false));
        }
        if strict && padding > 0 {
            return Ok(Value::Bool(false));
        }
        let ch = ch as u8;
        match i % 4 {
            0 => acc = ch << 2,
            1 => {
                out.push(acc | ch >> 4);
                acc = (ch & 0x0f) << 4;
            }
            2 => {
                out.push(acc | ch >> 2);
                acc = (ch & 0x03) << 6;
            }
            _ => out.push(acc | ch),
        }
        i += 1;
    }
    if strict && (i % 4 == 1 || (padding > 0 && (padding > 2 || (i + padding) % 4 != 0))) {
        return Ok(Value::Bool(false));
    }
    Ok(Value::Str(PhpStr::new(out)))
}

/// A digest as PHP returns it: raw bytes, or lowercase hex.
fn digest_value<G: Globals>(g: G, digest: Vec<u8>, binary: bool) -> VmResult<Value> {
    if binary {
        return Ok(Value::Str(PhpStr::new(digest)));
    }
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = string_buffer(g, digest.len(), 2, 0)?;
    for c in digest {
        out.push(HEX[(c >> 4) as usize]);
        out.push(HEX[(c & 15) as usize]);
    }
    Ok(Value::Str(PhpStr::new(out)))
}

fn md5<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let binary = a.opt_bool(g, 1, false)?;
    digest_value(g, Algo::Md5.digest(&s), binary)
}

fn sha1<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    let binary = a.opt_bool(g, 1, false)?;
    digest_value(g, Algo::Sha1.digest(&s), binary)
}

fn crc32<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let s = a.str(g, 0)?;
    Ok(Value::Int(crc32fast::hash(&s) as i64))
}

/// The optional `array $options` of `hash()`: checked for its type; none
/// of the algorithms here takes an option (PHP's seeds are for murmur and
/// xxHash).
fn check_options(a: &Args, i: usize) -> VmResult<()> {
    if a.has(i) {
        a.array(i)?;
    }
    Ok(())
}

fn hash<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let algo = a.str(g, 0)?;
    let data = a.str(g, 1)?;
    let binary = a.opt_bool(g, 2, false)?;
    check_options(a, 3)?;
    match Algo::find(&algo) {
        Some(algo) => digest_value(g, algo.digest(&data), binary),
        None => a.value_error(0, "must be a valid hashing algorithm"),
    }
}

fn algo_list(hmac: bool) -> Value {
    let names = Algo::ALL
        .iter()
        .filter(|(_, algo)| !hmac || algo.block_size().is_some())
        .map(|(name, _)| Value::str(*name))
        .collect();
    Value::arr(PhpArray::from_list(names))
}

fn hash_algos<G: Globals>(_g: G, _a: &mut Args) -> VmResult<Value> {
    Ok(algo_list(false))
}

fn hash_hmac_algos<G: Globals>(_g: G, _a: &mut Args) -> VmResult<Value> {
    Ok(algo_list(true))
}

fn hash_hmac<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let algo = a.str(g, 0)?;
    let data = a.str(g, 1)?;
    let key = a.str(g, 2)?;
    let binary = a.opt_bool(g, 3, false)?;
    let Some((algo, block)) = Algo::find(&algo).and_then(|algo| Some((algo, algo.block_size()?))) else {
        return a.value_error(0, "must be a valid cryptographic hashing algorithm");
    };
    digest_value(g, hmac(algo, block, &key, &[&data]), binary)
}

/// RFC 2104's HMAC of the concatenated `data` under `key`, with `algo`
/// whose block size is `block`.
fn hmac(algo: Algo, block: usize, key: &[u8], data: &[&[u8]]) -> Vec<u8> {
    // A key longer than a block is hashed first.
    let mut k = if key.len() > block {
        algo.digest(key)
    } else {
        key.to_vec()
    };
    k.resize(block, 0);
    let ipad: Vec<u8> = k.iter().map(|b| b ^ 0x36).collect();
    let opad: Vec<u8> = k.iter().map(|b| b ^ 0x5c).collect();
    let mut parts: Vec<&[u8]> = vec![&ipad];
    parts.extend_from_slice(data);
    let inner = algo.digest_parts(&parts);
    algo.digest_parts(&[&opad, &inner])
}

/// `hash_hkdf`: RFC 5869's key derivation (extract with the salt, then
/// expand with the info), raw bytes.
fn hash_hkdf<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let algo = a.str(g, 0)?;
    let key = a.str(g, 1)?;
    let length = a.opt_int(g, 2, 0)?;
    let info = a.opt_str(g, 3, b"")?;
    let salt = a.opt_str(g, 4, b"")?;
    let Some((algo, block)) = Algo::find(&algo).and_then(|algo| Some((algo, algo.block_size()?))) else {
        return a.value_error(0, "must be a valid cryptographic hashing algorithm");
    };
    if key.is_empty() {
        return a.value_error(1, "cannot be empty");
    }
    let size = algo.digest(b"").len();
    let length = match length {
        n if n < 0 => return a.value_error(2, "must be greater than or equal to 0"),
        0 => size,
        n if n as u64 > size as u64 * 255 => {
            return a.value_error(2, &format!("must be less than or equal to {}", size * 255))
        }
        n => n as usize,
    };
    let prk = hmac(algo, block, &salt, &[&key]);
    let mut out = Vec::with_capacity(length + size);
    let mut t = Vec::new();
    let mut i = 1u8;
    while out.len() < length {
        t = hmac(algo, block, &prk, &[&t, &info, &[i]]);
        out.extend_from_slice(&t);
        i = i.wrapping_add(1);
    }
    out.truncate(length);
    Ok(Value::str(out))
}
