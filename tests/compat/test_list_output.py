"""As in OpenDP 0.16: a vector transformation or measurement given Python values returns Python
values (a list for a vector, a Python scalar for a scalar), so ``t([..]) == [..]`` works;
numpy in still gives numpy out, a lazy (Dask) array stays lazy, and the steps of a chain pass
numpy between them (only the outermost call converts)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp

FLOATS = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()


def test_a_list_in_gives_a_list_out() -> None:
    clamp = FLOATS >> dp.t.then_clamp((0.0, 1.0))
    out = clamp([0.5, 2.0, -1.0])
    assert out == [0.5, 1.0, 0.0]
    assert type(out) is list and all(type(v) is float for v in out)
    strings = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
    idx = strings >> dp.t.then_find(["a", "b"])
    assert idx(["b", "z"]) == [1, None]
    assert dp.t.make_split_lines()("a\nb") == ["a", "b"]  # a string in: Python values


def test_numpy_in_gives_numpy_out() -> None:
    clamp = FLOATS >> dp.t.then_clamp((0.0, 1.0))
    out = clamp(np.array([0.5, 2.0]))
    assert isinstance(out, np.ndarray) and out.dtype == np.float64
    assert out.tolist() == [0.5, 1.0]


def test_chains_pass_numpy_between_steps_and_convert_once() -> None:
    seen: list[Any] = []
    dp.enable_features("honest-but-curious")
    vec = dp.vector_domain(dp.atom_domain(bounds=(0.0, 1.0))), dp.symmetric_distance()

    def spy(x: Any) -> Any:
        seen.append(type(x))
        return x

    probe = dp.t.make_user_transformation(*vec, *vec, spy, lambda d: d)
    chain = FLOATS >> dp.t.then_clamp((0.0, 1.0)) >> probe >> dp.t.then_clamp((0.0, 0.5))
    assert chain([0.2, 0.9]) == [0.2, 0.5]
    assert seen == [np.ndarray]  # the middle step received numpy, not a list


def test_measurements_release_python_values_for_python_input() -> None:
    vec = dp.m.make_laplace(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float), scale=1.0
    )
    listed = vec([1.0, 2.0])
    assert type(listed) is list and all(type(v) is float for v in listed)
    arr = vec(np.array([1.0, 2.0]))
    assert isinstance(arr, np.ndarray)
    rr = dp.m.make_randomized_response(["A", "B", "C"], 1.0)
    assert type(rr("A")) is str  # not numpy's str_, as in OpenDP
    assert type(rr(np.str_("A"))) is str  # a numpy scalar is a value, not an array
    post = (
        FLOATS
        >> dp.t.then_clamp((0.0, 1.0))
        >> dp.t.then_count()
        >> dp.m.then_laplace(scale=1.0)
        >> (lambda c: [c, c])
    )
    assert type(post([0.5])) is list


def test_dask_stays_dask() -> None:
    da = pytest.importorskip("dask.array")
    clamp = FLOATS >> dp.t.then_clamp((0.0, 1.0))
    lazy = clamp(da.from_array(np.array([0.5, 2.0]), chunks=1))
    assert not isinstance(lazy, (list, np.ndarray))
    assert np.asarray(lazy.compute()).tolist() == [0.5, 1.0]
