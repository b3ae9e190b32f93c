"""The shared validators: typed errors naming the parameter, the requirement and the value."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from opendp_lite._validate import check_finite_nonneg, check_int, check_metric, check_real
from opendp_lite.errors import InvalidParameter, NotImplementedForType, ParameterTypeError
from opendp_lite.metrics import AbsoluteDistance, SymmetricDistance, symmetric_distance


def test_check_finite_nonneg() -> None:
    assert check_finite_nonneg("scale", np.float32(0.5)) == 0.5
    with pytest.raises(InvalidParameter, match=r"scale must be finite and >= 0, got -1.0"):
        check_finite_nonneg("scale", -1.0)
    for bad in ("1", True, None):
        with pytest.raises(InvalidParameter, match="scale must be a real number"):
            check_finite_nonneg("scale", bad)
    with pytest.raises(InvalidParameter, match="finite"):
        check_finite_nonneg("scale", math.inf)


@pytest.mark.parametrize("bad", [True, False, np.bool_(True), 3.0, "3", None, np.float64(3)])
def test_check_int_refuses_non_integers_with_a_type_error(bad: object) -> None:
    with pytest.raises(ParameterTypeError, match=r"^make_x: size must be a positive int, got "):
        check_int("size", bad, min=1, who="make_x")


def test_check_int_range_and_conversion() -> None:
    v = check_int("k", np.int64(3), min=0, max=5)
    assert v == 3 and type(v) is int
    assert check_int("n", 2**70, min=1) == 2**70
    with pytest.raises(InvalidParameter, match=r"^k must be an int in \[0, 5\], got 6$"):
        check_int("k", 6, min=0, max=5)
    with pytest.raises(InvalidParameter, match=r"^size must be a non-negative int, got -1$"):
        check_int("size", -1, min=0)
    with pytest.raises(InvalidParameter, match=r"^b must be an int >= 2, got 1$"):
        check_int("b", 1, min=2)
    with pytest.raises(InvalidParameter, match=r"^d must be an int in \[0, size\), got 4$"):
        check_int("d", 4, min=0, max=3, what="an int in [0, size)")


def test_check_real() -> None:
    assert check_real("t", np.int8(-3)) == -3.0
    assert math.isnan(check_real("t", math.nan))
    with pytest.raises(InvalidParameter, match=r"^make_x: t must be a real number, got bool True$"):
        check_real("t", True, who="make_x")


def test_check_metric_names_the_constructor() -> None:
    check_metric("make_x", symmetric_distance(), (SymmetricDistance,))
    with pytest.raises(NotImplementedForType, match=r"make_x needs input_metric in \(Symm"):
        check_metric("make_x", AbsoluteDistance("i32"), (SymmetricDistance,))


# Integer parameters of constructors go through check_int: a bool is refused with a
# ParameterTypeError naming the parameter, and a numpy integer is the same as the Python int.
def _int_params() -> list[tuple[str, Callable[[Any], Any]]]:
    import opendp_lite.prelude as dp

    ints = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    linf = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float)
    l1 = dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int)
    return [
        ("size", lambda v: dp.vector_domain(dp.atom_domain(T=int), size=v)),
        ("size", lambda v: dp.t.make_resize(*ints, size=v, constant=0)),
        ("size", lambda v: dp.t.make_sized_bounded_int_checked_sum(v, (0, 10))),
        ("size_limit", lambda v: dp.t.make_bounded_float_checked_sum(v, (0.0, 1.0))),
        ("k", lambda v: dp.m.make_noisy_top_k(*linf, dp.max_divergence(), k=v, scale=1.0)),
        ("leaf_count", lambda v: dp.t.make_b_ary_tree(*l1, leaf_count=v, branching_factor=2)),
    ]


@pytest.mark.parametrize("index", range(6))
def test_constructors_share_the_int_validator(index: int) -> None:
    name, build = _int_params()[index]
    with pytest.raises(ParameterTypeError, match=rf"{name} must be .*int.*, got bool True"):
        build(True)
    with pytest.raises(ParameterTypeError, match=rf"{name} must be .*int.*, got float 3.0"):
        build(3.0)
    a, b = build(3), build(np.int64(3))
    if hasattr(a, "map"):
        assert a.map(2) == b.map(2)
    else:
        assert a == b
