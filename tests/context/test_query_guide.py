"""Context API scenarios in the shape of OpenDP 0.16's user guide, run with only the import
changed (``import opendp.prelude as dp`` → ``import opendp_lite.prelude as dp``).

The scenarios are written for these tests; where OpenDP's answer is deterministic (a solved
scale, the shares of a budget) the expected value was checked against OpenDP 0.16 itself.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import opendp_lite.prelude as dp

dp.enable_features("contrib")

AGES = [23, 35, 41, 52, 29, 64, 38, 47, 31, 58] * 10


def _just_fits(query: dp.Query, d_mid: float) -> None:
    """The solved scale fits the query's share, and the next smaller float does not."""
    scale = query.param()
    assert query.resolve().map(1) <= d_mid
    smaller = float(np.nextafter(scale, 0.0))
    with_smaller = query._chain(smaller)  # the same chain built with the next smaller scale
    assert not with_smaller.check(1, d_mid)


def test_count_then_accuracy_then_release() -> None:
    context = dp.Context.compositor(
        data=AGES,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=3,
    )
    assert context.d_mids == [1 / 3] * 3  # OpenDP 0.16 gives the same shares
    count_query = context.query().count().laplace()
    scale = count_query.param()
    assert scale == 3.0000000000000004  # OpenDP 0.16: the same solved scale
    _just_fits(count_query, 1 / 3)
    accuracy = dp.discrete_laplacian_scale_to_accuracy(scale=scale, alpha=0.05)
    assert accuracy > 0
    dp_count = count_query.release()
    assert isinstance(dp_count, int)
    assert context.current_privacy_loss() == [1 / 3]
    assert context.remaining_privacy_loss() == [1 / 3, 1 / 3]


def test_clamped_sum_with_solved_scale() -> None:
    context = dp.Context.compositor(
        data=AGES,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=2,
    )
    sum_query = context.query().clamp((18, 70)).sum().laplace()
    scale = sum_query.param()
    # sensitivity 70 under one added/removed record: the scale is about 70 / 0.5
    assert math.isclose(scale, 140.0, rel_tol=1e-9)
    _just_fits(sum_query, 0.5)
    assert isinstance(sum_query.release(), int)


def test_float_mean_with_explicit_domain_size() -> None:
    data = [float(a) for a in AGES]
    context = dp.Context.compositor(
        data=data,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=1,
        domain=dp.vector_domain(dp.atom_domain(T=float, nan=False), size=len(data)),
    )
    mean_query = context.query().clamp((18.0, 70.0)).mean().laplace()
    scale = mean_query.param()
    assert scale > 0
    release = mean_query.release()
    assert isinstance(release, float)


def test_gaussian_count_under_zcdp() -> None:
    context = dp.Context.compositor(
        data=AGES,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(rho=0.5),
        split_evenly_over=2,
    )
    query = context.query().count().gaussian()
    assert query.param() == 1.4142135623730951  # OpenDP 0.16: the same
    assert isinstance(query.release(), int)
    # a pure-DP mechanism in a zCDP context is restated as zCDP (ε²/2)
    laplace = context.query().count().laplace()
    scale = laplace.param()
    assert laplace.resolve().map(1) <= 0.25
    assert math.isclose(scale, math.sqrt(2), rel_tol=1e-12)
    assert isinstance(laplace.release(), int)


def test_approximate_dp_context_accepts_pure_and_zcdp_queries() -> None:
    context = dp.Context.compositor(
        data=AGES,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0, delta=1e-7),
        split_evenly_over=2,
    )
    assert context.d_mids == [(0.5, 5e-08), (0.5, 5e-08)]  # as OpenDP 0.16
    laplace = context.query().count().laplace()
    assert laplace.param() == 2.0
    eps, delta = laplace.resolve().map(1)
    assert eps <= 0.5 and delta == 0.0
    assert isinstance(laplace.release(), int)
    gaussian = context.query().count().gaussian()
    gaussian.param()
    eps, delta = gaussian.resolve().map(1)
    assert eps <= 0.5 and delta <= 5e-08
    assert isinstance(gaussian.release(), int)


def test_budget_without_split_is_charged_as_queries_come() -> None:
    context = dp.Context.compositor(
        data=AGES,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
    )
    query = context.query(epsilon=0.4).count().laplace()
    assert query.param() == 2.5  # OpenDP 0.16: the same
    query.release()
    assert context.current_privacy_loss() == 0.4
    assert context.remaining_privacy_loss() == 0.6


def test_nested_compositor_splits_its_share_again() -> None:
    context = dp.Context.compositor(
        data=AGES,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=2,
    )
    sub_context = context.query().compositor(split_evenly_over=2).release()
    assert isinstance(sub_context, dp.Context)
    assert sub_context.d_mids == [0.25, 0.25]  # OpenDP 0.16: the same
    count = sub_context.query().count().laplace()
    assert count.param() == 4.0
    assert isinstance(count.release(), int)
    assert context.remaining_privacy_loss() == [0.5]


def test_split_by_weights() -> None:
    context = dp.Context.compositor(
        data=AGES,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_by_weights=[3, 1],
    )
    assert context.d_mids == [0.75, 0.25]  # OpenDP 0.16: the same
    assert context.accountant.map(1) <= 1.0


def test_explicit_scale_and_then_exhausted() -> None:
    context = dp.Context.compositor(
        data=AGES,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=1,
    )
    assert isinstance(context.query().count().laplace(scale=10.0).release(), int)
    with pytest.raises(ValueError, match="exhausted"):  # OpenDP raises ValueError here too
        context.query()


def test_shorthands_match_opendp() -> None:
    assert dp.space_of(list[int]) == (
        dp.vector_domain(dp.atom_domain(T=dp.i32)),
        dp.symmetric_distance(),
    )
    assert dp.domain_of("Vec<int>") == dp.vector_domain(dp.atom_domain(T="i32"))
    assert dp.domain_of(dict[str, int]) == dp.map_domain(
        dp.atom_domain(T=str), dp.atom_domain(T=int)
    )
    assert dp.domain_of("Option<int>") == dp.option_domain(dp.atom_domain(T=int))
    assert dp.domain_of(dp.i32) == dp.atom_domain(T=int)
    assert dp.domain_of([1, 2, 3], infer=True) == dp.vector_domain(dp.atom_domain(T=int))
    assert dp.unit_of(contributions=3) == (dp.symmetric_distance(), 3)
    assert dp.unit_of(l1=2.0) == (dp.l1_distance(T=float), 2.0)
    assert dp.loss_of(epsilon=1.0) == (dp.max_divergence(), 1.0)
    assert dp.loss_of(epsilon=1.0, delta=1e-9) == (
        dp.approximate(dp.max_divergence()),
        (1.0, 1e-9),
    )
    assert dp.loss_of(rho=1.0) == (dp.zero_concentrated_divergence(), 1.0)


def test_getting_started_shape_impute_clamp_resize_mean() -> None:
    # float data inferred as OpenDP infers it: a domain that admits NaN, so impute first
    data = [float((i * 37) % 101) for i in range(100)]
    context = dp.Context.compositor(
        data=data,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=3,
    )
    assert context.accountant.input_domain == dp.vector_domain(dp.atom_domain(T=float, nan=True))
    count_query = context.query().count().laplace()
    assert count_query.param() == 3.0000000000000004  # OpenDP 0.16: the same
    dp_count = count_query.release()
    mean_query = (
        context.query()
        .impute_constant(50.0)
        .clamp((0.0, 100.0))
        .resize(size=dp_count, constant=50.0)
        .mean()
        .laplace()
    )
    assert mean_query.resolve().map(1) <= 1 / 3
    assert isinstance(mean_query.release(), float)
    assert context.remaining_privacy_loss() == [1 / 3]


def test_per_query_loss_shape() -> None:
    context = dp.Context.compositor(
        data=[float(i % 100) for i in range(100)],
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
    )
    count_query = context.query(epsilon=1 / 3).count().laplace()
    assert count_query.param() == 3.0000000000000004  # OpenDP 0.16: the same
    count_query.release()
    assert context.current_privacy_loss() == 1 / 3


def test_plugin_shape() -> None:
    dp.enable_features("honest-but-curious")

    def make_anything_constant(input_domain, input_metric, constant):  # type: ignore[no-untyped-def]
        return dp.m.make_user_measurement(
            input_domain=input_domain,
            input_metric=input_metric,
            output_measure=dp.max_divergence(),
            function=lambda _: constant,
            privacy_map=lambda _: 0.0,
        )

    dp.register(make_anything_constant)
    try:
        context = dp.Context.compositor(
            data=[1, 2, 3],
            privacy_unit=dp.unit_of(contributions=36),
            privacy_loss=dp.loss_of(epsilon=1.0),
            split_evenly_over=2,
        )
        assert context.query().anything_constant("denied").release() == "denied"
    finally:
        from opendp_lite import context as ctx

        ctx._REGISTERED.pop("anything_constant", None)
