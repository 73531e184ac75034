//! What a solver asks of the ranks it runs on: the collectives of the
//! shallow solver ([`Collective`]), and the single process ([`Local`]), whose
//! collectives are no-ops.
//!
//! The shallow solver ([`super::shallow`]) is written once against
//! [`Collective`]. Every input of its U-step is a sum over items, its V-step is
//! per item given `P`, `Q` and the graph products, and its objective's parts
//! are sums over items too (`crate::steps::shard` lists them); so a run whose
//! items are split over ranks differs from the single process only in *where*
//! those sums and products are formed. [`Local`] forms them on the one
//! process's items (the graph through its [`GraphOp`]: the bits of the
//! single-process fits); the distributed fit (`crate::models::dist`) forms the
//! shard's share and combines the ranks' through a caller's
//! [`crate::steps::shard::Comm`] (allreduce, and the halo of `V` by exchange).

use crate::data::{FactorsMut, Prepared, ViewSet};
use crate::error::Error;
use crate::graph::GraphOp;
use crate::linalg::dot;
use crate::linalg::real::Real;
use crate::par::Parallel;
use crate::steps::init::{random_start, random_start_par};
use crate::steps::mu::gram;
use crate::steps::scale::Scale;
use crate::steps::{MvslParams, NmfParams};
use crate::work::Stack;

/// The sums over items a V phase ends with (the objective's parts that
/// depend on `V`): the graph's traces, `⟨Q, V⟩` and `Σ V` (0 unless `γ > 0`
/// for [`Local`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct VStats {
    /// `(tr(V Lᵃ Vᵀ), tr(V Lᵖ Vᵀ))` (zeros without a graph).
    pub(crate) traces: (f64, f64),
    /// `⟨Q, V⟩` over all items.
    pub(crate) qv: f64,
    /// `Σ V` over all items.
    pub(crate) sum_v: f64,
}

/// A V phase's point: this process's columns of `V` (`K × n`), `Q` beside
/// them, and the graph's products at `V` (written: `plus = (Dᵃ+Wᵖ)V̄`,
/// `minus = (Dᵖ+Wᵃ)V̄`).
pub(crate) struct AtV<'a, T> {
    /// `V` (`K × n`).
    pub(crate) v: &'a [T],
    /// `Q = Σ_v Uᵀ X` (`K × n`).
    pub(crate) q: &'a [T],
    /// `(K, n)`.
    pub(crate) kn: (usize, usize),
    /// `(Dᵃ+Wᵖ)V̄`.
    pub(crate) plus: &'a mut [T],
    /// `(Dᵖ+Wᵃ)V̄`.
    pub(crate) minus: &'a mut [T],
}

/// The collectives of the shallow solver over the items of this process
/// (module docs). Every call is made by every rank, in the same order with the
/// same lengths (the solver's loop is the same on every rank).
pub(crate) trait Collective<T: Real> {
    /// The items are split over ranks: the U-step's `R_v = X_v Vᵀ` are formed
    /// for every view and reduced at once ([`Collective::reduce_r`]) before the
    /// U-steps; otherwise each view's is formed just before its U-step (and the
    /// fused sparse U-step may apply).
    fn split(&self) -> bool;

    /// `½ Σ_v ‖s·X^(v)‖²_F` over all items, `s` the fit's data scale.
    fn half_x2<VS: ViewSet<T> + ?Sized>(&mut self, views: &VS, scale: Scale) -> Result<f64, Error>;

    /// The seeded random start ([`crate::steps::init`]): this process's
    /// columns of the single process's `V`, and all the bases.
    fn random_start<VS: ViewSet<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
        &self,
        views: &VS,
        k: usize,
        params: &NmfParams,
        s: f64,
        u: &mut F,
        v: &mut [T],
    );

    /// [`Collective::random_start`] with its draws in tasks on `par` where the collective
    /// can (one process: [`crate::steps::init::random_start_par`], the same values).
    #[allow(clippy::too_many_arguments)]
    fn random_start_par<VS: ViewSet<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
        &self,
        views: &VS,
        k: usize,
        params: &NmfParams,
        s: f64,
        u: &mut F,
        v: &mut [T],
        _par: Parallel,
    ) -> Result<(), Error> {
        self.random_start(views, k, params, s, u, v);
        Ok(())
    }

    /// (Split only.) Every view's `R_v = s·X_v Vᵀ` over all items, kept for
    /// [`Collective::r`].
    #[allow(clippy::too_many_arguments)]
    fn reduce_r<VS: ViewSet<T> + ?Sized>(
        &mut self,
        views: &VS,
        prep: &Prepared<'_, T>,
        s: T,
        v: &[T],
        k: usize,
        sc: &mut Stack<'_>,
    ) -> Result<(), Error>;

    /// (Split only.) `len` values of the reduced `R` from `off` (view `i`'s
    /// block starts at `Σ_{j<i} M_j·K`).
    fn r(&self, off: usize, len: usize) -> Result<&[T], Error>;

    /// The graph's products at `at.v` for the next V-step (into `at.plus`,
    /// `at.minus`), between the inner V-steps; only with a graph.
    fn products(&mut self, at: AtV<'_, T>, sc: &mut Stack<'_>) -> Result<(), Error>;

    /// At the end of a V phase (and at the start): `g ← V Vᵀ` over all items,
    /// the graph's products at `at.v` (left in `at.plus`, `at.minus` for the
    /// next V phase) and [`VStats`].
    fn stats(&mut self, at: AtV<'_, T>, g: &mut [T], sc: &mut Stack<'_>) -> Result<VStats, Error>;

    /// Every graph weight is zero ([`GraphOp::is_zero`]; `false` unless known:
    /// then `β` does not limit the data scale, `crate::steps::scale::acting`).
    fn graph_zero(&self) -> bool {
        false
    }

    /// The weights of the problem the fit solves (scaled: `crate::steps::scale`).
    fn weights(&mut self, params: &MvslParams) {
        let _ = params;
    }

    /// The start's objective is formed: what follows is the iterations (a
    /// distributed fit's traffic is counted from here).
    fn started(&mut self) {}

    /// The monitor's stop vote: `local` is this process's; stop when any rank
    /// asks to.
    fn vote(&mut self, local: bool) -> Result<bool, Error>;

    /// The run's outcome on this process, agreed with the other ranks (a
    /// distributed fit's closing agreement).
    fn finish<R>(&mut self, r: Result<R, Error>) -> Result<R, Error> {
        r
    }
}

/// One process: every item here, the graph an operator over all of them,
/// every collective a no-op.
pub(crate) struct Local<'g, G: ?Sized> {
    /// The graph over the items (`NoGraph` for NMF).
    pub(crate) graph: &'g G,
    /// `β > 0`: the graph takes part (set from the fit's weights).
    use_graph: bool,
    /// `γ > 0`: `Σ V` is part of the objective (set from the fit's weights).
    sum_v: bool,
    /// `½ Σ_v ‖X^(v)‖²_F` when the inputs' check measured it ([`Local::with_half`]).
    half: Option<f64>,
}

impl<'g, G: ?Sized> Local<'g, G> {
    /// One process with this graph over its items.
    pub(crate) fn new(graph: &'g G) -> Self {
        Local {
            graph,
            use_graph: false,
            sum_v: false,
            half: None,
        }
    }

    /// With `½ Σ_v ‖X^(v)‖²_F` of the views as the inputs' check measured it
    /// (`steps::check::Checked::half`): a fit at scale 1 takes it instead of a pass over
    /// the data (the same bits, [`Scale::half_sq`]).
    pub(crate) fn with_half(self, half: f64) -> Self {
        Local {
            half: Some(half),
            ..self
        }
    }
}

impl<T: Real, G: GraphOp<T> + ?Sized> Collective<T> for Local<'_, G> {
    fn split(&self) -> bool {
        false
    }

    fn half_x2<VS: ViewSet<T> + ?Sized>(&mut self, views: &VS, scale: Scale) -> Result<f64, Error> {
        match self.half {
            // Measured at scale 1 as `half_sq` sums (view by view, from zero).
            Some(h) if scale.is_one() && h > 0.0 => Ok(h),
            _ => Ok(scale.half_sq(views)),
        }
    }

    fn graph_zero(&self) -> bool {
        self.graph.is_zero()
    }

    fn random_start<VS: ViewSet<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
        &self,
        views: &VS,
        k: usize,
        params: &NmfParams,
        s: f64,
        u: &mut F,
        v: &mut [T],
    ) {
        random_start(views, k, params, s, u, v)
    }

    fn random_start_par<VS: ViewSet<T> + ?Sized, F: FactorsMut<T> + ?Sized>(
        &self,
        views: &VS,
        k: usize,
        params: &NmfParams,
        s: f64,
        u: &mut F,
        v: &mut [T],
        par: Parallel,
    ) -> Result<(), Error> {
        random_start_par(views, k, params, s, u, v, par)
    }

    fn reduce_r<VS: ViewSet<T> + ?Sized>(
        &mut self,
        _views: &VS,
        _prep: &Prepared<'_, T>,
        _s: T,
        _v: &[T],
        _k: usize,
        _sc: &mut Stack<'_>,
    ) -> Result<(), Error> {
        Err(Error::Internal)
    }

    fn r(&self, _off: usize, _len: usize) -> Result<&[T], Error> {
        Err(Error::Internal)
    }

    fn products(&mut self, at: AtV<'_, T>, sc: &mut Stack<'_>) -> Result<(), Error> {
        let AtV {
            v, kn, plus, minus, ..
        } = at;
        self.graph.apply(v, kn.0, plus, minus, sc).map(|_| ())
    }

    fn stats(&mut self, at: AtV<'_, T>, g: &mut [T], sc: &mut Stack<'_>) -> Result<VStats, Error> {
        let AtV {
            v,
            q,
            kn: (k, n),
            plus,
            minus,
        } = at;
        gram(v, k, n, g, sc)?;
        let traces = if self.use_graph {
            self.graph.apply(v, k, plus, minus, sc)?
        } else {
            (0.0, 0.0)
        };
        let sum_v = if self.sum_v {
            v.iter().map(|x| x.to_f64()).sum::<f64>()
        } else {
            0.0
        };
        Ok(VStats {
            traces,
            qv: dot(q, v),
            sum_v,
        })
    }

    fn vote(&mut self, local: bool) -> Result<bool, Error> {
        Ok(local)
    }

    fn weights(&mut self, params: &MvslParams) {
        self.use_graph = params.beta > 0.0;
        self.sum_v = params.gamma > 0.0;
    }
}
