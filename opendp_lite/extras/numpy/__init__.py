"""Two-dimensional numpy data: domains with a row-norm bound, and the aggregates over them.

The counterpart of OpenDP's ``opendp.extras.numpy`` (``dp.numpy`` in the prelude).  A dataset
is a 2-d array whose rows are records; ``array2_domain(norm=R, p=p, origin=o)`` holds the arrays
whose every row lies in the L``p`` ball of radius ``R`` around ``o``.  ``then_np_clamp`` maps any
array into such a domain; ``then_np_count``, ``then_np_sum``, ``then_private_np_mean`` and
``then_np_sscp`` aggregate it.

What opendp_lite does differently (each stated in the constructor's proof):

* **Row norms are checked exactly.**  A row is a member iff ``‖x − o‖_p <= R`` in exact
  arithmetic: a float statistic with every rounding bounded decides all rows but those in a
  thin band around the boundary, which are decided in rationals.  The clamp checks its own
  output with the same test and shrinks a row further until it passes, so its output is always
  a member, whatever the rounding.
* **Sums are exact.**  Each column is summed exactly on the grid ``2^-p`` of
  ``transformations/_aggregate.py`` and rounded once; the sum's map charges that rounding.
  The SSCP matrix is computed exactly on a 40-bit grid (split in 20-bit halves, whose float products
  and partial sums stay below ``2^53``), then rounded once per entry.
"""

from __future__ import annotations

from ... import serialization as _serialization

# ("x as x": names outside __all__ that the tests read through the package)
from ._checks import _exact_in_ball as _exact_in_ball
from ._checks import _rows_in_ball as _rows_in_ball
from .clamp import make_np_clamp, then_np_clamp
from .count import make_np_count, then_np_count
from .domain import NPArray2Domain, NPArrayDDomain, NPSSCPDomain, array2_domain, arrayd_domain
from .mean import make_private_np_mean, then_private_np_mean
from .sscp import _SSCP_ROWS as _SSCP_ROWS
from .sscp import _sscp_domain, make_np_sscp, then_np_sscp
from .sscp import exact_sscp as exact_sscp
from .sscp import sscp_grid as sscp_grid
from .sum import _SUM_ROWS as _SUM_ROWS
from .sum import grid_column_sums as grid_column_sums
from .sum import make_np_sum, make_private_np_sum, then_np_sum, then_private_np_sum

__all__ = [
    "NPArray2Domain",
    "NPArrayDDomain",
    "NPSSCPDomain",
    "array2_domain",
    "arrayd_domain",
    "make_np_clamp",
    "make_np_count",
    "make_np_sscp",
    "make_np_sum",
    "make_private_np_mean",
    "make_private_np_sum",
    "then_np_clamp",
    "then_np_count",
    "then_np_sscp",
    "then_np_sum",
    "then_private_np_mean",
    "then_private_np_sum",
]


# serialization writes this package's domains as the public calls that build them
_serialization.register_space(
    NPArray2Domain,
    "array2_domain",
    array2_domain,
    ("norm", "p", "origin", "size", "num_columns", "nan", "T"),
)
_serialization.register_space(NPArrayDDomain, "arrayd_domain", arrayd_domain, ("shape", "T"))
_serialization.register_space(
    NPSSCPDomain, "np_sscp_domain", _sscp_domain, ("num_features", "T", "norm", "p", "size")
)
