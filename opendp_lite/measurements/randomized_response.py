"""Randomized response on a bool, on one of k categories, and on a bit vector (RAPPOR).

Every coin is an exact Bernoulli draw on the exact rational value of the probability given
(:func:`opendp_lite.samplers.bernoulli.sample_bernoulli`), and every privacy loss is computed
from that same rational and rounded up.

>>> import opendp_lite.prelude as dp
>>> dp.m.make_randomized_response_bool(0.75).map(1)  # log 3, rounded up
1.0986122886681098
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from .._arith import Rational, log1p_up, mul_up, q
from .._registry import constructor
from .._spine import measured
from .._validate import check_int, check_real
from ..core import Domain, Measurement, Metric
from ..domains import AtomDomain, atom_domain
from ..errors import InvalidParameter, MetricMismatch, NotImplementedForType, NotInDomain
from ..measures import max_divergence
from ..metrics import DiscreteDistance, discrete_distance
from ..samplers.bernoulli import sample_bernoulli
from ..samplers.uniform import sample_uniform_below

__all__ = [
    "BitVectorDomain",
    "bitvector_domain",
    "debias_randomized_response_bitvec",
    "make_randomized_response",
    "make_randomized_response_bitvec",
    "make_randomized_response_bool",
    "then_randomized_response_bitvec",
]

C = TypeVar("C")


def _probability(name: str, value: object, lower: Rational, lower_open: bool = False) -> Rational:
    """The exact rational value of a probability in ``[lower, 1]`` (or ``(lower, 1]``)."""
    v = check_real(name, value)
    if not math.isfinite(v):
        raise InvalidParameter(f"{name} must be finite, got {value!r}")
    p = q(v)
    ok = (lower < p if lower_open else lower <= p) and p <= 1
    if not ok:
        bracket = "(" if lower_open else "["
        raise InvalidParameter(f"{name} must be in {bracket}{lower}, 1], got {value!r}")
    return p


def _log_ratio_up(num: Rational, den: Rational) -> float:
    """An upper bound on ``ln(num / den)`` for num >= den (``inf`` when ``den`` is 0).

    Computed as log1p(num/den − 1) with the argument exact in ℚ, so a ratio near 1 keeps full
    relative precision (log of a ratio rounded to a float would not).
    """
    if den == 0:
        return math.inf
    return log1p_up(q(num) / q(den) - 1)


def _discrete_map(epsilon: float) -> Any:
    def privacy_map(d_in: int) -> float:
        # under the discrete metric, d_in = 0 means equal inputs and any d_in >= 1 means "differ"
        return 0.0 if d_in == 0 else epsilon

    return privacy_map


@constructor
def make_randomized_response_bool(
    prob: float, constant_time: bool = False
) -> Measurement[bool, bool, int, float]:
    r"""Report a bool truthfully with probability ``prob``, else its negation (Warner 1965).

    Privacy map (MaxDivergence, discrete distance), with p the exact rational value of ``prob``:
        ε(0) = 0,  ε(d_in ≥ 1) = ln(p / (1 − p)), rounded up  (p = 1 gives ∞).

    Args:
        prob: probability of answering truthfully, in [0.5, 1].
        constant_time: accepted for OpenDP parity; ``True`` is refused, since pure Python
            cannot promise constant-time sampling.

    Raises:
        InvalidParameter: if ``prob`` is not a real number in [0.5, 1], or ``constant_time``.

    Proof: docs/proofs/make_randomized_response_bool.md

    >>> import opendp_lite.prelude as dp
    >>> rr = dp.m.make_randomized_response_bool(prob=0.75)
    >>> rr(True) in (True, False)
    True
    >>> rr.map(1) >= math.log(3)
    True
    """
    p = _probability("prob", prob, q(1) / 2)
    if constant_time:
        raise InvalidParameter(
            "constant_time=True is not supported: pure Python cannot sample in constant time"
        )
    epsilon = _log_ratio_up(p, 1 - p)

    def function(arg: bool) -> bool:
        return arg if sample_bernoulli(p) else not arg

    return Measurement(
        atom_domain(T=bool), discrete_distance(), max_divergence(), function, _discrete_map(epsilon)
    )


def _category_type(categories: Sequence[object], T: object) -> str:
    if T is not None:
        return atom_domain(T=T).T
    first = categories[0]
    if isinstance(first, bool):
        return "bool"
    if isinstance(first, str):
        return "String"
    if isinstance(first, (int, np.integer)):
        return "i32"
    if isinstance(first, (float, np.floating)):
        return "f64"
    raise NotImplementedForType(f"cannot infer a category type from {first!r}; pass T")


@constructor
def make_randomized_response(
    categories: Sequence[C], prob: float, T: object = None
) -> Measurement[C, C, int, float]:
    r"""Report a category truthfully with probability ``prob``, else one of the others uniformly.

    With k = ``len(categories)`` and p the exact rational of ``prob``: an input in
    ``categories`` is kept with probability p, otherwise each of the k − 1 other categories has
    probability (1 − p)/(k − 1); an input outside ``categories`` gives a uniform category.

    Privacy map (MaxDivergence, discrete distance):
        ε(0) = 0,  ε(d_in ≥ 1) = ln(p·(k − 1) / (1 − p)), rounded up  (p = 1 gives ∞).

    Raises:
        InvalidParameter: if there are fewer than two categories, duplicates, categories that
            are not of type ``T``, or ``prob`` is not in [1/k, 1].
        NotImplementedForType: if ``T`` cannot be inferred or is unsupported.

    Proof: docs/proofs/make_randomized_response.md

    >>> import opendp_lite.prelude as dp
    >>> rr = dp.m.make_randomized_response(["a", "b", "c"], prob=0.75)
    >>> rr("a") in ("a", "b", "c")
    True
    >>> round(rr.map(1), 6)  # ln(0.75 * 2 / 0.25) = ln 6
    1.791759
    """
    cats = list(categories)
    if len(cats) < 2:
        raise InvalidParameter(f"categories must hold at least two values, got {cats!r}")
    domain: AtomDomain[Any] = atom_domain(T=_category_type(cats, T), nan=False)
    try:
        normalized = [domain._normalize(c) for c in cats]
    except NotInDomain as e:
        raise InvalidParameter(f"categories must all be of type {domain.T}: {e}") from None
    if len(set(normalized)) != len(normalized):
        raise InvalidParameter(f"categories must be distinct, got {cats!r}")
    k = len(normalized)
    p = _probability("prob", prob, q(1) / k)
    epsilon = _log_ratio_up(p * (k - 1), 1 - p)
    index = {c: i for i, c in enumerate(normalized)}

    def function(arg: C) -> C:
        i = index.get(arg)
        if i is None:
            other: C = normalized[sample_uniform_below(k)]
            return other
        if sample_bernoulli(p):
            return arg
        j = sample_uniform_below(k - 1)
        flipped: C = normalized[j + (j >= i)]
        return flipped

    return Measurement(
        domain, discrete_distance(), max_divergence(), function, _discrete_map(epsilon)
    )


# ----------------------------------------------------------------------------------------------
# Bit vectors (RAPPOR)


@dataclass(frozen=True)
class BitVectorDomain(Domain[bytes]):
    """Bit vectors packed in bytes, with at most ``max_weight`` bits set (if given).

    Bit ``i`` is ``(data[i // 8] >> (i % 8)) & 1``, as in OpenDP's debiasing helper.
    """

    max_weight: int | None = None

    def __repr__(self) -> str:
        weight = "" if self.max_weight is None else f"weight={self.max_weight}"
        return f"BitVectorDomain({weight})"

    @property
    def carrier_type(self) -> str:
        return "BitVector"

    def _normalize(self, x: object) -> bytes:
        if isinstance(x, np.ndarray) and x.dtype == np.uint8 and x.ndim == 1:
            data = x.tobytes()
        elif isinstance(x, (bytes, bytearray, memoryview)):
            data = bytes(x)
        else:
            raise NotInDomain(f"expected a bit vector as bytes, got {type(x).__name__}")
        if self.max_weight is not None:
            weight = sum(int(b).bit_count() for b in data)
            if weight > self.max_weight:
                raise NotInDomain(f"bit vector has {weight} set bits, more than {self!r} allows")
        return data


def bitvector_domain(max_weight: int | None = None) -> BitVectorDomain:
    """Bit vectors (as ``bytes``) with at most ``max_weight`` set bits.

    >>> bitvector_domain(max_weight=2).member(bytes([0b101]))
    True

    Raises:
        InvalidParameter: if ``max_weight`` is not a non-negative int.
    """
    if max_weight is not None:
        max_weight = check_int("max_weight", max_weight, min=0, what="a non-negative int or None")
    return BitVectorDomain(max_weight)


@constructor
def make_randomized_response_bitvec(
    input_domain: Domain[bytes], input_metric: Metric[int], f: float, constant_time: bool = False
) -> Measurement[bytes, bytes, int, float]:
    r"""Flip each bit of a bit vector independently with probability f/2 (RAPPOR, Erlingsson+14).

    Equivalently each bit is replaced, with probability f, by a fair coin.  With m the
    ``max_weight`` of the input domain and f the exact rational of ``f``:

    Privacy map (MaxDivergence, discrete distance):
        ε(0) = 0,  ε(d_in ≥ 1) = 2·m·ln((2 − f)/f), rounded up.

    Raises:
        InvalidParameter: if ``f`` is not in (0, 1], or ``constant_time`` is set.
        NotImplementedForType: if the input domain is not a ``bitvector_domain`` with a
            ``max_weight``, or the metric is not the discrete distance.

    Proof: docs/proofs/make_randomized_response_bitvec.md

    >>> import opendp_lite.prelude as dp
    >>> from opendp_lite.measurements.randomized_response import bitvector_domain
    >>> rr = dp.m.make_randomized_response_bitvec(bitvector_domain(max_weight=4),
    ...                                           dp.discrete_distance(), f=0.95)
    >>> round(rr.map(1), 10)  # 8 ln(1.05 / 0.95)
    0.8006676685
    >>> len(rr(bytes([0, 8, 12])))
    3
    """
    # checked by name and field, not class identity, so a re-imported module still matches
    max_weight = getattr(input_domain, "max_weight", None)
    if type(input_domain).__name__ != "BitVectorDomain" or not isinstance(max_weight, int):
        raise NotImplementedForType(
            f"input_domain must be bitvector_domain(max_weight=...), got {input_domain!r}"
        )
    if not isinstance(input_metric, DiscreteDistance):
        raise MetricMismatch(discrete_distance(), input_metric, "make_randomized_response_bitvec")
    fr = _probability("f", f, q(0), lower_open=True)
    if constant_time:
        raise InvalidParameter(
            "constant_time=True is not supported: pure Python cannot sample in constant time"
        )
    flip = fr / 2
    per_bit = _log_ratio_up(2 - fr, fr)
    epsilon = mul_up(2 * max_weight, per_bit) if per_bit else 0.0

    def function(arg: bytes) -> bytes:
        out = bytearray(arg)
        for i in range(len(out)):
            mask = 0
            for bit in range(8):
                if sample_bernoulli(flip):
                    mask |= 1 << bit
            out[i] ^= mask
        return bytes(out)

    return Measurement(
        input_domain, input_metric, max_divergence(), function, _discrete_map(epsilon)
    )


then_randomized_response_bitvec = measured(make_randomized_response_bitvec)


def debias_randomized_response_bitvec(answers: Sequence[bytes], f: float) -> list[float]:
    r"""Unbiased per-bit counts from RAPPOR answers: (Y_i − n·f/2) / (1 − f).

    Y_i is the number of answers with bit i set and n the number of answers.  This is
    post-processing: it touches no private data.

    Raises:
        InvalidParameter: if ``answers`` is empty or of unequal lengths, or ``f`` is not in
            (0, 1).

    >>> debias_randomized_response_bitvec([bytes([1]), bytes([3])], f=0.5)
    [3.0, 1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0]
    """
    fr = _probability("f", f, q(0), lower_open=True)
    if fr == 1:
        raise InvalidParameter("f must be below 1 to debias (f = 1 carries no signal)")
    rows = [bytes(a) for a in answers]
    if not rows:
        raise InvalidParameter("answers must not be empty")
    if len({len(r) for r in rows}) != 1:
        raise InvalidParameter("answers must all have the same length")
    bits = np.unpackbits(np.frombuffer(b"".join(rows), dtype=np.uint8), bitorder="little")
    counts = bits.reshape(len(rows), -1).sum(axis=0)
    n = len(rows)
    return [float((int(y) - n * fr / 2) / (1 - fr)) for y in counts]
