"""scikit-learn-style estimators over libmvnmf.

Shapes follow scikit-learn: a view is (n_samples, n_features_v); `fit_transform`
returns W (n_samples, n_components); `components_` is (n_components,
n_features) per view (a list when there are several views). mvnmf stores the
same numbers column-major with items as columns, so these arrays are the
library's own buffers, not copies.
"""
import ctypes as C
import numbers

import numpy as np

from . import _bindings as B
from ._lib import Progress, ViewSet, call, lib, pointers, views_of, workspace

__all__ = ["MultiViewNMF", "SemiSupervisedMultiViewNMF"]

_INITS = {"nndsvd": B.MVNMF_NNDSVD, "nndsvda": B.MVNMF_NNDSVDA, "nndsvdar": B.MVNMF_NNDSVDAR}
_BETAS = {"frobenius": 2.0, "kullback-leibler": 1.0, "itakura-saito": 0.0}
_STOP = {"sklearn": B.MVNMF_STOP_RULE_SKLEARN, "every_iteration": B.MVNMF_STOP_RULE_EVERY_ITERATION}
_METHODS = {"joint-nmf": B.MVNMF_METHOD_JOINT_NMF, "gnmf": B.MVNMF_METHOD_GNMF, "mvsl-s": B.MVNMF_METHOD_MVSL_S,
            "mvsl-l": B.MVNMF_METHOD_MVSL_L, "mvsl-t": B.MVNMF_METHOD_MVSL_T, "mcl": B.MVNMF_METHOD_MCL}


def _threads(n_jobs):
    """mvnmf_parallel.threads of scikit-learn's n_jobs (None: 1, -1: every core)."""
    if n_jobs is None:
        return 1
    if n_jobs == -1:
        return 0
    if int(n_jobs) != n_jobs or n_jobs < 1:
        raise ValueError("n_jobs must be None, -1 or a positive integer, not %r" % (n_jobs,))
    return int(n_jobs)


def _stop_code(stop_rule):
    """The C stop_rule code of 'sklearn' / 'every_iteration'."""
    if stop_rule not in _STOP:
        raise ValueError("stop_rule must be one of %s, not %r" % (sorted(_STOP), stop_rule))
    return _STOP[stop_rule]


def _seed(random_state):
    """A 64-bit seed from an int, a numpy Generator / RandomState, or None (fresh)."""
    if isinstance(random_state, numbers.Integral):
        return int(random_state) & (2**64 - 1)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**63 - 1))
    return int(np.random.default_rng(random_state).integers(0, 2**63 - 1))


class _Base:
    """get_params / set_params / repr as scikit-learn's BaseEstimator (so
    clone, Pipeline and GridSearchCV work) without depending on it."""

    def get_params(self, deep=True):
        import inspect
        names = [p for p in inspect.signature(type(self).__init__).parameters if p != "self"]
        return {n: getattr(self, n) for n in names}

    def set_params(self, **params):
        valid = self.get_params()
        for k, v in params.items():
            if k not in valid:
                raise ValueError("invalid parameter %r for %s" % (k, type(self).__name__))
            setattr(self, k, v)
        return self

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, ", ".join("%s=%r" % kv for kv in self.get_params().items()))

    def _check_fitted(self):
        if not hasattr(self, "components_"):
            raise ValueError("this %s is not fitted yet: call fit first" % type(self).__name__)

    def _components(self, us):
        self._us = us
        self.components_ = us[0] if len(us) == 1 else us
        self.n_features_in_ = [u.shape[1] for u in us] if len(us) > 1 else us[0].shape[1]

    def _report(self, rep, progress):
        progress.reraise()
        self.n_iter_ = rep.iterations
        self.objective_ = rep.objective.total
        self.objective_trace_ = np.array(progress.trace)
        self.converged_ = rep.stop == B.MVNMF_STOP_CONVERGED


class MultiViewNMF(_Base):
    """NMF of one view, or joint NMF of several views of the same samples
    (`X_v ≈ W H_v`, one shared nonnegative W), by multiplicative updates whose
    objective never increases.

    Parameters follow scikit-learn's `NMF(solver="mu")`:

    n_components : int, the rank K.
    init : 'random' (seeded uniform), 'nndsvd', 'nndsvda' or 'nndsvdar'
        (scikit-learn's definitions, of the stacked views), or 'custom'
        (`fit(X, W=..., H=...)`).
    beta_loss : 'frobenius' (default), 'kullback-leibler', 'itakura-saito' or
        a float in [0, 2].
    tol, max_iter : stopping; `stop_rule='sklearn'` (default) applies `tol` as
        scikit-learn does (every 10 iterations, on sqrt(2·loss), relative to
        the start), 'every_iteration' as mvnmf's C default.
    random_state : int, Generator, RandomState or None.
    verbose : print the objective every `verbose` iterations.
    n_jobs : threads of the library's own pool (None or 1: serial; -1: one
        per core). The result is the same bits for every value.

    mvnmf updates the components first, then W (scikit-learn's MU: W first):
    from the same start its iterates are scikit-learn's fit of the transpose.

    Attributes: `components_` (n_components, n_features) or a list of them
    per view, `reconstruction_err_` (sqrt(2·loss): the Frobenius norm of the
    residual for 'frobenius', as scikit-learn), `n_iter_`, `objective_trace_`
    (the loss at the start and after every iteration: never increasing).
    """

    def __init__(self, n_components=10, *, init="random", beta_loss="frobenius", tol=1e-4, max_iter=200,
                 random_state=None, stop_rule="sklearn", verbose=0, n_jobs=None):
        self.n_jobs = n_jobs
        self.n_components = n_components
        self.init = init
        self.beta_loss = beta_loss
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.stop_rule = stop_rule
        self.verbose = verbose

    def _beta(self):
        b = _BETAS.get(self.beta_loss, self.beta_loss) if isinstance(self.beta_loss, str) else self.beta_loss
        if isinstance(b, str) or not 0.0 <= float(b) <= 2.0:
            raise ValueError("beta_loss must be 'frobenius', 'kullback-leibler', 'itakura-saito' "
                             "or a number in [0, 2], not %r" % (self.beta_loss,))
        return float(b)

    def _params(self, seed, given):
        p = lib.mvnmf_nmf_params_default()
        p.max_iter = int(self.max_iter)
        p.tol = float(self.tol)
        p.seed = seed
        p.init = B.MVNMF_INIT_GIVEN if given else B.MVNMF_INIT_RANDOM
        p.stop_rule = _stop_code(self.stop_rule)
        p.parallel.threads = _threads(self.n_jobs)
        return p

    def fit(self, X, y=None, **params):
        self.fit_transform(X, **params)
        return self

    def fit_transform(self, X, y=None, W=None, H=None):
        """Fits and returns W (n_samples, n_components). X: an array or
        sparse matrix (n_samples, n_features), or a list of them (views)."""
        vs = ViewSet(views_of(X))
        k, n, h = int(self.n_components), vs.n_samples, vs.count
        beta = self._beta()
        w = np.empty((n, k))                         # = V (k x N), column-major
        us = [np.empty((k, m)) for m in vs.n_features]  # = U_v (M_v x k), column-major
        seed = _seed(self.random_state)
        given = self.init != "random"
        if self.init == "custom":
            if W is None or H is None:
                raise ValueError("init='custom' needs W and H")
            hs = views_of(H)
            if np.shape(W) != (n, k) or [np.shape(x) for x in hs] != [u.shape for u in us]:
                raise ValueError("W must be (n_samples, n_components) and H (n_components, n_features) per view")
            w[...] = W
            for u, x in zip(us, hs):
                u[...] = x
        elif self.init in _INITS:
            nb = C.c_size_t()
            call("mvnmf_nndsvd_workspace", vs.array, h, k, C.byref(nb))
            buf, ptr = workspace(nb.value)
            call("mvnmf_nndsvd", vs.array, h, k, _INITS[self.init], seed, pointers(us),
                 w.ctypes.data_as(C.POINTER(C.c_double)), ptr, nb.value)
        elif self.init != "random":
            raise ValueError("init must be 'random', 'nndsvd', 'nndsvda', 'nndsvdar' or 'custom', not %r"
                             % (self.init,))
        p = self._params(seed, given)
        rep, nb, progress = B.mvnmf_report(), C.c_size_t(), Progress(self.verbose, type(self).__name__)
        wp = w.ctypes.data_as(C.POINTER(C.c_double))
        if beta == 2.0:
            call("mvnmf_joint_nmf_fit_workspace", vs.array, h, k, C.byref(p), C.byref(nb))
            buf, ptr = workspace(nb.value)
            call("mvnmf_joint_nmf_fit", vs.array, h, k, C.byref(p), pointers(us), wp, ptr, nb.value,
                 progress.fn, None, C.byref(rep))
        else:
            call("mvnmf_beta_nmf_fit_workspace", vs.array, h, k, beta, C.byref(p), C.byref(nb))
            buf, ptr = workspace(nb.value)
            call("mvnmf_beta_nmf_fit", vs.array, h, k, beta, -1.0, None, C.byref(p), pointers(us), wp, ptr,
                 nb.value, progress.fn, None, C.byref(rep))
        self._report(rep, progress)
        self._components(us)
        self.reconstruction_err_ = float(np.sqrt(2.0 * max(rep.objective.total, 0.0)))
        return w

    def transform(self, X):
        """W (n_samples, n_components) of new samples against the fitted
        components (the Frobenius encoding: min ½ Σ_v ‖X_v − W H_v‖², W ≥ 0)."""
        self._check_fitted()
        vs = ViewSet(views_of(X), n_features=[u.shape[1] for u in self._us])
        k, n, h = int(self.n_components), vs.n_samples, vs.count
        p = self._params(_seed(self.random_state), False)
        w = np.empty((n, k))
        rep, nb, progress = B.mvnmf_report(), C.c_size_t(), Progress(0)
        call("mvnmf_joint_nmf_encode_workspace", vs.array, h, k, C.byref(p), C.byref(nb))
        buf, ptr = workspace(nb.value)
        cu = (C.POINTER(C.c_double) * h)(*[u.ctypes.data_as(C.POINTER(C.c_double)) for u in self._us])
        call("mvnmf_joint_nmf_encode", vs.array, h, k, C.byref(p), cu, w.ctypes.data_as(C.POINTER(C.c_double)),
             ptr, nb.value, progress.fn, None, C.byref(rep))
        progress.reraise()
        return w

    def inverse_transform(self, W):
        """W @ components_ per view (a list when there are several)."""
        self._check_fitted()
        out = [np.asarray(W) @ u for u in self._us]
        return out[0] if len(out) == 1 else out


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
    tol, max_iter, stop_rule, random_state, verbose, n_jobs : as MultiViewNMF.

    Attributes: `components_` (list per view, (n_components, n_features)),
    `embedding_` (n_samples, n_components): the fitted encoding of every
    sample, `view_weights_`, `n_iter_`, `objective_trace_`.
    """

    def __init__(self, n_components=20, *, method="mvsl-t", alpha=None, beta=None, gamma=None, n_neighbors=None,
                 tol=1e-4, max_iter=200, stop_rule="sklearn", random_state=None, verbose=0, n_jobs=None):
        self.n_jobs = n_jobs
        self.n_components = n_components
        self.method = method
        self.alpha = alpha
        self.beta = beta
        self.gamma = gamma
        self.n_neighbors = n_neighbors
        self.tol = tol
        self.max_iter = max_iter
        self.stop_rule = stop_rule
        self.random_state = random_state
        self.verbose = verbose

    def _params(self):
        if self.method not in _METHODS:
            raise ValueError("method must be one of %s, not %r" % (sorted(_METHODS), self.method))
        pp = B.mvnmf_pipeline_params()
        call("mvnmf_pipeline_params_preset", _METHODS[self.method], C.byref(pp))
        s = pp.solver
        s.max_iter, s.tol, s.seed = int(self.max_iter), float(self.tol), _seed(self.random_state)
        s.stop_rule = _stop_code(self.stop_rule)
        s.parallel.threads = _threads(self.n_jobs)
        for name in ("alpha", "beta", "gamma"):
            if getattr(self, name) is not None:
                setattr(s, name, float(getattr(self, name)))
        if self.n_neighbors is not None:
            pp.graph.ka = int(self.n_neighbors)
        pp.solver = s
        return pp

    def fit(self, X, y):
        vs = ViewSet(views_of(X))
        y = np.asarray(y)
        if y.shape != (vs.n_samples,):
            raise ValueError("y must have one entry per sample (%d), not shape %s" % (vs.n_samples, y.shape))
        if not np.issubdtype(y.dtype, np.integer) or (y < -1).any():
            raise ValueError("y must hold integer class ids >= 0, or -1 for unlabeled samples")
        labels = np.where(y < 0, B.MVNMF_UNLABELED, y).astype(np.uint32)
        n_classes = int(y.max()) + 1 if (y >= 0).any() else 0
        k, n, h = int(self.n_components), vs.n_samples, vs.count
        pp = self._params()
        kernels = (B.mvnmf_kernel * h)(*[B.mvnmf_kernel(kind=B.MVNMF_KERNEL_RBF, gamma=0.0)] * h)
        us = [np.empty((k, m)) for m in vs.n_features]
        w, eta = np.empty((n, k)), np.empty(h)
        rep, nb, progress = B.mvnmf_report(), C.c_size_t(), Progress(self.verbose, type(self).__name__)
        call("mvnmf_pipeline_fit_workspace", vs.array, h, kernels, n_classes, k, C.byref(pp), C.byref(nb))
        buf, ptr = workspace(nb.value)
        call("mvnmf_pipeline_fit", vs.array, h, kernels, labels.ctypes.data_as(C.POINTER(C.c_uint32)), n_classes,
             k, C.byref(pp), pointers(us), w.ctypes.data_as(C.POINTER(C.c_double)),
             eta.ctypes.data_as(C.POINTER(C.c_double)), ptr, nb.value, progress.fn, None, C.byref(rep))
        self._report(rep, progress)
        self._components(us)
        self._solver = pp.solver
        self.embedding_ = w
        self.view_weights_ = eta
        self.classes_ = np.unique(y[y >= 0])
        return self

    def fit_transform(self, X, y):
        return self.fit(X, y).embedding_

    def transform(self, X):
        """The encoding of new samples against the fitted components (the
        V-steps of the fit, no graph)."""
        self._check_fitted()
        vs = ViewSet(views_of(X), n_features=[u.shape[1] for u in self._us])
        k, n, h = int(self.n_components), vs.n_samples, vs.count
        g = B.mvnmf_graph()
        g.kind, g.n = B.MVNMF_GRAPH_NONE, n
        s = self._solver
        w = np.empty((n, k))
        rep, nb, progress = B.mvnmf_report(), C.c_size_t(), Progress(0)
        call("mvnmf_mvsl_encode_workspace", vs.array, h, C.byref(g), k, C.byref(s), C.byref(nb))
        buf, ptr = workspace(nb.value)
        cu = (C.POINTER(C.c_double) * h)(*[u.ctypes.data_as(C.POINTER(C.c_double)) for u in self._us])
        call("mvnmf_mvsl_encode", vs.array, h, C.byref(g), k, C.byref(s), cu,
             w.ctypes.data_as(C.POINTER(C.c_double)), ptr, nb.value, progress.fn, None, C.byref(rep))
        progress.reraise()
        return w
