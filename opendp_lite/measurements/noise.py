"""Additive noise mechanisms: Laplace, Gaussian and geometric, on integers and floats.

Integer data get exact discrete noise (CKS20).  Float data follow OpenDP's design: each float
is taken exactly as a rational, rounded to the grid 2^k·ℤ, shifted by 2^k times exact
discrete noise of scale ``scale/2^k``, and rounded back to the nearest float of the carrier.
The rounding to the grid moves each coordinate by less than 2^k − 2^k_min, which the privacy
map charges as extra sensitivity (zero at the default ``k = k_min``: −1074 for f64, −149 for
f32).  Integer outputs saturate at the carrier's range and float outputs at ±max finite
(post-processing of the exact noisy value; never wrap-around or ±inf).  On a float domain that
admits NaN, a NaN input is released as NaN: the metrics put NaN at infinite distance from
every value, so it is in no neighbouring pair (docs/proofs/lemmas/nan-inputs.md).

>>> import opendp_lite.prelude as dp
>>> space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
>>> [make_laplace(*space, scale=1.0, k=k).map(0.0) for k in (-1074, -1073, -100, -1, 0, 1)]
[0.0, 5e-324, 7.888609052210118e-31, 0.5, 1.0, 2.0]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Literal, cast

import numpy as np

from .._arith import q, up
from .._registry import constructor
from .._spine import int_noise, int_noise_carriers, noise, noise_carriers
from .._types import carrier_dtype, int_bounds, is_float, is_int
from .._validate import check_finite_nonneg, check_int, is_int_value
from ..core import Domain, Measure, Measurement, Metric
from ..domains import AtomDomain, VectorDomain
from ..errors import InfiniteLoss, InvalidParameter, NotImplementedForType, NotInDomain
from ..measures import MaxDivergence, ZeroConcentratedDivergence
from ..metrics import AbsoluteDistance, L1Distance, L2Distance
from ..samplers import batch
from ..samplers.noise_ref import k_min as _k_min

__all__ = [
    "make_base_discrete_gaussian",
    "make_base_discrete_laplace",
    "make_base_gaussian",
    "make_base_laplace",
    "make_gaussian",
    "make_geometric",
    "make_laplace",
    "then_base_discrete_gaussian",
    "then_base_discrete_laplace",
    "then_base_gaussian",
    "then_base_laplace",
    "then_gaussian",
    "then_geometric",
    "then_laplace",
]

Dist = Literal["laplace", "gaussian"]
_K_MAX = {"f64": 1023, "f32": 127}  # 2^k beyond the largest binade: every output saturates


@dataclass(frozen=True)
class _Space:
    T: str  # carrier of the atoms
    vector: bool
    size: int | None  # known vector length; 1 for a scalar
    nan: bool = False  # the float atoms admit NaN: NaN in, NaN out (see _nan_vector)


def _without_nan(input_domain: Domain[Any]) -> Domain[Any]:
    """The older ``make_base_*`` names narrow a NaN-admitting float domain to its numbers.

    The OpenDP versions these names come from took ``atom_domain(T=float)`` as NaN-free; the
    measurement built on the narrowed domain refuses a NaN at call time (``NotInDomain``,
    before any randomness), so nothing is released about it.
    """
    if isinstance(input_domain, AtomDomain) and input_domain.nan:
        return replace(input_domain, nan=False)
    if isinstance(input_domain, VectorDomain):
        elem = input_domain.element_domain
        if isinstance(elem, AtomDomain) and elem.nan:
            return replace(input_domain, element_domain=replace(elem, nan=False))
    return input_domain


def _space(input_domain: Domain[Any], input_metric: Metric[Any], dist: Dist, who: str) -> _Space:
    """Check the (domain, metric) pair a noise mechanism accepts; return its shape."""
    vec_metric = L1Distance if dist == "laplace" else L2Distance
    size: int | None = 1
    if isinstance(input_domain, AtomDomain):
        atom, vector = input_domain, False
        if not isinstance(input_metric, AbsoluteDistance):
            raise NotImplementedForType(
                f"{who} on {input_domain!r} needs absolute_distance(T), got {input_metric!r}"
            )
    elif isinstance(input_domain, VectorDomain) and isinstance(
        input_domain.element_domain, AtomDomain
    ):
        atom, vector, size = input_domain.element_domain, True, input_domain.size
        if not isinstance(input_metric, vec_metric):
            want = "l1_distance(T)" if dist == "laplace" else "l2_distance(T)"
            raise NotImplementedForType(
                f"{who} on {input_domain!r} needs {want}, got {input_metric!r}"
            )
    else:
        raise NotImplementedForType(
            f"{who} needs atom_domain(T) or vector_domain(atom_domain(T)), got {input_domain!r}"
        )
    if not (is_float(atom.T) or is_int(atom.T)):
        raise NotImplementedForType(f"{who} needs a numeric carrier, got T={atom.T}")
    # A NaN-admitting float domain is accepted: NaN is at infinite distance from every value
    # under these metrics, so no neighbouring pair holds one (docs/proofs/lemmas/nan-inputs.md)
    return _Space(atom.T, vector, size, bool(is_float(atom.T) and atom.nan))


def _measure(MO: object, want: type[Measure[Any]], who: str) -> Measure[Any]:
    """Parse ``MO`` (a measure, its class, or its name such as ``"MaxDivergence<f64>"``)."""
    if isinstance(MO, want):
        return MO
    if MO is want or (isinstance(MO, str) and MO.split("<")[0].strip() == want.__name__):
        return want()
    raise NotImplementedForType(f"{who} supports MO={want.__name__} only, got MO={MO!r}")


def _k(k: object, sp: _Space, who: str) -> int:
    """Validate the grid exponent ``k``; refuse it where rounding cannot be accounted for."""
    if not is_float(sp.T):
        if k is not None:
            raise InvalidParameter(f"{who}: k is only valid for float domains, got k={k!r}")
        return 0
    kmin = _k_min(sp.T)
    if k is None:
        return kmin
    k = check_int("k", k, who=who)
    if not kmin <= k <= _K_MAX[sp.T]:
        raise InvalidParameter(f"{who}: k must be in [{kmin}, {_K_MAX[sp.T]}] for {sp.T}, got {k}")
    if k != kmin and sp.vector and sp.size is None:
        raise InvalidParameter(
            f"{who}: the vector size must be known when k ({k}) is not the default ({kmin}), "
            "since every coordinate's rounding is charged; use vector_domain(..., size=n)"
        )
    return k


def _qo(QO: object) -> str:
    names: dict[object, str] = {
        float: "f64",
        "float": "f64",
        "f64": "f64",
        "f32": "f32",
        None: "f64",
    }
    name = names.get(QO)
    if name is None:
        raise NotImplementedForType(f"QO must be 'f64' or 'f32', got {QO!r}")
    return name


def _round_up(x: Any, QO: str) -> float:
    """The exact rational ``x`` rounded up to a float of type ``QO`` (as a Python float)."""
    u = up(x)
    if QO == "f32" and math.isfinite(u):
        v = np.float32(u)
        if float(v) < u:
            v = np.nextafter(v, np.float32(np.inf))
        u = float(v)
    return u


def _rounding_penalty(sp: _Space, k: int, p: int) -> Any:
    """Sensitivity added by rounding to 2^k·ℤ, as an exact rational upper bound.

    Each coordinate moves by at most 2^k − 2^k_min relative to its neighbour's, so the Lp
    distance grows by at most n^{1/p}·(2^k − 2^k_min); √n is bounded above by a rational
    with 64 fractional bits when n is not a square.
    """
    if not is_float(sp.T) or k == _k_min(sp.T):
        return q(0)
    per = q(2) ** k - q(2) ** _k_min(sp.T)
    n = sp.size if sp.size is not None else 1
    if p == 1:
        return per * n
    root = math.isqrt(n)
    if root * root == n:
        return per * root
    return per * (q(math.isqrt(n << 128) + 1) / q(1 << 64))


def _no_loss(d: Any, who: str) -> float:
    if d == 0:
        return 0.0
    raise InfiniteLoss(f"{who} with scale 0 releases its input: the privacy loss is infinite")


def _function(sp: _Space, scale: Any, k: int, dist: Dist) -> Any:
    """The release function; a scalar one also carries ``sample_many(x, n)``: n independent
    releases of ``x`` in one batch (the same law as n calls; used by ``opendp_lite.audit``)."""
    T = sp.T
    if is_int(T):
        if sp.vector:
            int_small = batch.int_noise_small_fn(scale, dist, T)  # plan looked up once

            def int_vector(x: Any) -> Any:
                if type(x) is np.ndarray and len(x) <= batch.SMALL:
                    return int_small(x)
                return batch.int_noise(x, scale, dist, T)

            return int_vector

        int_draw = batch.int_noise_scalar_fn(scale, dist, T)  # plan looked up once

        def int_scalar(x: int) -> int:
            return int_draw(x)

        def int_many(x: int, n: int) -> Any:
            return batch.int_noise(np.full(n, x, dtype=carrier_dtype(T)), scale, dist, T)

        int_scalar.sample_many = int_many  # type: ignore[attr-defined]
        return int_scalar

    FT = cast(Literal["f32", "f64"], T)  # a float carrier name (typing only)
    if sp.vector:
        small = batch.float_noise_small_fn(scale, k, dist, FT, refuse=NotInDomain)

        def vector(x: Any) -> Any:
            if type(x) is np.ndarray and len(x) <= batch.SMALL:
                return small(x)  # checks every element finite before drawing
            if not np.isfinite(x).all():
                raise NotInDomain("every element of the input must be finite")
            return batch.float_noise(x, scale, k, dist, FT)

        return _nan_vector(vector) if sp.nan else vector

    # refuses a non-finite x with NotInDomain before drawing (the domain admits ±inf)
    scalar = batch.float_noise_scalar_fn(scale, k, dist, FT, refuse=NotInDomain)

    def many(x: float, n: int) -> Any:
        if not math.isfinite(x):
            raise NotInDomain(f"the input must be finite, got {x!r}")
        return batch.float_noise(np.full(n, x, dtype=carrier_dtype(T)), scale, k, dist, FT)

    scalar.sample_many = many  # type: ignore[attr-defined]
    return _nan_scalar(scalar, T) if sp.nan else scalar


def _nan_vector(vector: Any) -> Any:
    """``vector`` on a NaN-admitting domain: each NaN coordinate is noised as 0 and released
    as NaN.  So the number of draws depends on the length only, and the law of every other
    coordinate is unchanged; NaN is at infinite distance from every value (no neighbouring
    pair holds one), which is why a deterministic NaN costs nothing
    (docs/proofs/lemmas/nan-inputs.md).  ±inf is still refused (``NotInDomain``)."""

    def nan_vector(x: Any) -> Any:
        xa = np.asarray(x)
        mask = np.isnan(xa)
        if not mask.any():
            return vector(x)
        out = vector(np.where(mask, xa.dtype.type(0), xa))
        out[mask] = np.nan
        return out

    return nan_vector


def _nan_scalar(scalar: Any, T: str) -> Any:
    """``scalar`` on a NaN-admitting domain: NaN is released as NaN (its noise is drawn as for
    0 and discarded, so the draws do not depend on the data); see :func:`_nan_vector`."""
    many = scalar.sample_many

    def nan_scalar(x: float) -> float:
        if x != x:
            scalar(0.0)
            return math.nan
        out: float = scalar(x)
        return out

    def nan_many(x: float, n: int) -> Any:
        if x != x:
            many(0.0, n)
            return np.full(n, np.nan, dtype=carrier_dtype(T))
        return many(x, n)

    nan_scalar.sample_many = nan_many  # type: ignore[attr-defined]
    return nan_scalar


def _laplace(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    scale: float,
    k: int | None,
    MO: object,
    QO: str,
    who: str,
) -> Measurement[Any, Any, Any, float]:
    sp = _space(input_domain, input_metric, "laplace", who)
    measure = _measure(MO, MaxDivergence, who)
    s = q(check_finite_nonneg("scale", scale))
    k_ = _k(k, sp, who)
    penalty = _rounding_penalty(sp, k_, 1)

    def privacy_map(d_in: Any) -> float:
        d = q(d_in) + penalty
        return _no_loss(d, who) if s == 0 else _round_up(d / s, QO)

    return Measurement(
        input_domain, input_metric, measure, _function(sp, s, k_, "laplace"), privacy_map
    )


def _gaussian(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    scale: float,
    k: int | None,
    MO: object,
    QO: str,
    who: str,
) -> Measurement[Any, Any, Any, float]:
    sp = _space(input_domain, input_metric, "gaussian", who)
    measure = _measure(MO, ZeroConcentratedDivergence, who)
    s = q(check_finite_nonneg("scale", scale))
    k_ = _k(k, sp, who)
    penalty = _rounding_penalty(sp, k_, 2)

    def privacy_map(d_in: Any) -> float:
        d = q(d_in) + penalty
        return _no_loss(d, who) if s == 0 else _round_up(d * d / (2 * s * s), QO)

    return Measurement(
        input_domain, input_metric, measure, _function(sp, s, k_, "gaussian"), privacy_map
    )


def _require_int(input_domain: Domain[Any], who: str) -> None:
    atom = input_domain.element_domain if isinstance(input_domain, VectorDomain) else input_domain
    if not (isinstance(atom, AtomDomain) and is_int(atom.T)):
        raise NotImplementedForType(f"{who} needs an integer domain, got {input_domain!r}")


# Typed by the carrier tables of _spine.py (no runtime effect: the decorators return the
# function itself): mypy infers a chain's carriers from the domain, so a float aggregate
# feeding an integer mechanism is rejected before anything runs.  The partials (then_*) take
# the carrier from what they follow (the noise patterns, _spine.py).
@noise_carriers
@constructor
def make_laplace(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    scale: float,
    k: int | None = None,
    MO: object = "MaxDivergence",
) -> Measurement[Any, Any, Any, float]:
    r"""Add Laplace noise: exact discrete Laplace on integers, on the grid 2^k·ℤ for floats.

    Inputs: ``atom_domain(T)`` with ``absolute_distance``, or ``vector_domain(atom_domain(T))``
    with ``l1_distance``; T an integer or float carrier.  Integer outputs saturate at T's
    range; float outputs at ±max finite T.  A float domain may admit NaN: NaN is at infinite
    distance from every value, so no pair within a finite ``d_in`` holds one, and each NaN is
    released as NaN (a sensitivity ``d_in`` claims that neighbouring inputs are numbers).

    Privacy map (MaxDivergence), computed in ℚ and rounded up:
        ε(d_in) = (d_in + n·(2^k − 2^k_min)) / scale
    with n the vector size (1 for a scalar); the penalty term is 0 for integers and for the
    default k = k_min (−1074 for f64, −149 for f32).

    Raises:
        InvalidParameter: scale negative, NaN or infinite; k not an int in [k_min, k_max]; k
            given for an integer domain, or non-default k on a vector of unknown size.
        NotImplementedForType: an unsupported domain/metric pair, carrier, or MO.
        NotInDomain: (on invoke) infinite data, or NaN where the domain has ``nan=False``,
            before any noise is drawn.

    Proof: docs/proofs/make_laplace.md  [Canonne, Kamath, Steinke 2020]

    >>> import opendp_lite.prelude as dp
    >>> space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    >>> meas = make_laplace(*space, scale=2.0)
    >>> meas.map(1.0)
    0.5
    >>> isinstance(meas(0.0), float)
    True
    >>> with_nan = dp.vector_domain(dp.atom_domain(T=float)), dp.l1_distance(T=float)
    >>> make_laplace(*with_nan, scale=2.0)([0.0, float("nan")])[1]
    nan
    """
    return _laplace(input_domain, input_metric, scale, k, MO, "f64", "make_laplace")


@noise_carriers
@constructor
def make_gaussian(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    scale: float,
    k: int | None = None,
    MO: object = "ZeroConcentratedDivergence",
) -> Measurement[Any, Any, Any, float]:
    r"""Add Gaussian noise: exact discrete Gaussian on integers, on the grid 2^k·ℤ for floats.

    Inputs: ``atom_domain(T)`` with ``absolute_distance``, or ``vector_domain(atom_domain(T))``
    with ``l2_distance``; T an integer or float carrier.  A float domain may admit NaN: each
    NaN is released as NaN, as in :func:`make_laplace`.

    Privacy map (ZeroConcentratedDivergence), computed in ℚ and rounded up:
        ρ(d_in) = (d_in + √n·(2^k − 2^k_min))² / (2·scale²)
    with n the vector size (1 for a scalar; √n bounded above by a rational); the penalty is
    0 for integers and for the default k = k_min.

    Raises:
        InvalidParameter: scale negative, NaN or infinite; k out of range, given for an
            integer domain, or non-default on a vector of unknown size.
        NotImplementedForType: an unsupported domain/metric pair, carrier, or MO (only
            ZeroConcentratedDivergence).
        NotInDomain: (on invoke) infinite data, or NaN where the domain has ``nan=False``,
            before any noise is drawn.

    Proof: docs/proofs/make_gaussian.md  [Canonne, Kamath, Steinke 2020]

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=float)
    >>> make_gaussian(*space, scale=1.0).map(1.414)
    0.999698
    >>> make_gaussian(dp.atom_domain(T=float), dp.absolute_distance(T=float), scale=2.0).map(1.0)
    0.125
    """
    return _gaussian(input_domain, input_metric, scale, k, MO, "f64", "make_gaussian")


@int_noise_carriers
@constructor
def make_geometric(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    scale: float,
    bounds: tuple[int, int] | None = None,
    MO: object = "MaxDivergence",
) -> Measurement[Any, Any, Any, float]:
    r"""The geometric mechanism: exact discrete Laplace noise on integers, optionally censored.

    Inputs: integer ``atom_domain(T)`` with ``absolute_distance``, or
    ``vector_domain(atom_domain(T))`` with ``l1_distance``.  Without ``bounds`` this is
    ``make_laplace`` on integers.  With ``bounds = (L, U)`` each value is clamped to [L, U],
    noised, and the result clamped to [L, U] again (the censored law, as in OpenDP).  The
    sampler is exact but not constant-time (Python gives no timing guarantees).

    Privacy map (MaxDivergence), computed in ℚ and rounded up:  ε(d_in) = d_in / scale.

    Raises:
        InvalidParameter: scale negative, NaN or infinite; bounds not an ordered pair of
            integers within T's range.
        NotImplementedForType: a non-integer domain, an unsupported metric, or MO.

    Proof: docs/proofs/make_geometric.md  [Ghosh, Roughgarden, Sundararajan 2012; CKS20]

    >>> import opendp_lite.prelude as dp
    >>> meas = make_geometric(dp.atom_domain(T=int), dp.absolute_distance(T=int), 2.0, (0, 10))
    >>> meas.map(3), 0 <= meas(5) <= 10
    (1.5, True)
    """
    who = "make_geometric"
    _require_int(input_domain, who)
    meas = _laplace(input_domain, input_metric, scale, None, MO, "f64", who)
    if bounds is None:
        return meas
    sp = _space(input_domain, input_metric, "laplace", who)
    if not (
        isinstance(bounds, tuple | list)
        and len(bounds) == 2
        and all(is_int_value(b) for b in bounds)
    ):
        raise InvalidParameter(f"{who}: bounds must be a pair of ints, got {bounds!r}")
    lo, hi = int(bounds[0]), int(bounds[1])
    t_lo, t_hi = int_bounds(sp.T)
    if not t_lo <= lo <= hi <= t_hi:
        raise InvalidParameter(
            f"{who}: bounds must satisfy {t_lo} <= L <= U <= {t_hi}, got {bounds!r}"
        )
    s = q(check_finite_nonneg("scale", scale))

    def censored(x: int) -> int:
        y = batch.int_noise_scalar(min(max(int(x), lo), hi), s, "laplace", sp.T)
        return min(max(y, lo), hi)

    def function(x: Any) -> Any:
        if sp.vector:  # vectorised: clamp_T(clip(x) + Z) then clip is clip(clip(x) + Z)
            y = batch.int_noise(np.clip(x, lo, hi), s, "laplace", sp.T)
            return np.clip(y, lo, hi).astype(x.dtype, copy=False)
        return censored(x)

    return Measurement(input_domain, input_metric, meas.output_measure, function, meas.privacy_map)


@noise_carriers
@constructor
def make_base_laplace(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    scale: float,
    k: int | None = None,
    QO: object = None,
) -> Measurement[Any, Any, Any, float]:
    r"""The older name of :func:`make_laplace` (OpenDP ≤ 0.9), with the loss type ``QO``.

    A float domain that admits NaN (``atom_domain(T=float)``) is narrowed to its numbers, as
    those versions read it: the measurement's ``input_domain`` has ``nan=False``.

    Privacy map (MaxDivergence), computed in ℚ and rounded up to ``QO`` (f64 or f32):
        ε(d_in) = (d_in + n·(2^k − 2^k_min)) / scale

    Raises:
        InvalidParameter, NotImplementedForType: as :func:`make_laplace`; ``QO`` other than
            f64/f32.

    Proof: docs/proofs/make_base_laplace.md

    >>> import opendp_lite.prelude as dp
    >>> dp.m.make_base_laplace(dp.atom_domain(T=float), dp.absolute_distance(T=float), 2.0).map(1.0)
    0.5
    """
    domain = _without_nan(input_domain)  # atom_domain(T=float) admitted no NaN in OpenDP ≤ 0.9
    return _laplace(domain, input_metric, scale, k, "MaxDivergence", _qo(QO), "make_base_laplace")


@noise_carriers
@constructor
def make_base_gaussian(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    scale: float,
    k: int | None = None,
    MO: object = "ZeroConcentratedDivergence",
    QO: object = None,
) -> Measurement[Any, Any, Any, float]:
    r"""The older name of :func:`make_gaussian`, with the loss type ``QO``.

    A float domain that admits NaN (``atom_domain(T=float)``) is narrowed to its numbers, as
    the older versions read it: the measurement's ``input_domain`` has ``nan=False``.

    Privacy map (ZeroConcentratedDivergence), computed in ℚ and rounded up to ``QO``:
        ρ(d_in) = (d_in + √n·(2^k − 2^k_min))² / (2·scale²)

    Raises:
        InvalidParameter, NotImplementedForType: as :func:`make_gaussian`; ``QO`` other than
            f64/f32.

    Proof: docs/proofs/make_base_gaussian.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.atom_domain(T=float), dp.absolute_distance(T=float)  # narrowed to nan=False
    >>> dp.m.make_base_gaussian(*space, scale=2.0).input_domain
    AtomDomain(T=f64)
    >>> dp.m.make_base_gaussian(*space, scale=2.0).map(1.0)
    0.125
    """
    domain = _without_nan(input_domain)  # atom_domain(T=float) admitted no NaN in OpenDP ≤ 0.9
    return _gaussian(domain, input_metric, scale, k, MO, _qo(QO), "make_base_gaussian")


@int_noise_carriers
@constructor
def make_base_discrete_laplace(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    scale: float,
    QO: object = None,
) -> Measurement[Any, Any, Any, float]:
    r"""Exact discrete Laplace noise on integers (the older name; the geometric mechanism).

    Privacy map (MaxDivergence), computed in ℚ and rounded up to ``QO``:
        ε(d_in) = d_in / scale

    Raises:
        NotImplementedForType: a non-integer domain, an unsupported metric, or ``QO``.
        InvalidParameter: scale negative, NaN or infinite.

    Proof: docs/proofs/make_base_discrete_laplace.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.atom_domain(T="i32"), dp.absolute_distance(T="i32")
    >>> dp.m.make_base_discrete_laplace(*space, scale=1.0, QO="f64").map(1)
    1.0
    """
    who = "make_base_discrete_laplace"
    _require_int(input_domain, who)
    return _laplace(input_domain, input_metric, scale, None, "MaxDivergence", _qo(QO), who)


@int_noise_carriers
@constructor
def make_base_discrete_gaussian(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    scale: float,
    MO: object = "ZeroConcentratedDivergence",
    QO: object = None,
) -> Measurement[Any, Any, Any, float]:
    r"""Exact discrete Gaussian noise on integers (the older name of :func:`make_gaussian`).

    Privacy map (ZeroConcentratedDivergence), computed in ℚ and rounded up to ``QO``:
        ρ(d_in) = d_in² / (2·scale²)

    Raises:
        NotImplementedForType: a non-integer domain, an unsupported metric, MO or ``QO``.
        InvalidParameter: scale negative, NaN or infinite.

    Proof: docs/proofs/make_base_discrete_gaussian.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    >>> dp.m.make_base_discrete_gaussian(*space, scale=1.0).map(1)
    0.5
    """
    who = "make_base_discrete_gaussian"
    _require_int(input_domain, who)
    return _gaussian(input_domain, input_metric, scale, None, MO, _qo(QO), who)


then_laplace = noise(make_laplace)


then_gaussian = noise(make_gaussian)


then_geometric = int_noise(make_geometric)


then_base_laplace = noise(make_base_laplace)


then_base_gaussian = noise(make_base_gaussian)


then_base_discrete_laplace = int_noise(make_base_discrete_laplace)


then_base_discrete_gaussian = int_noise(make_base_discrete_gaussian)
