"""The example backend (``opendp_lite.backends.chunked``) gives numpy's answers, chunk by chunk.

A :class:`Chunked` vector is a list of numpy chunks; the constructors reach it only through
``opendp_lite.backends``.  Each aggregate is run on the same values as a numpy vector and as
several chunkings (empty chunks included); the answers (exact integer partials added) and the
releases on scripted randomness must be identical, and the backend must really have been used.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite import backends
from opendp_lite.backends.chunked import CHUNKED, Chunked
from opendp_lite.errors import NotInDomain
from opendp_lite.samplers import rng

INTS = np.array([5, -3, 12, 0, 7, 7, -20, 4, 1], dtype=np.int64)
FLOATS = np.array([0.1, 2.5, -1.25, 3.0, 1e-3, -0.7, 9.5, 0.3])


def chunkings(x: np.ndarray) -> list[Chunked]:
    n = len(x)
    return [
        Chunked([x]),
        Chunked([x[:2], x[2:5], x[5:]]),
        Chunked([x[:0], x[: n // 2], x[n // 2 : n // 2], x[n // 2 :]]),
        Chunked([x[i : i + 1] for i in range(n)]),
    ]


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records each call of the chunked backend's reductions and length."""
    seen: list[str] = []
    for name in ("reduce_blocks", "length", "clip"):
        orig = getattr(CHUNKED, name)

        def spy(*args: Any, _orig: Any = orig, _name: str = name) -> Any:
            seen.append(_name)
            return _orig(*args)

        monkeypatch.setattr(CHUNKED, name, spy)
    return seen


def test_dispatch() -> None:
    assert backends.of(Chunked([np.arange(2)])) is CHUNKED
    assert backends.of(np.arange(2)).name == "numpy"
    assert "chunked" in backends.registered()


def test_count(calls: list[str]) -> None:
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    count = space >> dp.t.then_count()
    for x in chunkings(INTS):
        assert count(x) == count(INTS) == len(INTS)
    assert "length" in calls


def test_int_sum(calls: list[str]) -> None:
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    t = space >> dp.t.then_clamp((-10, 10)) >> dp.t.then_sum()
    expected = t(INTS)
    assert expected == int(np.clip(INTS, -10, 10).sum())
    for x in chunkings(INTS):
        assert t(x) == expected
    assert "reduce_blocks" in calls and "clip" in calls


def test_float_sum(calls: list[str]) -> None:
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    t = space >> dp.t.then_clamp((-2.0, 5.0)) >> dp.t.then_sum()
    expected = t(FLOATS)
    for x in chunkings(FLOATS):
        assert t(x) == expected
    assert "reduce_blocks" in calls


def test_count_by_categories(calls: list[str]) -> None:
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    t = space >> dp.t.then_count_by_categories(categories=[7, 0, 4])
    expected = list(t(INTS))
    assert expected == [2, 1, 1, 5]
    for x in chunkings(INTS):
        assert list(t(x)) == expected
    assert "reduce_blocks" in calls


def test_clamp_sum_laplace_release() -> None:
    """The same release on scripted randomness, whatever the chunking."""
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    m = space >> dp.t.then_clamp((-2.0, 5.0)) >> dp.t.then_sum() >> dp.m.then_laplace(1.0)
    with rng.scripted_randomness(seed=b"chunked"):
        expected = m(FLOATS)
    for x in chunkings(FLOATS):
        with rng.scripted_randomness(seed=b"chunked"):
            assert m(x) == expected
    assert m.map(1) == m.map(1)


def test_membership_is_numpys() -> None:
    """Each chunk takes the numpy vector check: a value outside the domain is refused."""
    dom = dp.vector_domain(dp.atom_domain(bounds=(0, 10)))
    assert dom.member(Chunked([np.array([1, 2]), np.array([10])]))
    assert not dom.member(Chunked([np.array([1, 2]), np.array([11])]))
    space = dom, dp.symmetric_distance()
    with pytest.raises(NotInDomain):
        (space >> dp.t.then_sum())(Chunked([np.array([3]), np.array([-1])]))
    sized = dp.vector_domain(dp.atom_domain(T=int), size=3)
    assert not sized.member(Chunked([np.array([1, 2])]))
