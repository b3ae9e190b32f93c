"""Transformations: stable functions that shape data before noise (``dp.t``).

Each ``make_x`` has a ``then_x`` partial for ``(domain, metric) >> then_x(...)`` chains.
Re-exports use ``import x as x`` (explicit re-export for mypy); there is no ``__all__``.
"""

from .user import make_user_transformation as make_user_transformation

# -- dataset handling, casting, cleaning, bounds, lookup (issue 5, part A) --

# -- aggregates, quantiles, trees (issue 5, part B) --
