"""Dask arrays with an empty chunk and unknown chunk lengths: every
vector transformation gives the numpy answer, never Dask's untyped ``ValueError``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.backends import dask as _dask
from opendp_lite.errors import NotInDomain
from tests.conftest import counting_source

da = pytest.importorskip("dask.array")

SYM = dp.symmetric_distance()
VALUES = np.array([np.nan] * 5 + [1.0, 2.0, np.nan, 3.0, 4.0, 2.0, np.nan])


def _unknown(x: Any) -> Any:
    """``x`` minus its NaNs, filtered in Dask: the first chunk is empty and no chunk length is
    known."""
    z = da.from_array(x, chunks=5)
    out = z[~da.isnan(z)]
    assert _dask.layout(out).size is None
    return out


def _numpy(x: Any) -> Any:
    return x[~np.isnan(x)]


def _eq(a: Any, b: Any) -> bool:
    if hasattr(a, "compute"):
        a = a.compute()
    if isinstance(b, np.ndarray):
        return bool(np.asarray(a).tolist() == b.tolist())
    return bool(a == b)


def test_transformations_on_unknown_chunks_give_the_numpy_answer(client: Any) -> None:
    f = dp.vector_domain(dp.atom_domain(T=float, nan=False)), SYM
    i = dp.vector_domain(dp.atom_domain(T="i64")), SYM
    b = dp.vector_domain(dp.atom_domain(bounds=(0.0, 5.0))), SYM
    chains = [
        (f >> dp.t.then_cast_default(TOA="i64"), float),
        (f >> dp.t.then_cast_inherent(TOA="f32"), float),
        (f >> dp.t.then_count_distinct(), float),
        (f >> dp.t.then_count_by(), float),
        (f >> dp.t.then_count(), float),
        (f >> dp.t.then_clamp((0.0, 3.0)) >> dp.t.then_sum(), float),
        (b >> dp.t.then_sum(), float),
        (f >> dp.t.then_quantile_score_candidates([0.0, 2.0, 5.0], alpha=0.5), float),
        (i >> dp.t.then_find([1, 3]), np.int64),
        (i >> dp.t.then_clamp((0, 3)) >> dp.t.then_sum(), np.int64),
    ]
    for t, dtype in chains:
        x = VALUES.astype(np.float64)
        dx = _unknown(x)
        if dtype is np.int64:
            want = t(_numpy(x).astype(np.int64))
            got = t(dx.astype(np.int64))
        else:
            want, got = t(_numpy(x)), t(dx)
        assert _eq(got, want), (t, got, want)


def test_random_reorderings_on_unknown_chunks(client: Any) -> None:
    # the outputs are random: compare the multisets and the sizes
    b = dp.vector_domain(dp.atom_domain(bounds=(0.0, 5.0))), SYM
    want = sorted(_numpy(VALUES).tolist())
    shuffled = dp.t.make_ordered_random(*b)(_unknown(VALUES))
    assert sorted(np.asarray(shuffled).tolist()) == want
    for size in (3, 5, 8):
        out = np.asarray((b >> dp.t.then_resize(size=size, constant=0.0))(_unknown(VALUES)))
        assert len(out) == size
        padded = sorted(want + [0.0] * max(size - len(want), 0))
        assert set(out.tolist()) <= set(padded) and out.tolist().count(0.0) >= size - len(want)


def test_sized_keeps_the_callers_array() -> None:
    z = da.arange(10, chunks=5)
    y = z[z > 6]
    s = _dask.sized(y)
    assert s.chunks == ((0, 3),) and len(s) == 3
    assert _dask.layout(y).size is None  # the argument itself is not mutated
    assert _dask.sized(z) is z


def _unknown_array() -> Any:
    """A length-1 array with an empty chunk, filtered (chunks unknown)."""
    x = da.from_array(np.array([-6]), chunks=((0, 1),))
    return x[x >= x.min()]


def test_an_array_dask_cannot_compute_is_refused_typed_before_noise(client: Any) -> None:
    # the numpy answer when Dask computes the array; when Dask cannot (its elementwise step
    # pairs the empty chunk with the value: x.compute() fails in Dask 2024.12.1 to 2026.8.0), a
    # typed NotInDomain that carries no value, and no randomness drawn
    space = dp.vector_domain(dp.atom_domain(T=int, bounds=(-10, 10))), SYM
    count = space >> dp.t.then_count()
    total = space >> dp.t.then_sum()
    try:
        values = np.asarray(_unknown_array().compute())
    except (ValueError, IndexError, KeyError):
        values = None
    if values is not None:  # a Dask that computes it: the numpy answer
        assert count(_unknown_array()) == count(values) and total(_unknown_array()) == total(values)
        return
    noisy = count >> dp.m.then_laplace(1.0)
    for t in (count, total, noisy):
        with counting_source() as calls, pytest.raises(NotInDomain, match="Dask could not") as e:
            t(_unknown_array())
        assert calls == []
        assert "-6" not in str(e.value)
        assert e.value.__context__ is None and e.value.__cause__ is None
    with counting_source() as calls:  # the control: the numpy vector is released, with noise
        noisy(np.array([-6]))
    assert calls
