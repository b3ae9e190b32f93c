"""Sensitivity sampling and random DP, under one import (Rubinstein & Aldà 2017).

The pieces live where the algebra puts them: the measure :class:`RandomDivergence` in
:mod:`opendp_lite.measures`, the data-generating distributions in
:mod:`opendp_lite.measurements.sensitivity.distributions`, the norms in
:mod:`opendp_lite.measurements.sensitivity.norms`, the sampler and :func:`make_random_dp` in
:mod:`opendp_lite.measurements.sensitivity_sampling`, and
:func:`make_random_dp_as_worst_case` in :mod:`opendp_lite.combinators.random_dp`.  This module
gathers them for users of the sensitivity-sampling workflow.

>>> from opendp_lite.sensitivity import Normal, sample_sensitivity, random_max_divergence
>>> random_max_divergence(0.05)
RandomMaxDivergence(gamma=0.05)
"""

from __future__ import annotations

from ._math import lambert_w_minus1
from ._progress import ProgressBar
from .combinators.random_dp import make_random_dp_as_worst_case
from .measurements.sensitivity.distributions import (
    Distribution,
    Empirical,
    GaussianMixture,
    Normal,
    Uniform,
    UserDistribution,
)
from .measurements.sensitivity.norms import L1Norm, L1SensitivityNorm, L2Norm, L2SensitivityNorm
from .measurements.sensitivity_sampling import (
    SampledSensitivity,
    SamplerConfig,
    SensitivitySampler,
    make_random_dp,
    sample_sensitivity,
    sampler_config,
)
from .measures import RandomDivergence, random_max_divergence, random_zero_concentrated_divergence

__all__ = [
    "Distribution",
    "Empirical",
    "GaussianMixture",
    "L1Norm",
    "L1SensitivityNorm",
    "L2Norm",
    "L2SensitivityNorm",
    "Normal",
    "ProgressBar",
    "RandomDivergence",
    "SampledSensitivity",
    "SamplerConfig",
    "SensitivitySampler",
    "Uniform",
    "UserDistribution",
    "lambert_w_minus1",
    "make_random_dp",
    "make_random_dp_as_worst_case",
    "random_max_divergence",
    "random_zero_concentrated_divergence",
    "sample_sensitivity",
    "sampler_config",
]
