"""Loading libmvnmf, checking it against the bindings, calling it, and the
numpy / scipy inputs as mvnmf views (without copies where the layout allows)."""
import ctypes as C
import ctypes.util
import os

import numpy as np

from . import _bindings as B

__all__ = ["MvnmfError", "lib", "library_path", "call", "views_of", "ViewSet"]


class MvnmfError(ValueError):
    """A status other than MVNMF_STATUS_OK: `status` (the code), `name`
    (e.g. 'MVNMF_STATUS_NEGATIVE_INPUT'), `function` and mvnmf's message.

    Where the call said where it refused (its report's `where_*` fields,
    issue 33): `arg` (the 1-based position of the offending argument in the C
    signature), `arg_name` (its name there, e.g. 'views'), and for data `view`,
    `row`, `col` (0-based; the row and column of mvnmf's features x items
    layout: for a view given as an (n_samples, n_features) array the entry is
    X[col, row]); each None where it does not apply. The message says them
    too. A call that takes no report (a graph builder, an evaluation) is
    asked again through mvnmf_check_views when it refuses a value (NaN or
    infinity, a negative, a malformed sparse structure) and takes views: the
    first views argument holding an entry refused with the same status is
    named, with that entry."""

    def __init__(self, function, status, message, where=None):
        self.function = function
        self.status = status
        self.name = B.STATUS_NAMES.get(status, "unknown status %d" % status)
        self.arg = self.arg_name = self.view = self.row = self.col = None
        text = "%s: %s (%s)" % (function, message, self.name)
        if where is not None and where.where_arg > 0:
            none = C.c_size_t(-1).value
            part = lambda x: None if x == none else int(x)
            self.arg = int(where.where_arg)
            names = B.ARG_NAMES.get(function, [])
            self.arg_name = names[self.arg - 1] if self.arg <= len(names) else None
            self.view, self.row, self.col = part(where.where_view), part(where.where_row), part(where.where_col)
            text += ", at argument %d" % self.arg
            if self.arg_name:
                text += " (%s)" % self.arg_name
            parts = ["%s %d" % (n, x) for n, x in (("view", self.view), ("row", self.row), ("column", self.col))
                     if x is not None]
            if parts:
                text += ": " + ", ".join(parts)
            if self.arg_name in ("views", "sources", "x") and self.row is not None and self.col is not None:
                text += " (sample %d, feature %d of that view)" % (self.col, self.row)
        super().__init__(text)


def library_path():
    """Where libmvnmf is loaded from: $MVNMF_LIBRARY, else the copy inside
    the package (the one `pip install` builds and bundles in the wheel),
    else, for the sources in a clone (PYTHONPATH=python), the repository's
    target/release or target/capi-build/debug build, then the loader's
    search path (an installed library)."""
    env = os.environ.get("MVNMF_LIBRARY")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    name = {"nt": "mvnmf.dll"}.get(os.name, "libmvnmf.dylib" if os.uname().sysname == "Darwin" else "libmvnmf.so")
    repo = os.path.dirname(os.path.dirname(here))
    for cand in (os.path.join(here, name),
                 os.path.join(repo, "target", "release", name),
                 os.path.join(repo, "target", "capi-build", "debug", name)):
        if os.path.exists(cand):
            return cand
    found = ctypes.util.find_library("mvnmf")
    if found:
        return found
    raise ImportError("libmvnmf not found: pip install the package (it builds and bundles the "
                      "library), build it (cargo build --release -p mvnmf-capi), install it, "
                      "or set MVNMF_LIBRARY to its path")


def _load():
    path = library_path()
    lib = B.declare(C.CDLL(path))
    abi = lib.mvnmf_abi_version()
    if abi != B.MVNMF_ABI_VERSION:
        raise ImportError("%s has ABI version %d, these bindings %d: regenerate them "
                          "(python3 python/gen_bindings.py) or load the matching library"
                          % (path, abi, B.MVNMF_ABI_VERSION))
    for code, cls in B.STRUCT_CODES.items():
        size = lib.mvnmf_struct_size(code)
        if size != C.sizeof(cls):
            raise ImportError("%s: sizeof(%s) is %d in the library, %d in the bindings"
                              % (path, cls.__name__, size, C.sizeof(cls)))
    return lib


lib = _load()


def _report_of(args):
    """The mvnmf_report among a call's arguments (given by reference or
    pointer; a pipeline report's `fit`), or None."""
    for a in args:
        obj = getattr(a, "_obj", None)  # C.byref(x)
        if obj is None and isinstance(a, C._Pointer):
            obj = a.contents if a else None
        if isinstance(obj, B.mvnmf_report):
            return obj
        if isinstance(obj, B.mvnmf_pipeline_report):
            return obj.fit
    return None


# The statuses mvnmf_check_views can explain, and the `nonneg` to check with.
_VIEW_STATUSES = {B.MVNMF_STATUS_NON_FINITE_INPUT: 0, B.MVNMF_STATUS_NEGATIVE_INPUT: 1,
                  B.MVNMF_STATUS_MALFORMED_CSC: 0}
# The check of each view descriptor type.
_CHECKS = {B.mvnmf_view: "mvnmf_check_views", B.mvnmf_view_f32: "mvnmf_check_views_f32"}


def _views_report(name, status, args):
    """For a call without a report that refused a value: the report of
    mvnmf_check_views on its first views argument that is refused with the
    same status, `where_arg` made the position in `name`'s signature; else
    None."""
    nonneg = _VIEW_STATUSES.get(status)
    if nonneg is None:
        return None
    names = B.ARG_NAMES.get(name, [])
    for i, a in enumerate(args):
        check = _CHECKS.get(getattr(a, "_type_", None)) if isinstance(a, C.Array) else None
        if check is None:
            continue
        count = len(a)
        if i + 1 < min(len(args), len(names)) and names[i + 1].startswith("n_"):
            given = args[i + 1]
            count = min(count, int(getattr(given, "value", given)))  # an int or a c_size_t
        rep = B.mvnmf_report()
        if getattr(lib, check)(a, count, nonneg, C.byref(rep)) == status and rep.where_arg == 1:
            rep.where_arg = i + 1
            return rep
    return None


def call(name, *args):
    """Calls mvnmf function `name`; raises MvnmfError unless it returns OK
    (saying where, when the call's report says, or for a call without one,
    when its views say)."""
    rep = _report_of(args)
    if rep is not None:
        rep.where_arg = 0  # a call that does not write its report on refusal says nothing
    status = getattr(lib, name)(*args)
    if status != B.MVNMF_STATUS_OK:
        if rep is None:
            rep = _views_report(name, status, args)
        raise MvnmfError(name, status, lib.mvnmf_status_message(status).decode(), rep)
    return status


def _size_t(a):
    return np.ascontiguousarray(a, dtype=np.uintp)


class ViewSet:
    """Several (n_samples, n_features_v) inputs as an array of mvnmf_view,
    holding every buffer it points into for as long as it lives.

    A C-contiguous float64 array (n_samples, n_features) is mvnmf's dense
    column-major features x items view as is; so is one whose feature axis is
    contiguous (a column slice `X[:, a:b]`: the column stride is the sample
    stride). scipy CSR (n_samples, n_features) is the CSC of the transpose:
    its data is used as is (float64, sorted indices, no duplicates), its
    indices and indptr are copied to size_t when they are narrower (scipy's
    int32). Anything else (Fortran order, COO/CSC, unsorted CSR, another
    dtype) is converted with a copy.

    `dtype=np.float32` makes `mvnmf_view_f32` views (for the `_f32` entry
    points) under the same rules, float32 kept as is."""

    def __init__(self, xs, n_features=None, dtype=np.float64):
        self._keep = []
        self.dtype = np.dtype(dtype)
        if self.dtype == np.float64:
            self._struct, self._ctype = B.mvnmf_view, C.c_double
        elif self.dtype == np.float32:
            self._struct, self._ctype = B.mvnmf_view_f32, C.c_float
        else:
            raise ValueError("views are float64 or float32, not %s" % self.dtype)
        views = []
        n = None
        for x in xs:
            v, m, cols = self._view(x)
            if n is None:
                n = cols
            elif cols != n:
                raise ValueError("every view must have the same number of samples: %d and %d" % (n, cols))
            views.append(v)
        if not views:
            raise ValueError("no views")
        if n_features is not None and [v.rows for v in views] != list(n_features):
            raise ValueError("the views have %s features, the fitted model %s"
                             % ([v.rows for v in views], list(n_features)))
        self.n_samples = n
        self.n_features = [v.rows for v in views]
        self.array = (self._struct * len(views))(*views)
        self.count = len(views)
        self.sparse = [v.kind == B.MVNMF_VIEW_CSC for v in views]

    def check(self, nonneg=False):
        """Checks the views as every mvnmf call does (mvnmf_check_views):
        raises MvnmfError naming the first bad entry (view, row = feature,
        column = sample), a NaN or infinity, or with `nonneg` a negative."""
        call(_CHECKS[self._struct], self.array, self.count, int(bool(nonneg)), C.byref(B.mvnmf_report()))

    def _view(self, x):
        try:
            import scipy.sparse as sp
        except ImportError:  # pragma: no cover - scipy is optional
            sp = None
        if sp is not None and sp.issparse(x):
            csr = x.tocsr() if x.format != "csr" else x
            if csr.dtype != self.dtype:
                csr = csr.astype(self.dtype)
            if not csr.has_canonical_format:
                csr = csr.copy()
                csr.sum_duplicates()
            data = np.ascontiguousarray(csr.data)
            ptr, idx = _size_t(csr.indptr), _size_t(csr.indices)
            self._keep += [csr, data, ptr, idx]
            n, m = csr.shape
            v = self._struct(kind=B.MVNMF_VIEW_CSC, rows=m, cols=n,
                             values=data.ctypes.data_as(C.POINTER(self._ctype)),
                             col_stride=0,
                             col_ptr=ptr.ctypes.data_as(C.POINTER(C.c_size_t)),
                             row_idx=idx.ctypes.data_as(C.POINTER(C.c_size_t)))
            return v, m, n
        a = np.asarray(x)
        if a.ndim != 2:
            raise ValueError("a view must be 2-D (n_samples, n_features), not %d-D" % a.ndim)
        s = self.dtype.itemsize
        if not (a.dtype == self.dtype and a.strides[1] == s and a.strides[0] % s == 0
                and a.strides[0] >= s * a.shape[1]):
            a = np.ascontiguousarray(a, dtype=self.dtype)
        self._keep.append(a)
        n, m = a.shape
        v = self._struct(kind=B.MVNMF_VIEW_DENSE, rows=m, cols=n,
                         values=a.ctypes.data_as(C.POINTER(self._ctype)),
                         col_stride=max(a.strides[0] // s, m) if n > 0 else m,
                         col_ptr=None, row_idx=None)
        return v, m, n


def views_of(X):
    """A list of views: X itself when it is a list or tuple, else [X]."""
    return list(X) if isinstance(X, (list, tuple)) else [X]


def pointers(arrays):
    """A C array of double* (float* for float32 arrays) to the arrays' data."""
    t = C.c_float if arrays and arrays[0].dtype == np.float32 else C.c_double
    return (C.POINTER(t) * len(arrays))(*[a.ctypes.data_as(C.POINTER(t)) for a in arrays])


def workspace(nbytes):
    """A workspace of `nbytes` bytes (any alignment is fine for mvnmf)."""
    w = np.empty(max(int(nbytes), 1), dtype=np.uint8)
    return w, w.ctypes.data_as(C.c_void_p)


class Progress:
    """The progress callback: records the objective of every iterate
    (`trace`) and prints it when `verbose`."""

    def __init__(self, verbose=0, label=""):
        self.trace = []
        self.verbose = verbose
        self.label = label
        self.error = None

        def cb(progress, _user):
            try:
                p = progress.contents
                if p.phase != B.MVNMF_PHASE_ITERATIONS:
                    # The pipeline's set-up phases (fusion weights, graph): no iterate.
                    if self.verbose:
                        name = "set-up" if p.phase == B.MVNMF_PHASE_SETUP else "graph"
                        print("%s %s: %s" % (self.label, name, "start" if p.fraction < 1 else "done"))
                    return 0
                self.trace.append(p.objective.total)
                if self.verbose and (p.iter % max(int(self.verbose), 1) == 0):
                    print("%s iteration %d: objective %.10g" % (self.label, p.iter, p.objective.total))
                return 0
            except BaseException as e:  # never unwind through the library's frames
                self.error = e
                return 1
        self.fn = B.mvnmf_progress_fn(cb)

    def reraise(self):
        if self.error is not None:
            raise self.error
