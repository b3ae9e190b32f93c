"""Transformations: stable functions that shape data before noise (``dp.t``).

Each ``make_x`` has a ``then_x`` partial for ``(domain, metric) >> then_x(...)`` chains.  Each
family module lists its public names in its ``__all__``, and is re-exported here whole
(``from .x import *`` re-exports exactly ``__all__``, for mypy too), so a new constructor
needs no edit here.  ``tests/test_exports.py`` checks that this namespace is the union of the
modules' ``__all__``.
"""

from .user import *  # noqa: F403

# isort: split
# -- datasets, casting, nulls, ordering and metrics, resizing, lookups --
from .cast import *  # noqa: F403
from .clamp import *  # noqa: F403
from .dataset import *  # noqa: F403
from .filter import *  # noqa: F403
from .lookup import *  # noqa: F403
from .nulls import *  # noqa: F403
from .order import *  # noqa: F403
from .resize import *  # noqa: F403

# isort: split
# -- aggregates, moments, quantiles, trees --
from .count import *  # noqa: F403
from .lipschitz import *  # noqa: F403
from .moments import *  # noqa: F403
from .quantile import *  # noqa: F403
from .sum import *  # noqa: F403
from .tree import *  # noqa: F403

# isort: split
# -- partitions: records split by key columns, and per-group aggregates --
from .partition import *  # noqa: F403
from .truncate import *  # noqa: F403
