"""The analyst/owner boundary: what an analyst sees when a query is refused.

In interactive use (a Context, a compositor, a privacy filter, a grouped release) the analyst
chooses the queries and sees what each raises.  No such message may carry a cell's value or
its position: a query whose column types differ from the declared schema is refused when it
is built (naming the column and the two types), and a failure on the private data reaches
the analyst without its message.  Only the data owner, at the data boundary (building the
context, calling a measurement on their own data), sees values.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import DomainMismatch, FailedFunction, NotInDomain

SSN = ["123-45-6789", "987-65-4321", "555-12-3456"]
NAME = ["bob", "alice", "carol"]
SALARY = [70001, 50003, 90007]
#: what no refusal may show the analyst: every cell (the analyst passes "bob" as a key)
SECRETS = [*SSN, "alice", "carol", *(str(s) for s in SALARY)]
POSITION = re.compile(r"\bposition\b|\bpositions?\s*\d|\brow\s*\d|\bindex\s*\d", re.IGNORECASE)


def _columns() -> dict[str, list[Any]]:
    return {"ssn": list(SSN), "name": list(NAME), "salary": list(SALARY)}


def _data(kind: str) -> Any:
    if kind == "pandas":
        return pytest.importorskip("pandas").DataFrame(_columns())
    if kind == "polars":
        return pytest.importorskip("polars").DataFrame(_columns())
    return _columns()  # a dict of columns: no schema to check a query against


def _context(kind: str) -> Any:
    return dp.Context.compositor(
        data=_data(kind),
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=10.0),
        domain=dp.dataframe_domain() if kind == "dict" else None,
    )


def _inner_i16_salary() -> Any:
    select = dp.t.make_select_column("salary", TOA="i16")
    return select >> dp.t.then_count() >> dp.m.then_laplace(1.0)


#: per Context verb, a query built to be refused on the data (a column read as another type)
VERBS: dict[str, Callable[[Any], Any]] = {
    "select": lambda q: q.select("ssn", TOA=int).count().laplace(scale=1.0),
    "filter": lambda q: (
        q.filter("ssn", "==", 5, TIA=int).select("name", TOA=str).count().laplace(scale=1.0)
    ),
    "group_by": lambda q: q.group_by("name", keys=["bob"]).grouped(_inner_i16_salary()),
    "count": lambda q: q.select("salary", TOA="i16").count().laplace(scale=1.0),
    "sum": lambda q: q.select("salary", TOA="i16").clamp((0, 100)).sum().laplace(scale=100.0),
    "mean": lambda q: (
        q.select("ssn", TOA=float, fill=0.0)
        .clamp((0.0, 1.0))
        .resize(size=3, constant=0.0)
        .mean()
        .laplace(scale=1.0)
    ),
    "quantile": lambda q: q.select("salary", TOA="i16").private_quantile(
        dp.max_divergence(), candidates=[0, 10, 100], alpha=0.5, scale=1.0
    ),
    "histogram": lambda q: q.histogram("ssn", categories=[1, 2], TOA=int).laplace(scale=1.0),
}


def _messages(e: BaseException) -> str:
    """The message of ``e`` and of every exception chained to it."""
    seen: list[str] = []
    cur: BaseException | None = e
    while cur is not None and len(seen) < 10:
        seen.append(f"{type(cur).__name__}: {cur}")
        cur = cur.__cause__ or cur.__context__
    return "\n".join(seen)


def _assert_redacted(e: BaseException) -> None:
    text = _messages(e)
    for secret in SECRETS:
        assert secret not in text, f"a cell value reached the analyst: {text}"
    assert not POSITION.search(text), f"a position reached the analyst: {text}"


@pytest.mark.parametrize("kind", ["pandas", "polars", "dict"])
@pytest.mark.parametrize("verb", sorted(VERBS))
def test_each_context_verb_refuses_without_a_value_or_a_position(kind: str, verb: str) -> None:
    context = _context(kind)
    build = VERBS[verb]
    with pytest.raises(Exception) as info:  # any refusal: its text is checked
        build(context.query(epsilon=1.0)).release()
    _assert_redacted(info.value)
    if kind != "dict":
        # a frame has a schema: the query is refused when it is built, before any release
        with pytest.raises(Exception) as built:
            build(context.query(epsilon=1.0))
        _assert_redacted(built.value)
    else:
        # no schema: the refusal happens on the private data, and its reason is withheld
        assert isinstance(info.value, FailedFunction) and "withheld" in str(info.value)


@pytest.mark.parametrize("kind", ["pandas", "polars"])
def test_a_query_of_the_schema_s_types_still_releases(kind: str) -> None:
    """The control: the same verbs on the schema's types are not refused."""
    context = _context(kind)
    q = context.query(epsilon=1.0)
    summed = q.select("salary").clamp((0, 10**6)).sum().laplace(scale=10.0**6)
    assert isinstance(summed.release(), int)
    counted = context.query(epsilon=1.0).filter("ssn", "==", "x").count().laplace(scale=1.0)
    assert isinstance(counted.release(), int)


@pytest.mark.parametrize("kind", ["pandas", "polars"])
def test_select_as_another_type_is_refused_when_built_naming_column_and_types(kind: str) -> None:
    """The refusal names the column and both types, never a cell (such as the first SSN)."""
    query = _context(kind).query(epsilon=0.1)
    with pytest.raises(DomainMismatch) as info:
        query.select("ssn", TOA=int)
    text = str(info.value)
    assert "'ssn'" in text and "String" in text and "i32" in text
    _assert_redacted(info.value)


@pytest.mark.parametrize("kind", ["pandas", "polars"])
def test_group_by_with_a_narrower_inner_column_is_refused_when_built(kind: str) -> None:
    """keys=["bob"] puts Bob at position 0 of his group: the refusal, made when the query is
    built, names the column and the types, never his salary."""
    grouped = _context(kind).query(epsilon=0.1).group_by("name", keys=["bob"])
    with pytest.raises(DomainMismatch, match=r"column 'salary'.*\n.*i64.*\n.*i16") as info:
        grouped.grouped(_inner_i16_salary())
    _assert_redacted(info.value)


@pytest.mark.parametrize("kind", ["pandas", "polars"])
@pytest.mark.parametrize(
    "make",
    [dp.c.make_adaptive_composition, dp.c.make_sequential_composition],
    ids=["adaptive", "sequential"],
)
def test_a_compositor_on_an_untyped_domain_withholds_the_refusal(kind: str, make: Any) -> None:
    """A query sent straight to a compositor on ``dataframe_domain()``."""
    space = dp.dataframe_domain(), dp.symmetric_distance()
    queryable = make(*space, dp.max_divergence(), 1, [1.0, 1.0])(_data(kind))
    query = dp.t.make_select_column("ssn", TOA=int) >> dp.t.then_count() >> dp.m.then_laplace(1.0)
    with pytest.raises(NotInDomain, match="withheld") as info:
        queryable(query)
    _assert_redacted(info.value)
    assert info.value.__cause__ is None and info.value.__context__ is None
    # the owner, calling the measurement on their own data, still sees why
    with pytest.raises(NotInDomain, match="position 0"):
        query(_data(kind))


@pytest.mark.parametrize("kind", ["pandas", "polars"])
def test_a_privacy_filter_withholds_the_refusal(kind: str) -> None:
    odometer = dp.c.make_fully_adaptive_composition(
        dp.dataframe_domain(), dp.symmetric_distance(), dp.max_divergence()
    )
    queryable = dp.c.make_privacy_filter(odometer, 1, 5.0)(_data(kind))
    query = (
        dp.t.make_select_column("salary", TOA="i16") >> dp.t.then_count() >> dp.m.then_laplace(1.0)
    )
    with pytest.raises(NotInDomain, match="withheld") as info:
        queryable(query)
    _assert_redacted(info.value)


@pytest.mark.parametrize("kind", ["pandas", "polars"])
def test_a_sparse_vector_query_on_a_frame_withholds_the_refusal(kind: str) -> None:
    """A sparse vector's queries run on the private data too (its queryable is interactive)."""
    space = dp.dataframe_domain(), dp.symmetric_distance()
    svt = dp.m.make_sparse_vector(
        *space, d_in=1, query_sensitivity=1, threshold=50, threshold_scale=2.0, query_scale=4.0
    )
    queryable = svt(_data(kind))
    query = dp.t.make_select_column("ssn", TOA=int) >> dp.t.then_count()
    with pytest.raises(NotInDomain, match="withheld") as info:
        queryable(query)
    _assert_redacted(info.value)
    # a query reading a column as another type than the space declares: refused when sent
    typed = dp.dataframe_domain(columns={"ssn": str}), dp.symmetric_distance()
    svt_typed = dp.m.make_sparse_vector(
        *typed, d_in=1, query_sensitivity=1, threshold=50, threshold_scale=2.0, query_scale=4.0
    )
    with pytest.raises(DomainMismatch, match="column 'ssn'"):
        svt_typed(_data(kind))(query)


def test_a_composition_declares_every_child_s_columns_where_the_data_enters() -> None:
    """A composition of two queries sent to a compositor: the second child's column type was
    checked only inside the function (naming the position)."""
    space = dp.dataframe_domain(), dp.symmetric_distance()
    first = dp.t.make_select_column("name", TOA=str) >> dp.t.then_count() >> dp.m.then_laplace(1.0)
    second = _inner_i16_salary()
    both = dp.c.make_composition([first, second])
    assert dict(both.input_domain.columns).keys() == {"name", "salary"}
    assert not both.input_domain.member(_columns())  # refused where the data enters
    typed = dp.t.make_select_column("salary", TOA="i64") >> dp.t.then_count()
    with pytest.raises(DomainMismatch, match="column 'salary'"):
        dp.c.make_composition([second, typed >> dp.m.then_laplace(1.0)])
    queryable = dp.c.make_adaptive_composition(*space, dp.max_divergence(), 1, [2.0])(_columns())
    with pytest.raises(NotInDomain, match="withheld") as info:
        queryable(both)
    _assert_redacted(info.value)
