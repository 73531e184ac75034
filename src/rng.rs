//! Seeded random numbers for initialisation (xoshiro256++ from rand_xoshiro).

use rand_core::{Rng as _, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A small deterministic generator: same seed, same stream, on every platform.
pub(crate) struct Rng(Xoshiro256PlusPlus);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(Xoshiro256PlusPlus::seed_from_u64(seed))
    }

    /// Uniform in (0, 1]: 53 random bits, never exactly 0 (a zero entry of a
    /// multiplicative update's start would stay zero forever).
    #[inline]
    pub(crate) fn uniform(&mut self) -> f64 {
        let bits = self.0.next_u64() >> 11;
        (bits as f64 + 1.0) * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform index in `0..n` (`n > 0`), by Lemire's multiply-shift (bias below 2⁻⁶⁴·n).
    #[allow(dead_code)]
    #[inline]
    pub(crate) fn below(&mut self, n: usize) -> usize {
        ((self.0.next_u64() as u128 * n as u128) >> 64) as usize
    }
}
