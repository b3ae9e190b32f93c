"""Multiplication by a public constant, with the float rounding covered by the map."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _arith as ar
from .._registry import constructor
from .._spine import then
from .._types import is_float
from .._validate import check_no_nan
from ..core import Domain, Metric, Transformation
from ..domains import AtomDomain, atom_domain
from ..errors import InvalidParameter, NotImplementedForType
from ..metrics import AbsoluteDistance, absolute_distance
from ._aggregate import float_max, rounding_error

__all__ = ["make_lipschitz_float_mul", "then_lipschitz_float_mul"]


@constructor
def make_lipschitz_float_mul(
    input_domain: Domain[Any], input_metric: Metric[Any], constant: float, bounds: tuple[Any, Any]
) -> Transformation[float, float, float, float]:
    r"""Multiply a float by ``constant`` after clamping it to ``bounds``.

    Output: ``round_T(constant · clamp(x, L, U))``.  Stability map (absolute distance), with
    ``M = max(|L|, |U|)`` and :math:`e_T` the bound on one rounding (binary64:
    :math:`2^{-53} c + 2^{-1075}`):

    .. math:: d_{out} = |constant| \cdot d_{in} + 2\,e_T(|constant| \cdot M)

    Raises:
        InvalidParameter: if the constant or bounds are not finite, the bounds are reversed,
            or ``|constant| · M`` could overflow.
        NotImplementedForType: if the domain is not a float atom domain without NaN, or the
            metric is not the absolute distance.

    Proof: docs/proofs/make_lipschitz_float_mul.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    >>> t = space >> dp.t.then_lipschitz_float_mul(3.0, (-1.0, 2.0))
    >>> t(5.0), t(1.5), t.map(1.0)
    (6.0, 4.5, 3.0000000000000018)
    """
    name = "make_lipschitz_float_mul"
    if not isinstance(input_domain, AtomDomain) or not is_float(input_domain.T):
        raise NotImplementedForType(f"{name} needs a float atom_domain, got {input_domain!r}")
    check_no_nan(name, input_domain, input_domain)
    if not isinstance(input_metric, AbsoluteDistance):
        raise NotImplementedForType(f"{name} needs absolute_distance, got {input_metric!r}")
    T = input_domain.T
    c = float(constant)
    if not math.isfinite(c):
        raise InvalidParameter(f"{name}: constant must be finite, got {constant!r}")
    bdom = atom_domain(bounds=bounds, T=T)
    assert bdom.bounds is not None  # noqa: S101 - atom_domain stored the checked bounds
    lo, hi = float(bdom.bounds[0]), float(bdom.bounds[1])
    mag = ar.q(abs(c)) * ar.q(max(abs(lo), abs(hi)))
    err = rounding_error(mag, T)
    if ar.up(mag + err) > float_max(T) / 2:
        raise InvalidParameter(f"{name}: |constant|·max(|L|, |U|) = {c}·{max(-lo, hi)} overflows")
    relax = 2 * err
    qc = ar.q(abs(c))

    def function(x: float) -> float:
        v = c * min(max(x, lo), hi)  # one binary64 rounding
        if T == "f32":
            return float(np.float32(v))
        return v

    def stability_map(d_in: float) -> float:
        return ar.up(qc * ar.q(d_in) + relax)

    return Transformation(
        input_domain,
        input_metric,
        atom_domain(T=T, nan=False),
        absolute_distance(T=T),
        function,
        stability_map,
    )


then_lipschitz_float_mul = then(make_lipschitz_float_mul)
