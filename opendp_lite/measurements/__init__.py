"""Measurements: randomised releases with privacy maps (``dp.m``).

Each ``make_x`` has a ``then_x`` partial for ``(domain, metric) >> then_x(...)`` chains.
"""

from .user import make_user_measurement

__all__ = ["make_user_measurement"]
