r"""Two-coin randomized response (Warner 1965; Dwork & Roth 2014, §2.3), as in the seed's
``RandomizedResponseCoins``.

Each respondent flips a first coin (heads with probability a).  On tails they answer
truthfully; on heads they flip a second coin (heads with probability b) and answer "yes" on
heads, "no" on tails:

    Pr[yes | yes] = 1 − a + ab,   Pr[yes | no] = ab,
    Pr[no | no]  = 1 − ab,        Pr[no | yes] = a(1 − b).

Fair coins give the 3/4 vs 1/4 table and ε = ln 3.  A biased first coin a = 2(1 − f) with a
fair second coin gives Pr[yes | yes] = f, Pr[yes | no] = 1 − f and ε = ln(f / (1 − f)).

An analyst who sees the share r of "yes" answers among N respondents de-biases it with
p̂ = (r − ab)/(1 − a), which is the seed's p̂ = (r + f − 1)/(2f − 1), and quotes the
normal-approximation uncertainty Δp = 2/(1 − a) · √(r(1 − r)/N)  (= 2/(2f − 1) · √(r(1 − r)/N)).

>>> import math
>>> eps = make_randomized_response_coins().map(1)
>>> math.log(3) <= eps <= math.nextafter(math.log(3), math.inf)
True
>>> round(debias_two_coin(0.35), 12), round(two_coin_uncertainty(0.35, 10_000), 4)
(0.2, 0.0191)
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
import numpy.typing as npt

from .._arith import Rational, exp_down, log_up, q, up
from .._registry import constructor
from .._validate import check_finite_nonneg, check_int, check_real
from ..core import Measurement
from ..domains import atom_domain
from ..errors import InvalidParameter
from ..measures import max_divergence
from ..metrics import discrete_distance
from ..samplers.bernoulli import sample_bernoulli

__all__ = [
    "coins_from_epsilon",
    "debias_two_coin",
    "epsilon_two_coin",
    "make_randomized_response_coins",
    "share_of_yes",
    "two_coin_uncertainty",
]


def _coin(name: str, value: object) -> Rational:
    """The exact rational value of a coin's head probability, which must lie in [0, 1].

    A Python rational (``Fraction``) is taken exactly; other numbers through ``float``.
    """
    exact = isinstance(value, numbers.Rational) and not isinstance(value, (int, np.integer))
    if not exact:
        check_real(name, value)
        if not math.isfinite(float(value)):  # type: ignore[arg-type]
            raise InvalidParameter(f"{name} must be in [0, 1], got {value!r}")
    p = q(value) if exact else q(float(value))  # type: ignore[arg-type]
    if not (0 <= p <= 1):
        raise InvalidParameter(f"{name} must be in [0, 1], got {value!r}")
    return p


def _table(a: Rational, b: Rational) -> tuple[Rational, Rational, Rational, Rational]:
    """(Pr[yes|yes], Pr[yes|no], Pr[no|no], Pr[no|yes]), exactly."""
    return 1 - a + a * b, a * b, 1 - a * b, a * (1 - b)


def _log_ratio_up(num: Rational, den: Rational) -> float:
    if num == 0:
        return 0.0  # the output never occurs under either input
    if den == 0:
        return math.inf
    return log_up(q(num) / q(den))


def epsilon_two_coin(prob_head_first: float = 0.5, prob_head_second: float = 0.5) -> float:
    r"""The exact ε of two-coin randomized response, rounded up:

        ε = max( ln((1 − a + ab)/(ab)),  ln((1 − ab)/(a(1 − b))) )

    (``inf`` when a truthful answer is ever certain to be distinguishable, e.g. a = 0).

    Raises:
        InvalidParameter: if a coin's head probability is outside [0, 1].

    >>> epsilon_two_coin(0.5, 0.5) == epsilon_two_coin(2 * (1 - 0.75), 0.5)  # f = 3/4: ln 3
    True
    """
    a = _coin("prob_head_first", prob_head_first)
    b = _coin("prob_head_second", prob_head_second)
    yy, yn, nn, ny = _table(a, b)
    return max(_log_ratio_up(yy, yn), _log_ratio_up(nn, ny))


@constructor
def make_randomized_response_coins(
    prob_head_first: float = 0.5, prob_head_second: float = 0.5
) -> Measurement[bool, bool, int, float]:
    r"""Two-coin randomized response on one respondent's bool.

    With a = ``prob_head_first`` and b = ``prob_head_second`` (exact rationals): on a first
    head (probability a) answer a second coin (``True`` with probability b), otherwise answer
    truthfully.  Privacy map (max-divergence, discrete distance), rounded up:

        ε(0) = 0,   ε(d_in ≥ 1) = max( ln((1 − a + ab)/(ab)), ln((1 − ab)/(a(1 − b))) )

    Fair coins: ε = ln 3.  a = 2(1 − f), b = 1/2:  ε = ln(f/(1 − f)).

    Raises:
        InvalidParameter: if a probability is outside [0, 1], or the coins give no finite ε
        (e.g. a = 0: every answer is truthful).

    Proof: docs/proofs/make_randomized_response_coins.md  [Dwork & Roth 2014, §3.2]

    >>> rr = make_randomized_response_coins(0.5, 0.5)
    >>> rr(True) in (True, False)
    True
    >>> round(rr.map(1), 6), rr.map(0)
    (1.098612, 0.0)
    """
    a = _coin("prob_head_first", prob_head_first)
    b = _coin("prob_head_second", prob_head_second)
    epsilon = epsilon_two_coin(prob_head_first, prob_head_second)
    if not math.isfinite(epsilon):
        raise InvalidParameter(
            f"coins (prob_head_first={prob_head_first!r}, prob_head_second={prob_head_second!r}) "
            "give no finite epsilon: some answer is possible under one input only"
        )
    qa, qb = q(a), q(b)  # exact rationals, converted once for the sampler

    def function(x: bool) -> bool:
        if sample_bernoulli(qa):  # first coin heads: answer the second coin
            return sample_bernoulli(qb)
        return bool(x)  # tails: answer truthfully

    def privacy_map(d_in: int) -> float:
        return 0.0 if d_in == 0 else epsilon

    return Measurement(
        atom_domain(T=bool), discrete_distance(), max_divergence(), function, privacy_map
    )


def coins_from_epsilon(epsilon: float) -> tuple[float, float]:
    r"""The seed's coins for a target ε: a = 2(1 − f) = 2/(1 + e^ε) (rounded up), b = 1/2.

    Rounding a up only adds noise, so the built mechanism's ε never exceeds ``epsilon``.

    Raises:
        InvalidParameter: if ``epsilon`` is negative or not finite.

    >>> a, b = coins_from_epsilon(math.log(3))
    >>> epsilon_two_coin(a, b) <= math.nextafter(math.log(3), math.inf), b
    (True, 0.5)
    """
    e = check_finite_nonneg("epsilon", epsilon)
    a = min(1.0, up(q(2) / (1 + q(exp_down(e)))))
    return a, 0.5


def debias_two_coin(r: float, prob_head_first: float = 0.5, prob_head_second: float = 0.5) -> float:
    r"""The unbiased estimate of the true "yes" share from the observed share ``r``:

        p̂ = (r − ab)/(1 − a)     (the seed's (r + f − 1)/(2f − 1) for a = 2(1 − f), b = 1/2)

    Raises:
        InvalidParameter: if a probability is outside [0, 1] or a = 1 (answers carry no signal).

    >>> debias_two_coin(0.3492)  # the seed's (0.3492 - 0.5*0.5)/0.5
    0.19840000000000002
    """
    a = _coin("prob_head_first", prob_head_first)
    b = _coin("prob_head_second", prob_head_second)
    if a == 1:
        raise InvalidParameter("prob_head_first = 1: the answers carry no information")
    fa, fb = float(a), float(b)
    return (float(r) - fa * fb) / (1 - fa)


def two_coin_uncertainty(
    r: float, n: int, prob_head_first: float = 0.5, prob_head_second: float = 0.5
) -> float:
    r"""The uncertainty Δp = 2/(1 − a) · √(r(1 − r)/N) of p̂ (normal approximation, ≈ 2σ).

    For a = 2(1 − f) this is the seed's 2/(2f − 1) · √(r(1 − r)/N).

    Raises:
        InvalidParameter: if ``n`` < 1, ``r`` is outside [0, 1], or a = 1.

    >>> round(two_coin_uncertainty(0.5, 100), 3)
    0.2
    """
    a = _coin("prob_head_first", prob_head_first)
    _coin("prob_head_second", prob_head_second)
    if a == 1:
        raise InvalidParameter("prob_head_first = 1: the answers carry no information")
    n = check_int("n", n, min=1)
    rr = float(r)
    if not 0 <= rr <= 1:
        raise InvalidParameter(f"r must be in [0, 1], got {r!r}")
    return 2 / float(1 - a) * math.sqrt(rr * (1 - rr) / int(n))


def share_of_yes(responses: npt.ArrayLike) -> float:
    """The observed share r of ``True`` answers in a vector of released responses."""
    arr: npt.NDArray[Any] = np.asarray(responses)
    if arr.size == 0:
        raise InvalidParameter("responses must be non-empty")
    return float(np.mean(arr.astype(np.float64)))
