"""scikit-learn estimators over libmvnmf.

Shapes follow scikit-learn: a view is (n_samples, n_features_v); `fit_transform`
returns W (n_samples, n_components); `components_` is (n_components,
n_features). mvnmf stores the same numbers column-major with items as columns,
so these arrays are the library's own buffers, not copies.

Several views of the same samples come either as a list of arrays (one per
view) or, for scikit-learn's model selection (`Pipeline`, `cross_val_score`,
`GridSearchCV` need one X indexable by samples), as one 2-D X whose columns are
the views side by side, with `view_sizes` giving each view's width.

The estimators are scikit-learn `BaseEstimator`s and `TransformerMixin`s and
pass `sklearn.utils.estimator_checks.check_estimator` (python/tests/
test_sklearn.py): parameters validated with scikit-learn's errors, float32 kept
through the library's `_f32` entry points, `get_feature_names_out` and
`set_output`.
"""
import ctypes as C
import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_array, check_is_fitted, check_non_negative, validate_data

from . import _bindings as B
from ._lib import Progress, ViewSet, call, lib, pointers, views_of, workspace

__all__ = ["MultiViewNMF", "SemiSupervisedMultiViewNMF", "expected_failed_checks"]

_INITS = {"nndsvd": B.MVNMF_NNDSVD, "nndsvda": B.MVNMF_NNDSVDA, "nndsvdar": B.MVNMF_NNDSVDAR}
_BETAS = {"frobenius": 2.0, "kullback-leibler": 1.0, "itakura-saito": 0.0}
_STOP = {"sklearn": B.MVNMF_STOP_RULE_SKLEARN, "every_iteration": B.MVNMF_STOP_RULE_EVERY_ITERATION}
_METHODS = {"joint-nmf": B.MVNMF_METHOD_JOINT_NMF, "gnmf": B.MVNMF_METHOD_GNMF, "mvsl-s": B.MVNMF_METHOD_MVSL_S,
            "mvsl-l": B.MVNMF_METHOD_MVSL_L, "mvsl-t": B.MVNMF_METHOD_MVSL_T, "mcl": B.MVNMF_METHOD_MCL}
_FLOATS = [np.float64, np.float32]


def _threads(n_jobs):
    """mvnmf_parallel.threads of scikit-learn's n_jobs (None: 1, -1: every core)."""
    if n_jobs is None:
        return 1
    if n_jobs == -1:
        return 0
    if int(n_jobs) != n_jobs or n_jobs < 1:
        raise ValueError("n_jobs must be None, -1 or a positive integer, not %r" % (n_jobs,))
    return int(n_jobs)


def _seed(random_state):
    """A 64-bit seed from an int, a numpy Generator / RandomState, or None (fresh)."""
    if isinstance(random_state, numbers.Integral):
        return int(random_state) & (2**64 - 1)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**63 - 1))
    return int(np.random.default_rng(random_state).integers(0, 2**63 - 1))


def _stacked(xs):
    """The views side by side: one (n_samples, sum of features) array or CSR matrix."""
    if len(xs) == 1:
        return xs[0]
    if any(hasattr(x, "tocsr") for x in xs):
        import scipy.sparse as sp
        return sp.hstack(xs, format="csr")
    return np.hstack(xs)


def _ptr(a):
    return a.ctypes.data_as(C.POINTER(C.c_float if a.dtype == np.float32 else C.c_double))


def _fn(name, dtype):
    """The C function `name`, or its `_f32` twin for float32 data
    (mvnmf_x_fit -> mvnmf_x_fit_f32, mvnmf_x_fit_workspace -> mvnmf_x_fit_f32_workspace)."""
    if dtype != np.float32:
        return name
    if name.endswith("_workspace"):
        return name[: -len("_workspace")] + "_f32_workspace"
    return name + "_f32"


# SemiSupervisedMultiViewNMF(graph=...): MvSL-T's neighbour search.
_GRAPHS = {"exact": B.MVNMF_GRAPH_BUILD_EXACT, "approx": B.MVNMF_GRAPH_BUILD_APPROX,
           "auto": B.MVNMF_GRAPH_BUILD_AUTO}


# The parameters every estimator shares, with scikit-learn's validation
# (`_validate_params`: InvalidParameterError, a ValueError and a TypeError).
_COMMON_CONSTRAINTS = {
    "n_components": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
    "tol": [Interval(numbers.Real, 0, None, closed="left")],
    "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
    "random_state": ["random_state", np.random.Generator],
    "stop_rule": [StrOptions(set(_STOP))],
    "verbose": ["verbose"],
    # scikit-learn's n_jobs: None (1), -1 (every core) or a positive count
    # (as scikit-learn's own estimators, the type here, the value in _threads).
    "n_jobs": [numbers.Integral, None],
    "view_sizes": ["array-like", None],
}


def _is_view_list(X):
    """A list (or tuple) of 2-D arrays / sparse matrices: one per view. A list
    of rows (numbers) is one 2-D array-like, as scikit-learn reads it."""
    return isinstance(X, (list, tuple)) and len(X) > 0 and \
        all(len(getattr(x, "shape", ())) == 2 for x in X)


class _Base(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """The views of X (list of arrays, or one 2-D X cut by `view_sizes`),
    validated with scikit-learn's checks; `components_` and the report."""

    def _views(self, X, reset):
        """(list of views, dtype): every view float64 or float32 (float32 only
        when all are), finite, nonnegative, at least one sample; CSR kept sparse."""
        name = type(self).__name__
        if _is_view_list(X):
            xs = [check_array(x, accept_sparse="csr", dtype=_FLOATS, input_name="X[%d]" % i,
                              estimator=self) for i, x in enumerate(X)]
            dtype = np.float32 if all(x.dtype == np.float32 for x in xs) else np.float64
            xs = [x.astype(dtype, copy=False) for x in xs]
            sizes = [x.shape[1] for x in xs]
            if reset:
                self.n_features_in_ = sum(sizes)
                self._list_input = True
                if hasattr(self, "feature_names_in_"):
                    del self.feature_names_in_
            elif sizes != list(self.view_sizes_):
                raise ValueError("X has views of %s features, but %s is expecting %s"
                                 % (sizes, name, list(self.view_sizes_)))
        else:
            X = validate_data(self, X, accept_sparse="csr", dtype=_FLOATS, reset=reset)
            dtype = X.dtype
            if reset:
                self._list_input = False
            sizes = self._view_sizes(X.shape[1]) if reset else list(self.view_sizes_)
            bounds = np.concatenate([[0], np.cumsum(sizes)])
            xs = [X[:, a:b] for a, b in zip(bounds[:-1], bounds[1:])] if len(sizes) > 1 else [X]
        for x in xs:
            check_non_negative(x, name)
        if reset:
            self.view_sizes_ = np.array(sizes, dtype=np.intp)
        return xs, dtype

    def _view_sizes(self, n_features):
        if self.view_sizes is None:
            return [n_features]
        sizes = np.asarray(self.view_sizes)
        if sizes.ndim != 1 or len(sizes) == 0 or not np.issubdtype(sizes.dtype, np.integer) \
                or (sizes < 1).any() or sizes.sum() != n_features:
            raise ValueError("view_sizes must be positive integers that add up to X's %d columns, not %r"
                             % (n_features, self.view_sizes))
        return [int(s) for s in sizes]

    @property
    def _n_features_out(self):
        return int(self.n_components_)

    def _components(self, us):
        """components_: (k, n_features) for one view or one 2-D X (the views'
        blocks side by side), a list per view when X was a list of views."""
        self._us = us
        if self._list_input and len(us) > 1:
            self.components_ = us
        else:
            self.components_ = us[0] if len(us) == 1 else np.hstack(us)

    def _report(self, rep, progress):
        progress.reraise()
        self.n_iter_ = rep.iterations
        self.objective_ = rep.objective.total
        self.objective_trace_ = np.array(progress.trace)
        self.converged_ = rep.stop == B.MVNMF_STOP_CONVERGED

    def _encode_args(self, X):
        check_is_fitted(self)
        xs, _ = self._views(X, reset=False)
        dtype = self._us[0].dtype
        vs = ViewSet(xs, dtype=dtype)
        return vs, dtype

    def inverse_transform(self, X):
        """W @ components_ per view: one array (n_samples, n_features) for a
        2-D X, a list per view when the model was fitted on a list."""
        check_is_fitted(self)
        W = check_array(X, dtype=_FLOATS)
        out = [W @ u for u in self._us]
        if self._list_input and len(out) > 1:
            return out
        return out[0] if len(out) == 1 else np.hstack(out)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Every view must be nonnegative (NMF): fit refuses negative entries.
        tags.input_tags.positive_only = True
        # scipy.sparse CSR input is used without densifying.
        tags.input_tags.sparse = True
        # float32 in, float32 out: the library's `_f32` solvers.
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


class MultiViewNMF(_Base):
    """NMF of one view, or joint NMF of several views of the same samples
    (`X_v ≈ W H_v`, one shared nonnegative W), by multiplicative updates whose
    objective never increases.

    Parameters follow scikit-learn's `NMF(solver="mu")`:

    n_components : int, the rank K, or 'auto' (default, as scikit-learn's
        NMF): the number of features (of all views together).
    init : None (default, as scikit-learn's NMF: 'nndsvda' when n_components
        <= min(n_samples, n_features), else 'random'), 'random' (seeded
        uniform), 'nndsvd', 'nndsvda' or 'nndsvdar' (scikit-learn's
        definitions, of the stacked views), or 'custom' (`fit(X, W=..., H=...)`).
    beta_loss : 'frobenius' (default), 'kullback-leibler', 'itakura-saito' or
        a float in [0, 2].
    tol, max_iter : stopping; `stop_rule='sklearn'` (default) applies `tol` as
        scikit-learn does (every 10 iterations, on sqrt(2·loss), relative to
        the start), 'every_iteration' as mvnmf's C default.
    random_state : int, Generator, RandomState or None.
    verbose : print the objective every `verbose` iterations.
    n_jobs : threads of the library's own pool (None or 1: serial; -1: one
        per core). The result is the same bits for every value.

    view_sizes : None, or the widths of the views when X is one 2-D array
        whose columns are the views side by side (consecutive blocks): then
        the fit is the joint NMF of those views, and X goes through
        `Pipeline`, `cross_val_score` and `GridSearchCV` as any 2-D X. A list
        of arrays is the same fit without it.

    update_order : 'sklearn' (default) or 'library'. The library's solver
        updates the components first, then W; scikit-learn's MU updates W
        first, and from the same start the two orders reach different local
        solutions (about 1 % apart in error on real views). With 'sklearn'
        the library fits the transpose (samples as its features, features as
        its items: the same updates, W's first), so the same call gives
        scikit-learn's `NMF(solver="mu")` iterates — W, components_,
        n_iter_ and reconstruction_err_ to rounding (python/tests/
        test_estimators.py: 1e-9 on real views). Several views are fitted as
        the one matrix of the views side by side, which is what joint NMF
        with a shared W is (so scikit-learn's NMF of that matrix). The
        transpose costs a copy of X (CSR: of its structure too). 'library':
        the library's order on X as it is, no copy (the order its other
        models and its convergence proofs use).

    float32 X is fitted in single precision (the `_f32` entry points) and
    W, `components_` and `transform`'s output are float32; any other dtype is
    converted to float64.

    Attributes: `n_components_` (the rank used), `components_`
    (n_components, n_features): for a 2-D X with
    `view_sizes` the views' blocks side by side, for a list of several views
    a list of them per view; `view_sizes_`, `n_features_in_` (all views'
    features), `reconstruction_err_` (sqrt(2·loss): the Frobenius norm of the
    residual for 'frobenius', as scikit-learn), `n_iter_`, `objective_trace_`
    (the loss at the start and after every iteration: never increasing).
    """

    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "init": [StrOptions({"random", "custom", *_INITS}), None],
        "beta_loss": [StrOptions(set(_BETAS)), Interval(numbers.Real, 0, 2, closed="both")],
        "update_order": [StrOptions({"sklearn", "library"})],
    }

    def __init__(self, n_components="auto", *, init=None, beta_loss="frobenius", tol=1e-4, max_iter=200,
                 random_state=None, stop_rule="sklearn", verbose=0, n_jobs=None, view_sizes=None,
                 update_order="sklearn"):
        self.n_jobs = n_jobs
        self.update_order = update_order
        self.n_components = n_components
        self.init = init
        self.beta_loss = beta_loss
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.stop_rule = stop_rule
        self.verbose = verbose
        self.view_sizes = view_sizes

    def _beta(self):
        return float(_BETAS.get(self.beta_loss, self.beta_loss) if isinstance(self.beta_loss, str)
                     else self.beta_loss)

    def _params(self, seed, given):
        p = lib.mvnmf_nmf_params_default()
        p.max_iter = int(self.max_iter)
        p.tol = float(self.tol)
        p.seed = seed
        p.init = B.MVNMF_INIT_GIVEN if given else B.MVNMF_INIT_RANDOM
        p.stop_rule = _STOP[self.stop_rule]
        p.parallel.threads = _threads(self.n_jobs)
        return p

    def fit(self, X, y=None, **params):
        """Fits the model; X as in `fit_transform`, y ignored."""
        self.fit_transform(X, **params)
        return self

    def fit_transform(self, X, y=None, W=None, H=None):
        """Fits and returns W (n_samples, n_components). X: an array or
        sparse matrix (n_samples, n_features) — the views side by side when
        `view_sizes` is given — or a list of them, one per view."""
        self._validate_params()
        xs, dtype = self._views(X, reset=True)
        vs = ViewSet(xs, dtype=dtype)
        n, h = vs.n_samples, vs.count
        k = int(self.n_features_in_) if self.n_components == "auto" else int(self.n_components)
        init = self.init
        if init is None:
            init = "nndsvda" if k <= min(n, self.n_features_in_) else "random"
        elif init in _INITS and k > min(n, self.n_features_in_):
            raise ValueError("init=%r can only be used when n_components <= min(n_samples, n_features)"
                             % (init,))
        self.n_components_ = k
        beta = self._beta()
        hs = None
        if init == "custom":
            if W is None or H is None:
                raise ValueError("init='custom' needs W and H")
            hs = views_of(H) if self._list_input or len(vs.n_features) == 1 else \
                np.split(np.asarray(H), np.cumsum(self.view_sizes_)[:-1], axis=1)
            if np.shape(W) != (n, k) or [np.shape(x) for x in hs] != [(k, m) for m in vs.n_features]:
                raise ValueError("W must be (n_samples, n_components) and H (n_components, n_features) per view")
        if self.update_order == "sklearn":
            # The transpose: one view of n_samples rows whose items are the
            # features (of all views side by side). The library's U is then
            # W (n x k) and its V the components (k x F): U first = W first.
            xt = _stacked(xs).T
            fit_xs = [xt.tocsr() if hasattr(xt, "tocsr") else xt]
            fit_vs = ViewSet(fit_xs, dtype=dtype)
            fit_us = [np.empty((k, n), dtype=dtype)]               # = W (n x k), column-major
            fit_v = np.empty((sum(vs.n_features), k), dtype=dtype)  # = H (k x F), column-major
            start_u = None if hs is None else [np.asarray(W).T]
            start_v = None if hs is None else np.hstack([np.asarray(x) for x in hs]).T
        else:
            fit_xs, fit_vs = xs, vs
            fit_v = np.empty((n, k), dtype=dtype)                          # = V (k x N), column-major
            fit_us = [np.empty((k, m), dtype=dtype) for m in vs.n_features]  # = U_v (M_v x k), column-major
            start_u = hs
            start_v = None if hs is None else W
        h = fit_vs.count
        seed = _seed(self.random_state)
        given = init != "random"
        if init == "custom":
            fit_v[...] = start_v
            for u, x in zip(fit_us, start_u):
                u[...] = x
        elif init in _INITS:
            # NNDSVD is computed in double precision (from a float64 copy of
            # float32 views) and rounded to float32. (It is symmetric in its
            # two factors, so the transpose's is the transposed NNDSVD.)
            vd = fit_vs if dtype == np.float64 else ViewSet(fit_xs, dtype=np.float64)
            ud = fit_us if dtype == np.float64 else [np.empty(u.shape) for u in fit_us]
            wd = fit_v if dtype == np.float64 else np.empty(fit_v.shape)
            nb = C.c_size_t()
            call("mvnmf_nndsvd_workspace", vd.array, h, k, C.byref(nb))
            buf, ptr = workspace(nb.value)
            call("mvnmf_nndsvd", vd.array, h, k, _INITS[init], seed, pointers(ud), _ptr(wd), ptr, nb.value)
            if dtype != np.float64:
                fit_v[...] = wd
                for u, x in zip(fit_us, ud):
                    u[...] = x
        p = self._params(seed, given)
        rep, nb, progress = B.mvnmf_report(), C.c_size_t(), Progress(self.verbose, type(self).__name__)
        if beta == 2.0:
            call(_fn("mvnmf_joint_nmf_fit_workspace", dtype), fit_vs.array, h, k, C.byref(p), C.byref(nb))
            buf, ptr = workspace(nb.value)
            call(_fn("mvnmf_joint_nmf_fit", dtype), fit_vs.array, h, k, C.byref(p), pointers(fit_us), _ptr(fit_v),
                 ptr, nb.value, progress.fn, None, C.byref(rep))
        else:
            call(_fn("mvnmf_beta_nmf_fit_workspace", dtype), fit_vs.array, h, k, beta, C.byref(p), C.byref(nb))
            buf, ptr = workspace(nb.value)
            call(_fn("mvnmf_beta_nmf_fit", dtype), fit_vs.array, h, k, beta, -1.0, None, C.byref(p),
                 pointers(fit_us), _ptr(fit_v), ptr, nb.value, progress.fn, None, C.byref(rep))
        if self.update_order == "sklearn":
            w = np.ascontiguousarray(fit_us[0].T)
            bounds = np.concatenate([[0], np.cumsum(vs.n_features)])
            us = [np.ascontiguousarray(fit_v[a:b].T) for a, b in zip(bounds[:-1], bounds[1:])]
        else:
            w, us = fit_v, fit_us
        self._report(rep, progress)
        self._components(us)
        self.reconstruction_err_ = float(np.sqrt(2.0 * max(rep.objective.total, 0.0)))
        return w

    def transform(self, X):
        """W (n_samples, n_components) of new samples against the fitted
        components (the Frobenius encoding: min ½ Σ_v ‖X_v − W H_v‖², W ≥ 0),
        in the fitted model's precision."""
        vs, dtype = self._encode_args(X)
        k, n, h = self.n_components_, vs.n_samples, vs.count
        p = self._params(_seed(self.random_state), False)
        w = np.empty((n, k), dtype=dtype)
        rep, nb, progress = B.mvnmf_report(), C.c_size_t(), Progress(0)
        call(_fn("mvnmf_joint_nmf_encode_workspace", dtype), vs.array, h, k, C.byref(p), C.byref(nb))
        buf, ptr = workspace(nb.value)
        call(_fn("mvnmf_joint_nmf_encode", dtype), vs.array, h, k, C.byref(p), pointers(self._us), _ptr(w),
             ptr, nb.value, progress.fn, None, C.byref(rep))
        progress.reraise()
        return w


class SemiSupervisedMultiViewNMF(_Base):
    """The semi-supervised multi-view pipeline in one call (`mvnmf_pipeline_fit`):
    view weights learned from the labeled samples (kernel–target alignment), a
    graph over the samples from the labels and the fused kernel, then the
    graph-regularised factorization with group sparsity.

    y follows scikit-learn's semi-supervised estimators: a class id >= 0 per
    labeled sample, -1 for the unlabeled ones.

    method : 'mvsl-t' (default: the best on the README's real data; a graph
        over all samples), 'mvsl-s', 'mvsl-l', 'gnmf', 'mcl' or 'joint-nmf'.
    alpha, beta, gamma : group-sparsity, graph and L1 weights (None: the
        method's preset).
    n_neighbors : the neighbour graph's k (None: the preset's 5).
    graph : how MvSL-T's neighbours over all samples are found: 'exact' (every
        pair, O(n_samples^2)), 'approx' (NN-descent, about linear; the labeled
        samples' lists stay exact) or 'auto' (default: exact below 4096
        samples, the same result as 'exact' there; NN-descent from there on).
        The other methods' graphs are over the labeled samples only, always
        exact. NN-descent is seeded by random_state.
    tol, max_iter, stop_rule, random_state, verbose, n_jobs, view_sizes : as
        MultiViewNMF.

    float32 X is fitted in single precision (`mvnmf_pipeline_fit_f32`; the
    kernels, view weights and graph stay double) and stays float32.

    Attributes: `components_` (as MultiViewNMF's),
    `embedding_` (n_samples, n_components): the fitted encoding of every
    sample, `view_weights_`, `n_iter_`, `objective_trace_`.
    """

    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "n_components": [Interval(numbers.Integral, 1, None, closed="left")],
        "method": [StrOptions(set(_METHODS))],
        "alpha": [Interval(numbers.Real, 0, None, closed="left"), None],
        "beta": [Interval(numbers.Real, 0, None, closed="left"), None],
        "gamma": [Interval(numbers.Real, 0, None, closed="left"), None],
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "graph": [StrOptions(set(_GRAPHS))],
    }

    def __init__(self, n_components=20, *, method="mvsl-t", alpha=None, beta=None, gamma=None, n_neighbors=None,
                 graph="auto", tol=1e-4, max_iter=200, stop_rule="sklearn", random_state=None, verbose=0, n_jobs=None,
                 view_sizes=None):
        self.view_sizes = view_sizes
        self.n_jobs = n_jobs
        self.n_components = n_components
        self.method = method
        self.alpha = alpha
        self.beta = beta
        self.gamma = gamma
        self.n_neighbors = n_neighbors
        self.graph = graph
        self.tol = tol
        self.max_iter = max_iter
        self.stop_rule = stop_rule
        self.random_state = random_state
        self.verbose = verbose

    def _params(self):
        pp = B.mvnmf_pipeline_params()
        call("mvnmf_pipeline_params_preset", _METHODS[self.method], C.byref(pp))
        s = pp.solver
        s.max_iter, s.tol, s.seed = int(self.max_iter), float(self.tol), _seed(self.random_state)
        s.stop_rule = _STOP[self.stop_rule]
        s.parallel.threads = _threads(self.n_jobs)
        for name in ("alpha", "beta", "gamma"):
            if getattr(self, name) is not None:
                setattr(s, name, float(getattr(self, name)))
        if self.n_neighbors is not None:
            pp.graph.ka = int(self.n_neighbors)
        pp.graph_build = _GRAPHS[self.graph]
        pp.ann.seed = s.seed
        pp.solver = s
        return pp

    def fit(self, X, y):
        """Fits on the views X (as MultiViewNMF) and y: class ids >= 0, -1 unlabeled."""
        self._validate_params()
        xs, dtype = self._views(X, reset=True)
        vs = ViewSet(xs, dtype=dtype)
        y = np.asarray(y)
        if y.shape != (vs.n_samples,):
            raise ValueError("y must have one entry per sample (%d), not shape %s" % (vs.n_samples, y.shape))
        if not np.issubdtype(y.dtype, np.integer) or (y < -1).any():
            raise ValueError("y must hold integer class ids >= 0, or -1 for unlabeled samples")
        labels = np.where(y < 0, B.MVNMF_UNLABELED, y).astype(np.uint32)
        n_classes = int(y.max()) + 1 if (y >= 0).any() else 0
        k, n, h = int(self.n_components), vs.n_samples, vs.count
        self.n_components_ = k
        pp = self._params()
        kernels = (B.mvnmf_kernel * h)(*[B.mvnmf_kernel(kind=B.MVNMF_KERNEL_RBF, gamma=0.0)] * h)
        us = [np.empty((k, m), dtype=dtype) for m in vs.n_features]
        w, eta = np.empty((n, k), dtype=dtype), np.empty(h)
        rep, nb, progress = B.mvnmf_report(), C.c_size_t(), Progress(self.verbose, type(self).__name__)
        call(_fn("mvnmf_pipeline_fit_workspace", dtype), vs.array, h, kernels, n_classes, k, C.byref(pp),
             C.byref(nb))
        buf, ptr = workspace(nb.value)
        call(_fn("mvnmf_pipeline_fit", dtype), vs.array, h, kernels, labels.ctypes.data_as(C.POINTER(C.c_uint32)),
             n_classes, k, C.byref(pp), pointers(us), _ptr(w),
             eta.ctypes.data_as(C.POINTER(C.c_double)), ptr, nb.value, progress.fn, None, C.byref(rep))
        self._report(rep, progress)
        self._components(us)
        self._solver = pp.solver
        self.embedding_ = w
        self.view_weights_ = eta
        self.classes_ = np.unique(y[y >= 0])
        return self

    def fit_transform(self, X, y):
        """Fits and returns `embedding_`."""
        return self.fit(X, y).embedding_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # y is needed: the labels (-1 for the unlabeled samples) drive the fit.
        tags.target_tags.required = True
        return tags

    def transform(self, X):
        """The encoding of new samples against the fitted components (the
        V-steps of the fit, no graph)."""
        vs, dtype = self._encode_args(X)
        k, n, h = self.n_components_, vs.n_samples, vs.count
        g = B.mvnmf_graph()
        g.kind, g.n = B.MVNMF_GRAPH_NONE, n
        s = self._solver
        w = np.empty((n, k), dtype=dtype)
        rep, nb, progress = B.mvnmf_report(), C.c_size_t(), Progress(0)
        call(_fn("mvnmf_mvsl_encode_workspace", dtype), vs.array, h, C.byref(g), k, C.byref(s), C.byref(nb))
        buf, ptr = workspace(nb.value)
        call(_fn("mvnmf_mvsl_encode", dtype), vs.array, h, C.byref(g), k, C.byref(s), pointers(self._us),
             _ptr(w), ptr, nb.value, progress.fn, None, C.byref(rep))
        progress.reraise()
        return w


def expected_failed_checks(estimator):
    """The scikit-learn checks that cannot hold, each with its reason: pass it
    as `check_estimator(est, expected_failed_checks=expected_failed_checks(est))`
    or `parametrize_with_checks(..., expected_failed_checks=expected_failed_checks)`.
    (scikit-learn >= 1.6 takes declared failures there; the tags declare the
    rest: nonnegative input only, sparse input, float32 kept.)

    MultiViewNMF, `check_transformer_general` and
    `check_transformer_data_not_an_array`: they require `fit_transform(X)` and
    `fit(X).transform(X)` to agree to 1e-2. `fit_transform` returns the fit's
    W; `transform` solves W afresh for the fitted components by multiplicative
    updates. At the default tol and max_iter both stop before they meet on the
    check's 30 x 3 data (0.39 apart; scikit-learn's own `NMF(solver="mu")`
    fails the same check, 0.25 apart); the gap closes as both run further
    (python/tests/test_sklearn.py). Returning `transform(X)` from
    `fit_transform` instead would hide the fit's own W.

    SemiSupervisedMultiViewNMF is not run through check_estimator: its y is
    a partial labelling that the generic checks' targets do not provide.
    """
    if isinstance(estimator, MultiViewNMF):
        reason = ("fit_transform returns the fit's W, transform re-solves W by multiplicative updates; "
                  "at the default tol/max_iter they stop more than 1e-2 apart on this check's data "
                  "(so does scikit-learn's NMF(solver='mu'))")
        return {"check_transformer_general": reason, "check_transformer_data_not_an_array": reason}
    return {}
