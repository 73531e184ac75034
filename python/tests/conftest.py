"""Shared helpers: the real samples shipped in data/ (views as (n_samples, n_features))."""
import os

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def read_view(dataset, v):
    """data/<dataset>/view<v>.f64[.gz]: features x items column-major on disk, which
    is (n_samples, n_features) C-order in numpy."""
    import gzip
    d = os.path.join(REPO, "data", dataset)
    meta = open(os.path.join(d, "meta.txt")).read().split("\n")
    line = next(l for l in meta if l.startswith("view%d.f64" % v))
    f = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
    rows, cols = int(f["rows"]), int(f["cols"])
    path = os.path.join(d, "view%d.f64" % v)
    raw = open(path, "rb").read() if os.path.exists(path) else gzip.open(path + ".gz").read()
    return np.frombuffer(raw, dtype="<f8").reshape(cols, rows).copy()


def mfeat_labels():
    return np.loadtxt(os.path.join(REPO, "data", "mfeat-sample", "labels.txt"), dtype=np.int64)


# python/check_wheel.sh runs this suite against the installed wheel: the package
# imported must then be the installed one, with its bundled library, not the
# sources in python/ or a library from the clone's target/.
if os.environ.get("MVNMF_TEST_INSTALLED"):
    import mvnmf

    _pkg = os.path.dirname(os.path.abspath(mvnmf.__file__))
    assert not _pkg.startswith(os.path.join(REPO, "python") + os.sep), \
        "MVNMF_TEST_INSTALLED: imported the sources %s, not the installed package" % _pkg
    assert os.path.dirname(os.path.abspath(mvnmf.library_path())) == _pkg, \
        "MVNMF_TEST_INSTALLED: library %s is not the package's own" % mvnmf.library_path()
