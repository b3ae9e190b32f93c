"""Names and behaviours OpenDP 0.16 documents that its own test suite relies on:
``Approximate.inner_measure``, the odometer's type getters and queryable repr, ``space_of`` with
metric classes, ``RuntimeType.parse``/``infer`` cases.  Where OpenDP is installed, the same
calls are compared with it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import InvalidParameter, UnknownTypeException
from opendp_lite.typing import RuntimeType, SensitivityMetric


def _opendp() -> object | None:
    try:
        import opendp.prelude as odp
    except ImportError:  # pragma: no cover - OpenDP is a dev dependency
        return None
    return odp


def test_approximate_inner_measure() -> None:
    assert dp.approximate(dp.max_divergence()).inner_measure == dp.max_divergence()
    zcdp = dp.zero_concentrated_divergence()
    assert dp.approximate(zcdp).inner_measure == zcdp
    assert dp.approximate(zcdp).inner_measure != dp.max_divergence()


@pytest.mark.parametrize(
    ("space", "qb"),
    [
        ((dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()), "u32"),
        ((dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)), "f64"),
    ],
)
def test_odometer_types_and_queryable_repr(space: tuple[Any, Any], qb: str) -> None:
    dp.enable_features("contrib")
    odometer: Any = dp.c.make_fully_adaptive_composition(*space, dp.max_divergence())
    assert odometer.input_distance_type == qb
    assert odometer.output_distance_type == "f64"
    assert odometer.input_carrier_type == space[0].carrier_type
    data = [1, 2] if qb == "u32" else 1.0
    queryable = odometer(data)
    assert repr(queryable) == f"OdometerQueryable(Q=AnyMeasurement, QB={qb})"
    filtered = dp.c.make_privacy_filter(odometer, d_in=1 if qb == "u32" else 1.0, d_out=1.0)
    assert repr(filtered(data)) == repr(queryable)
    odp = _opendp()
    if odp is not None and qb == "u32":
        odp.enable_features("contrib")  # type: ignore[attr-defined]
        theirs = odp.c.make_fully_adaptive_composition(  # type: ignore[attr-defined]
            odp.vector_domain(odp.atom_domain(T=int)),  # type: ignore[attr-defined]
            odp.symmetric_distance(),  # type: ignore[attr-defined]
            odp.max_divergence(),  # type: ignore[attr-defined]
        )
        assert str(theirs.input_distance_type) == odometer.input_distance_type
        assert str(theirs.output_distance_type) == odometer.output_distance_type
        assert str(theirs.input_carrier_type) == str(odometer.input_carrier_type)
        assert repr(theirs([1, 2])) == repr(queryable)


def test_space_of_with_metric_classes() -> None:
    vec = dp.vector_domain(dp.atom_domain(T=dp.i32))
    assert dp.space_of(list[int], dp.L2Distance) == (vec, dp.l2_distance(T=dp.i32))
    assert dp.space_of(list[int], dp.L1Distance) == (vec, dp.l1_distance(T=dp.i32))
    assert dp.space_of([1, 3], infer=True, M=dp.L1Distance) == (vec, dp.l1_distance(T=dp.i32))
    assert dp.space_of(list[int], dp.HammingDistance) == (vec, dp.hamming_distance())
    assert dp.space_of(int, dp.DiscreteDistance) == (
        dp.atom_domain(T=dp.i32),
        dp.discrete_distance(),
    )
    assert dp.space_of(dict[str, int], dp.L1Distance[int]) == (
        dp.map_domain(dp.atom_domain(T=dp.String), dp.atom_domain(T=dp.i32)),
        dp.l1_distance(T=dp.i32),
    )
    # the distance type comes from the atoms, not from the vector carrier
    assert dp.space_of(list[float], "L1Distance")[1] == dp.l1_distance(T=float)


def test_parse_sensitivity_metrics() -> None:
    parsed = RuntimeType.parse("L1Distance<f64>")
    assert isinstance(parsed, SensitivityMetric)
    assert parsed == dp.L1Distance[float]
    assert not isinstance(RuntimeType.parse("(f32)"), SensitivityMetric)
    assert not isinstance(RuntimeType.parse("Vec<f32>"), SensitivityMetric)


def test_infer_cases() -> None:
    assert RuntimeType.infer(np.array(1)) == "i32"  # a 0-d array is its item
    assert RuntimeType.infer(np.array(1.5)) == "f64"
    assert RuntimeType.infer(np.array(["A", "B"])) == "Vec<String>"
    assert RuntimeType.infer(lambda: True) == "CallbackFn"
    assert RuntimeType.infer([1, True], py_object=True) == "Vec<ExtrinsicObject>"
    assert RuntimeType.infer([[1], ["a"]], py_object=True) == "Vec<ExtrinsicObject>"
    assert RuntimeType.infer([1, 2, 3]) == "Vec<i32>"
    # mixed element types are refused (a TypeError, as in OpenDP), not read off the first
    with pytest.raises(TypeError, match="homogeneously typed"):
        RuntimeType.infer([1, True])
    with pytest.raises(TypeError, match="homogeneously typed"):
        RuntimeType.infer([1, 2.5])
    with pytest.raises(TypeError, match="homogeneously typed"):
        RuntimeType.infer({"a": 1, "b": "x"})
    with pytest.raises(UnknownTypeException, match="cannot be inferred from None"):
        RuntimeType.infer(None)
    with pytest.raises(UnknownTypeException, match="Cannot infer atomic type when empty"):
        RuntimeType.infer([])
    with pytest.raises(UnknownTypeException, match="<class 'object'>"):
        RuntimeType.infer(object())


def test_infer_matches_opendp() -> None:
    odp = _opendp()
    if odp is None:  # pragma: no cover
        pytest.skip("opendp is not installed")
    from opendp.typing import RuntimeType as Theirs

    for example in ([1, 2], np.array(1), np.array(2.5), ["A"], (1.0, True, "a"), {"a": 1}):
        assert str(RuntimeType.infer(example)) == str(Theirs.infer(example))
    assert str(RuntimeType.infer([1, True], py_object=True)) == str(
        Theirs.infer([1, True], py_object=True)
    )


def test_primitive_types_are_opendp_s() -> None:
    import opendp_lite

    odp = _opendp()
    if odp is None:  # pragma: no cover
        pytest.skip("opendp is not installed")
    import opendp.typing

    assert set(opendp_lite.typing._PRIMITIVE_TYPES) == set(opendp.typing._PRIMITIVE_TYPES)


def test_exponential_bounds_search_probes_one_half() -> None:
    # OpenDP's first band is [0, 0.5]: a boundary below 1/2 is bracketed there
    assert dp.exponential_bounds_search(lambda x: x >= 0.3, T=float) == (0.0, 0.5)
    assert dp.exponential_bounds_search(lambda x: x <= -0.3, T=float) == (-0.5, 0.0)
    bounds = dp.exponential_bounds_search(lambda x: x >= 100.0, T=float)
    assert bounds is not None and bounds[0] < 100.0 <= bounds[1]


def test_context_searches_a_probability_from_its_valid_region() -> None:
    """The randomized response's probability is valid only in [1/2, 1]: the search restarts
    inside that region (as OpenDP's does) and finds the largest probability within ε."""
    dp.enable_features("contrib")
    context = dp.Context.compositor(
        data=True,
        privacy_unit=dp.unit_of(local=True),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=2,
    )
    query = context.query().randomized_response_bool()
    prob = query.param()
    assert dp.m.make_randomized_response_bool(prob).map(1) <= 0.5
    above = float(np.nextafter(prob, 1.0))
    assert dp.m.make_randomized_response_bool(above).map(1) > 0.5
    assert abs(prob - 0.6224593312018545) < 1e-12  # e^ε / (1 + e^ε) at ε = 0.5
    assert isinstance(query.release(), bool)


def test_context_search_infers_an_int_parameter() -> None:
    """A size the constructor refuses as a float is searched as an int (OpenDP infers T from
    the constructor's refusal)."""
    dp.enable_features("contrib")
    context = dp.Context.compositor(
        data=[1.0, 2.0, 3.0],
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=3.0),
        split_evenly_over=1,
    )
    query = (
        context.query().resize(constant=2.0).impute_constant(0.0).clamp((1.0, 10.0)).mean()
    ).laplace(1.0)
    size = query.param()
    assert isinstance(size, int) and not isinstance(size, bool)
    assert size == 4  # (10 - 1) / 3 / ε = 1 at n = 3, but the float mean's map is above it
    assert isinstance(query.release(), float)


def _context(epsilon: float, delta: float, **split: Any) -> Any:
    dp.enable_features("contrib")
    return dp.Context.compositor(
        data=[1, 2, 3],
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=epsilon, delta=delta),
        domain=dp.vector_domain(dp.atom_domain(T=int)),
        **split,
    )


def _restated_epsilon(rho: float, delta: float) -> float:
    space = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    scale = float(np.sqrt(1 / (2 * rho)))
    m = dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(dp.m.make_gaussian(*space, scale)), delta)
    return float(m.map(1)[0])


def test_zcdp_compositor_under_an_approximate_dp_context() -> None:
    """As in OpenDP, a nested compositor may account in zCDP under an (ε, δ) context: its ρ
    restates (make_zCDP_to_approxDP, then make_fix_delta at δ) within the query's ε."""
    context = _context(3.0, 1e-6, split_by_weights=[1, 2])
    share_eps, share_delta = context.d_mids[0]
    assert share_eps == pytest.approx(1.0)
    sub = (
        context.query()
        .compositor(split_evenly_over=2, output_measure=dp.zero_concentrated_divergence())
        .release()
    )
    assert sub.accountant.output_measure == dp.zero_concentrated_divergence()
    rho = sum(sub.d_mids)
    assert _restated_epsilon(rho, share_delta) <= share_eps
    assert _restated_epsilon(rho * 1.01, share_delta) > share_eps  # and it is nearly all of it
    assert len(context.d_mids) == 1  # the parent charged the first share
    for _ in range(2):
        release = sub.query().clamp((1, 10)).sum().gaussian().release()
        assert isinstance(release, int)
    with pytest.raises(dp.OpenDPException):
        sub.query().clamp((1, 10)).sum().gaussian().release()  # both shares are spent


def test_approximate_zcdp_compositor_splits_delta_by_alpha() -> None:
    context = _context(1.0, 1e-6, split_evenly_over=1)
    measure = dp.approximate(dp.zero_concentrated_divergence())
    with pytest.raises(dp.OpenDPException, match="alpha"):
        context.query().compositor(3, output_measure=measure)
    sub = context.query().compositor(3, output_measure=measure, alpha=0.3).release()
    assert sub.accountant.output_measure == measure
    share_rho, share_delta = sub.d_mids[0]
    assert share_delta <= 1e-6 * 0.3 / 3
    assert _restated_epsilon(3 * share_rho, 1e-6 * 0.7) <= 1.0
    assert _restated_epsilon(3 * share_rho * 1.01, 1e-6 * 0.7) > 1.0
    assert isinstance(sub.query().clamp((1, 10)).sum().gaussian().release(), int)


def test_refusals_carry_opendp_s_phrase_and_the_fix() -> None:
    """Code written against OpenDP matches these phrases; each message still names the fix."""
    with pytest.raises(ValueError, match=r"decision boundary is below the lower bound.*Fix"):
        dp.binary_search(lambda x: x <= 5, bounds=(10, None))
    with pytest.raises(ValueError, match=r"decision boundary is above the upper bound.*Fix"):
        dp.binary_search(lambda x: x <= 5, bounds=(None, 0))
    space = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    query: Any = dp.Query(space, dp.max_divergence(), d_in=1, d_out=1.0).laplace()
    with pytest.raises(ValueError, match=r"Cannot release query without data or context.*Fix"):
        query.release()
    context = _context(1.0, 1e-6)
    with pytest.raises(ValueError, match=r"Consider setting `delta=0.0` in your query"):
        context.query(epsilon=0.5)
    counted = context.query(epsilon=0.5, delta=0.0).count().laplace()
    with pytest.raises(ValueError, match=r"Cannot specify data when the query is part of a con"):
        counted.release(data=[1, 2, 3])
    l1 = dp.Context.compositor(
        data=[1, 2, 3],
        privacy_unit=dp.unit_of(l1=1),
        privacy_loss=dp.loss_of(epsilon=0.5),
        split_evenly_over=1,
    )
    with pytest.raises(ValueError, match=r"laplace is missing 1 parameter.*Fix: pass scale="):
        l1.query().b_ary_tree(leaf_count=3).laplace()
    odometer = dp.Context.compositor(
        data=[1, 2, 3],
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=float("inf")),
    )
    with pytest.raises(ValueError, match=r"The privacy loss is unbounded.*Fix"):
        odometer.remaining_privacy_loss()


def test_context_and_query_reprs_nest_as_opendp_s() -> None:
    odp = _opendp()
    if odp is None:  # pragma: no cover
        pytest.skip("opendp is not installed")

    def build(lib: Any) -> Any:
        return lib.Context.compositor(
            data=[1, 2, 3],
            privacy_unit=lib.unit_of(contributions=3),
            privacy_loss=lib.loss_of(epsilon=3.0),
            split_evenly_over=1,
        )

    ours, theirs = build(dp), build(odp)
    assert repr(ours) == repr(theirs)
    assert "\n        input_domain   = " in repr(ours)  # the accountant is indented
    assert repr(ours.query()) == repr(theirs.query())
    assert repr(ours.query()).endswith("        d_out      = None))")


def test_unit_of_and_composition_refusals_as_opendp() -> None:
    with pytest.raises(ValueError, match='"local" must be the only parameter'):
        dp.unit_of(local=True, ordered=True)
    with pytest.raises(ValueError, match=r"Must specify exactly one distance\..*Fix"):
        dp.unit_of()
    dp.enable_features("contrib", "honest-but-curious")
    composed = dp.c.make_adaptive_composition(
        input_domain=dp.atom_domain(T=bool),
        input_metric=dp.user_distance("user distance"),
        output_measure=dp.max_divergence(),
        d_in=1,
        d_mids=[1.0],
    )
    assert composed.map(1) == 1.0
    with pytest.raises(dp.OpenDPException, match="d_in from the privacy map must be no greater"):
        composed.map(2)
    with pytest.raises(dp.OpenDPException, match="not comparable"):
        composed.map(float("nan"))

    class Incomparable:
        def __lt__(self, other: object) -> bool:
            raise ValueError("comparison failed!")

    odd = dp.c.make_adaptive_composition(
        input_domain=dp.atom_domain(T=bool),
        input_metric=dp.user_distance("user distance", ["other", "data"]),
        output_measure=dp.max_divergence(),
        d_in=Incomparable(),
        d_mids=[1.0],
    )
    with pytest.raises(dp.OpenDPException, match="comparison failed!"):
        odd.map(Incomparable())


def test_user_elements_print_and_measure_as_opendp_s() -> None:
    dp.enable_features("contrib", "honest-but-curious")
    domain = dp.user_domain("DatetimeDomain(months={1})", lambda x: True)
    assert str(domain) == repr(domain) == "DatetimeDomain(months={1})"
    assert repr(dp.user_distance("sum of millisecond distances")) == (
        "sum of millisecond distances"
    )
    assert repr(dp.user_divergence("tCDP")) == "tCDP"
    odp = _opendp()
    if odp is not None:
        odp.enable_features("contrib", "honest-but-curious")  # type: ignore[attr-defined]
        assert repr(odp.user_distance("d")) == repr(dp.user_distance("d"))  # type: ignore[attr-defined]
        assert repr(odp.user_divergence("m")) == repr(dp.user_divergence("m"))  # type: ignore[attr-defined]
    # a user divergence's loss may be a curve (the user's maps define it), as in OpenDP;
    # a numeric loss is still checked
    space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    curve = dp.m.make_user_measurement(
        *space, dp.user_divergence("tCDP"), lambda x: x, lambda d_in: lambda w: d_in * w * 2
    )
    assert curve.map(2.0)(3.0) == 12.0
    negative = dp.m.make_user_measurement(
        *space, dp.user_divergence("tCDP"), lambda x: x, lambda d_in: -1.0
    )
    with pytest.raises(dp.OpenDPException, match=">= 0"):
        negative.map(1.0)


def test_as_array_takes_arrays_and_numpy_scalars() -> None:
    to_array = dp.as_array()
    out = to_array(np.array([1, 2, 3], dtype=np.int32))
    assert isinstance(out, np.ndarray) and out.dtype == np.int32 and out.tolist() == [1, 2, 3]
    out = to_array([np.int32(2), np.int32(3)])
    assert out.dtype == np.int32 and out.tolist() == [2, 3]
    assert to_array([np.float64(1.5), 2.0]).tolist() == [1.5, 2.0]
    with pytest.raises(dp.OpenDPException):
        to_array([1, True])  # mixed types are still refused
    with pytest.raises(dp.OpenDPException):
        to_array(np.array([[1, 2]]))
    dp.enable_features("honest-but-curious")
    plus_one = dp.t.make_user_transformation(
        dp.vector_domain(dp.atom_domain(T=int)),
        dp.symmetric_distance(),
        dp.vector_domain(dp.atom_domain(T=int)),
        dp.symmetric_distance(),
        lambda xs: [v + 1 for v in xs],
        lambda d_in: d_in,
    )
    assert to_array(plus_one(np.array([1, 2, 3], dtype=np.int32))).tolist() == [2, 3, 4]


def test_array_domains_refuse_as_opendp() -> None:
    with pytest.raises(ValueError, match="must be a tuple of positive integers"):
        dp.numpy.arrayd_domain(shape=(-1, 2), T=bool)
    with pytest.raises(ValueError, match="must be a primitive type"):
        dp.numpy.arrayd_domain(shape=(2, 1), T=dp.Measurement)
    with pytest.raises(ValueError, match="must be a primitive type"):
        dp.numpy.array2_domain(norm=1, p=2, T="AnyTransformation")
    assert dp.numpy.arrayd_domain(shape=(2, 1), T=float).member(np.zeros((2, 1)))


def test_linear_regression_x_bounds_refusal_as_opendp() -> None:
    pytest.importorskip("sklearn")
    sklearn: Any = dp.sklearn
    model = sklearn.linear_model.LinearRegression(
        output_measure=dp.max_divergence(),
        x_bounds=(0, 10),
        y_bounds=(0, 10),
        scale=1,
    )
    with pytest.raises(ValueError, match=r"must consist of a single tuple, not \[0, 10\].*Fix"):
        model.fit(X=[[1], [2], [3]], y=[1, 2, 3])


def test_cast_returns_a_user_descriptor() -> None:
    domain = dp.user_domain("Months", lambda x: True, descriptor={"months": [1, 2]})
    assert domain.cast(dict) == {"months": [1, 2]}
    with pytest.raises(ValueError, match="domain descriptor must be a list"):
        domain.cast(list)
    assert dp.user_distance("ms", descriptor=("a", 1)).cast(tuple) == ("a", 1)
    assert dp.user_divergence("tCDP", descriptor={"kind": "tCDP"}).cast(dict) == {"kind": "tCDP"}
    with pytest.raises(ValueError, match="measure descriptor must be a dict"):
        dp.max_divergence().cast(dict)
    with pytest.raises(ValueError, match="metric descriptor must be a dict"):
        dp.symmetric_distance().cast(dict)


def test_missing_feature_names_the_fix_as_opendp_spells_it() -> None:
    from opendp_lite.mod import assert_features

    with pytest.raises(dp.OpenDPException, match=r'enable_features\("A", "Z"\)'):
        assert_features("A", "Z")


def test_array2_domain_with_a_norm_defaults_to_f64() -> None:
    # OpenDP: without T, a norm's origin (0.0 by default) gives the element type
    dom = dp.numpy.array2_domain(norm=1.0, p=2)
    assert dom.T == "f64" and dom.norm == 1.0 and dom.p == 2
    assert dom.member(np.array([[0.5, -0.5]])) and not dom.member(np.array([[1.0, 1.0]]))
    with pytest.raises(InvalidParameter, match="T, the type"):
        dp.numpy.array2_domain()  # no norm, no origin: nothing to infer T from


def test_array2_domain_refuses_a_non_numeric_origin_as_a_value_error() -> None:
    for origin in (np.array([True, False]), "a"):
        with pytest.raises(InvalidParameter, match="origin must be numeric"):
            dp.numpy.array2_domain(norm=1.0, p=2, origin=origin)
    assert issubclass(InvalidParameter, ValueError)  # OpenDP raises a ValueError here
