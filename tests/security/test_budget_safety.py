"""Interactive composition is a security boundary: budgets hold under concurrency and misuse."""

from __future__ import annotations

import copy
import pickle
import threading
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import FailedFunction, QueryableError

SPACE = (dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float))
THREADS = 32
ATTEMPTS_PER_THREAD = 20


@pytest.fixture(autouse=True)
def _hbc() -> None:
    dp.enable_features("honest-but-curious")


def spy_query(epsilon: float, tag: int, ran: list[int], measure: Any = None) -> Any:
    """A query with loss ``epsilon`` whose release records ``tag`` in ``ran``."""

    def function(x: float) -> int:
        ran.append(tag)  # list.append is atomic under the GIL
        return tag

    return dp.m.make_user_measurement(
        *SPACE, measure or dp.max_divergence(), function, lambda d: epsilon * d
    )


def hammer(
    qbl: Callable[[Any], Any], make_query: Callable[[int], Any]
) -> tuple[list[int], list[int], list[BaseException]]:
    """THREADS threads each make ATTEMPTS_PER_THREAD queries; returns answered, refused, errors."""
    answered: list[int] = []
    refused: list[int] = []
    unexpected: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def worker(t: int) -> None:
        start.wait()
        for i in range(ATTEMPTS_PER_THREAD):
            tag = t * ATTEMPTS_PER_THREAD + i
            try:
                out = qbl(make_query(tag))
            except dp.c.BudgetExceeded:
                refused.append(tag)
            except BaseException as e:  # collected, asserted empty below
                unexpected.append(e)
            else:
                assert out == tag
                answered.append(tag)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return answered, refused, unexpected


def test_32_threads_never_overspend_sequential_composition() -> None:
    d_mids = [0.1] * 50
    budget = dp.c.make_sequential_composition(*SPACE, dp.max_divergence(), d_in=1.0, d_mids=d_mids)
    qbl = budget(0.0)
    ran: list[int] = []
    # every third query asks for more than a d_mid and must always be refused
    epsilons = {tag: (0.2 if tag % 3 == 0 else 0.1) for tag in range(THREADS * ATTEMPTS_PER_THREAD)}
    answered, refused, unexpected = hammer(qbl, lambda tag: spy_query(epsilons[tag], tag, ran))
    assert unexpected == []
    assert len(answered) + len(refused) == THREADS * ATTEMPTS_PER_THREAD
    # total spend: each answered query was charged one d_mid of 0.1
    spent = sum((Fraction(epsilons[t]) for t in answered), Fraction(0))
    assert spent <= sum((Fraction(d) for d in d_mids), Fraction(0))
    assert len(answered) == len(d_mids)  # the whole budget was usable, and not more
    assert all(epsilons[t] == 0.1 for t in answered)
    # every refused query released nothing: its function never ran
    assert sorted(ran) == sorted(answered)
    assert set(ran).isdisjoint(refused)


def test_32_threads_never_overspend_privacy_filter() -> None:
    odometer = dp.c.make_fully_adaptive_composition(*SPACE, dp.max_divergence())
    flt = dp.c.make_privacy_filter(odometer, d_in=1.0, d_out=1.0)
    qbl = flt(0.0)
    ran: list[int] = []
    answered, refused, unexpected = hammer(qbl, lambda tag: spy_query(0.1, tag, ran))
    assert unexpected == []
    spent = Fraction(0.1) * len(answered)
    assert spent <= 1
    # ten float 0.1s add up to more than 1 exactly, so only nine fit
    assert len(answered) == 9
    assert sorted(ran) == sorted(answered)
    assert set(ran).isdisjoint(refused)
    assert qbl.privacy_loss(1.0) <= 1.0


def test_query_is_charged_before_it_runs() -> None:
    qbl = dp.c.make_adaptive_composition(*SPACE, dp.max_divergence(), d_in=1.0, d_mids=[0.5, 0.5])(
        1.0
    )

    def boom(x: float) -> float:
        raise RuntimeError("a query that fails after drawing randomness")

    failing = dp.m.make_user_measurement(*SPACE, dp.max_divergence(), boom, lambda d: 0.5 * d)
    with pytest.raises(FailedFunction, match="withheld"):  # the RuntimeError, its text withheld
        qbl(failing)
    ran: list[int] = []
    assert qbl(spy_query(0.5, 1, ran)) == 1
    with pytest.raises(dp.c.BudgetExceeded):
        qbl(spy_query(0.5, 2, ran))  # the failed query spent the first d_mid
    assert ran == [1]


def test_reentrant_query_is_rejected() -> None:
    holder: dict[str, Any] = {}
    ran: list[int] = []

    def sneaky(x: float) -> Any:
        return holder["qbl"](spy_query(0.1, 99, ran))

    qbl = dp.c.make_adaptive_composition(
        *SPACE, dp.max_divergence(), d_in=1.0, d_mids=[0.5, 0.5, 0.5]
    )(1.0)
    holder["qbl"] = qbl
    with pytest.raises(QueryableError, match="re-entrant"):
        qbl(dp.m.make_user_measurement(*SPACE, dp.max_divergence(), sneaky, lambda d: 0.5 * d))
    assert ran == []


@pytest.mark.parametrize("kind", ["adaptive", "odometer", "filter"])
def test_queryables_cannot_be_copied_or_pickled(kind: str) -> None:
    if kind == "adaptive":
        qbl: Any = dp.c.make_adaptive_composition(
            *SPACE, dp.max_divergence(), d_in=1.0, d_mids=[0.5]
        )(1.0)
    elif kind == "odometer":
        qbl = dp.c.make_fully_adaptive_composition(*SPACE, dp.max_divergence())(1.0)
    else:
        odometer = dp.c.make_fully_adaptive_composition(*SPACE, dp.max_divergence())
        qbl = dp.c.make_privacy_filter(odometer, 1.0, 1.0)(1.0)
    with pytest.raises(QueryableError):
        copy.deepcopy(qbl)
    with pytest.raises(QueryableError):
        copy.copy(qbl)
    with pytest.raises(QueryableError):
        pickle.dumps(qbl)


def test_child_cannot_outlive_parent_sequential_accounting() -> None:
    # (a compositor parent: the odometer refuses approximate zCDP, the one measure without
    # concurrent composition)
    measure = dp.approximate(dp.zero_concentrated_divergence())
    parent = dp.c.make_adaptive_composition(*SPACE, measure, d_in=1.0, d_mids=[(0.5, 0.0)] * 2)(1.0)
    child = parent(
        dp.c.make_adaptive_composition(*SPACE, measure, d_in=1.0, d_mids=[(0.1, 0.0)] * 3)
    )
    ran: list[int] = []

    def query(tag: int) -> Any:
        return dp.c.make_approximate(spy_query(0.1, tag, ran, dp.zero_concentrated_divergence()))

    assert child(query(1)) == 1
    assert parent(query(2)) == 2
    with pytest.raises(QueryableError, match="disabled"):
        child(query(3))
    assert ran == [1, 2]


def test_map_refuses_larger_d_in_than_checked() -> None:
    comp = dp.c.make_adaptive_composition(*SPACE, dp.max_divergence(), d_in=1.0, d_mids=[0.5])
    assert comp.check(1.0, 0.5)
    with pytest.raises(ValueError):
        comp.check(1.5, 10.0)


# --- the sequencer guard must hold however the release wraps the child -----------------------
# Under a measure without concurrent composition (approximate zCDP), a child queryable must stop
# answering once its parent answers a later query, whether the query's release is a Queryable
# or post-processes one into a container or a user object.


class _Holder:
    """A user object that keeps the child queryable in an attribute."""

    def __init__(self, qbl: Any) -> None:
        self.inner = {"deep": [qbl]}


WRAPS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    # name: (post-processing of the child compositor, how to get the child back out)
    "bare": (lambda q: q, lambda r: r),  # the release is the Queryable itself
    "list": (lambda q: [q], lambda r: r[0]),
    "tuple": (lambda q: (q,), lambda r: r[0]),
    "dict": (lambda q: {"child": q}, lambda r: r["child"]),
    "nested": (lambda q: [{"a": (0, [q])}], lambda r: r[0]["a"][1][0]),
    "user-object": (_Holder, lambda r: r.inner["deep"][0]),
    "closure": (lambda q: lambda query: q(query), lambda r: r),
}

APPROX_ZCDP = dp.approximate(dp.zero_concentrated_divergence())


def _zcdp_query(tag: int, ran: list[int]) -> Any:
    return dp.c.make_approximate(spy_query(0.1, tag, ran, dp.zero_concentrated_divergence()))


def _parent() -> Any:
    # The odometer and the privacy filter refuse approximate zCDP (no fully adaptive filter is
    # proved for it), so a compositor is the only parent without concurrent composition.
    return dp.c.make_adaptive_composition(*SPACE, APPROX_ZCDP, d_in=1.0, d_mids=[(0.5, 0.0)] * 4)(
        1.0
    )


@pytest.mark.parametrize("parent_kind", ["adaptive"])
@pytest.mark.parametrize("wrap", sorted(WRAPS))
def test_wrapped_child_is_disabled_when_parent_moves_on(parent_kind: str, wrap: str) -> None:
    post, unwrap = WRAPS[wrap]
    parent = _parent()
    compositor = dp.c.make_adaptive_composition(
        *SPACE, APPROX_ZCDP, d_in=1.0, d_mids=[(0.1, 0.0)] * 3
    )
    child = unwrap(parent(compositor >> post))
    ran: list[int] = []
    assert child(_zcdp_query(1, ran)) == 1  # usable until the parent answers another query
    assert parent(_zcdp_query(2, ran)) == 2
    with pytest.raises(QueryableError, match="disabled"):
        child(_zcdp_query(3, ran))
    assert ran == [1, 2]  # the refused query never ran


@pytest.mark.parametrize("wrap", sorted(WRAPS))
def test_grandchild_is_disabled_when_grandparent_moves_on(wrap: str) -> None:
    # parent -> child (a compositor) -> grandchild (a compositor, wrapped); the grandchild was
    # created by the child, after the parent's query had returned: it must still obey the parent
    post, unwrap = WRAPS[wrap]
    parent = _parent()
    child = parent(
        dp.c.make_adaptive_composition(
            *SPACE, APPROX_ZCDP, d_in=1.0, d_mids=[(0.35, 0.0), (0.1, 0.0)]
        )
    )
    grandchild = unwrap(
        child(
            dp.c.make_adaptive_composition(*SPACE, APPROX_ZCDP, d_in=1.0, d_mids=[(0.1, 0.0)] * 3)
            >> post
        )
    )
    ran: list[int] = []
    assert grandchild(_zcdp_query(1, ran)) == 1
    assert parent(_zcdp_query(2, ran)) == 2  # the grandparent moves on: child and grandchild stop
    with pytest.raises(QueryableError, match="disabled"):
        grandchild(_zcdp_query(3, ran))
    with pytest.raises(QueryableError, match="disabled"):
        child(_zcdp_query(4, ran))
    assert ran == [1, 2]


@pytest.mark.parametrize("wrap", sorted(WRAPS))
def test_wrapped_child_stays_usable_under_concurrent_composition(wrap: str) -> None:
    # the control: under pure DP concurrent composition holds, so children are not disabled
    post, unwrap = WRAPS[wrap]
    parent = dp.c.make_fully_adaptive_composition(*SPACE, dp.max_divergence())(1.0)
    child = unwrap(
        parent(
            dp.c.make_adaptive_composition(*SPACE, dp.max_divergence(), d_in=1.0, d_mids=[0.1] * 2)
            >> post
        )
    )
    ran: list[int] = []
    assert parent(spy_query(0.1, 1, ran)) == 1
    assert child(spy_query(0.1, 2, ran)) == 2
    assert ran == [1, 2]


def test_nested_child_keeps_its_type() -> None:
    # the guard lives in the child itself, so a guarded compositor child keeps its own type
    # (an odometer child cannot be guarded any more: the odometer refuses approximate zCDP)
    parent = _parent()
    compositor = dp.c.make_adaptive_composition(
        *SPACE, APPROX_ZCDP, d_in=1.0, d_mids=[(0.1, 0.0)] * 2
    )
    child = parent(compositor)
    ran: list[int] = []
    child(_zcdp_query(1, ran))
    assert type(child) is type(compositor(1.0))
