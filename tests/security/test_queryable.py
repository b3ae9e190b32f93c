"""Queryables hold privacy state: no clone may get a fresh budget; no query may re-enter.

Attack family (forkable accountants, budget races): copy, deep-copy or pickle an interactive
compositor, or hand it to another process, and each clone spends the budget again; or issue
a query from inside a running query, so that the inner one sees the state before the outer
one's charge.  The naive control is a plain Python object with a budget counter, which copies
and pickles happily.

``os.fork`` duplicates the whole process, queryables included, so ``core.Queryable`` records
the pid that created it and refuses queries from any other process.
"""

from __future__ import annotations

import copy
import multiprocessing
import os
import pickle
import threading
import time
from collections.abc import Callable
from multiprocessing.reduction import ForkingPickler
from typing import Any

import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import QueryableError

F64 = (dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float))


def _sequential() -> Any:
    sc = dp.c.make_sequential_composition(*F64, dp.max_divergence(), 1.0, [1.0, 1.0])
    return sc(0.0)


def _odometer() -> Any:
    return dp.c.make_fully_adaptive_composition(*F64, dp.max_divergence())(0.0)


def _filter() -> Any:
    od = dp.c.make_fully_adaptive_composition(*F64, dp.max_divergence())
    return dp.c.make_privacy_filter(od, 1.0, 2.0)(0.0)


def _sparse_vector() -> Any:
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    svt = dp.m.make_sparse_vector(
        *space, d_in=1, query_sensitivity=1, threshold=0, threshold_scale=1.0, query_scale=1.0
    )
    return svt([1, 2, 3])


def _plain() -> Any:
    return dp.new_queryable(lambda q: q)


QUERYABLES: dict[str, Callable[[], Any]] = {
    "new_queryable": _plain,
    "sequential_composition": _sequential,
    "fully_adaptive_odometer": _odometer,
    "privacy_filter": _filter,
    "sparse_vector": _sparse_vector,
}


class NaiveAccountant:
    """The control: a budget in a plain object."""

    def __init__(self, budget: float) -> None:
        self.budget = budget

    def spend(self, eps: float) -> None:
        if eps > self.budget:
            raise RuntimeError("over budget")
        self.budget -= eps


def test_naive_accountant_clones_have_fresh_budgets() -> None:
    acc = NaiveAccountant(1.0)
    acc.spend(1.0)
    for clone in (copy.copy(acc), copy.deepcopy(acc), pickle.loads(pickle.dumps(acc))):  # noqa: S301
        assert clone.budget == 0.0
    fresh = NaiveAccountant(1.0)
    clones = [copy.deepcopy(fresh) for _ in range(3)]
    for c in clones:
        c.spend(1.0)  # three full budgets spent from one: the attack the test guards against


@pytest.mark.parametrize("name", sorted(QUERYABLES))
@pytest.mark.parametrize(
    "clone",
    [copy.copy, copy.deepcopy, pickle.dumps, ForkingPickler.dumps],
    ids=["copy", "deepcopy", "pickle", "multiprocessing-pickler"],
)
def test_queryable_refuses_to_be_cloned(name: str, clone: Callable[[Any], Any]) -> None:
    qbl = QUERYABLES[name]()
    with pytest.raises(QueryableError):
        clone(qbl)


@pytest.mark.parametrize("name", ["sequential_composition", "new_queryable"])
def test_queryable_inside_a_container_refuses_to_be_cloned(name: str) -> None:
    holder = {"q": QUERYABLES[name](), "other": [1, 2]}
    with pytest.raises(QueryableError):
        copy.deepcopy(holder)
    with pytest.raises(QueryableError):
        pickle.dumps(holder)


def test_pipe_hand_off_refused() -> None:
    a, b = multiprocessing.Pipe()
    try:
        with pytest.raises(QueryableError):
            a.send(_sequential())
    finally:
        a.close()
        b.close()


def _noop(q: Any) -> None:  # pragma: no cover - never runs: the hand-off fails first
    pass


def test_spawned_process_hand_off_refused() -> None:
    ctx = multiprocessing.get_context("spawn")
    proc = ctx.Process(target=_noop, args=(_sequential(),))
    with pytest.raises(QueryableError):
        proc.start()
    if proc._popen is not None:  # the child, if launched, gets no payload and exits
        proc.join(timeout=30)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX-only")
def test_forked_child_cannot_query_an_inherited_queryable() -> None:
    qbl = _sequential()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        try:
            os.close(r)
            try:
                qbl(dp.m.make_laplace(*F64, 1.0))
                os.write(w, b"answered")
            except QueryableError:
                os.write(w, b"refused")
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        outcome = f.read()
    os.waitpid(pid, 0)
    assert outcome == b"refused"


def test_reentrant_query_rejected() -> None:
    box: dict[str, Any] = {}

    def transition(q: int) -> int:
        if q > 0:
            return int(box["qbl"](q - 1)) + 1
        return 0

    box["qbl"] = dp.new_queryable(transition)
    assert box["qbl"](0) == 0
    with pytest.raises(QueryableError, match="re-entrant"):
        box["qbl"](1)
    assert box["qbl"](0) == 0  # the refusal leaves the queryable usable


def test_reentrant_query_through_a_compositor_rejected() -> None:
    dp.enable_features("honest-but-curious")
    qbl = _sequential()
    inner = dp.m.make_laplace(*F64, 1.0)

    def sneaky(x: float) -> Any:
        return qbl(inner)  # query the compositor from inside one of its own queries

    child = dp.m.make_user_measurement(*F64, dp.max_divergence(), sneaky, lambda d: 1.0 * d)
    with pytest.raises(QueryableError, match="re-entrant"):
        qbl(child)


def test_concurrent_queries_never_interleave() -> None:
    inside = 0
    overlaps = 0
    lock = threading.Lock()

    def transition(q: int) -> int:
        nonlocal inside, overlaps
        with lock:
            inside += 1
            overlaps += inside > 1
        time.sleep(0.002)
        with lock:
            inside -= 1
        return q

    qbl = dp.new_queryable(transition)
    threads = [threading.Thread(target=lambda: [qbl(i) for i in range(10)]) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert overlaps == 0
