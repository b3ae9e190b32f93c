"""The Context API: budget enforcement, refusals that leave the session usable, plugins."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

import opendp_lite.prelude as dp
from opendp_lite.combinators.composition import BudgetExceeded
from opendp_lite.errors import (
    InvalidParameter,
    NotInDomain,
    OpenDPLiteWarning,
)
from opendp_lite.samplers import rng

DATA = list(range(50))


def _split(n: int = 2, **loss: float) -> dp.Context:
    return dp.Context.compositor(
        data=DATA,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(**(loss or {"epsilon": 1.0})),
        split_evenly_over=n,
    )


def _filter(epsilon: float = 1.0) -> dp.Context:
    return dp.Context.compositor(
        data=DATA,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=epsilon),
    )


def test_refused_query_on_a_split_budget_leaves_the_session_usable() -> None:
    context = _split(2)
    with pytest.raises(BudgetExceeded, match=r"remaining privacy loss: \[0.5, 0.5\]"):
        context.query().count().laplace(scale=1.0).release()  # ε = 1 > 0.5
    assert context.remaining_privacy_loss() == [0.5, 0.5]
    assert isinstance(context.query().count().laplace(scale=2.0).release(), int)
    assert context.remaining_privacy_loss() == [0.5]


def test_refused_query_on_a_filter_leaves_the_session_usable() -> None:
    context = _filter(1.0)
    context.query(epsilon=0.5).count().laplace().release()
    with pytest.raises(BudgetExceeded, match=r"remaining privacy loss: 0\.5"):
        context.query(epsilon=0.75).count().laplace().release()
    assert context.current_privacy_loss() == 0.5
    # OpenDP's filter would now be exhausted; here the cheaper query is still answered
    context.query(epsilon=0.5).count().laplace().release()
    assert context.remaining_privacy_loss() == 0.0
    with pytest.raises(BudgetExceeded):
        context.query(epsilon=0.001).count().laplace().release()


@contextmanager
def _counting_source() -> Iterator[list[int]]:
    """Route fill_bytes to the current source while recording every request."""
    calls: list[int] = []
    source = rng._current_source()

    def counted(n: int) -> bytes:
        calls.append(n)
        return source(n)  # type: ignore[no-any-return]

    with pytest.warns(OpenDPLiteWarning):
        with rng.scripted_randomness(counted):
            yield calls


def test_refused_query_draws_no_randomness() -> None:
    context = _split(1)
    with _counting_source() as calls:
        with pytest.raises(BudgetExceeded):
            context.query().count().laplace(scale=0.5).release()
    assert calls == []
    with _counting_source() as calls:  # the control: an accepted query does draw
        context.query().count().laplace(scale=2.0).release()
    assert calls


def test_budget_is_enforced_by_the_queryable_not_only_by_the_context() -> None:
    context = _split(1)
    cheap = context.query().count().laplace(scale=10.0).resolve()
    context.queryable(cheap)  # bypassing the Context spends the share all the same
    with pytest.raises(BudgetExceeded):
        context.queryable(cheap)


def test_filter_budget_is_enforced_by_the_queryable() -> None:
    context = _filter(1.0)
    query = context.query(epsilon=0.6).count().laplace().resolve()
    context.queryable(query)
    with pytest.raises(BudgetExceeded):
        context.queryable(query)


def test_data_outside_the_domain_is_refused_before_any_query() -> None:
    with pytest.raises(NotInDomain):
        dp.Context.compositor(
            data=[1, 2, 300],
            privacy_unit=dp.unit_of(contributions=1),
            privacy_loss=dp.loss_of(epsilon=1.0),
            split_evenly_over=1,
            domain=dp.vector_domain(dp.atom_domain(bounds=(0, 10))),
        )


def test_atom_domain_for_vector_data_hints_at_vector_domain() -> None:
    with pytest.raises(TypeError, match="vector_domain"):
        dp.Context.compositor(
            data=[1, 2, 3],
            privacy_unit=dp.unit_of(contributions=1),
            privacy_loss=dp.loss_of(epsilon=1.0),
            split_evenly_over=1,
            domain=dp.atom_domain(T=int),
        )


def test_split_shares_compose_within_the_budget() -> None:
    for loss in ({"epsilon": 1.0}, {"rho": 0.3}, {"epsilon": 2.0, "delta": 1e-6}):
        for n in (1, 3, 7):
            context = _split(n, **loss)
            total = context.accountant.map(1)
            budget = dp.loss_of(**loss)[1]
            assert context.accountant.output_measure._le(total, budget)
            assert len(context.d_mids or []) == n


def test_query_loss_arguments_are_checked() -> None:
    with pytest.raises(InvalidParameter, match="splits its budget"):
        _split(2).query(epsilon=0.1)
    with pytest.raises(InvalidParameter, match="MaxDivergence"):
        _filter().query(rho=0.1)
    approx = dp.Context.compositor(
        data=DATA,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0, delta=1e-6),
    )
    with pytest.raises(InvalidParameter, match=r"delta=0\.0"):
        approx.query(epsilon=0.5)


def test_two_missing_parameters_are_refused() -> None:
    query = _split(1).query().count().laplace()
    with pytest.raises(InvalidParameter, match="at most one parameter"):
        query.clamp()  # a second missing parameter after the unsolved scale
    with pytest.raises(InvalidParameter, match="missing 2 parameters"):
        _split(1).query().lipschitz_float_mul()


def test_unknown_constructor_names_the_alternatives() -> None:
    with pytest.raises(AttributeError, match="no then_florble or make_florble"):
        _split(1).query().florble()
    assert "laplace" in dir(_split(1).query())


def test_query_without_noise_does_not_release() -> None:
    with pytest.raises(InvalidParameter, match="not yet a measurement"):
        _split(1).query().count().release()


def test_register_a_plugin_constructor() -> None:
    dp.enable_features("honest-but-curious")

    def make_constant_answer(input_domain: dp.Domain, input_metric: dp.Metric, value: int):  # type: ignore[no-untyped-def]
        return dp.m.make_user_measurement(
            input_domain, input_metric, dp.max_divergence(), lambda _: value, lambda d: 0.0
        )

    dp.register(make_constant_answer)
    try:
        assert _split(1).query().constant_answer(7).release() == 7
        with pytest.raises(InvalidParameter, match="already"):
            dp.register(make_constant_answer)
        with pytest.raises(InvalidParameter, match="make_"):
            dp.register(lambda: None)
    finally:
        from opendp_lite import context as ctx

        ctx._REGISTERED.pop("constant_answer", None)


def test_unit_and_loss_validation() -> None:
    with pytest.raises(InvalidParameter):
        dp.unit_of(contributions=1, changes=1)
    with pytest.raises(InvalidParameter):
        dp.unit_of()
    assert dp.unit_of(contributions=1, identifier="id") == (dp.symmetric_id_distance("id"), 1)
    assert dp.unit_of(local=True) == (dp.discrete_distance(), 1)
    assert dp.unit_of(contributions=2, ordered=True) == (dp.insert_delete_distance(), 2)
    with pytest.raises(InvalidParameter):
        dp.loss_of(epsilon=1.0, rho=1.0)
    with pytest.raises(InvalidParameter):
        dp.loss_of(epsilon=-1.0)
    with pytest.raises(InvalidParameter):
        dp.loss_of(epsilon=float("nan"))
    with pytest.raises(InvalidParameter):
        dp.loss_of(epsilon=1.0, delta=2.0)


def test_query_without_context_releases_on_data() -> None:
    space = dp.space_of(list[int])
    query: dp.Query[int] = dp.Query(space, dp.max_divergence())
    assert isinstance(query.count().laplace(scale=1.0).release(data=[1, 2, 3]), int)
    with pytest.raises(InvalidParameter, match="context or data"):
        query.count().laplace(scale=1.0).release()


def test_unbounded_context_tracks_spending() -> None:
    context = dp.Context.compositor(
        data=DATA,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=float("inf")),
    )
    for _ in range(3):
        context.query(epsilon=2.0).count().laplace().release()
    assert context.current_privacy_loss() == 6.0
    with pytest.raises(InvalidParameter, match="unbounded"):
        context.remaining_privacy_loss()
    with pytest.raises(InvalidParameter, match="finite"):
        _split(2, epsilon=float("inf"))


def test_nested_compositor_after_a_transformation_sees_the_transformed_data() -> None:
    context = _split(2)
    inner = context.query().clamp((0, 9)).compositor(split_evenly_over=2).release()
    assert inner.d_mids == [0.25, 0.25]
    assert inner.query_space == (
        dp.vector_domain(dp.atom_domain(bounds=(0, 9))),
        dp.symmetric_distance(),
    )
    # the nested queries are built on the clamped space: a sum needs no clamp of its own
    total = inner.query().sum().laplace()
    assert total.param() >= 9 / 0.25
    assert isinstance(total.release(), int)
    assert context.remaining_privacy_loss() == [0.5]


def test_partial_chain_fix_returns_the_fitted_chain() -> None:
    space = dp.space_of(list[int])
    partial = dp.PartialChain(lambda scale: space >> dp.t.then_count() >> dp.m.then_laplace(scale))
    fitted = partial.fix(d_in=1, d_out=0.5)
    assert fitted.map(1) <= 0.5
    assert partial(2.0).map(1) == 0.5 and not partial(1.9).check(1, 0.5)


def test_every_then_constructor_is_reachable_from_a_query() -> None:
    from opendp_lite import context as ctx

    query = _split(1).query()
    for module in (dp.t, dp.m, dp.c):
        for attr in dir(module):
            if attr.startswith("then_"):
                name = attr[len("then_") :]
                assert callable(getattr(query, name)), name
                assert ctx._lookup(name) == (getattr(module, attr), "then")
    for typed in ("count", "count_distinct", "mean", "variance", "clamp", "laplace"):
        assert ctx._lookup(typed)[1] == "then", typed
    for typed in ("gaussian", "geometric"):
        assert ctx._lookup(typed)[1] == "then", typed


def test_make_constructors_without_a_partial_take_the_chain_space() -> None:
    # make_split_dataframe(separator, col_names) takes no space: it starts a chain from a string
    csv = "\n".join(f"{i},{20 + i % 50}" for i in range(200))
    context = dp.Context.compositor(
        data=csv,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=1,
        domain=dp.atom_domain(T=str),
    )
    query = (
        context.query()
        .split_dataframe(",", col_names=["id", "age"])
        .select_column(key="age", TOA=str)
        .cast_default(TOA=int)
        .clamp((0, 100))
        .sum()
        .laplace()
    )
    assert query.param() == 100.0  # OpenDP 0.16: 200.0 at half this budget
    assert isinstance(query.release(), int)


def test_split_of_a_zero_budget_is_refused() -> None:
    with pytest.raises(InvalidParameter, match="positive"):
        _split(2, epsilon=0.0)
    with pytest.raises(InvalidParameter, match="split_by_weights"):
        dp.Context.compositor(
            data=DATA,
            privacy_unit=dp.unit_of(contributions=1),
            privacy_loss=dp.loss_of(epsilon=1.0),
            split_by_weights=[0.0, 0.0],
        )
    with pytest.raises(InvalidParameter, match="at most one"):
        dp.Context.compositor(
            data=DATA,
            privacy_unit=dp.unit_of(contributions=1),
            privacy_loss=dp.loss_of(epsilon=1.0),
            split_evenly_over=2,
            split_by_weights=[1.0],
        )


def test_a_lazyframe_domain_given_with_a_lazyframe_is_the_table_querys_domain() -> None:
    # the margins the data owner declares in the domain are what the query reads: a sum needs
    # max_length, which only the domain states here
    pl = pytest.importorskip("polars")
    from opendp_lite.errors import InvalidParameter

    lf = pl.LazyFrame({"B": [1, 2] * 10, "D": [3] * 20}, schema={"B": pl.Int32, "D": pl.Int32})
    domain = dp.lazyframe_domain(
        [
            dp.series_domain("B", dp.atom_domain(T=dp.i32)),
            dp.series_domain("D", dp.atom_domain(T=dp.i32)),
        ]
    )

    def context(domain: object = None) -> dp.Context:
        return dp.Context.compositor(
            data=lf,
            privacy_unit=dp.unit_of(contributions=1),
            privacy_loss=dp.loss_of(epsilon=1.0),
            split_evenly_over=1,
            domain=domain,
        )

    with pytest.raises(InvalidParameter, match="max_length"):
        context().query().select(pl.col("D").dp.sum((0, 10)))
    bounded = dp.with_margin(domain, dp.polars.Margin(by=["B"], max_length=50, invariant="keys"))
    ctx = context(bounded)
    assert ctx.accountant.input_domain == bounded
    out = ctx.query().group_by("B").agg(pl.col("D").dp.sum((0, 10))).release().collect()
    assert sorted(out["B"].to_list()) == [1, 2]  # public keys: released without a threshold
