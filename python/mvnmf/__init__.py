"""mvnmf: semi-supervised multi-view nonnegative factorization (Python bindings).

The estimators follow scikit-learn's conventions:

    from mvnmf import MultiViewNMF, SemiSupervisedMultiViewNMF
    W = MultiViewNMF(n_components=20, init="nndsvda", random_state=0).fit_transform([X1, X2])
    Z = SemiSupervisedMultiViewNMF(n_components=20).fit([X1, X2], y).embedding_   # y: -1 = unlabeled
    P = MVEL().fit([X1, X2], Y).predict()   # Y: 0/1 given labels; completes them (transductive)

The whole C ABI is `mvnmf.lib` (a ctypes.CDLL with every function declared) and
`mvnmf.bindings` (its structs and constants), generated from include/mvnmf.h.
The library is $MVNMF_LIBRARY, else the copy the wheel bundles next to the
package, else (sources run from a clone) the repository's build, else an
installed libmvnmf.
"""
from . import _bindings as bindings
from ._lib import MvnmfError, call, lib, library_path
from .estimators import MultiViewNMF, SemiSupervisedMultiViewNMF
from .mvel import MVEL

__version__ = lib.mvnmf_version().decode()

__all__ = ["MultiViewNMF", "SemiSupervisedMultiViewNMF", "MVEL", "MvnmfError", "lib", "bindings", "call",
           "library_path", "__version__"]
