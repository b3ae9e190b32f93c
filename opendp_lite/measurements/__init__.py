"""Measurements: randomised releases with privacy maps (``dp.m``).

Each ``make_x`` has a ``then_x`` partial for ``(domain, metric) >> then_x(...)`` chains.  A
family module whose ``__all__`` holds only what ``dp.m`` exposes is re-exported whole
(``from .x import *`` re-exports exactly ``__all__``, for mypy too), so a new constructor there
needs no edit here; the modules that also define helpers kept out of ``dp.m`` (sketch domains,
distances, sampler configurations) re-export by name (``import x as x``).
"""

from .user import *  # noqa: F403

# isort: split
# -- additive noise --
from .canonical_noise import *  # noqa: F403
from .noise import *  # noqa: F403

# isort: split
# -- selection, quantiles, sketches --
from .alp import *  # noqa: F403
from .exponential import *  # noqa: F403
from .noisy_max import *  # noqa: F403
from .quantile import *  # noqa: F403

# isort: split
# -- randomized response, sparse vector, thresholds, sensitivity sampling (by name) --
from .randomized_response import bitvector_domain as bitvector_domain
from .randomized_response import (
    debias_randomized_response_bitvec as debias_randomized_response_bitvec,
)
from .randomized_response import make_randomized_response as make_randomized_response
from .randomized_response import (
    make_randomized_response_bitvec as make_randomized_response_bitvec,
)
from .randomized_response import make_randomized_response_bool as make_randomized_response_bool
from .randomized_response import (
    then_randomized_response_bitvec as then_randomized_response_bitvec,
)
from .sensitivity_sampling import make_random_dp as make_random_dp
from .sparse_vector import make_sparse_vector as make_sparse_vector
from .sparse_vector import then_sparse_vector as then_sparse_vector
from .threshold import l01inf_distance as l01inf_distance
from .threshold import l02inf_distance as l02inf_distance
from .threshold import make_gaussian_threshold as make_gaussian_threshold
from .threshold import make_laplace_threshold as make_laplace_threshold
from .threshold import then_gaussian_threshold as then_gaussian_threshold
from .threshold import then_laplace_threshold as then_laplace_threshold
from .two_coin import make_randomized_response_coins as make_randomized_response_coins
