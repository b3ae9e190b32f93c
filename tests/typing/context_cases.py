"""Typing cases for the Context API, checked by mypy --strict (tests/context/test_query_typing.py).

What mypy infers: ``context.query()`` is ``Query[Any]``; the typed steps ``count()`` /
``count_distinct()`` give ``Query[int]`` and ``mean()``/``variance()`` ``Query[float]``; the
noise steps ``laplace()``/``gaussian()``/``geometric()`` and ``clamp()`` keep the type; and
``release()`` returns it.  So ``context.query().count().laplace().release()`` is an ``int``.
Constructors reached by name at run time (``.sum()``, ``.cast_default(...)``) are
``Query[Any]``.
"""

from __future__ import annotations

import sys
from typing import Any

import opendp_lite.prelude as dp

if sys.version_info >= (3, 11):
    from typing import assert_type
else:  # Python 3.10: typing_extensions (a dependency of mypy) has it
    from typing_extensions import assert_type


def cases(context: dp.Context) -> None:
    assert_type(context.query(), dp.Query[Any])
    assert_type(context.query().count(), dp.Query[int])
    assert_type(context.query().count().laplace(), dp.Query[int])
    assert_type(context.query().count().laplace().release(), int)
    assert_type(context.query().count().gaussian(scale=1.0).release(), int)
    assert_type(context.query().clamp((0.0, 1.0)).mean().laplace().release(), float)
    assert_type(context.query().clamp((0, 9)).sum().laplace(), dp.Query[Any])
    assert_type(context.query().compositor(split_evenly_over=2).release(), dp.Context)
    assert_type(dp.loss_of(epsilon=1.0), tuple[dp.Measure[Any], Any])
    assert_type(dp.space_of(list[int]), tuple[dp.Domain[Any], dp.Metric[Any]])
    count: int = context.query().count().laplace().release()
    wrong: str = context.query().count().laplace().release()  # type: ignore[assignment]
    del count, wrong
