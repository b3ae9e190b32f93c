"""Measurements: randomised releases with privacy maps (``dp.m``).

Each ``make_x`` has a ``then_x`` partial for ``(domain, metric) >> then_x(...)`` chains.
Re-exports use ``import x as x`` (explicit re-export for mypy); there is no ``__all__``.
"""

from .user import make_user_measurement as make_user_measurement

# -- additive noise: laplace, gaussian, geometric (issue 3) --
# isort: split
from .noise import make_base_discrete_gaussian as make_base_discrete_gaussian
from .noise import make_base_discrete_laplace as make_base_discrete_laplace
from .noise import make_base_gaussian as make_base_gaussian
from .noise import make_base_laplace as make_base_laplace
from .noise import make_gaussian as make_gaussian
from .noise import make_geometric as make_geometric
from .noise import make_laplace as make_laplace
from .noise import then_base_discrete_gaussian as then_base_discrete_gaussian
from .noise import then_base_discrete_laplace as then_base_discrete_laplace
from .noise import then_base_gaussian as then_base_gaussian
from .noise import then_base_laplace as then_base_laplace
from .noise import then_gaussian as then_gaussian
from .noise import then_geometric as then_geometric
from .noise import then_laplace as then_laplace

# isort: split

# -- randomized response, selection, exponential, sparse vector, thresholds, quantiles (issue 6) --

# -- seed systems (issue 7) --
from ..sensitivity import make_random_dp as make_random_dp
from .two_coin import make_randomized_response_coins as make_randomized_response_coins
