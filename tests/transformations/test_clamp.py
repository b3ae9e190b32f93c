"""make_clamp: outputs within bounds, bounded output domain, 1-stability, OpenDP parity."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite.errors import InvalidParameter, NotImplementedForType, NotInDomain
from tests.transformations.test_rowwise import check_stable, neighbours

METRICS = [
    dp.symmetric_distance(),
    dp.insert_delete_distance(),
    dp.change_one_distance(),
    dp.hamming_distance(),
]
floats = st.floats(-1e6, 1e6, allow_nan=False)


def test_output_domain_is_the_bounded_domain_aggregates_expect() -> None:
    for T, bounds in (("f64", (0.0, 10.0)), ("i32", (-3, 3)), ("f32", (0.0, 1.0)), ("u8", (1, 9))):
        t = dp.t.make_clamp(
            dp.vector_domain(dp.atom_domain(T=T, nan=False), size=5),
            dp.symmetric_distance(),
            bounds,
        )
        assert t.output_domain == dp.vector_domain(dp.atom_domain(bounds=bounds, T=T), size=5)
        assert t.output_metric == dp.symmetric_distance()


@pytest.mark.parametrize("metric", METRICS, ids=lambda m: repr(m))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_stable_on_random_neighbours(metric: object, data: st.DataObject) -> None:
    t = dp.t.make_clamp(dp.vector_domain(dp.atom_domain(T=float, nan=False)), metric, (-10.0, 10.0))
    x, y = data.draw(neighbours(floats, type(metric).__name__))
    check_stable(t, x, y)


@settings(max_examples=100, deadline=None)
@given(
    x=st.lists(st.integers(-(2**31), 2**31 - 1), max_size=20),
    lo=st.integers(-50, 50),
    w=st.integers(0, 50),
)
def test_int_values_clamped_and_dtype_kept(x: list[int], lo: int, w: int) -> None:
    t = dp.t.make_clamp(
        dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance(), (lo, lo + w)
    )
    arr = np.array(x, dtype=np.int32)
    out = t(arr)
    assert out.dtype == np.int32
    assert out.tolist() == [min(max(v, lo), lo + w) for v in x]
    assert arr.tolist() == x  # input not mutated


def test_f32_bounds_and_data() -> None:
    t = dp.t.make_clamp(
        dp.vector_domain(dp.atom_domain(T="f32", nan=False)), dp.symmetric_distance(), (0.1, 0.2)
    )
    out = t(np.array([0.0, 0.15, 1.0], dtype=np.float32))
    assert out.dtype == np.float32
    assert t.output_domain.member(out)


@pytest.mark.parametrize(
    "bounds",
    [(1.0, 0.0), (float("nan"), 1.0), (0.0, float("inf")), (-float("inf"), 0.0), (0.0,), "ab"],
)
def test_bad_bounds_refused(bounds: object) -> None:
    with pytest.raises(InvalidParameter):
        dp.t.make_clamp(
            dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance(), bounds
        )  # type: ignore[arg-type]


def test_bad_domains_refused() -> None:
    sd = dp.symmetric_distance()
    with pytest.raises(InvalidParameter, match="NaN"):
        dp.t.make_clamp(dp.vector_domain(dp.atom_domain(T=float, nan=True)), sd, (0.0, 1.0))
    with pytest.raises(NotImplementedForType):
        dp.t.make_clamp(dp.vector_domain(dp.atom_domain(T=str)), sd, ("a", "b"))
    with pytest.raises(NotImplementedForType):
        dp.t.make_clamp(
            dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), (0.0, 1.0)
        )
    with pytest.raises(NotImplementedForType):
        dp.t.make_clamp(
            dp.vector_domain(dp.atom_domain(T=float, nan=False)),
            dp.l1_distance(T=float),
            (0.0, 1.0),
        )
    with pytest.raises(InvalidParameter):  # int carrier, float bound
        dp.t.make_clamp(dp.vector_domain(dp.atom_domain(T=int)), sd, (0.5, 2))


def test_invocation_rejects_non_members_before_running() -> None:
    t = dp.t.make_clamp(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance(), (0.0, 1.0)
    )
    for bad in (1.0, [float("nan")], ["a"], np.zeros((2, 2))):
        with pytest.raises(NotInDomain):
            t(bad)


def test_matches_opendp() -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    rng_data = [[-5.0, 0.0, 2.5, 11.0], [], [1e300, -1e300]]
    ours = dp.t.make_clamp(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance(), (0.0, 10.0)
    )
    theirs = odp.t.make_clamp(
        odp.vector_domain(odp.atom_domain(T=float, nan=False)),
        odp.symmetric_distance(),
        (0.0, 10.0),
    )
    for x in rng_data:
        assert ours(x) == theirs(x)
    for d in range(20):
        assert ours.map(d) == theirs.map(d)
    assert repr(ours.output_domain) == repr(theirs.output_domain)


# ----------------------------------------------------------------------------------------------
# clamp >> exact float aggregate: fused on numpy, the same value, no clamped copy


def _fused_and_apart(
    space: tuple[object, object], bounds: tuple[float, float], then_aggregate: object
) -> tuple[object, object, object]:
    """The chain ``space >> clamp >> aggregate`` and its two steps built apart."""
    clamp = space >> dp.t.then_clamp(bounds)  # type: ignore[operator]
    aggregate = clamp.output_space >> then_aggregate  # type: ignore[operator]
    return clamp >> aggregate, clamp, aggregate


@pytest.mark.parametrize("T", ["f64", "f32"])
@pytest.mark.parametrize("n", [0, 1, 7, (1 << 16) + 3])
def test_fused_clamp_aggregates_equal_the_steps_apart(T: str, n: int) -> None:
    rng = np.random.default_rng([n, len(T)])
    x = (rng.standard_normal(n) * 3).astype(T.replace("f", "float"))
    x[: n // 10] = rng.choice([0.0, -0.0, 1e30, -1e30, 0.5], n // 10)
    for bounds in ((-1.0, 2.0), (0.25, 0.5), (-1e-300, 1e-300), (3.0, 3.0)):
        cases = [(None, dp.t.then_sum())]
        if n:
            cases += [(n, dp.t.then_mean()), (n, dp.t.then_sum_of_squared_deviations())]
        if n > 1:
            cases += [(n, dp.t.then_variance())]
        for size, agg in cases:
            space = (
                dp.vector_domain(dp.atom_domain(T=T, nan=False), size=size),
                dp.symmetric_distance(),
            )
            chain, clamp, aggregate = _fused_and_apart(space, bounds, agg)
            apart = aggregate(clamp(x))  # type: ignore[operator]
            assert chain(x) == apart, (T, n, bounds, size)  # type: ignore[operator]
            assert chain.map(1) == aggregate.map(clamp.map(1))  # type: ignore[union-attr]


def test_fused_clamp_inside_longer_chains() -> None:
    x = [1.5, float("nan"), -4.0, 9.0, 0.25]
    nan_space = dp.vector_domain(dp.atom_domain(T=float, nan=True)), dp.symmetric_distance()
    imputed = nan_space >> dp.t.then_impute_constant(0.5)
    chain = imputed >> dp.t.then_clamp((0.0, 2.0)) >> dp.t.then_sum()
    assert chain(x) == 1.5 + 0.5 + 0.0 + 2.0 + 0.25
    twice = imputed >> dp.t.then_clamp((0.0, 2.0)) >> dp.t.then_clamp((1.0, 1.5)) >> dp.t.then_sum()
    assert twice(x) == 1.5 + 1.0 + 1.0 + 1.5 + 1.0
    meas = chain >> dp.m.then_laplace(1.0)
    assert isinstance(meas(x), float) and meas.map(1) == dp.m.then_laplace(1.0)(
        *chain.output_space
    ).map(chain.map(1))
    # a clamp followed by a step that does not absorb it still clamps (integers, counts)
    ints = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    assert (ints >> dp.t.then_clamp((0, 3)) >> dp.t.then_sum())([-5, 2, 9]) == 5
    by = ints >> dp.t.then_clamp((0, 3)) >> dp.t.then_count_by_categories([0, 3])
    assert by([-5, 2, 9]) == [1, 1, 1]


def test_clamp_then_sum_writes_no_clamped_copy() -> None:
    """On numpy the chain clamps piece by piece inside the exact sum; its peak memory
    stays far below one copy of the input (8 MiB here)."""
    import tracemalloc

    x = np.random.default_rng(0).uniform(-1.0, 2.0, 1 << 20)
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    chain = space >> dp.t.then_clamp((0.0, 1.0)) >> dp.t.then_sum()
    tracemalloc.start()
    try:
        total = chain(x)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < x.nbytes // 4, peak
    _, clamp, aggregate = _fused_and_apart(space, (0.0, 1.0), dp.t.then_sum())
    assert total == aggregate(clamp(x))  # type: ignore[operator]
