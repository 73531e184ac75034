//! Sampled paths for the set-up passes that are quadratic in the number of labeled items
//! `N_l` (issue 30, item 2): the RBF median bandwidth and the MKL kernel–target alignment.
//!
//! Both are exact sums or order statistics over the `N_l(N_l − 1)/2` labeled pairs: at
//! `N = 10⁶` with 10 % labeled, `5·10⁹` pairs per pass. [`Sampling`] chooses, per call, the
//! exact pass or a seeded sample whose size does not grow with `N_l`:
//!
//! * **Median bandwidth** ([`super::Bandwidth::Median`]): the lower median of `d²` over `m`
//!   ([`Sampling::median_pairs`], default `2¹⁷`) pairs drawn independently and uniformly
//!   among the unordered labeled pairs `{i, j}`, `i ≠ j` (with replacement; the stream is
//!   the crate's xoshiro256++ from [`Sampling::seed`], the same pairs in every view). The selection is
//!   the same radix selection as the exact path, on the sampled multiset (element of rank
//!   `⌊(m − 1)/2⌋`); the fallback `1/mean(d²)` uses the sample's mean. Cost
//!   `O(m M_v)` per pass (2–3 passes, each pair one `1 × 1` block), memory unchanged.
//!   **Bound** (Dvoretzky–Kiefer–Wolfowitz with Massart's constant, or Hoeffding at the two
//!   quantiles): with `F` the distribution of `d²` over all labeled pairs, the sampled median
//!   `q̂` satisfies `F(q̂) ∈ [½ − ε, ½ + ε]` — its rank among all labeled pairs is within
//!   `±ε·P` of the middle — with probability at least `1 − 2·exp(−2mε²)`. With the default
//!   `m = 2¹⁷`: `ε = 0.005` with probability ≥ 0.997, `ε = 0.01` with probability
//!   ≥ `1 − 10⁻¹¹`. How far that moves `γ` depends on the density of `d²` near its median.
//!   Measured (`cargo run --release --example bench_setup`, one run): on UCI mfeat (all 2000
//!   items labeled, 1 999 000 pairs, the six views as shipped, five seeds) the sampled
//!   median's rank was within 0.0036 of ½ and `γ` within 0.44 % of the exact one (typically
//!   0.1 %); on 10⁴ synthetic labeled items (views of 100 and 50 features) within 0.2 %,
//!   in 0.36–0.74 s against 5.0–8.0 s for the exact selection (at
//!   2000 labeled items it is no faster: `2¹⁷` single pairs against `2·10⁶` in GEMM blocks).
//! * **MKL alignment** ([`super::mkl_weights`]): `G` and `b` summed over the pairs of a
//!   **stratified** sample of the labeled items: `s_c = min(n_c, max(2, ⌊s·n_c/N_l⌋))` items
//!   of each class `c` (`s` = [`Sampling::align_items`], default 2048), chosen uniformly
//!   without replacement (Knuth's selection sampling, seeded) and so in the class proportions
//!   of the labeled set. The weights `t_ij` are rescaled so that every class-pair block of
//!   `G` and `b` is estimated without bias: a sampled pair of class `c` with itself weighs
//!   `(n_c − 1) / (n_c s_c (s_c − 1))` per order (for `s_c = n_c`: the exact `1/n_c²`), a
//!   pair of classes `c ≠ d` weighs `1/(2 s_c s_d)`, and the diagonal `Σ_c 1/n_c` keeps the
//!   exact counts. The ridge (relative to `mean diag G`) and the exact simplex QP then run
//!   on the sampled `G`, `b`. Cost `O(s² Σ_v M_v)` instead of `O(N_l² Σ_v M_v)`, in parts
//!   from the sample's size (the same bits for every pool, as the exact pass).
//!   **Measured effect** (`bench_setup`, max over views of `|η_sampled − η_exact|`): on 10⁴
//!   synthetic labeled items in 10 classes (three views) the default `s = 2048` gave 0.003
//!   (0.012 at worst over five seeds) in 0.66–1.0 s against 13.6–16.8 s exact; on mfeat (2000
//!   labeled, six RBF views, whose exact weights are all between 0.12 and 0.22) `s` = 250,
//!   500, 1000 gave at worst 0.048, 0.057, 0.033 over five seeds, where the exact
//!   alignment loss is at most 0.14 % above its minimum (the objective is flat there). The item sample's error
//!   falls slowly (about as `√(1/s − 1/N_l)`: pairs that share items are correlated), so the
//!   weights are good to a few hundredths, not to the last digit; `tests/setup_scale.rs`
//!   holds it to 0.04 at `s = N_l/2` on the shipped 500-item sample.
//!
//! **When:** [`SetupPath::Auto`] (the default) samples when `N_l > `[`Sampling::auto_above`]
//! (default 4096 labeled items: the exact median costs about `3·N_l²/2` pair distances, the
//! exact alignment `N_l²/2` pairs of every view); [`SetupPath::Exact`] never samples,
//! [`SetupPath::Sampled`] always does. In every case a sample that would not be smaller than
//! the population (`m ≥ N_l(N_l − 1)/2`, `s_total ≥ N_l`) means the exact pass, so below the
//! threshold, and for small labeled sets, the results are bitwise those of the exact code.
//!
//! The graph builders (LDGE, TGE, fused kNN, class pairs) resolve a median bandwidth with
//! `Sampling::default()`; [`super::mkl_weights`] (and the pipeline through
//! [`super::MklParams::sampling`]) and [`super::resolve_bandwidths_with`] take it as an
//! option. A caller who asks for a non-default rule in MKL and needs the graph under the same
//! `γ` passes the `γ`s from [`super::resolve_bandwidths_with`] as `Bandwidth::Gamma`.

use crate::error::Error;
use crate::rng::Rng;

/// Which path a set-up pass over the labeled pairs takes (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SetupPath {
    /// Exact up to [`Sampling::auto_above`] labeled items, sampled above.
    #[default]
    Auto,
    /// Always the exact pass over all labeled pairs.
    Exact,
    /// Always the sampled pass (exact when the sample would not be smaller).
    Sampled,
}

/// Sampling of the set-up passes that are quadratic in the labeled items (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampling {
    /// Exact, sampled, or by size (default [`SetupPath::Auto`]).
    pub path: SetupPath,
    /// [`SetupPath::Auto`] samples when there are more labeled items than this (default 4096).
    pub auto_above: usize,
    /// Pairs drawn for a median bandwidth, `>= 1` (default `2¹⁷`).
    pub median_pairs: usize,
    /// Labeled items sampled (stratified by class) for the alignment, `>= 2` (default 2048).
    pub align_items: usize,
    /// Seed of both samples (default 0).
    pub seed: u64,
}

/// Default of [`Sampling::auto_above`].
/// cbindgen:ignore
pub const AUTO_ABOVE: usize = 4096;

impl Default for Sampling {
    fn default() -> Self {
        Sampling {
            path: SetupPath::Auto,
            auto_above: AUTO_ABOVE,
            median_pairs: 1 << 17,
            align_items: 2048,
            seed: 0,
        }
    }
}

/// Stream of the alignment's sample (the median's is `seed` itself).
const ALIGN_STREAM: u64 = 0x9e37_79b9_7f4a_7c15;

impl Sampling {
    /// [`Error::BadParameter`] unless `median_pairs >= 1` and `align_items >= 2`.
    pub fn validate(&self) -> Result<(), Error> {
        if self.median_pairs >= 1 && self.align_items >= 2 {
            Ok(())
        } else {
            Err(Error::BadParameter)
        }
    }

    /// Does the rule ask for sampling with `nl` labeled items?
    fn wants(&self, nl: usize) -> bool {
        match self.path {
            SetupPath::Auto => nl > self.auto_above,
            SetupPath::Exact => false,
            SetupPath::Sampled => true,
        }
    }

    /// Sampled median with `nl` labeled items: `Some(m)` pairs, or `None` for the exact pass.
    pub(crate) fn median_pairs_for(&self, nl: usize) -> Option<u64> {
        let pairs = (nl as u128) * (nl.saturating_sub(1) as u128) / 2;
        let m = self.median_pairs as u128;
        (self.wants(nl) && nl >= 2 && m >= 1 && m < pairs).then_some(m as u64)
    }

    /// Does the alignment sample with `nl` labeled items (and these class counts)?
    pub(crate) fn align_sampled(&self, nl: usize, counts: impl Iterator<Item = usize>) -> bool {
        self.wants(nl) && self.align_items >= 2 && {
            let total: usize = counts
                .map(|n| self.class_share(n, nl))
                .fold(0usize, |a, b| a.saturating_add(b));
            total < nl
        }
    }

    /// `s_c` for a class of `n_c` labeled items out of `nl`.
    pub(crate) fn class_share(&self, n_c: usize, nl: usize) -> usize {
        let prop = (self.align_items as u128 * n_c as u128 / (nl.max(1) as u128)) as usize;
        prop.max(2).min(n_c)
    }

    /// Most items the stratified sample can hold with `n_classes` classes of `n` items.
    pub(crate) fn align_cap(&self, n: usize, n_classes: usize) -> usize {
        self.align_items
            .saturating_add(n_classes.saturating_mul(2))
            .min(n)
    }

    /// The median's pair stream.
    pub(crate) fn median_rng(&self) -> Rng {
        Rng::new(self.seed)
    }

    /// The alignment's item stream.
    pub(crate) fn align_rng(&self) -> Rng {
        Rng::new(self.seed ^ ALIGN_STREAM)
    }
}

/// Appends to `out` a uniform sample of `want` of `items` (without replacement, in their
/// order: Knuth's selection sampling), returns how many it wrote (`min(want, items.len(),
/// out.len())`).
pub(crate) fn select(items: &[usize], want: usize, rng: &mut Rng, out: &mut [usize]) -> usize {
    let n = items.len();
    let want = want.min(n).min(out.len());
    let mut got = 0;
    for (t, &j) in items.iter().enumerate() {
        if got == want {
            break;
        }
        // Selected with probability (want − got) / (n − t).
        if rng.below(n - t) < want - got {
            if let Some(o) = out.get_mut(got) {
                *o = j;
            }
            got += 1;
        }
    }
    got
}
