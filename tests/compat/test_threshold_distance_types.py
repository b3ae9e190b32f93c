"""The threshold mechanisms take any numeric distance type, as OpenDP 0.16 does.

OpenDP 0.16's user guide (thresholded noise mechanisms) builds ``make_gaussian_threshold`` on a
map to integers with ``l02inf_distance(absolute_distance(T=float))``: the distance type D of the
L0,p,∞ metric need not be the value type.  OpenDP accepts every pairing of an integer or float
value type with an integer or float distance type, for the Laplace and Gaussian threshold
mechanisms and for ``make_noise_threshold``; the released values keep the value type.  The
distances are then real bounds, which the map must honour (never below the same-type map at the
same bound, and a real bound on integer values acts as its floor).
"""

from __future__ import annotations

import importlib.util
import itertools
import math
from typing import Any

import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import MetricMismatch

HAVE_OPENDP = importlib.util.find_spec("opendp") is not None

VALUES = ["i32", "i64", "u32", "f64", "f32"]
DISTANCES = ["i32", "i64", "u32", "f64", "f32"]
MECHANISMS = ["laplace", "gaussian", "noise-laplace", "noise-gaussian"]


def _build(lib: Any, mech: str, V: str, D: str, scale: float = 1.0, threshold: Any = 10) -> Any:
    value = lib.atom_domain(T=V, nan=False) if V.startswith("f") else lib.atom_domain(T=V)
    dom = lib.map_domain(lib.atom_domain(T=str), value)
    gauss = mech.endswith("gaussian")
    metric = (lib.l02inf_distance if gauss else lib.l01inf_distance)(lib.absolute_distance(T=D))
    if V.startswith("f"):
        threshold = float(threshold)
    if mech.startswith("noise"):
        inner = lib.zero_concentrated_divergence() if gauss else lib.max_divergence()
        return lib.m.make_noise_threshold(
            dom, metric, lib.approximate(inner), scale=scale, threshold=threshold
        )
    fn = lib.m.make_gaussian_threshold if gauss else lib.m.make_laplace_threshold
    return fn(dom, metric, scale=scale, threshold=threshold)


MIXED = [(m, v, d) for m, v, d in itertools.product(MECHANISMS, VALUES, DISTANCES) if v != d]


@pytest.mark.parametrize(("mech", "V", "D"), MIXED)
def test_every_value_and_distance_type_builds(mech: str, V: str, D: str) -> None:
    m = _build(dp, mech, V, D)
    gauss = mech.endswith("gaussian")
    inner = dp.zero_concentrated_divergence() if gauss else dp.max_divergence()
    assert m.output_measure == dp.approximate(inner)
    assert m.input_metric.inner == dp.absolute_distance(T=D)
    d_in = (1, 1.0, 1.0) if D.startswith("f") else (1, 1, 1)
    loss, delta = m.map(d_in)
    assert loss == (0.5 if gauss else 1.0) and 0 < delta < 1
    big = 100.0 if V.startswith("f") else 100
    out = m({"a": big})
    assert list(out) == ["a"]
    assert type(out["a"]) is type(big)  # the value type, not the distance type


def _opendp() -> Any:
    import opendp.prelude as odp

    odp.enable_features("contrib")
    return odp


@pytest.mark.skipif(not HAVE_OPENDP, reason="OpenDP 0.16 not installed")
@pytest.mark.parametrize(("V", "D"), [("i32", "f64"), ("f64", "i32"), ("u32", "f32")])
def test_opendp_accepts_the_same_pairings(V: str, D: str) -> None:
    odp = _opendp()
    for mech in MECHANISMS:
        theirs = _build(odp, mech, V, D)  # builds: OpenDP accepts the pairing
        ours = _build(dp, mech, V, D)
        d_in = (1, 1.0, 1.0) if D.startswith("f") else (1, 1, 1)
        assert ours.map(d_in)[0] == theirs.map(d_in)[0]  # ε / ρ agree; δ: docs/differences.md


def test_the_user_guide_gaussian_threshold_over_integers_with_float_distances() -> None:
    dom = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int))
    m = dp.m.make_gaussian_threshold(
        dom, dp.l02inf_distance(dp.absolute_distance(T=float)), scale=1.0, threshold=10
    )
    same = dp.m.make_gaussian_threshold(
        dom, dp.l02inf_distance(dp.absolute_distance(T=int)), scale=1.0, threshold=10
    )
    assert m.map((1, 1, 1)) == same.map((1, 1, 1))
    assert m.map((1, 1, 1))[0] == 0.5
    released = m({"a": 0, "b": 10, "c": 1000})
    assert "c" in released and all(type(v) is int for v in released.values())


def test_real_bounds_on_integer_values_are_honoured() -> None:
    dom = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int))
    lap = dp.m.make_laplace_threshold(
        dom, dp.l01inf_distance(dp.absolute_distance(T=float)), scale=2.0, threshold=10
    )
    ref = dp.m.make_laplace_threshold(
        dom, dp.l01inf_distance(dp.absolute_distance(T=int)), scale=2.0, threshold=10
    )
    eps, delta = lap.map((1, 1.5, 1.5))
    assert eps == 0.75  # l1 / scale, with the real l1
    # an integer value at most 1.5 is at most 1: δ is the tail at ⌈10 − 1.5⌉ = 9, as for l∞ = 1
    assert delta == ref.map((1, 1, 1))[1]
    assert delta >= math.exp(-9 / 2) / (1 + math.exp(-1 / 2))  # Pr[Z >= 9], Z ~ 𝓛_ℤ(2)
    # integral real bounds give the integer-typed map exactly
    assert lap.map((2, 3.0, 2.0)) == ref.map((2, 3, 2))
    gauss = dp.m.make_gaussian_threshold(
        dom, dp.l02inf_distance(dp.absolute_distance(T=float)), scale=1.0, threshold=10
    )
    assert gauss.map((2, 1.5, 1.0))[0] == 1.0  # min(1.5², 2·1²)/2


def test_float_values_with_integer_distances_match_float_distances() -> None:
    dom = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=float, nan=False))
    for p, fn in ((1, dp.m.make_laplace_threshold), (2, dp.m.make_gaussian_threshold)):
        metric = dp.l01inf_distance if p == 1 else dp.l02inf_distance
        a = fn(dom, metric(dp.absolute_distance(T=int)), scale=1.0, threshold=10.0)
        b = fn(dom, metric(dp.absolute_distance(T=float)), scale=1.0, threshold=10.0)
        assert a.map((2, 3, 2)) == b.map((2, 3.0, 2.0))


def test_other_metrics_are_still_refused() -> None:
    """A guard (passes before and after): loosening D did not let other metrics in."""
    dom = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int))
    with pytest.raises(MetricMismatch):  # L0,2,∞ for the Laplace mechanism
        dp.m.make_laplace_threshold(
            dom, dp.l02inf_distance(dp.absolute_distance(T=float)), scale=1.0, threshold=10
        )
    with pytest.raises(MetricMismatch):  # a dataset inner metric
        dp.m.make_laplace_threshold(
            dom, dp.l01inf_distance(dp.symmetric_distance()), scale=1.0, threshold=10
        )
