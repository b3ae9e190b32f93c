"""OpenDP's pure-Python extras, done the opendp_lite way: exact grids, conservative maps.

* :mod:`opendp_lite.extras.numpy`: 2-d numpy array domains and row-norm aggregates
  (``then_np_clamp``, ``then_np_count``, ``then_np_sum``, ``then_private_np_mean``,
  ``then_np_sscp``); needs only numpy.
* :mod:`opendp_lite.extras.examples`: the public data sets of OpenDP's tutorials
  (``get_california_pums_path``, ``get_france_lfs_path``), kept in a local data directory.
* :mod:`opendp_lite.extras.sklearn`: scikit-learn estimators (``decomposition.PCA``,
  ``linear_model.LinearRegression``); needs the optional extra
  ``pip install "opendp_lite[sklearn]"``.
* :mod:`opendp_lite.extras.polars`: OpenDP's ``opendp.extras.polars`` names (``Margin``,
  ``Bound``, ``OnceFrame``, ...), the table API's own objects (import it by name).

The prelude exposes them as ``dp.numpy``, ``dp.examples`` and ``dp.sklearn`` (the latter
imported on first use).
"""

from __future__ import annotations

from . import examples, numpy

__all__ = ["examples", "numpy"]
