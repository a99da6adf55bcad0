//! `crypt()` and the `password_*` functions (ext/standard/crypt.c,
//! password.c), with php-src's bundled schemes: DES and extended DES
//! (`des`), MD5 and SHA-256/512 crypt (`sha`), bcrypt (`bcrypt`).
//!
//! This file holds PHP's own layer: which scheme a salt selects, the
//! `*0`/`*1` failure strings, and bcrypt as `password_hash` wraps it
//! (`$2y$`, cost, a random salt). Argon2 is not here, so its constants
//! are not defined, as in a PHP built without libargon2.

use minizts_core::{Key, PhpArray, PhpStr, Value};
use minizts_globals::Globals;
use sha2::{Sha256, Sha512};

use crate::builtins::Args;
use crate::error::{type_error, value_error, warning, VmResult};

mod bcrypt;
mod des;
mod sha;

/// The crypt(3) base-64 alphabet (bcrypt has its own order).
const ITOA64: &[u8; 64] = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// `PHP_MAX_SALT_LEN`: longer salts are cut.
const MAX_SALT_LEN: usize = 123;

const BCRYPT_DEFAULT_COST: i64 = 10;

/// `php_crypt`: `None` where the scheme refuses the salt.
fn php_crypt(password: &[u8], salt: &[u8]) -> Option<Vec<u8>> {
    // Both are C strings there.
    let cstr = |s: &[u8]| s.iter().position(|&c| c == 0).map_or(s.len(), |n| n);
    let password = &password[..cstr(password)];
    let salt = &salt[..cstr(salt)];
    let at = |i: usize| salt.get(i).copied().unwrap_or(0);
    let valid_des = |c: u8| matches!(c, b'.'..=b'9' | b'A'..=b'Z' | b'a'..=b'z');
    match (at(0), at(1), at(2), at(3)) {
        (b'$', b'1', b'$', _) => Some(sha::md5_crypt(password, salt)),
        (b'$', b'6', b'$', _) => sha::sha_crypt::<Sha512>(password, salt),
        (b'$', b'5', b'$', _) => sha::sha_crypt::<Sha256>(password, salt),
        (b'$', b'2', _, b'$') => bcrypt::crypt(password, salt),
        (b'*', b'0' | b'1', _, _) => None,
        (b'_', ..) => des::crypt(password, salt),
        (c0, c1, ..) if valid_des(c0) && valid_des(c1) => des::crypt(password, salt),
        _ => None,
    }
}

pub(super) fn crypt<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let password = a.str(g, 0)?;
    let salt = a.str(g, 1)?;
    let salt = &salt[..salt.len().min(MAX_SALT_LEN)];
    Ok(match php_crypt(&password, salt) {
        Some(out) => Value::Str(PhpStr::new(out)),
        None if salt.starts_with(b"*0") => Value::str("*1"),
        None => Value::str("*0"),
    })
}

/// The algorithms `password_hash` knows: only bcrypt.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Algo {
    Bcrypt,
}

/// `php_password_algo_find_zval` for a `string|int|null` argument `i`:
/// `Ok(None)` for an unknown algorithm.
fn find_algo<G: Globals>(g: G, a: &Args, i: usize) -> VmResult<Option<Algo>> {
    let v = a.value(i);
    Ok(match &*v {
        Value::Null | Value::Undef => Some(Algo::Bcrypt),
        Value::Str(s) => (s.as_bytes() == b"2y").then_some(Algo::Bcrypt),
        Value::Int(0 | 1) => Some(Algo::Bcrypt),
        Value::Int(_) => None,
        Value::Float(_) | Value::Bool(_) => match a.int(g, i)? {
            0 | 1 => Some(Algo::Bcrypt),
            _ => None,
        },
        other => {
            return type_error(format!(
                "{}(): Argument #{} ($algo) must be of type string|int|null, {} given",
                a.name(),
                i + 1,
                other.type_name()
            ))
        }
    })
}

/// `php_password_algo_identify_ex(hash, NULL)`: the algorithm named by
/// the hash's `$ident$`, if the hash is valid for it.
fn identify(hash: &[u8]) -> Option<Algo> {
    if hash.len() < 3 {
        return None;
    }
    let end = hash[1..].iter().position(|&c| c == b'$')?;
    (&hash[1..1 + end] == b"2y" && bcrypt_valid(hash)).then_some(Algo::Bcrypt)
}

fn bcrypt_valid(hash: &[u8]) -> bool {
    hash.len() == 60 && hash.starts_with(b"$2y")
}

/// `sscanf(hash, "$2y$%d$")`: the cost of a bcrypt hash.
fn bcrypt_cost(hash: &[u8]) -> i64 {
    let digits = hash.get(4..).unwrap_or_default();
    let n = digits.iter().take_while(|c| c.is_ascii_digit()).count();
    std::str::from_utf8(&digits[..n])
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// The `cost` option (`zval_get_long`), or the default.
fn cost_option(options: Option<&PhpArray>) -> i64 {
    options
        .and_then(|o| o.get_str(b"cost"))
        .map_or(BCRYPT_DEFAULT_COST, Value::to_int)
}

fn options_arg(a: &Args, i: usize) -> VmResult<Option<std::rc::Rc<PhpArray>>> {
    if a.has(i) {
        a.array(i).map(Some)
    } else {
        Ok(None)
    }
}

fn random_bytes<G: Globals>(_g: G, buf: &mut [u8]) -> VmResult<()> {
    getrandom::fill(buf).or_else(|_| crate::error::throw("Exception", "Cannot open source device"))
}

pub(super) fn password_hash<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let password = a.str(g, 0)?;
    let algo = find_algo(g, a, 1)?;
    let options = options_arg(a, 2)?;
    let Some(Algo::Bcrypt) = algo else {
        return a.value_error(1, "must be a valid password hashing algorithm");
    };
    if password.contains(&0) {
        return value_error("Bcrypt password must not contain null character");
    }
    let cost = cost_option(options.as_deref());
    if !(4..=31).contains(&cost) {
        return value_error(format!("Invalid bcrypt cost parameter specified: {cost}"));
    }
    if options.as_ref().is_some_and(|o| o.get_str(b"salt").is_some()) {
        warning(
            g,
            "password_hash(): The \"salt\" option has been ignored, since providing a custom salt is no longer supported",
        );
    }
    let mut raw = [0u8; 16];
    random_bytes(g, &mut raw)?;
    let mut setting = format!("$2y${cost:02}$").into_bytes();
    bcrypt::encode_salt(&mut setting, &raw);
    match php_crypt(&password, &setting) {
        Some(out) if out.len() >= 13 => Ok(Value::Str(PhpStr::new(out))),
        _ => crate::error::error("Failed to hash password"),
    }
}

pub(super) fn password_verify<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let password = a.str(g, 0)?;
    let hash = a.str(g, 1)?;
    let Some(out) = php_crypt(&password, &hash) else {
        return Ok(Value::Bool(false));
    };
    // Compared in constant time, as PHP does.
    let same = out.len() == hash.len() && out.iter().zip(hash.iter()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0;
    Ok(Value::Bool(same))
}

pub(super) fn password_get_info<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let hash = a.str(g, 0)?;
    let mut info = PhpArray::new();
    let mut options = PhpArray::new();
    match identify(&hash) {
        Some(Algo::Bcrypt) => {
            info.insert(Key::from_bytes(b"algo"), Value::str("2y"));
            info.insert(Key::from_bytes(b"algoName"), Value::str("bcrypt"));
            options.insert(Key::from_bytes(b"cost"), Value::Int(bcrypt_cost(&hash)));
        }
        None => {
            info.insert(Key::from_bytes(b"algo"), Value::Null);
            info.insert(Key::from_bytes(b"algoName"), Value::str("unknown"));
        }
    }
    info.insert(Key::from_bytes(b"options"), Value::arr(options));
    Ok(Value::arr(info))
}

pub(super) fn password_needs_rehash<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let hash = a.str(g, 0)?;
    let algo = find_algo(g, a, 1)?;
    let options = options_arg(a, 2)?;
    // An unknown new algorithm never asks for a rehash.
    let Some(new) = algo else {
        return Ok(Value::Bool(false));
    };
    if identify(&hash) != Some(new) {
        return Ok(Value::Bool(true));
    }
    Ok(Value::Bool(bcrypt_cost(&hash) != cost_option(options.as_deref())))
}

pub(super) fn password_algos<G: Globals>(_g: G, _a: &mut Args) -> VmResult<Value> {
    Ok(Value::arr(PhpArray::from_list(vec![Value::str("2y")])))
}

/// The constants of crypt.c and password.c.
pub(crate) fn constants() -> Vec<(&'static str, Value)> {
    vec![
        ("CRYPT_SALT_LENGTH", Value::Int(MAX_SALT_LEN as i64)),
        ("CRYPT_STD_DES", Value::Int(1)),
        ("CRYPT_EXT_DES", Value::Int(1)),
        ("CRYPT_MD5", Value::Int(1)),
        ("CRYPT_BLOWFISH", Value::Int(1)),
        ("CRYPT_SHA256", Value::Int(1)),
        ("CRYPT_SHA512", Value::Int(1)),
        ("PASSWORD_DEFAULT", Value::str("2y")),
        ("PASSWORD_BCRYPT", Value::str("2y")),
        ("PASSWORD_BCRYPT_DEFAULT_COST", Value::Int(BCRYPT_DEFAULT_COST)),
    ]
}
