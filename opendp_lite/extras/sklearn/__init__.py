"""scikit-learn estimators with differential privacy (OpenDP's ``opendp.extras.sklearn``).

Needs the optional extra: ``pip install "opendp_lite[sklearn]"``.  The submodules follow
scikit-learn's layout: :mod:`.decomposition` (``PCA``) and :mod:`.linear_model`
(``LinearRegression``).  In the prelude they are ``dp.sklearn.decomposition`` and
``dp.sklearn.linear_model``.
"""

from __future__ import annotations

try:
    import sklearn  # noqa: F401
except ImportError as e:  # pragma: no cover - exercised by tests/extras with sklearn hidden
    raise ModuleNotFoundError(  # an ImportError naming the missing module, as Python's own
        'opendp_lite.extras.sklearn needs scikit-learn: pip install "opendp_lite[sklearn]"',
        name="sklearn",
    ) from e

from . import decomposition, linear_model

__all__ = ["decomposition", "linear_model"]
