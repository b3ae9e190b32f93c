"""Differentially private linear regression (OpenDP's ``opendp.extras.sklearn.linear_model``).

Theil–Sen regression as in OpenDP: the records are paired at random, each pair's line is
evaluated at two cut points of ``x_bounds``, and the private medians of the two columns of
predictions (``make_private_quantile`` at α = 0.5 over evenly spaced candidates in
``y_bounds``) give the slope and intercept.  Unlike OpenDP the random pairing uses the package's
randomness (not ``np.random``), and its stability is ``2·runs·d_in`` (OpenDP states
``runs·d_in``; see ``docs/proofs/make_private_theil_sen.md``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from ..._registry import constructor
from ..._validate import check_int
from ...combinators import make_composition
from ...core import Domain, Measure, Measurement, Transformation
from ...domains import atom_domain, vector_domain
from ...errors import InvalidParameter, NotInDomain
from ...measurements import make_private_quantile
from ...metrics import symmetric_distance
from ...transformations import make_drop_null
from ...transformations._rowwise import uniform_permutation
from ..numpy import array2_domain

__all__ = ["LinearRegression", "make_private_theil_sen"]

Array = npt.NDArray[Any]


def _pairwise_predict(data: Array, x_cuts: Array) -> Array:
    """Pair the rows in a uniformly random order and evaluate each pair's line at ``x_cuts``.

    Returns one row per pair with ``dx != 0`` (NaN where the data had NaN).
    """
    n = data.shape[0] // 2 * 2
    shuffled = data[uniform_permutation(data.shape[0])[:n]]
    p1, p2 = shuffled[: n // 2], shuffled[n // 2 :]
    with np.errstate(all="ignore"):
        dx, dy = (p2 - p1).T
        x_bar, y_bar = ((p1 + p2) / 2).T
        points = (dy / dx)[:, None] * (x_cuts[None, :] - x_bar[:, None]) + y_bar[:, None]
    out: Array = points[dx != 0]
    return out


def _make_pairwise_predict(x_cuts: Array, runs: int) -> Transformation[Array, Array, int, int]:
    """``runs`` random pairings of the records, each pair's predictions at ``x_cuts``.

    Stability (symmetric distance): ``d_out = 2·runs·d_in``.  With ``n`` records paired by a
    uniform permutation (the last one dropped when ``n`` is odd), adding a record ``r`` can be
    coupled so that the pairs change in at most one removed and one added pair per run (see
    the proof); removals are symmetric.
    """
    dom = array2_domain(num_columns=2, T=float)

    def function(arg: Array) -> Array:
        parts = [_pairwise_predict(np.asarray(arg, dtype=np.float64), x_cuts) for _ in range(runs)]
        return np.vstack(parts) if parts else np.empty((0, 2))

    def stability_map(d_in: int) -> int:
        return 2 * runs * d_in

    return Transformation(
        dom, symmetric_distance(), dom, symmetric_distance(), function, stability_map
    )


def _make_select_column(j: int) -> Transformation[Array, Array, int, int]:
    """Column ``j`` of a two-column array, as a vector (row by row: ``d_out = d_in``)."""
    dom = array2_domain(num_columns=2, T=float)
    out: Domain[Any] = vector_domain(atom_domain(T="f64", nan=True))

    def function(arg: Array) -> Array:
        return np.ascontiguousarray(arg[:, j])

    return Transformation(
        dom, symmetric_distance(), out, symmetric_distance(), function, lambda d: d
    )


def _bounds(name: str, b: Any) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in b)
    except (TypeError, ValueError):
        raise InvalidParameter(f"{name} must be a (lower, upper) pair, got {b!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise InvalidParameter(f"{name} must be finite with lower < upper, got {b!r}")
    return lo, hi


@constructor
def make_private_theil_sen(
    output_measure: Measure[Any],
    x_bounds: tuple[float, float],
    y_bounds: tuple[float, float],
    scale: float,
    runs: int = 1,
    candidates_count: int = 100,
    fraction_bounds: tuple[float, float] = (0.25, 0.75),
) -> Measurement[Array, tuple[float, float], int, float]:
    r"""Release ``(slope, intercept)`` of (x, y) pairs by Theil–Sen with private medians.

    The input is an ``n × 2`` float array of (x, y) rows.  ``runs`` uniform random pairings
    give, for each pair with distinct x, its line's values at the cuts
    :math:`c_i = x_{lo} + (x_{hi} - x_{lo}) f_i` (``f`` = ``fraction_bounds``); each column of
    values drops NaN and goes to ``make_private_quantile(α = 0.5, candidates =
    linspace(*y_bounds, candidates_count), scale)``; the two medians are solved for the line
    (post-processing).  Privacy map, composition of the two medians at ``2·runs·d_in``
    (pure DP, unknown size, so each median costs :math:`d/\text{scale}`):

    .. math:: \varepsilon(d_{in}) = 2 \cdot 2\,\text{runs}\,d_{in} / \text{scale}

    and :math:`\rho = 2 (2\,\text{runs}\,d_{in}/\text{scale})^2/8` under zCDP.

    Raises:
        InvalidParameter: if a bound is not finite with lower < upper, ``runs`` or
            ``candidates_count`` (>= 2) are not positive ints, the fractions are equal, or
            ``scale`` is invalid.
        NotImplementedForType: if ``output_measure`` is not max or zero-concentrated divergence.

    Proof: docs/proofs/make_private_theil_sen.md

    >>> import numpy as np
    >>> import opendp_lite.prelude as dp
    >>> from opendp_lite.extras.sklearn.linear_model import make_private_theil_sen
    >>> meas = make_private_theil_sen(dp.max_divergence(), (0, 100), (0, 100), scale=1.0)
    >>> slope, intercept = meas(np.array([[x, x] for x in range(100)], dtype=float))
    >>> meas.map(1)
    4.0
    """
    x_lo, x_hi = _bounds("x_bounds", x_bounds)
    y_lo, y_hi = _bounds("y_bounds", y_bounds)
    runs = check_int("runs", runs, min=1, what="an int >= 1")
    candidates_count = check_int("candidates_count", candidates_count, min=2, what="an int >= 2")
    f = _bounds("fraction_bounds", sorted(fraction_bounds)) if len(fraction_bounds) == 2 else None
    if f is None:
        raise InvalidParameter(f"fraction_bounds must be two fractions, got {fraction_bounds!r}")
    x_cuts = np.array([x_lo + (x_hi - x_lo) * f[0], x_lo + (x_hi - x_lo) * f[1]])
    if not x_cuts[0] < x_cuts[1]:
        raise InvalidParameter(f"fraction_bounds give equal cuts: {x_cuts.tolist()}")
    candidates = np.linspace(y_lo, y_hi, candidates_count)
    # distinct floats, strictly increasing (linspace can repeat values on a tiny range)
    candidates = np.unique(candidates)
    P_inv = np.linalg.inv(np.vstack([x_cuts, np.ones(2)]).T)
    t_pairs = _make_pairwise_predict(x_cuts, runs)
    medians = []
    for j in (0, 1):
        t = t_pairs >> _make_select_column(j)
        t = t >> make_drop_null(*t.output_space)
        medians.append(
            t
            >> make_private_quantile(
                *t.output_space, output_measure, candidates.tolist(), 0.5, scale
            )
        )
    both = make_composition(medians)

    def solve(ys: list[float]) -> tuple[float, float]:
        slope, intercept = P_inv @ np.asarray(ys, dtype=np.float64)
        return float(slope), float(intercept)

    return both >> solve


def _as_float_array(X: Any, name: str) -> Array:
    if isinstance(X, np.ma.MaskedArray):
        raise NotInDomain(f"{name} must not be a masked array: pass X.filled(...) or drop rows")
    try:
        return np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise NotInDomain(f"{name} must be numeric: {e}") from None


class LinearRegression(RegressorMixin, BaseEstimator):  # type: ignore[misc]
    """DP linear regression of one feature by Theil–Sen, with scikit-learn's conventions.

    ``fit(X, y)`` releases ``(slope, intercept)`` once (``measurement``, see
    :func:`make_private_theil_sen`) and returns self with ``coef_`` and ``intercept_``;
    ``predict(X)`` is ``X @ coef_ + intercept_``.  (OpenDP's ``fit`` returns a new fitted
    scikit-learn ``LinearRegression``; both support ``.predict``, ``.coef_``, ``.intercept_``.)

    >>> import opendp_lite.prelude as dp
    >>> model = dp.sklearn.linear_model.LinearRegression(
    ...     dp.max_divergence(), x_bounds=[(0, 10)], y_bounds=(0, 10), scale=1.0)
    >>> model.fit(X=[[1], [2], [3], [4], [5]], y=[1, 2, 3, 4, 5]).predict([[10]]).shape
    (1,)
    """

    def __init__(
        self,
        output_measure: Measure[Any],
        x_bounds: Iterable[tuple[float, float]],
        y_bounds: tuple[float, float],
        scale: float,
        runs: int = 1,
        candidates_count: int = 100,
        fraction_bounds: tuple[float, float] = (0.25, 0.75),
    ) -> None:
        self.output_measure = output_measure
        self.x_bounds = x_bounds
        self.y_bounds = y_bounds
        self.scale = scale
        self.runs = runs
        self.candidates_count = candidates_count
        self.fraction_bounds = fraction_bounds

    @property
    def measurement(self) -> Measurement[Array, tuple[float, float], int, float]:
        """The measurement that ``fit`` invokes on the ``n × 2`` array of (x, y) rows."""
        bounds = list(self.x_bounds)
        if len(bounds) != 1:
            raise InvalidParameter(
                f"For now, the x_bounds array must consist of a single tuple, not {bounds!r}. "
                "Fix: x_bounds=[(lower, upper)] (one feature)"
            )
        return make_private_theil_sen(
            self.output_measure,
            bounds[0],
            self.y_bounds,
            self.scale,
            self.runs,
            self.candidates_count,
            self.fraction_bounds,
        )

    def fit(self, X: Any, y: Any) -> LinearRegression:
        """Fit on ``X`` of shape (n, 1) and ``y`` of shape (n,); returns self.

        Raises:
            NotInDomain: if ``X`` or ``y`` are not numeric or their shapes disagree (before
                any randomness).
        """
        meas = self.measurement
        Xa, ya = _as_float_array(X, "X"), _as_float_array(y, "y")
        if Xa.ndim != 2 or Xa.shape[1] != 1:
            raise NotInDomain(f"X must have shape (n_samples, 1), got {Xa.shape}")
        if ya.ndim != 1 or ya.shape[0] != Xa.shape[0]:
            raise NotInDomain(f"y must have shape ({Xa.shape[0]},), got {ya.shape}")
        slope, intercept = meas(np.stack([Xa[:, 0], ya], axis=1))
        self.coef_ = np.array([slope])
        self.intercept_ = intercept
        self.n_features_in_ = 1
        return self

    def predict(self, X: Any) -> Array:
        """``X @ coef_ + intercept_`` for ``X`` of shape (n, 1)."""
        check_is_fitted(self)
        Xa = np.asarray(X, dtype=np.float64)
        if Xa.ndim != 2 or Xa.shape[1] != 1:
            raise InvalidParameter(f"X must have shape (n_samples, 1), got {Xa.shape}")
        out: Array = Xa @ self.coef_ + self.intercept_
        return out
