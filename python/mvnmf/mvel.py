"""MVEL (multi-view embedding learning for incompletely labeled data, seed 002)
as a scikit-learn-style estimator over libmvnmf.

MVEL is transductive: it completes the labels of the samples it is fitted on
(every sample keeps its given positives; a 0 means unknown, not negative).
`fit(X, Y)` learns from all samples at once; `predict()`, `predict_proba()`,
`decision_function()` and `transform()` answer for those samples (called
with no X, or with the X that was fitted). The steps, the same calls and
defaults as `examples-c/multilabel` (docs/multilabel.md):

1. every view standardised per feature (`mvnmf_standardize_view`; default
   `standardize=True`: MVEL's RBF distances add the views' features, so a
   view whose units are larger — years next to log-votes — would otherwise
   decide the graph alone);
2. the fused multi-view graph with the cross-view CCA graphs: dense
   (`mvnmf_fused_graph`, `graph="dense"`, the default and the C program's) or
   sparsified to each sample's `n_neighbors` largest weights
   (`mvnmf_fused_knn_graph_build`, `graph="knn"`, a CSR graph; its neighbours
   found by the exact sweep or by NN-descent, `graph_build`);
3. the unknown weight `mu` = given positives / unknown entries (`unknown_weight
   ="auto"`);
4. the label frequency of each label (the share of its positives that is
   given) estimated out of sample: a share `holdout` (0.3) of the given
   positives is held out of a first fit, and `mvnmf_mvel_label_freq_holdout`
   compares their scores with the unknown samples' scores;
5. the fit on all given labels (`mvnmf_mvel_fit`, r = 64 as the paper), its
   scores `QH` (`mvnmf_mvel_predict`) and the decisions by the library's
   per-label threshold rule: `decide="pu"` (`mvnmf_mvel_decide_pu`,
   positive–unlabeled thresholds) or `"count"` (`mvnmf_mvel_count_thresholds`,
   each label's estimated number of hidden positives), every given positive
   kept.

The hold-out draw uses the C program's generator with `random_state` as its
seed, so for the same data, seed and options the decisions equal the
program's bit for bit.

Cost of the graph (n samples, d features in all views): the dense graph takes
O(n^2 d) time and n x n doubles (8 n^2 bytes: 3.2 GB at n = 20,000), and each
fit iteration O(n^2 r); `graph="knn"` keeps at most 2 n `n_neighbors` entries
(O(n s) memory, each iteration O(n s r)), found in O(n^2 d) time by
`graph_build="exact"` or in about linear time by `"approx"` (NN-descent over
a surrogate of the fused weight, each list re-ranked by the fused weight
itself; seeded by `random_state`, the same graph for every `n_jobs`);
`"auto"` (the default) is exact below MVNMF_GRAPH_AUTO_EXACT_BELOW samples
(bitwise the exact graph there) and NN-descent from there on.
"""
import ctypes as C
import numbers

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_array, check_is_fitted

from . import _bindings as B
from ._lib import ViewSet, call, lib, workspace
from .estimators import _threads

__all__ = ["MVEL"]

_U8 = C.POINTER(C.c_uint8)
_D = C.POINTER(C.c_double)
_MASK = (1 << 64) - 1
_SZ = C.POINTER(C.c_size_t)
# MVEL(graph_build=...): how the kNN graph's neighbours are found.
_BUILDS = {"exact": B.MVNMF_GRAPH_BUILD_EXACT, "approx": B.MVNMF_GRAPH_BUILD_APPROX,
           "auto": B.MVNMF_GRAPH_BUILD_AUTO}


def _holdout_split(given, seed, share):
    """The C program's hold-out draw: (kept, held) 0/1 arrays of the given
    labels' shape (labels x samples, column-major order of the draws)."""
    flat = np.asarray(given, dtype=np.uint8).ravel(order="F")
    held = np.zeros_like(flat)
    rs = (seed * 0x2545F4914F6CDD1D + 17) & _MASK
    for k in range(flat.size):
        rs = (rs * 6364136223846793005 + 1442695040888963407) & _MASK
        held[k] = flat[k] and (rs >> 11) * (1.0 / 9007199254740992.0) < share
    kept = flat & (1 - held)
    shape = np.asarray(given).shape
    return kept.reshape(shape, order="F"), held.reshape(shape, order="F")


class MVEL(BaseEstimator):
    """Multi-view embedding learning for incompletely labeled data.

    Parameters
    ----------
    n_components : int, default 64
        The embedding dimension r (the paper's 64).
    theta1, theta2 : float, defaults 1 and 0.1
        The graph and label-correlation weights.
    unknown_weight : float >= 0 or "auto", default "auto"
        An unknown label counts as a weak negative of this weight; "auto":
        given positives / unknown entries (0 is the paper's objective, whose
        constrained minimiser is trivial; see src/models/mvel.rs).
    decide : "pu" (default) or "count"
        The per-label threshold rule (module docs).
    label_freq : "holdout" (default), "auto" or float in (0, 1]
        The share of each label's positives that is given: estimated from
        held-out given positives, Elkan–Noto's in-sample estimate ("auto",
        "pu" only), or known.
    holdout : float in (0, 1), default 0.3
        The share of the given positives held out of the first fit.
    min_held : int >= 1, default 10
        Held-out positives above any threshold the hold-out estimate uses.
    standardize : bool, default True
        Every feature of every view to mean 0, variance 1 before the graph.
    max_iter, tol, nmf_iter : the fit's iterations, relative-decrease
        tolerance and the NMF start's iterations (defaults 100, 1e-6, 100).
    random_state : int, default 0
        The seed of the hold-out draw (the fit's start is seeded by
        `seed`, default 0, as the C program).
    view_sizes : list of int or None
        One 2-D X whose columns are the views side by side, cut at these
        widths (as the other estimators); None with a list of views.
    graph : "dense" (default) or "knn"
        The fused graph as a dense n x n matrix (O(n^2) memory and time per
        iteration; the C program's and the paper's), or sparsified to each
        sample's `n_neighbors` largest weights, normalised and symmetrised
        (total weight n as the dense graph; O(n s) memory). See the module
        docs for the cost.
    n_neighbors : int >= 1, default 10
        `graph="knn"`: the neighbours kept per sample (fewer than n_samples).
    graph_build : "auto" (default), "exact" or "approx"
        `graph="knn"`: how the neighbours are found: every pair (O(n^2 d)),
        NN-descent (about linear; seeded by `random_state`), or exact below
        MVNMF_GRAPH_AUTO_EXACT_BELOW samples and NN-descent from there on.
    n_jobs : None, -1 or int >= 1
        Threads of the approximate graph's build (None: 1, -1: every core);
        the same graph for every value.

    Attributes
    ----------
    scores_ : (n_samples, n_labels) the label scores QH (in [-1, 1]).
    decisions_ : (n_samples, n_labels) 0/1 decisions (given positives kept).
    embedding_ : (n_samples, n_components) H transposed.
    label_map_ : (n_labels, n_components) Q.
    thresholds_ : (n_labels,) the per-label thresholds (score > tau decides).
    label_freq_ : (n_labels,) the label frequencies used (0: unknown).
    n_iter_, objective_ : of the final fit.
    graph_nnz_ : stored entries of the graph (n^2 for the dense graph).
    """

    _parameter_constraints = {
        "n_components": [Interval(numbers.Integral, 1, None, closed="left")],
        "theta1": [Interval(numbers.Real, 0, None, closed="left")],
        "theta2": [Interval(numbers.Real, 0, None, closed="left")],
        "unknown_weight": [Interval(numbers.Real, 0, None, closed="left"), StrOptions({"auto"})],
        "decide": [StrOptions({"pu", "count"})],
        "label_freq": [Interval(numbers.Real, 0, 1, closed="right"), StrOptions({"holdout", "auto"})],
        "holdout": [Interval(numbers.Real, 0, 1, closed="neither")],
        "min_held": [Interval(numbers.Integral, 1, None, closed="left")],
        "standardize": ["boolean"],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "nmf_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "seed": [Interval(numbers.Integral, 0, None, closed="left")],
        "random_state": [Interval(numbers.Integral, 0, None, closed="left")],
        "view_sizes": ["array-like", None],
        "graph": [StrOptions({"dense", "knn"})],
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "graph_build": [StrOptions(set(_BUILDS))],
        "n_jobs": [numbers.Integral, None],
    }

    def __init__(self, n_components=64, *, theta1=1.0, theta2=0.1, unknown_weight="auto", decide="pu",
                 label_freq="holdout", holdout=0.3, min_held=10, standardize=True, max_iter=100, tol=1e-6,
                 nmf_iter=100, seed=0, random_state=0, view_sizes=None, graph="dense", n_neighbors=10,
                 graph_build="auto", n_jobs=None):
        self.n_components = n_components
        self.theta1 = theta1
        self.theta2 = theta2
        self.unknown_weight = unknown_weight
        self.decide = decide
        self.label_freq = label_freq
        self.holdout = holdout
        self.min_held = min_held
        self.standardize = standardize
        self.max_iter = max_iter
        self.tol = tol
        self.nmf_iter = nmf_iter
        self.seed = seed
        self.random_state = random_state
        self.view_sizes = view_sizes
        self.graph = graph
        self.n_neighbors = n_neighbors
        self.graph_build = graph_build
        self.n_jobs = n_jobs

    # ---- inputs -----------------------------------------------------------

    def _views(self, X):
        """The views as (n_features_v, n_samples) Fortran-ordered float64
        copies (features x items, column-major: mvnmf's dense layout)."""
        if isinstance(X, (list, tuple)):
            xs = [check_array(x, dtype=np.float64, input_name="X[%d]" % i) for i, x in enumerate(X)]
        else:
            X = check_array(X, dtype=np.float64)
            sizes = [X.shape[1]] if self.view_sizes is None else [int(s) for s in self.view_sizes]
            if sum(sizes) != X.shape[1] or min(sizes) < 1:
                raise ValueError("view_sizes %s must be positive and sum to X's %d columns" % (sizes, X.shape[1]))
            bounds = np.concatenate([[0], np.cumsum(sizes)])
            xs = [X[:, a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        n = xs[0].shape[0]
        if any(x.shape[0] != n for x in xs):
            raise ValueError("every view must have the same number of samples")
        if n < 2:
            raise ValueError("MVEL needs at least 2 samples")
        return [np.array(x, dtype=np.float64, copy=True) for x in xs]

    def _same_x(self, X):
        if X is None:
            return
        xs = self._views(X)
        if [x.shape for x in xs] != self._x_shapes or any(
                not np.array_equal(a, b) for a, b in zip(xs, self._x_raw)):
            raise ValueError("MVEL is transductive: it answers for the samples it was fitted on "
                             "(call with X=None or the fitted X)")

    # ---- fit -------------------------------------------------------------------

    def _params(self, given):
        p = lib.mvnmf_mvel_params_default()
        p.theta1, p.theta2 = float(self.theta1), float(self.theta2)
        p.max_iter, p.tol, p.nmf_iter, p.seed = int(self.max_iter), float(self.tol), int(self.nmf_iter), int(self.seed)
        if self.unknown_weight == "auto":
            pos, total = int(given.sum()), given.size
            p.unknown_weight = pos / (total - pos) if pos < total else 0.0
        else:
            p.unknown_weight = float(self.unknown_weight)
        return p

    def _graph(self, vs, n):
        """The fused graph over the n samples of `vs` as `self.graph` says:
        (mvnmf_graph, the arrays it points into, which must outlive it)."""
        gp = lib.mvnmf_fused_graph_params_default()
        gp.cross_view = 1
        nb = C.c_size_t()
        graph = B.mvnmf_graph()
        graph.n = n
        if self.graph == "dense":
            w = np.zeros((n, n), order="F")
            call("mvnmf_fused_graph_workspace", vs.array, vs.count, C.byref(gp), C.byref(nb))
            buf, ptr = workspace(nb.value)
            call("mvnmf_fused_graph", vs.array, vs.count, None, None, C.byref(gp), w.ctypes.data_as(_D), ptr,
                 nb.value)
            graph.kind = B.MVNMF_GRAPH_DENSE
            graph.affinity_weights = w.ctypes.data_as(_D)
            self.graph_nnz_ = n * n
            return graph, (w,)
        s = int(self.n_neighbors)
        if s >= n:
            raise ValueError("n_neighbors=%d must be below the number of samples (%d)" % (s, n))
        build = _BUILDS[self.graph_build]
        ann = lib.mvnmf_ann_params_default()
        ann.seed = int(self.random_state)
        ann.parallel.threads = _threads(self.n_jobs)
        cap = C.c_size_t()
        call("mvnmf_fused_knn_graph_capacity", n, s, C.byref(cap))
        rp = np.zeros(n + 1, dtype=np.uintp)
        ci = np.zeros(max(cap.value, 1), dtype=np.uintp)
        w = np.zeros(max(cap.value, 1))
        out = B.mvnmf_csr_buffers(rp.ctypes.data_as(_SZ), ci.ctypes.data_as(_SZ), w.ctypes.data_as(_D), cap.value)
        call("mvnmf_fused_knn_graph_build_workspace", vs.array, vs.count, s, None, C.byref(gp), build,
             C.byref(ann), C.byref(nb))
        buf, ptr = workspace(nb.value)
        nnz = C.c_size_t()
        call("mvnmf_fused_knn_graph_build", vs.array, vs.count, s, None, C.byref(gp), build, C.byref(ann),
             C.byref(out), C.byref(nnz), ptr, nb.value)
        ci, w = ci[:nnz.value].copy(), w[:nnz.value].copy()
        graph.kind = B.MVNMF_GRAPH_CSR
        graph.affinity_row_ptr = rp.ctypes.data_as(_SZ)
        graph.affinity_col_idx = ci.ctypes.data_as(_SZ)
        graph.affinity_weights = w.ctypes.data_as(_D)
        self.graph_nnz_ = int(nnz.value)
        return graph, (rp, ci, w)

    def _fit_once(self, labels, graph, p, c, n, r):
        """One MVEL fit on `labels` (c x n, Fortran uint8): (q, h, scores, report)."""
        q = np.zeros((c, r), order="F")
        h = np.zeros((r, n), order="F")
        rep, nb = B.mvnmf_report(), C.c_size_t()
        call("mvnmf_mvel_fit_workspace", c, C.byref(graph), r, C.byref(p), C.byref(nb))
        buf, ptr = workspace(nb.value)
        call("mvnmf_mvel_fit", labels.ctypes.data_as(_U8), c, C.byref(graph), r, C.byref(p),
             q.ctypes.data_as(_D), h.ctypes.data_as(_D), ptr, nb.value, B.mvnmf_progress_fn(), None, C.byref(rep))
        sc = np.zeros((c, n), order="F")
        call("mvnmf_mvel_predict_workspace", c, r, n, C.byref(nb))
        buf, ptr = workspace(nb.value)
        call("mvnmf_mvel_predict", q.ctypes.data_as(_D), h.ctypes.data_as(_D), c, r, n, sc.ctypes.data_as(_D),
             ptr, nb.value)
        return q, h, sc, rep

    def fit(self, X, Y):
        """Fits on the views X (a list of (n_samples, n_features_v) arrays, or
        one 2-D X cut by `view_sizes`) and the given labels Y ((n_samples,
        n_labels), 1 = given positive, 0 = unknown)."""
        self._validate_params()
        raw = self._views(X)
        self._x_raw = [x.copy() for x in raw]
        self._x_shapes = [x.shape for x in raw]
        n = raw[0].shape[0]
        Y = np.asarray(Y)
        if Y.ndim != 2 or Y.shape[0] != n:
            raise ValueError("Y must be (n_samples=%d, n_labels), not shape %s" % (n, Y.shape))
        if not np.isin(Y, (0, 1)).all():
            raise ValueError("Y must hold 0 (unknown) or 1 (given positive)")
        if self.decide == "count" and self.label_freq == "auto":
            raise ValueError("decide='count' needs label_freq='holdout' or a number")
        c, r = Y.shape[1], int(self.n_components)
        given = np.asfortranarray(Y.T.astype(np.uint8))  # labels x samples
        # Features x items, column-major, standardised per feature.
        fx = [np.asfortranarray(x.T) for x in raw]
        if self.standardize:
            for x in fx:
                kc = C.c_size_t()
                call("mvnmf_standardize_view", x.shape[0], n, x.ctypes.data_as(_D), C.byref(kc))
        vs = ViewSet([x.T for x in fx])
        graph, keep = self._graph(vs, n)  # `keep`: the arrays the graph points into
        nb = C.c_size_t()
        p = self._params(given)
        lf = np.zeros(c)
        if self.label_freq == "holdout":
            kept, held = _holdout_split(given, int(self.random_state), float(self.holdout))
            kept, held = np.asfortranarray(kept), np.asfortranarray(held)
            _, _, sc0, _ = self._fit_once(kept, graph, p, c, n, r)
            call("mvnmf_mvel_label_freq_holdout_workspace", n, C.byref(nb))
            buf, ptr = workspace(nb.value)
            call("mvnmf_mvel_label_freq_holdout", sc0.ctypes.data_as(_D), kept.ctypes.data_as(_U8),
                 held.ctypes.data_as(_U8), c, n, int(self.min_held), lf.ctypes.data_as(_D), ptr, nb.value)
        elif self.label_freq != "auto":
            lf[:] = float(self.label_freq)
        q, h, sc, rep = self._fit_once(given, graph, p, c, n, r)
        tau = np.zeros(c)
        pred = np.zeros((c, n), dtype=np.uint8, order="F")
        if self.decide == "count":
            call("mvnmf_mvel_count_thresholds_workspace", n, C.byref(nb))
            buf, ptr = workspace(nb.value)
            call("mvnmf_mvel_count_thresholds", sc.ctypes.data_as(_D), given.ctypes.data_as(_U8), c, n,
                 lf.ctypes.data_as(_D), tau.ctypes.data_as(_D), pred.ctypes.data_as(_U8), ptr, nb.value)
            used = lf.copy()
        else:
            used = np.zeros(c)
            call("mvnmf_mvel_decide_pu_workspace", n, C.byref(nb))
            buf, ptr = workspace(nb.value)
            call("mvnmf_mvel_decide_pu", sc.ctypes.data_as(_D), given.ctypes.data_as(_U8), c, n,
                 lf.ctypes.data_as(_D), tau.ctypes.data_as(_D), used.ctypes.data_as(_D),
                 pred.ctypes.data_as(_U8), ptr, nb.value)
        self.scores_ = np.ascontiguousarray(sc.T)
        self.decisions_ = np.ascontiguousarray(pred.T).astype(np.int64)
        self.embedding_ = np.ascontiguousarray(h.T)
        self.label_map_ = q
        self.thresholds_ = tau
        self.label_freq_ = used
        self.n_iter_ = int(rep.iterations)
        self.objective_ = float(rep.objective.total)
        self.n_labels_ = c
        self.n_features_in_ = sum(x.shape[1] for x in raw)
        del keep
        return self

    def fit_predict(self, X, Y):
        """Fits and returns `decisions_`."""
        return self.fit(X, Y).decisions_

    # ---- answers for the fitted samples -------------------------------------

    def predict(self, X=None):
        """The 0/1 decisions (n_samples, n_labels) of the fitted samples: the
        per-label threshold rule, every given positive kept."""
        check_is_fitted(self, "decisions_")
        self._same_x(X)
        return self.decisions_.copy()

    def decision_function(self, X=None):
        """The label scores QH (n_samples, n_labels), in [-1, 1]."""
        check_is_fitted(self, "scores_")
        self._same_x(X)
        return self.scores_.copy()

    def predict_proba(self, X=None):
        """The scores mapped to [0, 1] by (s + 1) / 2: a monotone ranking score
        per label (as scikit-learn's multi-label `predict_proba`, one column
        per label), not a calibrated probability."""
        return np.clip((self.decision_function(X) + 1.0) / 2.0, 0.0, 1.0)

    def transform(self, X=None):
        """The embedding H of the fitted samples (n_samples, n_components)."""
        check_is_fitted(self, "embedding_")
        self._same_x(X)
        return self.embedding_.copy()

    def fit_transform(self, X, Y):
        """Fits and returns `embedding_`."""
        return self.fit(X, Y).embedding_.copy()
