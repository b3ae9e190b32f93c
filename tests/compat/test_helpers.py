"""OpenDP 0.16's helpers around the constructors, written from its documentation:
``then_user_measurement``, ``new_privacy_profile``, ``choose_branching_factor``, ``as_array``,
``ExtrinsicDomain``/``ExtrinsicDistance``/``ExtrinsicDivergence``, ``UnknownTypeException``, the
measure re-exports in ``dp.m``, ``categorical_domain`` and ``OdometerQueryable``."""

from __future__ import annotations

import math

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import (
    FailedFunction,
    FailedMap,
    FeatureNotEnabled,
    InvalidParameter,
    NotImplementedForType,
    NotInDomain,
)

# ----------------------------------------------------------------------------------------------
# then_user_measurement


def test_then_user_measurement_is_the_partial_of_make_user_measurement() -> None:
    dp.enable_features("honest-but-curious")
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    meas = (
        space
        >> dp.t.then_count()
        >> dp.m.then_user_measurement(dp.max_divergence(), lambda x: x + 1, lambda d: 2.0 * d)
    )
    assert meas([1, 2, 3]) == 4 and meas.map(1) == 2.0
    assert meas.output_measure == dp.max_divergence()


def test_then_user_measurement_needs_honest_but_curious() -> None:
    dp.disable_features("honest-but-curious")
    partial = dp.m.then_user_measurement(dp.max_divergence(), lambda x: x, lambda d: 0.0)
    with pytest.raises(FeatureNotEnabled):
        (dp.atom_domain(T=int), dp.absolute_distance(T=int)) >> partial


# ----------------------------------------------------------------------------------------------
# new_privacy_profile


def test_new_privacy_profile_as_documented() -> None:
    dp.enable_features("contrib", "honest-but-curious")
    profile = dp.new_privacy_profile(lambda eps: 1.0 if eps < 0.5 else 1e-8)
    assert isinstance(profile, dp.PrivacyProfile)
    assert profile.delta(epsilon=0.499) == 1.0  # epsilon is not enough: delta saturates at 1
    assert profile.epsilon(delta=1e-8) == 0.5
    assert profile.epsilon(delta=1e-9) == math.inf
    with pytest.raises(FailedMap):
        profile.delta(-1.0)


def test_new_privacy_profile_is_a_smoothed_max_divergence_loss() -> None:
    dp.enable_features("honest-but-curious")
    space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    meas = dp.m.make_user_measurement(
        *space,
        dp.smoothed_max_divergence(),
        lambda x: x,
        lambda d: dp.new_privacy_profile(lambda eps: min(1.0, math.exp(-eps / d))),
    )
    fixed = dp.c.make_fix_delta(meas, delta=math.exp(-2.0))
    eps, delta = fixed.map(1.0)
    assert delta == math.exp(-2.0) and eps >= 2.0 and eps == pytest.approx(2.0, rel=1e-12)


def test_new_privacy_profile_needs_honest_but_curious() -> None:
    dp.disable_features("honest-but-curious")
    with pytest.raises(FeatureNotEnabled):
        dp.new_privacy_profile(lambda eps: 0.0)
    dp.enable_features("honest-but-curious")
    with pytest.raises(InvalidParameter):
        dp.new_privacy_profile(0.5)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------------------
# choose_branching_factor


def v_star_avg(n: int, b: int) -> float:
    """QYL13 formula (3), as OpenDP documents it: the average variance of a b-ary tree."""
    h = math.log(n) / math.log(b)
    return (b - 1) * h**3 - 2 * (b + 1) * h**2 / 3


@pytest.mark.parametrize("n", [2, 3, 4, 49, 57, 100, 200, 1000, 4000, 100_000])
def test_choose_branching_factor_minimises_the_average_variance(n: int) -> None:
    b = dp.t.choose_branching_factor(n)
    best = min(range(2, n + 1), key=lambda c: v_star_avg(n, c))  # the first minimum
    assert b == best


def test_choose_branching_factor_small_and_invalid() -> None:
    assert dp.t.choose_branching_factor(0) == 0 and dp.t.choose_branching_factor(1) == 1
    for bad in (-1, 2**32, 1.5, True):
        with pytest.raises(InvalidParameter):
            dp.t.choose_branching_factor(bad)  # type: ignore[arg-type]


def test_choose_branching_factor_matches_opendp() -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    for n in (*range(0, 400), 1000, 12_345, 10**5):  # OpenDP scans every b up to n
        assert dp.t.choose_branching_factor(n) == odp.t.choose_branching_factor(n), n


# ----------------------------------------------------------------------------------------------
# as_array


def test_as_array_turns_a_vec_into_an_ndarray() -> None:
    to_array = dp.as_array()
    assert isinstance(to_array, dp.Function)
    ints = to_array([1, 2, 3])
    assert isinstance(ints, np.ndarray) and ints.dtype == np.int32 and ints.tolist() == [1, 2, 3]
    assert to_array([1.5, 2.0]).dtype == np.float64
    assert to_array([True, False]).dtype == np.bool_
    assert to_array(["a", "b"]).tolist() == ["a", "b"]


@pytest.mark.parametrize("bad", [(1, 2), 5, "abc", {"a": 1}, [1, "a"], [], [2**40]])
def test_as_array_refuses_what_is_not_a_vec(bad: object) -> None:
    with pytest.raises(FailedFunction):
        dp.as_array()(bad)


# ----------------------------------------------------------------------------------------------
# Extrinsic classes, UnknownTypeException


def test_user_objects_are_extrinsic() -> None:
    from opendp_lite.mod import ExtrinsicDistance, ExtrinsicDivergence, ExtrinsicDomain

    assert isinstance(dp.user_domain("Evens", lambda x: x % 2 == 0), ExtrinsicDomain)
    assert isinstance(dp.user_distance("Mine"), ExtrinsicDistance)
    assert isinstance(dp.user_divergence("Mine"), ExtrinsicDivergence)
    assert dp.ExtrinsicDomain is ExtrinsicDomain
    assert not isinstance(dp.atom_domain(T=int), ExtrinsicDomain)
    assert not isinstance(dp.symmetric_distance(), ExtrinsicDistance)


@pytest.mark.parametrize(
    "build",
    [
        lambda: dp.atom_domain(T="nonsense"),
        lambda: dp.absolute_distance(T=dict),
        lambda: dp.vector_domain(dp.atom_domain(T="Vec<")),
    ],
)
def test_an_unknown_type_raises_unknown_type_exception(build: object) -> None:
    from opendp_lite.mod import UnknownTypeException
    from opendp_lite.typing import UnknownTypeException as FromTyping

    assert FromTyping is UnknownTypeException is dp.UnknownTypeException
    with pytest.raises(UnknownTypeException):
        build()  # type: ignore[operator]
    with pytest.raises(NotImplementedForType):  # still the typed error it was
        build()  # type: ignore[operator]


def test_a_known_type_numpy_cannot_carry_is_not_unknown() -> None:
    with pytest.raises(NotImplementedForType) as info:
        dp.atom_domain(T="i128")
    assert not isinstance(info.value, dp.UnknownTypeException)


# ----------------------------------------------------------------------------------------------
# measure re-exports in dp.m


def test_measures_are_reexported_in_dp_m() -> None:
    for name in (
        "approximate",
        "fixed_smoothed_max_divergence",
        "max_divergence",
        "new_privacy_profile",
        "renyi_divergence",
        "smoothed_max_divergence",
        "user_divergence",
        "zero_concentrated_divergence",
        "MaxDivergence",
        "ZeroConcentratedDivergence",
        "SmoothedMaxDivergence",
        "PrivacyProfile",
        "ApproximateDivergence",
        "ExtrinsicDivergence",
        "Measure",
    ):
        assert getattr(dp.m, name) is getattr(dp, name), name
    assert dp.m.approximate(dp.m.max_divergence()) == dp.approximate(dp.max_divergence())


# ----------------------------------------------------------------------------------------------
# categorical_domain


def test_categorical_domain_members() -> None:
    dom = dp.categorical_domain(["low", "high"])
    assert dom.member("low") and not dom.member("mid") and not dom.member(1)
    assert dp.categorical_domain().member("anything")
    assert dom.carrier_type == "String"
    for bad in (["a", "a"], ["a", 1], "ab"):
        with pytest.raises(InvalidParameter):
            dp.categorical_domain(bad)  # type: ignore[arg-type]


def test_categorical_vectors_feed_the_histograms() -> None:
    space = dp.vector_domain(dp.categorical_domain(["a", "b", "c"])), dp.symmetric_distance()
    by_cat = space >> dp.t.then_count_by_categories(["a", "b"])
    assert by_cat(["a", "c", "a", "b"]) == [2, 1, 1]
    assert by_cat.map(1) == 1
    hist = space >> dp.t.then_count_by() >> dp.m.then_laplace_threshold(scale=1.0, threshold=5)
    assert sorted(hist(["a"] * 50 + ["b"])) == ["a"]
    with pytest.raises(InvalidParameter):  # a category the domain does not have
        dp.t.make_count_by_categories(*space, categories=["z"])


def test_a_value_outside_the_categories_is_refused_before_noise() -> None:
    space = dp.vector_domain(dp.categorical_domain(["a", "b"])), dp.symmetric_distance()
    meas = space >> dp.t.then_count_by_categories(["a", "b"]) >> dp.m.then_laplace(scale=1.0)
    with pytest.raises(NotInDomain, match="categories"):
        meas(["a", "z"])
    with pytest.raises(NotInDomain):
        meas(np.array(["a", "z"]))


# ----------------------------------------------------------------------------------------------
# OdometerQueryable


def test_odometer_queryable_methods_as_documented() -> None:
    dp.enable_features("contrib")
    space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    odometer = dp.c.make_fully_adaptive_composition(*space, dp.max_divergence())
    queryable = odometer(1.0)
    assert isinstance(queryable, dp.OdometerQueryable)
    lap = dp.m.make_laplace(*space, scale=2.0)
    queryable(lap)
    queryable.invoke(lap)
    assert queryable.privacy_loss(1.0) == 1.0  # two queries at ε = 0.5 each
    assert queryable.privacy_loss(2.0) == 2.0
    assert isinstance(odometer, dp.Odometer)
