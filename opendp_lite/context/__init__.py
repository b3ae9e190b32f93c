"""The Context API of OpenDP 0.16: a privacy budget around one dataset, queried by chaining.

A :class:`Context` holds the data, the privacy unit and a compositor (the *accountant*) whose
queryable enforces the budget.  ``context.query()`` starts a :class:`Query`; each method call
``.x(...)`` appends the constructor ``then_x`` (or ``make_x``) of ``dp.t``/``dp.m``/``dp.c``;
``.release()`` submits the measurement to the accountant.  A constructor called with exactly
one required argument missing (``.laplace()`` without ``scale``) leaves it to be solved by a
binary search: the tightest value that fits the query's share of the budget.

>>> import opendp_lite.prelude as dp
>>> context = dp.Context.compositor(
...     data=[1, 2, 3, 4, 5],
...     privacy_unit=dp.unit_of(contributions=1),
...     privacy_loss=dp.loss_of(epsilon=1.0),
...     split_evenly_over=2,
... )
>>> count = context.query().count().laplace()
>>> count.param()
2.0
>>> isinstance(count.release(), int), context.remaining_privacy_loss()
(True, [0.5])

The budget is enforced by the accountant's queryable (a security boundary that also holds
for queries sent to ``context.queryable`` directly); a query the budget cannot afford is
refused with :class:`~opendp_lite.combinators.composition.BudgetExceeded` before anything is
computed, the session stays usable for cheaper queries, and the message says what remains.

The package has one module per concept: :mod:`.units` (spaces, privacy units and losses),
:mod:`.compositor` (the accountant for a budget), :mod:`.core` (the :class:`Context`),
:mod:`.summary` (its summary), :mod:`.query` (the :class:`Query` builder and its frame verbs)
and :mod:`.plugins` (the registry of :func:`register`).
"""

from __future__ import annotations

# ("x as x": private names that other modules and tests reach through the package)
from .core import BudgetExhausted, Context
from .core import _frame_domain as _frame_domain
from .plugins import _REGISTERED as _REGISTERED
from .plugins import _lookup as _lookup
from .plugins import register
from .query import Chain, PartialChain, Query
from .query import _labelled_groups as _labelled_groups
from .summary import Summary
from .units import domain_of, loss_of, metric_of, space_of, unit_of
from .units import logger as logger

__all__ = [
    "BudgetExhausted",
    "Chain",
    "Context",
    "PartialChain",
    "Query",
    "Summary",
    "domain_of",
    "loss_of",
    "metric_of",
    "register",
    "space_of",
    "unit_of",
]
