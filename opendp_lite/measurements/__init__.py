"""Measurements: randomised releases with privacy maps (``dp.m``).

Each ``make_x`` has a ``then_x`` partial for ``(domain, metric) >> then_x(...)`` chains.
Re-exports use ``import x as x`` (explicit re-export for mypy); there is no ``__all__``.
"""

from .user import make_user_measurement as make_user_measurement
from .user import then_user_measurement as then_user_measurement

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
from .canonical_noise import make_canonical_noise as make_canonical_noise
from .canonical_noise import then_canonical_noise as then_canonical_noise
from .exponential import make_exponential as make_exponential
from .exponential import then_exponential as then_exponential
from .noisy_max import make_noisy_max as make_noisy_max
from .noisy_max import make_noisy_top_k as make_noisy_top_k
from .noisy_max import make_report_noisy_max_gumbel as make_report_noisy_max_gumbel
from .noisy_max import then_noisy_max as then_noisy_max
from .noisy_max import then_noisy_top_k as then_noisy_top_k
from .noisy_max import then_report_noisy_max_gumbel as then_report_noisy_max_gumbel
from .quantile import make_private_quantile as make_private_quantile
from .quantile import then_private_quantile as then_private_quantile
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
from .sparse_vector import make_sparse_vector as make_sparse_vector
from .sparse_vector import then_sparse_vector as then_sparse_vector
from .threshold import l01inf_distance as l01inf_distance
from .threshold import l02inf_distance as l02inf_distance
from .threshold import make_gaussian_threshold as make_gaussian_threshold
from .threshold import make_laplace_threshold as make_laplace_threshold
from .threshold import then_gaussian_threshold as then_gaussian_threshold
from .threshold import then_laplace_threshold as then_laplace_threshold

# isort: split

# -- seed systems (issue 7) --
from .sensitivity_sampling import make_random_dp as make_random_dp
from .two_coin import make_randomized_response_coins as make_randomized_response_coins

# isort: split

# -- generic noise: the distribution chosen by the output measure (issue 14) --
from .noise_generic import make_noise as make_noise
from .noise_generic import make_noise_threshold as make_noise_threshold
from .noise_generic import then_noise as then_noise
from .noise_generic import then_noise_threshold as then_noise_threshold

# isort: split

# -- the measures, re-exported here as opendp.measurements does (issue 14) --
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

# isort: split

# -- alp (issue 6) --
from .alp import make_alp_queryable as make_alp_queryable
from .alp import then_alp_queryable as then_alp_queryable
