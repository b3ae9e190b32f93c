"""Measurements: randomised releases with privacy maps (``dp.m``).

Each ``make_x`` has a ``then_x`` partial for ``(domain, metric) >> then_x(...)`` chains.
Re-exports use ``import x as x`` (explicit re-export for mypy); there is no ``__all__``.
"""

from .user import make_user_measurement as make_user_measurement

# -- additive noise: laplace, gaussian, geometric (issue 3) --

# -- randomized response, selection, exponential, sparse vector, thresholds, quantiles (issue 6) --

# -- seed systems (issue 7) --
from ..sensitivity import make_random_dp as make_random_dp
from .two_coin import make_randomized_response_coins as make_randomized_response_coins
