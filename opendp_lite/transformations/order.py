"""Order and metric conversions between unordered and ordered datasets, bounded and unbounded
neighbours: ``make_unordered``, ``make_ordered_random``, ``make_metric_bounded``,
``make_metric_unbounded``.
"""

from __future__ import annotations

from typing import Any

import numpy.typing as npt

from .. import backends
from .._registry import constructor
from .._spine import keep
from ..core import Domain, Metric, Transformation
from ..domains import VectorDomain
from ..errors import NotImplementedForType
from ..metrics import (
    ChangeOneDistance,
    HammingDistance,
    InsertDeleteDistance,
    SymmetricDistance,
    change_one_distance,
    hamming_distance,
    insert_delete_distance,
    symmetric_distance,
)
from ._rowwise import uniform_permutation

__all__ = [
    "make_metric_bounded",
    "make_metric_unbounded",
    "make_ordered_random",
    "make_unordered",
    "then_metric_bounded",
    "then_metric_unbounded",
    "then_ordered_random",
    "then_unordered",
]


def _vector(name: str, domain: Domain[Any], *, sized: bool = False) -> VectorDomain[Any]:
    if not isinstance(domain, VectorDomain):
        raise NotImplementedForType(f"{name} needs a vector_domain, got {domain!r}")
    if sized and domain.size is None:
        raise NotImplementedForType(
            f"{name} needs a vector_domain of known size (the metric counts changed records "
            f"between same-size datasets), got {domain!r}"
        )
    return domain


def _pick(name: str, metric: Metric[Any], table: dict[type, Metric[Any]]) -> Metric[Any]:
    for kind, out in table.items():
        if isinstance(metric, kind):
            return out
    names = ", ".join(t.__name__ for t in table)
    raise NotImplementedForType(f"{name} needs input_metric in ({names}), got {metric!r}")


@constructor
def make_unordered(
    input_domain: Domain[Any], input_metric: Metric[Any]
) -> Transformation[Any, Any, int, int]:
    r"""Forget the order of a dataset: the identity, to an unordered metric.

    ``insert_delete_distance → symmetric_distance`` and ``hamming_distance →
    change_one_distance``.  Stability map: :math:`d_{out} = d_{in}`.

    Raises:
        NotImplementedForType: if the domain is not a vector domain or the metric is not
            insert-delete or Hamming.

    Proof: docs/proofs/make_unordered.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=int)), dp.insert_delete_distance()
    >>> t = dp.t.make_unordered(*space)
    >>> t([3, 1]), t.output_metric, t.map(2)
    ([3, 1], SymmetricDistance(), 2)
    """
    _vector("make_unordered", input_domain)
    out_metric = _pick(
        "make_unordered",
        input_metric,
        {InsertDeleteDistance: symmetric_distance(), HammingDistance: change_one_distance()},
    )
    return Transformation(
        input_domain, input_metric, input_domain, out_metric, _same, lambda d_in: d_in
    )


def _same(arg: npt.NDArray[Any]) -> npt.NDArray[Any]:
    return arg


@constructor
def make_ordered_random(
    input_domain: Domain[Any], input_metric: Metric[Any]
) -> Transformation[Any, Any, int, int]:
    r"""Shuffle a dataset uniformly at random, giving it an order.

    ``symmetric_distance → insert_delete_distance`` and ``change_one_distance →
    hamming_distance``.  Stability map: :math:`d_{out} = d_{in}` (couple the shuffles of
    neighbouring datasets so shared records keep their relative order).  The permutation is
    exactly uniform (:func:`~opendp_lite.transformations._rowwise.uniform_permutation`).

    Raises:
        NotImplementedForType: if the domain is not a vector domain or the metric is not
            symmetric or change-one.

    Proof: docs/proofs/make_ordered_random.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    >>> t = dp.t.make_ordered_random(*space)
    >>> sorted(t([3, 1, 2])), t.output_metric, t.map(2)
    ([1, 2, 3], InsertDeleteDistance(), 2)
    """
    _vector("make_ordered_random", input_domain)
    out_metric = _pick(
        "make_ordered_random",
        input_metric,
        {SymmetricDistance: insert_delete_distance(), ChangeOneDistance: hamming_distance()},
    )

    def function(arg: npt.NDArray[Any]) -> npt.NDArray[Any]:
        arg = backends.of(arg).sized(arg)  # len() needs known lengths (threat model: finding 9)
        return arg[uniform_permutation(len(arg))]

    return Transformation(
        input_domain, input_metric, input_domain, out_metric, function, lambda d_in: d_in
    )


@constructor
def make_metric_bounded(
    input_domain: Domain[Any], input_metric: Metric[Any]
) -> Transformation[Any, Any, int, int]:
    r"""Re-measure same-size datasets by changed records instead of added/removed ones.

    ``symmetric_distance → change_one_distance``, on a sized vector domain.  Stability map:
    :math:`d_{out} = \lfloor d_{in} / 2 \rfloor`.

    OpenDP 0.16 also maps ``insert_delete_distance → hamming_distance`` with the same map, but
    that is unsound: ``[a, b, c, d]`` and ``[b, c, d, a]`` are 2 insert-delete edits apart
    (move ``a``) yet differ at 4 positions.  This constructor refuses that case.

    Raises:
        NotImplementedForType: if the domain has no size, or the metric is not the symmetric
            distance.

    Proof: docs/proofs/make_metric_bounded.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=int), size=3), dp.symmetric_distance()
    >>> t = dp.t.make_metric_bounded(*space)
    >>> t.output_metric, t.map(2), t.map(3)
    (ChangeOneDistance(), 1, 1)
    """
    _vector("make_metric_bounded", input_domain, sized=True)
    out_metric = _pick(
        "make_metric_bounded",
        input_metric,
        {SymmetricDistance: change_one_distance()},
    )
    return Transformation(
        input_domain, input_metric, input_domain, out_metric, _same, lambda d_in: d_in // 2
    )


@constructor
def make_metric_unbounded(
    input_domain: Domain[Any], input_metric: Metric[Any]
) -> Transformation[Any, Any, int, int]:
    r"""Re-measure datasets by added/removed records instead of changed ones.

    ``change_one_distance → symmetric_distance`` and ``hamming_distance →
    insert_delete_distance``.  Stability map: :math:`d_{out} = 2\,d_{in}`.

    Raises:
        NotImplementedForType: if the domain is not a vector domain, or the metric is not
            change-one or Hamming.

    Proof: docs/proofs/make_metric_unbounded.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=int), size=3), dp.change_one_distance()
    >>> t = dp.t.make_metric_unbounded(*space)
    >>> t.output_metric, t.map(1)
    (SymmetricDistance(), 2)
    """
    _vector("make_metric_unbounded", input_domain)
    out_metric = _pick(
        "make_metric_unbounded",
        input_metric,
        {ChangeOneDistance: symmetric_distance(), HammingDistance: insert_delete_distance()},
    )
    return Transformation(
        input_domain, input_metric, input_domain, out_metric, _same, lambda d_in: 2 * d_in
    )


then_unordered = keep(make_unordered)


then_ordered_random = keep(make_ordered_random)


then_metric_bounded = keep(make_metric_bounded)


then_metric_unbounded = keep(make_metric_unbounded)
