"""A Context over a Python list answers with Python values, as OpenDP 0.16 does.

In OpenDP a query's release is converted from the measurement's output type, so a vector
release (e.g. ``count_by_categories`` then ``laplace``) is a Python ``list`` of Python ints,
whatever the data.  opendp_lite gives the same for data that holds no array (a list), in a
context and in a nested context, as its measurements already do when invoked on a list; numpy
data keeps numpy answers (opendp_lite's numpy in, numpy out).
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp

HAVE_OPENDP = importlib.util.find_spec("opendp") is not None
DATA = ["a", "b", "a", "c", "a"]
CATEGORIES = ["a", "b"]


def _release_shape(lib: Any) -> tuple[str, int, str]:
    lib.enable_features("contrib")
    context = lib.Context.compositor(
        data=DATA,
        privacy_unit=lib.unit_of(contributions=1),
        privacy_loss=lib.loss_of(epsilon=1.0),
        split_evenly_over=2,
    )
    out = context.query().count_by_categories(categories=CATEGORIES).laplace().release()
    return type(out).__name__, len(out), type(out[0]).__name__


def test_a_vector_release_on_list_data_is_a_list_of_python_ints() -> None:
    kind, n, element = _release_shape(dp)
    assert (kind, n, element) == ("list", len(CATEGORIES) + 1, "int")


@pytest.mark.skipif(not HAVE_OPENDP, reason="OpenDP 0.16 not installed")
def test_the_same_shape_as_opendp() -> None:
    import opendp.prelude as odp

    assert _release_shape(dp) == _release_shape(odp)


def test_counts_of_float_list_data_are_a_list_of_python_ints() -> None:
    dp.enable_features("contrib")
    context = dp.Context.compositor(
        data=[1.0, 4.0, 12.0],
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=1,
        domain=dp.vector_domain(dp.atom_domain(T=float, nan=False)),
    )
    counts = context.query().count_by_categories(categories=[1.0, 4.0]).laplace().release()
    assert type(counts) is list and all(type(c) is int for c in counts)


def test_a_nested_context_on_list_data_answers_with_a_list() -> None:
    dp.enable_features("contrib")
    context = dp.Context.compositor(
        data=DATA,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=1,
    )
    nested = context.query().compositor(split_evenly_over=2).release()
    out = nested.query().count_by_categories(categories=CATEGORIES).laplace().release()
    assert type(out) is list and len(out) == 3 and all(type(c) is int for c in out)


def test_numpy_data_keeps_numpy_answers() -> None:
    """A guard (passes before and after): only data without arrays converts."""
    dp.enable_features("contrib")
    context = dp.Context.compositor(
        data=np.array([1, 2, 2, 3], dtype=np.int32),
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=1,
    )
    out = context.query().count_by_categories(categories=[1, 2]).laplace().release()
    assert isinstance(out, np.ndarray) and out.shape == (3,)
