"""Sparse vector (AboveThreshold): an interactive measurement over integer-valued queries.

An opendp_lite extension (OpenDP requests #683, #937).  Invoking the measurement on a dataset
returns a :class:`~opendp_lite.core.Queryable`.  Each query is a stable
:class:`~opendp_lite.core.Transformation` from the dataset to an integer; the queryable answers
``True`` when the query's value plus fresh noise reaches the threshold plus one fixed noisy
offset, and halts after ``max_positives`` positive answers (Lyu, Su & Li 2017, Algorithm 1).
All noise is exact discrete Laplace (CKS20); every comparison is between exact rationals.

>>> import opendp_lite.prelude as dp
>>> from opendp_lite.transformations.user import make_user_transformation
>>> dp.enable_features("honest-but-curious")
>>> space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
>>> count_above = lambda c: make_user_transformation(
...     *space, dp.atom_domain(T=int), dp.absolute_distance(T=int),
...     lambda x: int((x > c).sum()), lambda d: d)
>>> svt = dp.m.make_sparse_vector(*space, d_in=1, query_sensitivity=1, threshold=50,
...     threshold_scale=2.0, query_scale=4.0)
>>> svt.map(1)  # 1/2 + 2·1·1/4
1.0
>>> qbl = svt(list(range(100)))
>>> [qbl(count_above(c)) for c in (90, 80)]  # 9 and 19 rows: far below 50
[False, False]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

from .._arith import q, up
from .._registry import constructor
from .._spine import MeasurementPattern, derive
from .._types import is_int
from .._validate import check_exact_real, check_finite_nonneg, check_int
from ..core import (
    Domain,
    Measurement,
    Metric,
    Queryable,
    Transformation,
    _space,
    assert_features,
    check_fits,
    invoke_private,
)
from ..domains import AtomDomain
from ..errors import FailedMap, QueryableError
from ..measures import max_divergence
from ..metrics import AbsoluteDistance
from ..samplers.discrete_laplace import sample_discrete_laplace

__all__ = ["SparseVectorHalted", "make_sparse_vector", "then_sparse_vector"]

TI = TypeVar("TI")
DI = TypeVar("DI")
_A = TypeVar("_A")
_B = TypeVar("_B")
_DA = TypeVar("_DA")
_DB = TypeVar("_DB")
_P = ParamSpec("_P")

Query = Transformation[TI, int, DI, int]


class SparseVectorHalted(QueryableError):
    """The sparse-vector queryable has given all its positive answers; nothing was released."""


@constructor
def make_sparse_vector(
    input_domain: Domain[TI],
    input_metric: Metric[DI],
    d_in: DI,
    query_sensitivity: int,
    threshold: float,
    threshold_scale: float,
    query_scale: float,
    max_positives: int = 1,
    monotonic: bool = False,
) -> Measurement[TI, Queryable[Query[TI, DI], bool], DI, float]:
    r"""Sparse vector / AboveThreshold (Lyu, Su & Li 2017, Alg. 1) with exact discrete noise.

    On invocation draws ρ ~ 𝓛_ℤ(threshold_scale) once and returns a queryable.  A query is a
    Transformation on the same input space with integer output under ``absolute_distance`` and
    ``query.map(d_in) <= query_sensitivity``; it is answered ``q(x) + ν >= threshold + ρ`` with a
    fresh ν ~ 𝓛_ℤ(query_scale).  After ``max_positives`` (c) ``True`` answers the queryable
    halts.  A refused query (wrong space, too sensitive, or after halting) releases nothing.

    Privacy map (MaxDivergence), with Δ = ``query_sensitivity``, in ℚ, rounded up:
        ε(d) = Δ/threshold_scale + m·c·Δ/query_scale   for d <= d_in,  m = 2 (1 if monotonic);
        d > d_in fails (queries were only checked at d_in).

    ``monotonic=True`` declares that between neighbours all answered queries move in the same
    direction (e.g. counts under insertions); it is trusted, so it needs ``honest-but-curious``.

    Raises:
        InvalidParameter: if a scale or the threshold is not finite (scales also >= 0), or
            ``query_sensitivity``/``max_positives`` is not a non-negative/positive int.
        FeatureNotEnabled: for ``monotonic=True`` without ``honest-but-curious``.
        FailedMap: if ``d_in`` is not a valid distance of ``input_metric``.

    Proof: docs/proofs/make_sparse_vector.md

    >>> import opendp_lite.prelude as dp
    >>> from opendp_lite.transformations.user import make_user_transformation
    >>> dp.enable_features("honest-but-curious")
    >>> space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    >>> total = make_user_transformation(*space, dp.atom_domain(T=int),
    ...     dp.absolute_distance(T=int), lambda x: int(x.sum()), lambda d: 10 * d)
    >>> svt = dp.m.make_sparse_vector(*space, d_in=1, query_sensitivity=10, threshold=0,
    ...     threshold_scale=1e-3, query_scale=1e-3)
    >>> qbl = svt([5, 5, 5])
    >>> qbl(total)
    True
    >>> try:
    ...     qbl(total)
    ... except dp.OpenDPLiteError as e:
    ...     print(type(e).__name__, e)
    SparseVectorHalted the sparse vector has given its 1 positive answer(s); it is halted
    """
    d_in = input_metric._check_distance(d_in)
    delta = check_int("query_sensitivity", query_sensitivity, min=0)
    c = check_int("max_positives", max_positives, min=1)
    if monotonic:
        assert_features("honest-but-curious")
    b_t = check_finite_nonneg("threshold_scale", threshold_scale)
    b_q = check_finite_nonneg("query_scale", query_scale)
    t = check_exact_real("threshold", threshold)
    factor = 1 if monotonic else 2
    bound = d_in

    def admit(query: object) -> Query[TI, DI]:
        if not isinstance(query, Transformation):
            raise QueryableError(f"a query must be a Transformation, got {type(query).__name__}")
        if query.input_domain != input_domain or query.input_metric != input_metric:
            raise QueryableError(
                "a query must act on the sparse vector's input space "
                f"({input_domain!r}, {input_metric!r})"
            )
        check_fits(input_domain, query.input_domain, "query")
        out_domain, out_metric = query.output_domain, query.output_metric
        if not (isinstance(out_domain, AtomDomain) and is_int(out_domain.T)):
            raise QueryableError(f"a query must return an integer, not {out_domain!r}")
        if not isinstance(out_metric, AbsoluteDistance):
            raise QueryableError(f"a query must use absolute_distance, not {out_metric!r}")
        sens = query.map(bound)
        if not sens <= delta:
            raise QueryableError(
                f"the query's sensitivity at d_in={bound!r} is {sens!r}, above "
                f"query_sensitivity={delta}"
            )
        return query

    def function(arg: TI) -> Queryable[Query[TI, DI], bool]:
        rho = sample_discrete_laplace(q(b_t))
        level = t + rho
        positives = 0

        def transition(query: Query[TI, DI]) -> bool:
            nonlocal positives
            if positives >= c:
                raise SparseVectorHalted(
                    f"the sparse vector has given its {c} positive answer(s); it is halted"
                )
            answer = invoke_private(admit(query), arg)  # a failure's message is withheld
            nu = sample_discrete_laplace(q(b_q))
            above = bool(int(answer) + nu >= level)
            positives += above
            return above

        return Queryable(transition)

    def privacy_map(d: DI) -> float:
        if d > bound:  # type: ignore[operator]
            raise FailedMap(
                f"d_in ({d!r}) must be no greater than the constructor's d_in ({bound!r})"
            )
        if d == 0 or delta == 0:
            return 0.0
        if b_t == 0 or b_q == 0:
            return float("inf")
        return up(q(delta) / q(b_t) + q(factor * c * delta) / q(b_q))

    return Measurement(input_domain, input_metric, max_divergence(), function, privacy_map)


class _ThenSparseVector(MeasurementPattern):
    """The partial of the sparse vector technique: its queries are on the space it follows."""

    __slots__ = ()

    def _after(
        self, left: Transformation[_A, _B, _DA, _DB]
    ) -> Measurement[_A, Queryable[Query[_B, _DB], bool], _DA, float]:
        return left >> self

    def __rrshift__(
        self, other: tuple[Domain[_A], Metric[_DA]]
    ) -> Measurement[_A, Queryable[Query[_A, _DA], bool], _DA, float]:
        return self(*_space(other))


def _svt(
    make: Callable[Concatenate[Any, Any, _P], Measurement[Any, Any, Any, float]],
) -> Callable[_P, _ThenSparseVector]:
    return derive(make, _ThenSparseVector)


then_sparse_vector = _svt(make_sparse_vector)
