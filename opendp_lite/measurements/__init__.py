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
from .noise_generic import *  # noqa: F403

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

# isort: split
# -- the measures, re-exported here as opendp.measurements does --
from ..core import Measure as Measure
from ..measures import Approximate as ApproximateDivergence  # noqa: F401  (OpenDP's name)
from ..measures import ExtrinsicDivergence as ExtrinsicDivergence
from ..measures import MaxDivergence as MaxDivergence
from ..measures import PrivacyProfile as PrivacyProfile
from ..measures import RenyiDivergence as RenyiDivergence
from ..measures import SmoothedMaxDivergence as SmoothedMaxDivergence
from ..measures import ZeroConcentratedDivergence as ZeroConcentratedDivergence
from ..measures import approximate as approximate
from ..measures import fixed_smoothed_max_divergence as fixed_smoothed_max_divergence
from ..measures import max_divergence as max_divergence
from ..measures import new_privacy_profile as new_privacy_profile
from ..measures import renyi_divergence as renyi_divergence
from ..measures import smoothed_max_divergence as smoothed_max_divergence
from ..measures import user_divergence as user_divergence
from ..measures import zero_concentrated_divergence as zero_concentrated_divergence
