//! Float to decimal digits with big-integer arithmetic, the way David
//! Gay's `dtoa.c` (PHP's `zend_strtod.c`) does it: exact integer
//! arithmetic on the double's value, with every big integer's buffer
//! taken from and returned to a freelist of power-of-two sizes
//! (`Balloc(k)` gives room for `2^k` words, `Bfree` puts it back).
//!
//! Where that freelist lives is the point of php-src #13974 (seed 000):
//! process-wide behind a mutex (PHP ≤ 8.3), or per thread in the executor
//! globals (PHP 8.4). This module only needs a [`Pool`]; the engine
//! provides the three kinds (`--dtoa=shared|per-thread`, and
//! `stateless`, which does not come here at all).
//!
//! The digit generation is Steele & White's / Burger & Dybvig's: scale the
//! value to `r / s` with margins `m-`, `m+` (half the distance to the
//! neighbouring doubles), then produce digits until the remainder is
//! within a margin. Ties between two shortest candidates go to the even
//! digit, as in dtoa's default rounding; mode 2 rounds half to even on the
//! exact binary value. The result must equal [`super::dtoa::Stateless`]'s
//! for every double (tested on millions of random ones).

use super::dtoa::{small_integer_tie, DigitSource, Digits};

/// The largest size class: `2^KMAX` words (dtoa's `Kmax`). Bigger numbers
/// are allocated directly and not kept.
pub const KMAX: usize = 7;

/// A big integer's buffer: little-endian 32-bit words, `words.len()` of
/// them in use, room for `2^k`.
pub struct Bigint {
    k: usize,
    words: Vec<u32>,
}

impl Bigint {
    /// The size class of the buffer.
    pub fn class(&self) -> usize {
        self.k
    }
}

/// Where big-integer buffers come from and go back to.
pub trait Pool {
    /// A buffer with room for `2^k` words, empty (dtoa's `Balloc`).
    fn balloc(&mut self, k: usize) -> Bigint;
    /// Gives a buffer back (dtoa's `Bfree`).
    fn bfree(&mut self, b: Bigint);
}

/// A freelist per size class: what the shared and per-thread pools keep.
#[derive(Default)]
pub struct Freelist {
    lists: [Vec<Vec<u32>>; KMAX + 1],
    /// Buffers handed out that were not on a list (allocations).
    pub misses: u64,
}

impl Freelist {
    pub const fn new() -> Freelist {
        Freelist {
            lists: [const { Vec::new() }; KMAX + 1],
            misses: 0,
        }
    }

    /// Buffers waiting on the lists.
    pub fn len(&self) -> usize {
        self.lists.iter().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Pool for Freelist {
    fn balloc(&mut self, k: usize) -> Bigint {
        let words = match self.lists.get_mut(k).and_then(Vec::pop) {
            Some(mut w) => {
                w.clear();
                w
            }
            None => {
                self.misses += 1;
                Vec::with_capacity(1 << k)
            }
        };
        Bigint { k, words }
    }

    fn bfree(&mut self, b: Bigint) {
        if let Some(list) = self.lists.get_mut(b.k) {
            list.push(b.words);
        }
    }
}

/// Digits from big-integer arithmetic with buffers from pool `P`.
pub struct BigDtoa<P: Pool>(pub P);

impl<P: Pool> DigitSource for BigDtoa<P> {
    fn shortest(&mut self, value: f64) -> Digits {
        if value == 0.0 {
            return zero();
        }
        shortest(&mut self.0, value.abs())
    }

    fn significant(&mut self, value: f64, ndigits: i32) -> Digits {
        if value == 0.0 {
            return zero();
        }
        let n = ndigits.clamp(1, 800) as usize;
        if let Some(d) = small_integer_tie(value.abs(), n) {
            return d;
        }
        significant(&mut self.0, value.abs(), n)
    }
}

/// dtoa's zero: the digit `0` with the point after it.
fn zero() -> Digits {
    let mut out = Digits::new();
    out.push(b'0');
    out.decpt = 1;
    out
}

/// Whether a comparison with an interval's end lands outside it; the
/// end itself counts as inside when `inclusive` (round-half-even reading).
fn reaches(c: std::cmp::Ordering, inclusive: bool) -> bool {
    match c {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Equal => inclusive,
        std::cmp::Ordering::Less => false,
    }
}

/// Big-integer operations, each growing its buffer through the pool as
/// dtoa's do (a bigger class is taken and the old buffer freed).
struct Arith<'p, P: Pool> {
    pool: &'p mut P,
}

impl<P: Pool> Arith<'_, P> {
    fn new_from(&mut self, v: u64) -> Bigint {
        let mut b = self.pool.balloc(1);
        if v != 0 {
            b.words.push(v as u32);
            if v >> 32 != 0 {
                b.words.push((v >> 32) as u32);
            }
        }
        b
    }

    fn copy(&mut self, a: &Bigint) -> Bigint {
        let mut b = self.pool.balloc(a.k);
        b.words.extend_from_slice(&a.words);
        b
    }

    /// Makes room for `n` words, moving to a bigger buffer if needed.
    fn reserve(&mut self, b: &mut Bigint, n: usize) {
        if n <= 1 << b.k {
            return;
        }
        let mut k = b.k;
        while 1 << k < n {
            k += 1;
        }
        let mut bigger = self.pool.balloc(k);
        bigger.words.extend_from_slice(&b.words);
        let old = std::mem::replace(b, bigger);
        self.pool.bfree(old);
    }

    fn mul_small(&mut self, b: &mut Bigint, m: u32) {
        let mut carry = 0u64;
        for w in b.words.iter_mut() {
            let x = u64::from(*w) * u64::from(m) + carry;
            *w = x as u32;
            carry = x >> 32;
        }
        if carry != 0 {
            let n = b.words.len() + 1;
            self.reserve(b, n);
            b.words.push(carry as u32);
        }
    }

    fn mul_pow5(&mut self, b: &mut Bigint, mut e: u32) {
        // 5^13 is the largest power of five in a u32.
        while e >= 13 {
            self.mul_small(b, 1_220_703_125);
            e -= 13;
        }
        if e > 0 {
            self.mul_small(b, 5u32.pow(e));
        }
    }

    fn shl(&mut self, b: &mut Bigint, bits: u32) {
        if b.words.is_empty() || bits == 0 {
            return;
        }
        let (words, bits) = ((bits / 32) as usize, bits % 32);
        let n = b.words.len() + words + 1;
        self.reserve(b, n);
        if bits != 0 {
            let mut carry = 0u32;
            for w in b.words.iter_mut() {
                let x = *w;
                *w = (x << bits) | carry;
                carry = x >> (32 - bits);
            }
            if carry != 0 {
                b.words.push(carry);
            }
        }
        if words > 0 {
            b.words.splice(0..0, std::iter::repeat_n(0, words));
        }
    }

    /// `a + b` in a new buffer.
    fn sum(&mut self, a: &Bigint, b: &Bigint) -> Bigint {
        let (long, short) = if a.words.len() >= b.words.len() { (a, b) } else { (b, a) };
        let mut out = self.copy(long);
        let n = out.words.len() + 1;
        self.reserve(&mut out, n);
        let mut carry = 0u64;
        for i in 0..out.words.len() {
            let x = u64::from(out.words[i]) + u64::from(short.words.get(i).copied().unwrap_or(0)) + carry;
            out.words[i] = x as u32;
            carry = x >> 32;
            if carry == 0 && i >= short.words.len() {
                break;
            }
        }
        if carry != 0 {
            out.words.push(carry as u32);
        }
        out
    }

    fn free(&mut self, b: Bigint) {
        self.pool.bfree(b);
    }
}

fn trim(b: &mut Bigint) {
    while b.words.last() == Some(&0) {
        b.words.pop();
    }
}

fn cmp(a: &Bigint, b: &Bigint) -> std::cmp::Ordering {
    let (mut la, mut lb) = (a.words.len(), b.words.len());
    while la > 0 && a.words[la - 1] == 0 {
        la -= 1;
    }
    while lb > 0 && b.words[lb - 1] == 0 {
        lb -= 1;
    }
    if la != lb {
        return la.cmp(&lb);
    }
    for i in (0..la).rev() {
        if a.words[i] != b.words[i] {
            return a.words[i].cmp(&b.words[i]);
        }
    }
    std::cmp::Ordering::Equal
}

/// `a -= b`, for `a >= b`.
fn sub(a: &mut Bigint, b: &Bigint) {
    let mut borrow = 0i64;
    for i in 0..a.words.len() {
        let x = i64::from(a.words[i]) - i64::from(b.words.get(i).copied().unwrap_or(0)) - borrow;
        a.words[i] = x as u32;
        borrow = i64::from(x < 0);
    }
    debug_assert_eq!(borrow, 0, "subtraction underflow");
    trim(a);
}

/// `r / s` for `r < 10 s`: the quotient digit; `r` keeps the remainder.
fn digit(r: &mut Bigint, s: &Bigint) -> u8 {
    let mut d = 0;
    while cmp(r, s) != std::cmp::Ordering::Less {
        sub(r, s);
        d += 1;
    }
    d
}

/// The double's integer mantissa and binary exponent (`value = f × 2^e`),
/// and whether its lower neighbour is closer than its upper one (the
/// value is a power of two above the subnormal range).
fn decompose(value: f64) -> (u64, i32, bool) {
    let bits = value.to_bits();
    let exp_field = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    if exp_field == 0 {
        (frac, -1074, false)
    } else {
        (frac | (1 << 52), exp_field - 1075, frac == 0 && exp_field > 1)
    }
}

/// The value as `r / s × 10^k` with `1/10 <= r/s < 1` roughly (exactly
/// fixed by the callers), plus the margins scaled alike (`m+`, `m-`).
struct Scaled {
    r: Bigint,
    s: Bigint,
    m_plus: Bigint,
    m_minus: Bigint,
    k: i32,
}

fn scale<P: Pool>(a: &mut Arith<'_, P>, value: f64) -> Scaled {
    let (f, e, uneven) = decompose(value);
    // Twice the value and margins, so the half-way margins are integers.
    let (mut r, mut s, mut m_plus, mut m_minus);
    if e >= 0 {
        r = a.new_from(f);
        a.shl(&mut r, e as u32 + 1 + u32::from(uneven));
        s = a.new_from(2 << u32::from(uneven));
        m_plus = a.new_from(1);
        a.shl(&mut m_plus, e as u32 + u32::from(uneven));
        m_minus = a.new_from(1);
        a.shl(&mut m_minus, e as u32);
    } else {
        r = a.new_from(f << (1 + u32::from(uneven)));
        s = a.new_from(1);
        a.shl(&mut s, (-e) as u32 + 1 + u32::from(uneven));
        m_plus = a.new_from(1 << u32::from(uneven));
        m_minus = a.new_from(1);
    }
    // k ≈ ceil(log10(value)), possibly one too small.
    let bitlen = 64 - f.leading_zeros() as i32;
    let k = ((e + bitlen - 1) as f64 * std::f64::consts::LOG10_2 - 1e-10).ceil() as i32;
    if k >= 0 {
        a.mul_pow5(&mut s, k as u32);
        a.shl(&mut s, k as u32);
    } else {
        for b in [&mut r, &mut m_plus, &mut m_minus] {
            a.mul_pow5(b, (-k) as u32);
            a.shl(b, (-k) as u32);
        }
    }
    Scaled {
        r,
        s,
        m_plus,
        m_minus,
        k,
    }
}

fn times10<P: Pool>(a: &mut Arith<'_, P>, b: &mut Bigint) {
    a.mul_small(b, 10);
}

/// Mode 0 (see the module docs), for a positive `value`.
fn shortest<P: Pool>(pool: &mut P, value: f64) -> Digits {
    let mut out = Digits::new();
    let mut a = Arith { pool };
    let (f, _, _) = decompose(value);
    // Round-half-even reading: the interval's ends belong to it when the
    // mantissa is even.
    let inclusive = f & 1 == 0;
    let Scaled {
        mut r,
        mut s,
        mut m_plus,
        mut m_minus,
        mut k,
    } = scale(&mut a, value);
    // Fix the estimate: r + m+ must stay below s (or not reach it).
    let high = a.sum(&r, &m_plus);
    let too_big = reaches(cmp(&high, &s), inclusive);
    a.free(high);
    if too_big {
        times10(&mut a, &mut s);
        k += 1;
    }
    out.decpt = k;
    loop {
        times10(&mut a, &mut r);
        times10(&mut a, &mut m_plus);
        times10(&mut a, &mut m_minus);
        let d = digit(&mut r, &s);
        let low_end = reaches(cmp(&m_minus, &r), inclusive);
        let high_sum = a.sum(&r, &m_plus);
        let high_end = reaches(cmp(&high_sum, &s), inclusive);
        a.free(high_sum);
        let last = match (low_end, high_end) {
            (false, false) => {
                out.push(b'0' + d);
                continue;
            }
            (true, false) => d,
            (false, true) => d + 1,
            (true, true) => {
                // Both candidates round-trip: the nearer, ties to even.
                let mut twice = a.copy(&r);
                a.shl(&mut twice, 1);
                let c = cmp(&twice, &s);
                a.free(twice);
                match c {
                    std::cmp::Ordering::Less => d,
                    std::cmp::Ordering::Greater => d + 1,
                    std::cmp::Ordering::Equal => d + (d & 1),
                }
            }
        };
        out.push(b'0' + last);
        break;
    }
    for b in [r, s, m_plus, m_minus] {
        a.free(b);
    }
    finish(out)
}

/// Mode 2: `n` significant digits, rounded half to even, for a positive
/// `value`.
fn significant<P: Pool>(pool: &mut P, value: f64, n: usize) -> Digits {
    let mut out = Digits::new();
    let mut a = Arith { pool };
    let Scaled {
        mut r,
        mut s,
        m_plus,
        m_minus,
        mut k,
    } = scale(&mut a, value);
    a.free(m_plus);
    a.free(m_minus);
    if cmp(&r, &s) != std::cmp::Ordering::Less {
        times10(&mut a, &mut s);
        k += 1;
    }
    let mut digits = Vec::with_capacity(n);
    for _ in 0..n {
        times10(&mut a, &mut r);
        digits.push(digit(&mut r, &s));
    }
    a.shl(&mut r, 1);
    let round_up = match cmp(&r, &s) {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Equal => digits.last().is_some_and(|d| d & 1 == 1),
        std::cmp::Ordering::Less => false,
    };
    a.free(r);
    a.free(s);
    if round_up {
        let mut i = digits.len();
        loop {
            if i == 0 {
                // All nines: 0.999… becomes 1.000…, one decade up.
                digits.insert(0, 1);
                digits.pop();
                k += 1;
                break;
            }
            i -= 1;
            if digits[i] == 9 {
                digits[i] = 0;
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    out.decpt = k;
    for d in digits {
        out.push(b'0' + d);
    }
    finish(out)
}

/// Strips trailing zeros (dtoa never returns them).
fn finish(d: Digits) -> Digits {
    let ds = d.digits();
    let mut n = ds.len();
    while n > 1 && ds[n - 1] == b'0' {
        n -= 1;
    }
    if n == ds.len() {
        return d;
    }
    let mut out = Digits::new();
    out.decpt = d.decpt;
    for &b in &ds[..n] {
        out.push(b);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numfmt::dtoa::Stateless;

    /// A small deterministic generator (xorshift64*), so failures repeat.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }

        /// Any finite double: random bits (all exponents equally likely),
        /// or a "human" decimal now and then.
        fn double(&mut self) -> f64 {
            loop {
                let x = self.next();
                let v = match x % 4 {
                    0 => (self.next() % 2_000_000) as f64 / 1000.0,
                    1 => f64::from_bits(self.next() >> 12) * 1e-300,
                    _ => f64::from_bits(self.next()),
                };
                if v.is_finite() {
                    return v;
                }
            }
        }
    }

    fn same(a: &Digits, b: &Digits) -> bool {
        a.digits() == b.digits() && a.decpt == b.decpt
    }

    const NDIGITS: [i32; 8] = [1, 2, 5, 14, 15, 17, 20, 40];

    fn check(v: f64, pool: &mut Freelist) -> Result<(), String> {
        let mut big = BigDtoa(std::mem::take(pool));
        let mut stateless = Stateless;
        let (x, y) = (big.shortest(v), stateless.shortest(v));
        let mut r = Ok(());
        if !same(&x, &y) {
            r = Err(format!(
                "{v:e} shortest: big {:?}e{} stateless {:?}e{}",
                String::from_utf8_lossy(x.digits()),
                x.decpt,
                String::from_utf8_lossy(y.digits()),
                y.decpt
            ));
        }
        for n in NDIGITS {
            let (x, y) = (big.significant(v, n), stateless.significant(v, n));
            if r.is_ok() && !same(&x, &y) {
                r = Err(format!(
                    "{v:e} precision {n}: big {:?}e{} stateless {:?}e{}",
                    String::from_utf8_lossy(x.digits()),
                    x.decpt,
                    String::from_utf8_lossy(y.digits()),
                    y.decpt
                ));
            }
        }
        *pool = big.0;
        r
    }

    #[test]
    #[cfg_attr(miri, ignore = "safe bignum arithmetic only; hours under Miri")]
    fn edge_cases_agree_with_the_stateless_generator() {
        let mut pool = Freelist::new();
        let mut cases = vec![
            0.0,
            5e-324,
            1.5e-323,
            f64::from_bits(0x000F_FFFF_FFFF_FFFF), // the largest subnormal
            2.2250738585072014e-308,
            f64::MAX,
            f64::MIN_POSITIVE,
            1.0,
            0.1,
            0.2,
            0.3,
            1.0 / 3.0,
            2.0 / 3.0,
            123456789012345680.0,
            9007199254740993.0,
            f64::from_bits(0x42D6_8480_81ED_4EA8), // a shortest-candidate tie
            100000000000005.0,
            1227805.0,
            0.125,
            0.375,
            2.5,
            1e15,
            1e16,
            1e21,
            1e22,
            1e23,
            5e-7,
            1e-4,
            0.5,
        ];
        for e in -320..=308 {
            cases.push(10f64.powi(e));
            cases.push(2f64.powi(e.clamp(-1074, 1023)));
        }
        let failures: Vec<String> = cases.iter().filter_map(|&v| check(v, &mut pool).err()).collect();
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        // Every buffer came back.
        assert!(
            pool.misses > 0 && pool.len() as u64 == pool.misses,
            "{} {}",
            pool.len(),
            pool.misses
        );
    }

    /// `MINIZTS_DTOA_SAMPLES=N` runs more.
    #[test]
    #[cfg_attr(miri, ignore = "safe bignum arithmetic only; hours under Miri")]
    fn random_doubles_agree_with_the_stateless_generator() {
        let n: usize = std::env::var("MINIZTS_DTOA_SAMPLES")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(if cfg!(miri) { 300 } else { 100_000 });
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut pool = Freelist::new();
        let mut failures = Vec::new();
        for _ in 0..n {
            let v = rng.double();
            if let Err(e) = check(v, &mut pool) {
                failures.push(e);
                if failures.len() > 20 {
                    break;
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}
