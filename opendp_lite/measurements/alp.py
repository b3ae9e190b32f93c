"""Approximate Laplace Projection (ALP): a private, queryable sketch of a sparse count map.

Aumüller, Lebeda & Pagh 2021 (ALP21), Algorithm 4.  Each count ``v`` is clamped to
``[0, β]``, scaled by ``c = scale/α`` and randomly rounded to an integer ``k``; the key's
first ``k`` hash positions are set in a bit vector of ``2^l`` bits, and every bit is then
flipped independently with probability ``1/(α + 2)``.  The release is a
:class:`~opendp_lite.core.Queryable` answering a point query for any key from its ``m``
hashed bits (ALP21, Algorithms 3 and 5): the average position of the maxima of the ±1 prefix
sums, times ``α/scale``.

Every random outcome is an exact draw: the rounding is an exact Bernoulli on a rational, the
flips are exact Bernoulli(1/(α + 2)) coins (uniform residues modulo ``α + 2`` by rejection),
and the hash functions' parameters are uniform 64-bit words; all bytes come from
:func:`opendp_lite.samplers.rng.fill_bytes`.

>>> import opendp_lite.prelude as dp
>>> space = (dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int)), dp.l1_distance(T=int))
>>> alp = dp.m.make_alp_queryable(*space, scale=1.0, total_limit=100, value_limit=20)
>>> alp.map(2)
2.0
>>> sketch = alp({"apple": 12, "pear": 3})
>>> isinstance(sketch("apple"), float)
True
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from .._arith import Rational, q, up
from .._registry import constructor
from .._spine import key_queries
from .._types import int_bounds, is_int
from .._validate import check_int, check_real
from ..core import Domain, Measurement, Metric, Queryable
from ..domains import AtomDomain, MapDomain
from ..errors import InvalidParameter, MetricMismatch, NotImplementedForType
from ..measures import max_divergence
from ..metrics import L1Distance
from ..samplers.bernoulli import sample_flips, sample_round
from ..samplers.rng import fill_uint64
from .threshold import is_l0pinf

__all__ = ["make_alp_queryable", "then_alp_queryable"]

#: Refuse sketches whose bit vector or hash family would not fit in memory.
MAX_PROJECTION_BITS = 2**28
MAX_HASHERS = 2**22

_U64 = np.uint64
_KEY_TYPES = ("String", "bool", *(f"{s}{w}" for s in "iu" for w in (8, 16, 32, 64)))


# ----------------------------------------------------------------------------------------------
# Hashing: a public, data-independent family; privacy does not depend on it, only utility.


def pre_hash(key: object) -> int:
    """A fixed 64-bit digest of a key (type-tagged, so ``1``, ``True`` and ``"1"`` differ)."""
    if isinstance(key, bool):
        raw = b"b" + (b"1" if key else b"0")
    elif isinstance(key, int):
        raw = b"i" + str(key).encode()
    else:
        raw = b"s" + str(key).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "little")


class Hashers:
    """``m`` multiply-shift hash functions  h_j(x) = ((a_j·x + b_j) mod 2^64) >> (64 − l).

    ``a_j`` is a uniform odd 64-bit word and ``b_j`` a uniform 64-bit word, so the family is
    2-approximately universal (Dietzfelbinger, Hagerup, Katajainen & Penttonen 1997).
    """

    __slots__ = ("a", "b", "bits")

    def __init__(self, m: int, bits: int) -> None:
        words = fill_uint64(2 * m) if m else np.zeros(0, dtype=_U64)
        self.a = words[:m] | _U64(1)
        self.b = words[m:]
        self.bits = bits

    @property
    def size(self) -> int:
        return len(self.a)

    def positions(self, key: object, count: int) -> npt.NDArray[np.uint64]:
        """The first ``count`` hashed positions of ``key``, each in ``[0, 2^bits)``."""
        if self.bits == 0:
            return np.zeros(count, dtype=_U64)
        x = _U64(pre_hash(key))
        with np.errstate(over="ignore"):  # arithmetic modulo 2^64 is the point
            return (self.a[:count] * x + self.b[:count]) >> _U64(64 - self.bits)


# ----------------------------------------------------------------------------------------------
# The projection (ALP21 Algorithm 4) and the estimator (Algorithms 3 and 5)


class AlpFunction:
    """The released function: data → :class:`Queryable` over the noisy bit vector."""

    __slots__ = ("alpha", "c", "hashers", "key_domain", "scale", "size", "value_limit")

    def __init__(
        self,
        key_domain: Domain[Any],
        scale: Rational,
        alpha: int,
        value_limit: int,
        hashers: Hashers,
        size: int,
    ) -> None:
        self.key_domain = key_domain
        self.scale = scale
        self.alpha = alpha
        self.c = scale / alpha
        self.value_limit = value_limit
        self.hashers = hashers
        self.size = size

    def project(self, data: dict[Any, int]) -> npt.NDArray[np.bool_]:
        """The noisy bit vector z (ALP21 Algorithm 4)."""
        z = np.zeros(self.size, dtype=np.bool_)
        for key, value in data.items():
            k = sample_round(min(max(int(value), 0), self.value_limit) * self.c)
            z[self.hashers.positions(key, k)] = True
        return z ^ sample_flips(self.size, self.alpha + 2)

    def estimate(self, z: npt.NDArray[np.bool_], key: object) -> float:
        """(average argmax of the ±1 prefix sums over the key's m bits) · α / scale."""
        key = self.key_domain._normalize(key)  # a key outside the key domain: NotInDomain
        bits = z[self.hashers.positions(key, self.hashers.size)]
        return float(estimate_unary(bits) * self.alpha / self.scale)

    def __call__(self, data: dict[Any, int]) -> Queryable[Any, float]:
        z = self.project(data)
        z.flags.writeable = False
        return Queryable(lambda key: self.estimate(z, key))


def estimate_unary(bits: npt.NDArray[np.bool_]) -> Rational:
    """The mean of the positions t ∈ {0..m} maximising Σ_{j<t} (2·bits_j − 1)."""
    prefix = np.concatenate(([0], np.cumsum(np.where(bits, 1, -1))))
    peaks = np.flatnonzero(prefix == prefix.max())
    return q(int(peaks.sum())) / len(peaks)


# ----------------------------------------------------------------------------------------------
# Constructor


def _check_space(
    input_domain: Domain[Any], input_metric: Metric[Any], who: str
) -> tuple[AtomDomain[Any], AtomDomain[Any]]:
    key = input_domain.key_domain if isinstance(input_domain, MapDomain) else None
    value = input_domain.value_domain if isinstance(input_domain, MapDomain) else None
    if not (
        isinstance(key, AtomDomain)
        and key.T in _KEY_TYPES
        and isinstance(value, AtomDomain)
        and is_int(value.T)
    ):
        raise NotImplementedForType(
            f"{who}: input_domain must be map_domain(atom_domain(T=K), atom_domain(T=CI)) with "
            f"K a string, bool or integer type and CI an integer type, got {input_domain!r}"
        )
    l1: L1Distance[Any] = L1Distance(value.T)
    if input_metric != l1 and not is_l0pinf(input_metric, value.T, 1):
        raise MetricMismatch(l1, input_metric, who)
    return key, value


@constructor
def make_alp_queryable(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    scale: float,
    total_limit: Any,
    value_limit: Any = None,
    size_factor: Any = 50,
    alpha: Any = 4,
) -> Measurement[Any, Queryable[Any, float], Any, float]:
    r"""Release an ALP sketch of a sparse integer count map as a point-query Queryable.

    With c = scale/α: each count is clamped to [0, β] (β = ``value_limit``, by default the
    value domain's upper bound), k = ⌊v·c⌋ + Bernoulli(v·c − ⌊v·c⌋); the key's first k of
    m = ⌈β·c⌉ hash positions are set in 2^l bits, l = ⌈log2 ⌊size_factor·total_limit·c⌋⌉
    (l = 0 below 1), and each bit is flipped with probability exactly 1/(α + 2).

    Privacy map (MaxDivergence), exact product rounded up, d1 = d_in (``l1_distance``) or the
    ℓ1 component of (l0, l1, l∞) (``l01inf_distance``, as in OpenDP 0.16):
        ε(d_in) = d1 · scale

    Raises:
        NotImplementedForType: if the domain is not a map from str/bool/integer keys to an
            integer type.
        MetricMismatch: if the metric is neither ``l1_distance(T=CI)`` nor
            ``l01inf_distance(absolute_distance(T=CI))``.
        InvalidParameter: if ``scale`` is not finite and > 0; ``total_limit``, ``value_limit``
            or ``size_factor`` is not a positive integer (``value_limit`` missing with an
            unbounded value domain); ``alpha`` is not an integer in [1, 2^32 − 3]; or the
            sketch would exceed 2^28 bits or 2^22 hash functions.

    Proof: docs/proofs/make_alp_queryable.md  [ALP21 Algorithm 4]

    >>> import opendp_lite.prelude as dp
    >>> space = (dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int)),
    ...          dp.l1_distance(T=int))
    >>> alp = space >> dp.m.then_alp_queryable(scale=0.5, total_limit=50, value_limit=10)
    >>> alp.map(3)
    1.5
    >>> answer = alp({"a": 7, "b": 2})("a")
    >>> 0.0 <= answer <= 10 * 4 / 0.5
    True
    """
    who = "make_alp_queryable"
    key, value = _check_space(input_domain, input_metric, who)
    if not (math.isfinite(check_real("scale", scale)) and float(scale) > 0):
        raise InvalidParameter(f"scale must be finite and > 0, got {scale!r}")
    s = q(float(scale))
    a = check_int("alpha", alpha, min=1, max=2**32 - 3)
    total = check_int("total_limit", total_limit, min=1)
    factor = check_int("size_factor", size_factor, min=1, max=2**32 - 1)
    if value_limit is None:
        if value.bounds is None:
            raise InvalidParameter(
                f"value_limit is required when the value domain is unbounded, got {value!r}"
            )
        value_limit = value.bounds[1]
    beta = check_int("value_limit", value_limit, min=1, max=int_bounds(value.T)[1])
    c = s / a
    m = int(math.ceil(beta * c))  # noqa: RUF046 - of an mpq, math.ceil gives an mpz
    target = int(math.floor(factor * total * c))  # noqa: RUF046 - an mpz otherwise
    bits = (target - 1).bit_length() if target >= 1 else 0
    if m > MAX_HASHERS:
        raise InvalidParameter(
            f"value_limit·scale/alpha must be <= {MAX_HASHERS} (hash functions), got "
            f"{beta}·{scale!r}/{a}"
        )
    if 2**bits > MAX_PROJECTION_BITS:
        raise InvalidParameter(
            f"size_factor·total_limit·scale/alpha must be <= {MAX_PROJECTION_BITS} (bits), "
            f"got {factor}·{total}·{scale!r}/{a}"
        )
    function = AlpFunction(key, s, a, beta, Hashers(m, bits), 2**bits)
    l01inf = not isinstance(input_metric, L1Distance)

    def privacy_map(d_in: Any) -> float:
        d1 = d_in[1] if l01inf else d_in
        return up(q(d1) * q(s))

    return Measurement(input_domain, input_metric, max_divergence(), function, privacy_map)


then_alp_queryable = key_queries(make_alp_queryable)
