//! PHP's Mersenne Twister (MT19937), the generator behind `mt_rand()`,
//! `rand()`, `shuffle()`, `array_rand()` and `str_shuffle()` in PHP 8.2
//! (ext/random's `Mt19937` engine), so that seeded scripts reproduce PHP's
//! sequences exactly.

/// Length of the state vector.
const N: usize = 624;
/// The twist's middle offset.
const M: usize = 397;

/// The `mt_srand()` modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MtRandMode {
    /// `MT_RAND_MT19937`, the default: the standard algorithm.
    Mt19937,
    /// `MT_RAND_PHP`: PHP 5's buggy twist and its biased range scaling,
    /// kept for old seeded sequences.
    Php,
}

/// A seeded MT19937 state.
///
/// Mapping to PHP (`$g` being the engine's per-request instance):
/// * `mt_srand($seed, $mode)` -> `g.seed($seed as u32)` after
///   `MtRand::with_mode`; PHP truncates the int seed to 32 bits. Without a
///   seed PHP picks a random one; so should the engine.
/// * `mt_rand()` / `rand()` -> `g.next_u32() >> 1`.
/// * `mt_rand($min, $max)` -> `g.range($min, $max)` after the engine checks
///   `$max >= $min` (else `ValueError: mt_rand(): Argument #2 ($max) must
///   be greater than or equal to argument #1 ($min)`). `rand($min, $max)`
///   swaps reversed bounds instead: `g.range($max, $min)`.
/// * `mt_getrandmax()` is `2147483647`.
#[derive(Clone)]
pub struct MtRand {
    state: [u32; N],
    index: usize,
    mode: MtRandMode,
}

impl std::fmt::Debug for MtRand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MtRand")
            .field("index", &self.index)
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl MtRand {
    /// A generator seeded with `seed` in the default `MT_RAND_MT19937`
    /// mode.
    pub fn new(seed: u32) -> Self {
        Self::with_mode(seed, MtRandMode::Mt19937)
    }

    /// A generator seeded with `seed` in the given mode.
    pub fn with_mode(seed: u32, mode: MtRandMode) -> Self {
        let mut g = MtRand {
            state: [0; N],
            index: N,
            mode,
        };
        g.seed(seed);
        g
    }

    /// The mode this generator runs in.
    pub fn mode(&self) -> MtRandMode {
        self.mode
    }

    /// Switches the mode, as `mt_srand($seed, $mode)` does before seeding.
    pub fn set_mode(&mut self, mode: MtRandMode) {
        self.mode = mode;
    }

    /// `mt_srand($seed)`: Knuth's initialisation, then a first reload.
    pub fn seed(&mut self, seed: u32) {
        self.state[0] = seed;
        for i in 1..N {
            let prev = self.state[i - 1];
            self.state[i] = 1812433253u32.wrapping_mul(prev ^ (prev >> 30)).wrapping_add(i as u32);
        }
        self.reload();
    }

    fn twist(&self, m: u32, u: u32, v: u32) -> u32 {
        let mixed = (u & 0x8000_0000) | (v & 0x7fff_ffff);
        // PHP 5 took the low bit from `u` instead of `v`.
        let low = match self.mode {
            MtRandMode::Mt19937 => v & 1,
            MtRandMode::Php => u & 1,
        };
        m ^ (mixed >> 1) ^ (0u32.wrapping_sub(low) & 0x9908_b0df)
    }

    fn reload(&mut self) {
        for i in 0..N - M {
            self.state[i] = self.twist(self.state[i + M], self.state[i], self.state[i + 1]);
        }
        for i in N - M..N - 1 {
            self.state[i] = self.twist(self.state[i + M - N], self.state[i], self.state[i + 1]);
        }
        self.state[N - 1] = self.twist(self.state[M - 1], self.state[N - 1], self.state[0]);
        self.index = 0;
    }

    /// `php_mt_rand()`: the next tempered 32-bit output. `mt_rand()`
    /// without arguments returns this shifted right by one.
    pub fn next_u32(&mut self) -> u32 {
        if self.index >= N {
            self.reload();
        }
        let mut s = self.state[self.index];
        self.index += 1;
        s ^= s >> 11;
        s ^= (s << 7) & 0x9d2c_5680;
        s ^= (s << 15) & 0xefc6_0000;
        s ^ (s >> 18)
    }

    /// `mt_rand($min, $max)` (requires `min <= max`): uniform by
    /// rejection sampling over 32 bits when the span fits, otherwise over
    /// 64 bits built from two outputs, the first being the low half. In
    /// `MT_RAND_PHP` mode, PHP 5's biased float scaling instead.
    pub fn range(&mut self, min: i64, max: i64) -> i64 {
        if self.mode == MtRandMode::Php {
            let n = (self.next_u32() >> 1) as f64;
            // RAND_RANGE_BADSCALING with PHP_MT_RAND_MAX.
            let span = max as f64 - min as f64 + 1.0;
            let offset = span * (n / (2147483647.0 + 1.0));
            // The C cast of an offset beyond PHP_INT_MAX is undefined; PHP
            // builds end up wrapping it modulo 2^64.
            let offset = if offset < 9223372036854775808.0 {
                offset as i64
            } else {
                (offset as u64) as i64
            };
            return min.wrapping_add(offset);
        }
        self.uniform_range(min, max)
    }

    /// The engine's own range (PHP's `php_random_range`), uniform in
    /// either mode: what `shuffle`, `array_rand` and `str_shuffle` draw
    /// with (only `mt_rand`/`rand` keep PHP 5's scaling in
    /// `MT_RAND_PHP` mode).
    pub fn uniform_range(&mut self, min: i64, max: i64) -> i64 {
        let umax = (max as u64).wrapping_sub(min as u64);
        let offset = if umax > u64::from(u32::MAX) {
            self.range64(umax)
        } else {
            u64::from(self.range32(umax as u32))
        };
        (min as u64).wrapping_add(offset) as i64
    }

    fn range32(&mut self, umax: u32) -> u32 {
        let mut result = self.next_u32();
        if umax == u32::MAX {
            return result;
        }
        let span = umax + 1;
        if span & (span - 1) == 0 {
            return result & (span - 1);
        }
        // Largest multiple of `span` minus one: above it the modulo would
        // be biased.
        let limit = u32::MAX - (u32::MAX % span) - 1;
        while result > limit {
            result = self.next_u32();
        }
        result % span
    }

    fn next_u64(&mut self) -> u64 {
        let low = u64::from(self.next_u32());
        let high = u64::from(self.next_u32());
        low | (high << 32)
    }

    fn range64(&mut self, umax: u64) -> u64 {
        let mut result = self.next_u64();
        if umax == u64::MAX {
            return result;
        }
        let span = umax + 1;
        if span & (span - 1) == 0 {
            return result & (span - 1);
        }
        let limit = u64::MAX - (u64::MAX % span) - 1;
        while result > limit {
            result = self.next_u64();
        }
        result % span
    }
}
