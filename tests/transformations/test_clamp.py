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
            dp.vector_domain(dp.atom_domain(T=T), size=5), dp.symmetric_distance(), bounds
        )
        assert t.output_domain == dp.vector_domain(dp.atom_domain(bounds=bounds, T=T), size=5)
        assert t.output_metric == dp.symmetric_distance()


@pytest.mark.parametrize("metric", METRICS, ids=lambda m: repr(m))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_stable_on_random_neighbours(metric: object, data: st.DataObject) -> None:
    t = dp.t.make_clamp(dp.vector_domain(dp.atom_domain(T=float)), metric, (-10.0, 10.0))
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
        dp.vector_domain(dp.atom_domain(T="f32")), dp.symmetric_distance(), (0.1, 0.2)
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
        dp.t.make_clamp(dp.vector_domain(dp.atom_domain(T=float)), dp.symmetric_distance(), bounds)  # type: ignore[arg-type]


def test_bad_domains_refused() -> None:
    sd = dp.symmetric_distance()
    with pytest.raises(InvalidParameter, match="NaN"):
        dp.t.make_clamp(dp.vector_domain(dp.atom_domain(T=float, nan=True)), sd, (0.0, 1.0))
    with pytest.raises(NotImplementedForType):
        dp.t.make_clamp(dp.vector_domain(dp.atom_domain(T=str)), sd, ("a", "b"))
    with pytest.raises(NotImplementedForType):
        dp.t.make_clamp(dp.atom_domain(T=float), dp.absolute_distance(T=float), (0.0, 1.0))
    with pytest.raises(NotImplementedForType):
        dp.t.make_clamp(
            dp.vector_domain(dp.atom_domain(T=float)), dp.l1_distance(T=float), (0.0, 1.0)
        )
    with pytest.raises(InvalidParameter):  # int carrier, float bound
        dp.t.make_clamp(dp.vector_domain(dp.atom_domain(T=int)), sd, (0.5, 2))


def test_invocation_rejects_non_members_before_running() -> None:
    t = dp.t.make_clamp(
        dp.vector_domain(dp.atom_domain(T=float)), dp.symmetric_distance(), (0.0, 1.0)
    )
    for bad in (1.0, [float("nan")], ["a"], np.zeros((2, 2))):
        with pytest.raises(NotInDomain):
            t(bad)


def test_matches_opendp() -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    rng_data = [[-5.0, 0.0, 2.5, 11.0], [], [1e300, -1e300]]
    ours = dp.t.make_clamp(
        dp.vector_domain(dp.atom_domain(T=float)), dp.symmetric_distance(), (0.0, 10.0)
    )
    theirs = odp.t.make_clamp(
        odp.vector_domain(odp.atom_domain(T=float, nan=False)),
        odp.symmetric_distance(),
        (0.0, 10.0),
    )
    for x in rng_data:
        assert ours(x).tolist() == theirs(x)
    for d in range(20):
        assert ours.map(d) == theirs.map(d)
    assert repr(ours.output_domain) == repr(theirs.output_domain)
