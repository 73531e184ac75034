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

    /// The generator `n` draws on: the same state as `n` calls of [`Rng::uniform`], in
    /// `O(log n)` products of polynomials of degree 256 (xoshiro256's step is linear over
    /// GF(2): `n` steps are `x^n mod P(x)` of the step, `P` its characteristic polynomial),
    /// so that the tasks of a seeded start each begin at their own place in the one stream.
    pub(crate) fn skipped(&self, n: u64) -> Rng {
        let state = self.0.state();
        let mut s = [0u64; 4];
        for (w, b) in s.iter_mut().zip(state.chunks_exact(8)) {
            let mut le = [0u8; 8];
            le.copy_from_slice(b);
            *w = u64::from_le_bytes(le);
        }
        let j = x_pow_mod(n, &char_poly());
        // J(step)·s: Σ_i j_i stepⁱ(s).
        let mut acc = [0u64; 4];
        for i in 0..256 {
            if j.get(i / 64).is_some_and(|w| (w >> (i % 64)) & 1 == 1) {
                acc.iter_mut().zip(s.iter()).for_each(|(a, b)| *a ^= *b);
            }
            step(&mut s);
        }
        let mut seed = [0u8; 32];
        for (b, w) in seed.chunks_exact_mut(8).zip(acc.iter()) {
            b.copy_from_slice(&w.to_le_bytes());
        }
        // A nonzero state stays nonzero (the step is invertible), so `from_seed` takes it
        // as it is.
        Rng(Xoshiro256PlusPlus::from_seed(seed))
    }

    /// Uniform index in `0..n` (`n > 0`), by Lemire's multiply-shift (bias below 2⁻⁶⁴·n).
    #[allow(dead_code)]
    #[inline]
    pub(crate) fn below(&mut self, n: usize) -> usize {
        ((self.0.next_u64() as u128 * n as u128) >> 64) as usize
    }
}

/// xoshiro256's state step (the linear engine under the `++` output).
#[inline]
fn step(s: &mut [u64; 4]) {
    let t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = s[3].rotate_left(45);
}

/// A polynomial over GF(2) of degree below 512 (bit `i` of word `i / 64`: `x^i`).
type Poly = [u64; 8];

fn bit(p: &Poly, i: usize) -> bool {
    p.get(i / 64).is_some_and(|w| (w >> (i % 64)) & 1 == 1)
}

fn flip(p: &mut Poly, i: usize) {
    if let Some(w) = p.get_mut(i / 64) {
        *w ^= 1 << (i % 64);
    }
}

/// `a ^= b·x^m` (terms past degree 511 dropped; they do not occur below).
fn xor_shifted(a: &mut Poly, b: &Poly, m: usize) {
    let (ws, bs) = (m / 64, m % 64);
    for (i, &w) in b.iter().enumerate() {
        if let Some(o) = a.get_mut(i + ws) {
            *o ^= w << bs;
        }
        if bs > 0 {
            if let Some(o) = a.get_mut(i + ws + 1) {
                *o ^= w >> (64 - bs);
            }
        }
    }
}

/// The characteristic polynomial of xoshiro256's step, of degree 256: the minimal
/// polynomial of the sequence of one state bit from a nonzero state (Berlekamp–Massey over
/// 512 terms; the step's polynomial is primitive, so every nonzero sequence has it).
fn char_poly() -> Poly {
    let mut s = [1u64, 2, 3, 4];
    let mut seq = [0u64; 8];
    for i in 0..512 {
        if s[0] & 1 == 1 {
            flip(&mut seq, i);
        }
        step(&mut s);
    }
    // Connection polynomial c (c_0 = 1): seq_n = Σ_{i=1..L} c_i seq_{n−i}.
    let (mut c, mut b) = ([0u64; 8], [0u64; 8]);
    c[0] = 1;
    b[0] = 1;
    let (mut l, mut m) = (0usize, 1usize);
    for n in 0..512 {
        let mut d = bit(&seq, n);
        for i in 1..=l.min(n) {
            d ^= bit(&c, i) && bit(&seq, n - i);
        }
        if !d {
            m += 1;
        } else if 2 * l <= n {
            let t = c;
            xor_shifted(&mut c, &b, m);
            l = n + 1 - l;
            b = t;
            m = 1;
        } else {
            xor_shifted(&mut c, &b, m);
            m += 1;
        }
    }
    // P(x) = x^L c(1/x).
    let mut p = [0u64; 8];
    for i in 0..=l {
        if bit(&c, i) {
            flip(&mut p, l - i);
        }
    }
    p
}

/// `a·b mod p` (`a`, `b` of degree below 256, `p` of degree 256).
fn mul_mod(a: &Poly, b: &Poly, p: &Poly) -> Poly {
    let mut r = [0u64; 8];
    for i in 0..256 {
        if bit(a, i) {
            xor_shifted(&mut r, b, i);
        }
    }
    for i in (256..512).rev() {
        if bit(&r, i) {
            xor_shifted(&mut r, p, i - 256);
        }
    }
    r
}

/// `x^n mod p` (`p` of degree 256).
fn x_pow_mod(n: u64, p: &Poly) -> Poly {
    let mut r = [0u64; 8];
    r[0] = 1;
    for k in (0..64).rev() {
        r = mul_mod(&r, &r, p);
        if (n >> k) & 1 == 1 {
            // r·x: a shift by one, reduced.
            let mut t = [0u64; 8];
            xor_shifted(&mut t, &r, 1);
            if bit(&t, 256) {
                xor_shifted(&mut t, p, 0);
            }
            r = t;
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skipped_is_the_stream_n_draws_on() {
        for seed in [0u64, 1, 42, u64::MAX] {
            for n in [0u64, 1, 2, 63, 64, 255, 256, 257, 1000, 12345] {
                let mut a = Rng::new(seed);
                for _ in 0..n {
                    a.uniform();
                }
                let mut b = Rng::new(seed).skipped(n);
                for _ in 0..5 {
                    assert_eq!(a.uniform().to_bits(), b.uniform().to_bits(), "{seed} {n}");
                }
            }
        }
        // Composes: n then m is n + m.
        let mut a = Rng::new(9).skipped(1 << 40).skipped(77);
        let mut b = Rng::new(9).skipped((1 << 40) + 77);
        assert_eq!(a.uniform().to_bits(), b.uniform().to_bits());
    }

    #[test]
    fn char_poly_has_degree_256() {
        let p = char_poly();
        assert!(bit(&p, 256) && bit(&p, 0));
        assert!((257..512).all(|i| !bit(&p, i)));
    }
}
