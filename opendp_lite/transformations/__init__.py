"""Transformations: stable functions that shape data before noise (``dp.t``).

Each ``make_x`` has a ``then_x`` partial for ``(domain, metric) >> then_x(...)`` chains.
"""

from .user import make_user_transformation

__all__ = ["make_user_transformation"]
