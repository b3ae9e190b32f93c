"""Bad distances and parameters: negative, NaN or infinite d_in and scale raise typed errors.

Attack family: a caller (or an upstream bug) passes ``scale = nan``, ``d_in = -1`` or a child
whose map returns NaN, hoping that a comparison like ``not (ε > budget)`` lets it through
(every comparison with NaN is False).  The naive control below shows that such a check does
let it through; opendp_lite refuses at construction (``InvalidParameter``) or when the map is
evaluated (``FailedMap``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import FailedMap, InvalidParameter

F64 = (dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float))
I64 = (dp.atom_domain(T=int), dp.absolute_distance(T=int))
VI = dp.vector_domain(dp.atom_domain(T=int))
VF = dp.vector_domain(dp.atom_domain(T=float, nan=False))

# constructor name -> builder taking the scale-like parameter
SCALED: dict[str, Callable[[Any], Any]] = {
    "laplace_f64": lambda s: dp.m.make_laplace(*F64, scale=s),
    "laplace_i64": lambda s: dp.m.make_laplace(*I64, scale=s),
    "laplace_vec": lambda s: dp.m.make_laplace(VF, dp.l1_distance(T=float), scale=s),
    "gaussian_f64": lambda s: dp.m.make_gaussian(*F64, scale=s),
    "gaussian_vec_i64": lambda s: dp.m.make_gaussian(VI, dp.l2_distance(T=float), scale=s),
    "geometric": lambda s: dp.m.make_geometric(*I64, scale=s),
    "base_laplace": lambda s: dp.m.make_base_laplace(*F64, scale=s),
    "base_gaussian": lambda s: dp.m.make_base_gaussian(*F64, scale=s),
    "base_discrete_laplace": lambda s: dp.m.make_base_discrete_laplace(*I64, scale=s),
    "base_discrete_gaussian": lambda s: dp.m.make_base_discrete_gaussian(*I64, scale=s),
    "noisy_max": lambda s: dp.m.make_noisy_max(
        VI, dp.linf_distance(T=int), dp.max_divergence(), scale=s
    ),
    "report_noisy_max_gumbel": lambda s: dp.m.make_report_noisy_max_gumbel(
        VI, dp.linf_distance(T=int), scale=s
    ),
    "noisy_top_k": lambda s: dp.m.make_noisy_top_k(
        VI, dp.linf_distance(T=int), dp.max_divergence(), k=1, scale=s
    ),
}
PROB: dict[str, Callable[[Any], Any]] = {
    "randomized_response_bool": lambda p: dp.m.make_randomized_response_bool(prob=p),
    "randomized_response": lambda p: dp.m.make_randomized_response(["a", "b", "c"], prob=p),
}

BAD_SCALES = [-1.0, -0.0001, math.nan, math.inf, -math.inf, "1.0", None, True]
BAD_DISTANCES = [-1, -1e-300, math.nan, math.inf, -math.inf, "1"]


@pytest.mark.parametrize("name", sorted(SCALED))
@pytest.mark.parametrize("scale", BAD_SCALES, ids=repr)
def test_bad_scale_refused_at_construction(name: str, scale: Any) -> None:
    with pytest.raises(InvalidParameter) as err:
        SCALED[name](scale)
    if isinstance(scale, float):
        assert "scale" in str(err.value)


@pytest.mark.parametrize("name", sorted(PROB))
@pytest.mark.parametrize("prob", [-0.1, 1.5, math.nan, math.inf, "0.75", None, 0.0])
def test_bad_probability_refused(name: str, prob: Any) -> None:
    with pytest.raises(InvalidParameter):
        PROB[name](prob)


@pytest.mark.parametrize("name", sorted(SCALED) + sorted(PROB))
@pytest.mark.parametrize("d_in", BAD_DISTANCES, ids=repr)
def test_bad_d_in_raises_failed_map(name: str, d_in: Any) -> None:
    meas = SCALED[name](1.0) if name in SCALED else PROB[name](0.75)
    with pytest.raises(FailedMap):
        meas.map(d_in)
    with pytest.raises(FailedMap):
        meas.check(d_in, 10.0)


@pytest.mark.parametrize("d_out", [-1.0, math.nan, math.inf, "1"], ids=repr)
def test_bad_d_out_raises_failed_map(d_out: Any) -> None:
    with pytest.raises(FailedMap):
        dp.m.make_laplace(*F64, scale=1.0).check(1.0, d_out)


def test_scale_zero_is_not_a_free_release() -> None:
    # scale 0 releases the input exactly: its map must not claim a finite ε
    meas = dp.m.make_laplace(*F64, scale=0.0)
    with pytest.raises(FailedMap):
        meas.map(1.0)
    assert meas.map(0.0) == 0.0


def _nan_child() -> Any:
    dp.enable_features("honest-but-curious")
    return dp.m.make_user_measurement(
        *F64, dp.max_divergence(), lambda x: x, lambda d: float("nan")
    )


def test_naive_check_lets_nan_through() -> None:
    # The control: a budget check written as "not over budget" accepts a NaN loss.
    child = _nan_child()

    def naive_check(d_in: float, budget: float) -> bool:
        return not (child.privacy_map(d_in) > budget)

    assert naive_check(1.0, 0.1)
    with pytest.raises(FailedMap):  # opendp_lite validates the map's result
        child.check(1.0, 0.1)


@pytest.mark.parametrize("compose", ["make_basic_composition", "make_composition"])
def test_compositor_rejects_a_child_whose_map_is_nan(compose: str) -> None:
    comp = getattr(dp.c, compose)([dp.m.make_laplace(*F64, scale=1.0), _nan_child()])
    with pytest.raises(FailedMap):
        comp.map(1.0)
    with pytest.raises(FailedMap):
        comp.check(1.0, 100.0)


def test_interactive_compositor_rejects_nan_child_and_bad_budgets() -> None:
    for d_mids in ([math.nan], [-1.0], [math.inf]):
        with pytest.raises(FailedMap):
            dp.c.make_sequential_composition(*F64, dp.max_divergence(), 1.0, d_mids)
    for d_in in (-1.0, math.nan):
        with pytest.raises(FailedMap):
            dp.c.make_sequential_composition(*F64, dp.max_divergence(), d_in, [1.0])
    qbl = dp.c.make_sequential_composition(*F64, dp.max_divergence(), 1.0, [1.0, 1.0])(0.0)
    with pytest.raises(FailedMap):
        qbl(_nan_child())


def test_chained_transformation_with_nan_stability_map() -> None:
    dp.enable_features("honest-but-curious")
    t = dp.t.make_user_transformation(*F64, *F64, lambda x: x, lambda d: float("nan"))
    chain = t >> dp.m.make_laplace(*F64, scale=1.0)
    with pytest.raises(FailedMap):
        chain.map(1.0)
