"""Grouped releases: a measurement mapped over the groups of a partition (parallel composition).

``make_grouped`` runs one measurement on every group of a :class:`Partitioned` dataset and
releases a ``dict`` keyed by group.  Its privacy map charges only the groups one neighbouring
dataset can change (at most ``l0``, each by at most ``l∞`` records, ``l1`` in all).  With
private keys it first releases the key set with the Laplace threshold mechanism (δ charged).

``grouped_count``, ``grouped_sum`` and ``grouped_mean`` are the one-call analyst helpers:
a frame in (a ``dict`` of columns, a pandas or Polars ``DataFrame``, a Dask ``DataFrame``), a
labelled ``dict`` out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, TypeVar, cast, overload

import numpy as np

from .. import _arith as ar
from .. import backends
from .._registry import constructor
from .._spine import measured
from .._validate import check_finite_nonneg
from ..core import Domain, Measurement, Metric, Transformation, check_fits
from ..domains import DataFrameDomain, atom_domain, dataframe_domain, map_domain
from ..errors import DomainMismatch, InvalidParameter, MetricMismatch, NotImplementedForType
from ..measurements.noise import make_laplace
from ..measurements.threshold import l01inf_distance, make_laplace_threshold
from ..measures import Approximate, MaxDivergence, ZeroConcentratedDivergence, approximate
from ..metrics import (
    SymmetricDistance,
    SymmetricIdDistance,
    Triple,
    absolute_distance,
    partition_distance,
    symmetric_distance,
)
from ..transformations.partition import (
    PartitionDomain,
    Partitioned,
    make_grouped_count,
    make_grouped_sum,
    make_partition_by,
)

__all__ = [
    "grouped_count",
    "grouped_mean",
    "grouped_sum",
    "make_grouped",
    "then_grouped",
]

_TO = TypeVar("_TO")
_MO = TypeVar("_MO")


def _group_loss(inner: Measurement[Any, Any, int, Any], d_in: Triple) -> Any:
    """The loss of ``inner`` summed over the changed groups (module docstring of the proof):
    with g = min(l0, l1) changed groups, l∞′ = min(l∞, l1),
    pure DP: min(g·ε(l∞′), l1·ε(1)); zCDP: min(g·ρ(l∞′), l1·l∞′·ρ(1)); approximate DP:
    (g·ε(l∞′), min(1, g·δ(l∞′)))."""
    l0, l1, li = d_in
    g, li = min(l0, l1), min(li, l1)
    measure = inner.output_measure
    if g == 0:
        return (0.0, 0.0) if isinstance(measure, Approximate) else 0.0
    if isinstance(measure, MaxDivergence):
        return min(ar.mul_up(g, inner.map(li)), ar.mul_up(l1, inner.map(1)))
    if isinstance(measure, ZeroConcentratedDivergence):
        return min(ar.mul_up(g, inner.map(li)), ar.mul_up(l1 * li, inner.map(1)))
    eps, delta = inner.map(li)
    return ar.mul_up(g, eps), min(1.0, ar.mul_up(g, delta))


# The release is the inner measurement's per group; the loss is the inner's with public keys,
# approximate DP (ε, δ) with private keys (threshold and threshold_scale given).
@overload
def make_grouped(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    measurement: Measurement[Any, _TO, int, _MO],
    threshold: None = None,
    threshold_scale: None = None,
) -> Measurement[Partitioned, dict[Hashable, _TO], Triple, _MO]: ...
@overload
def make_grouped(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    measurement: Measurement[Any, _TO, int, Any],
    threshold: int,
    threshold_scale: float,
) -> Measurement[Partitioned, dict[Hashable, _TO], Triple, tuple[float, float]]: ...
@constructor
def make_grouped(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    measurement: Measurement[Any, Any, int, Any],
    threshold: int | None = None,
    threshold_scale: float | None = None,
) -> Measurement[Partitioned, dict[Any, Any], Triple, Any]:
    r"""Release ``measurement`` on every group: ``{key: measurement(group)}``.

    ``measurement`` takes one group's rows (a ``dataframe_domain`` under
    ``symmetric_distance()``) and may be any pure-DP, zCDP or approximate-DP measurement.
    Every group is checked against its input domain before any randomness is drawn.  With
    public keys every declared key is released (an empty group too).  With private keys
    (``make_partition_by(keys=None)``), the keys are first selected by
    ``make_laplace_threshold(threshold_scale, threshold)`` on the groups' row counts, and only
    the selected groups are released.

    Privacy map, with (l0, l1, l∞) = d_in, g = min(l0, l1) changed groups and
    l∞′ = min(l∞, l1); ε(·), ρ(·), (ε, δ)(·) the inner map:
        pure DP:        min(g·ε(l∞′), l1·ε(1))
        zCDP:           min(g·ρ(l∞′), l1·l∞′·ρ(1))
        approximate DP: (g·ε(l∞′), min(1, g·δ(l∞′)))
        private keys:   (ε_T + ε_G, min(1, δ_T + δ_G)), (ε_T, δ_T) the threshold's map at
                        d_in and (ε_G, δ_G) the public-key map above (δ_G = 0 for pure DP)

    Raises:
        DomainMismatch: if ``input_domain`` is not a partition domain, or the measurement's
            input domain is not a ``dataframe_domain``.
        MetricMismatch: if ``input_metric`` is not ``partition_distance()`` or the
            measurement's input metric is not ``symmetric_distance()``.
        NotImplementedForType: if the measurement's measure is another one (or is zCDP with
            private keys: convert it with ``make_zCDP_to_approxDP`` and ``make_fix_delta``).
        InvalidParameter: if the keys are private and ``threshold``/``threshold_scale`` are
            missing, or public and they are given.

    Proof: docs/proofs/make_grouped.md

    >>> import opendp_lite.prelude as dp
    >>> part = dp.t.make_partition_by(dp.dataframe_domain(), dp.symmetric_distance(),
    ...                               by="g", keys=["a", "b"])
    >>> count = (dp.t.make_select_column("x", TOA=float) >> dp.t.then_count()
    ...          >> dp.m.then_laplace(scale=1e-9))
    >>> m = part >> dp.c.then_grouped(count)
    >>> m({"g": ["a", "a", "c"], "x": [1.0, 2.0, 3.0]}), m.map(1)
    ({'a': 2, 'b': 0}, 1000000000.0)
    """
    name = "make_grouped"
    if type(input_domain).__name__ != "PartitionDomain":
        raise DomainMismatch(PartitionDomain(("key",), (), DataFrameDomain()), input_domain, name)
    if type(input_metric).__name__ != "PartitionDistance":
        raise MetricMismatch(partition_distance(), input_metric, name)
    if not isinstance(measurement.input_domain, DataFrameDomain):
        raise DomainMismatch(dataframe_domain(), measurement.input_domain, name)
    if not isinstance(measurement.input_metric, SymmetricDistance):
        raise MetricMismatch(symmetric_distance(), measurement.input_metric, name)
    # a group's rows are rows of the partitioned frame: a column type the measurement
    # declares otherwise than the frame's domain is refused now, not on a group's data
    check_fits(cast(PartitionDomain, input_domain).part_domain, measurement.input_domain, name)
    # the column types the measurement reads are declared on the groups' domain, so a chain
    # after make_partition_by checks them where the data enters (core.make_chain_mt)
    part = cast(PartitionDomain, input_domain)
    declared = cast(DataFrameDomain, part.part_domain._declaring(measurement.input_domain))
    input_domain = dataclasses.replace(part, part_domain=declared)
    measure = measurement.output_measure
    pure = isinstance(measure, MaxDivergence)
    approx = isinstance(measure, Approximate) and isinstance(measure.inner, MaxDivergence)
    if not (pure or approx or isinstance(measure, ZeroConcentratedDivergence)):
        raise NotImplementedForType(
            f"{name}: the measurement's measure must be MaxDivergence, "
            f"ZeroConcentratedDivergence or Approximate(MaxDivergence), got {measure!r}"
        )
    inner = measurement
    inner_domain = measurement.input_domain
    keys = input_domain.keys

    if keys is not None:
        if threshold is not None or threshold_scale is not None:
            raise InvalidParameter(
                f"{name}: the keys are public; threshold and threshold_scale apply to "
                "private keys (make_partition_by(keys=None))"
            )

        def function(x: Partitioned) -> dict[Any, Any]:
            parts = {k: inner_domain._normalize(x[k]) for k in x}  # all checked first
            return {k: inner.function(v) for k, v in parts.items()}

        return Measurement(
            input_domain,
            input_metric,
            measure,
            function,
            lambda d_in: _group_loss(inner, d_in),
        )

    if threshold is None or threshold_scale is None:
        raise InvalidParameter(
            f"{name}: the keys are private (make_partition_by(keys=None)): give threshold "
            "and threshold_scale to release them privately, or declare keys=[...]"
        )
    if not (pure or approx):
        raise NotImplementedForType(
            f"{name}: with private keys the measurement must be pure or approximate DP "
            f"(the key release costs δ), got {measure!r}"
        )
    thr = make_laplace_threshold(
        map_domain(atom_domain(T=str), atom_domain(T="i64")),
        l01inf_distance(absolute_distance(T="i64")),
        threshold_scale,
        threshold,
    )

    def private_function(x: Partitioned) -> dict[Any, Any]:
        parts = {k: inner_domain._normalize(x[k]) for k in x}  # all checked first
        codes = x.codes  # set once the groups are read (a Dask frame is computed then)
        assert codes is not None  # noqa: S101 - x[k] above split the frame
        binc = np.bincount(codes[codes >= 0], minlength=len(x.keys_))
        released = thr.function(dict(zip(x.keys_, binc.tolist(), strict=True)))
        return {k: inner.function(parts[k]) for k in x if k in released}

    def privacy_map(d_in: Triple) -> tuple[float, float]:
        eps_t, delta_t = thr.map(d_in)
        loss = _group_loss(inner, d_in)
        eps_g, delta_g = (loss, 0.0) if pure else loss
        return ar.add_up(eps_t, eps_g), min(1.0, ar.add_up(delta_t, delta_g))

    return Measurement(
        input_domain, input_metric, approximate(MaxDivergence()), private_function, privacy_map
    )


then_grouped = measured(make_grouped)


# -- the analyst's helpers --------------------------------------------------------------------


def _frame(data: Any) -> Any:
    """A dict of numpy columns (pandas, Polars, dict), or the Dask dataframe itself."""
    if backends.of_frame(data) is not None or isinstance(data, Mapping):
        return data
    columns = getattr(data, "columns", None)
    if columns is not None and hasattr(data, "__getitem__"):
        return {c: np.asarray(data[c].to_numpy()) for c in columns}
    raise InvalidParameter(
        f"data must be a DataFrame (pandas, Polars, Dask) or a dict of columns, got "
        f"{type(data).__name__}"
    )


def _epsilon(epsilon: object) -> float:
    e = check_finite_nonneg("epsilon", epsilon)
    if e == 0:
        raise InvalidParameter("epsilon must be > 0, got 0")
    return e


def _space(by: Any, keys: Sequence[Any] | None, identifier: Any, bounds: Any) -> Any:
    metric = symmetric_distance() if identifier is None else SymmetricIdDistance(identifier)
    k, m, c = (None, None, None) if identifier is None else bounds
    return make_partition_by(dataframe_domain(), metric, by, keys, k, m, c)


def _label(keys: Sequence[Any], values: Any) -> dict[Any, Any]:
    return {k: v.item() if hasattr(v, "item") else v for k, v in zip(keys, values, strict=True)}


def _laplace_per_group(
    data: Any,
    by: Any,
    keys: Sequence[Any],
    identifier: Any,
    bounds_id: tuple[int, int, int | None],
    epsilon: float,
    make_aggregate: Callable[[Any, Any], Transformation[Any, Any, Any, Any]],
) -> dict[Any, Any]:
    """``make_aggregate`` per group after the partition, with Laplace noise scaled to ε (the
    scale rounded up from the aggregate's exact sensitivity), labelled by key."""
    eps = _epsilon(epsilon)
    part = _space(by, keys, identifier, bounds_id)
    t = part >> make_aggregate(part.output_domain, part.output_metric)
    scale = ar.div_up(t.map(1), eps)
    m = t >> make_laplace(t.output_domain, t.output_metric, scale)
    return _label(part.output_domain.keys, m(_frame(data)))


def grouped_count(
    data: Any,
    by: Any,
    epsilon: float,
    keys: Sequence[Any],
    identifier: Any = None,
    max_partitions: int = 1,
    max_contributions_per_partition: int = 1,
    max_contributions: int | None = None,
) -> dict[Any, int]:
    """An ε-DP count of rows per group, as ``{key: noisy count}`` (discrete Laplace noise).

    Each record is one individual; with ``identifier`` each individual (all its rows) is
    truncated to ``max_partitions`` groups, ``max_contributions_per_partition`` rows in each
    and ``max_contributions`` rows in all (see :func:`make_partition_by`).

    Raises:
        InvalidParameter: as :func:`~opendp_lite.transformations.make_partition_by`, or if
            ``epsilon`` is not a finite positive number.

    >>> import opendp_lite.prelude as dp
    >>> out = dp.c.grouped_count({"region": ["n", "s", "n"]}, by="region", epsilon=1.0,
    ...                          keys=["n", "s", "w"])
    >>> sorted(out)
    ['n', 's', 'w']
    """
    bounds_id = (max_partitions, max_contributions_per_partition, max_contributions)
    return _laplace_per_group(data, by, keys, identifier, bounds_id, epsilon, make_grouped_count)


def grouped_sum(
    data: Any,
    by: Any,
    column: Any,
    bounds: tuple[float, float],
    epsilon: float,
    keys: Sequence[Any],
    identifier: Any = None,
    max_partitions: int = 1,
    max_contributions_per_partition: int = 1,
    max_contributions: int | None = None,
) -> dict[Any, float]:
    """An ε-DP sum of ``clamp(column, bounds)`` per group, as ``{key: noisy sum}``.

    Raises:
        InvalidParameter: as :func:`~opendp_lite.transformations.make_grouped_sum`, or if
            ``epsilon`` is not a finite positive number.

    >>> import opendp_lite.prelude as dp
    >>> df = {"region": ["n", "s", "n"], "income": [10.0, 20.0, 30.0]}
    >>> out = dp.c.grouped_sum(df, by="region", column="income", bounds=(0.0, 100.0),
    ...                        epsilon=1.0, keys=["n", "s"])
    >>> sorted(out)
    ['n', 's']
    """
    bounds_id = (max_partitions, max_contributions_per_partition, max_contributions)
    return _laplace_per_group(
        data,
        by,
        keys,
        identifier,
        bounds_id,
        epsilon,
        lambda d, m: make_grouped_sum(d, m, column, bounds),
    )


def grouped_mean(
    data: Any,
    by: Any,
    column: Any,
    bounds: tuple[float, float],
    epsilon: float,
    keys: Sequence[Any],
    identifier: Any = None,
    max_partitions: int = 1,
    max_contributions_per_partition: int = 1,
    max_contributions: int | None = None,
) -> dict[Any, float]:
    """An ε-DP mean per group: a noisy sum (ε/2) over a noisy count (ε/2), clamped to bounds.

    A group whose noisy count is below 1 gets the midpoint of ``bounds``.  Post-processing
    of :func:`grouped_sum` and :func:`grouped_count`; ε in total by basic composition.

    >>> import opendp_lite.prelude as dp
    >>> df = {"region": ["n", "s", "n"], "income": [10.0, 20.0, 30.0]}
    >>> out = dp.c.grouped_mean(df, by="region", column="income", bounds=(0.0, 100.0),
    ...                         epsilon=1.0, keys=["n", "s"])
    >>> all(0.0 <= v <= 100.0 for v in out.values())
    True
    """
    eps = _epsilon(epsilon)
    frame = _frame(data)
    args = (identifier, max_partitions, max_contributions_per_partition, max_contributions)
    sums = grouped_sum(frame, by, column, bounds, eps / 2, keys, *args)
    counts = grouped_count(frame, by, eps / 2, keys, *args)
    lo, hi = float(bounds[0]), float(bounds[1])
    out: dict[Any, float] = {}
    for k in sums:
        c = counts[k]
        out[k] = (lo + hi) / 2 if c < 1 else min(max(sums[k] / c, lo), hi)
    return out
