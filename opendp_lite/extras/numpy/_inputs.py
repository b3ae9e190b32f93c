"""The checks shared by the constructors on their input space."""

from __future__ import annotations

from typing import Any, Literal

import numpy.typing as npt

from ... import _arith as ar
from ...core import (
    Domain,
    Metric,
)
from ...errors import InvalidParameter, NotImplementedForType
from ...metrics import SymmetricDistance
from .domain import NPArray2Domain

Array = npt.NDArray[Any]

# ----------------------------------------------------------------------------------------------
# Shared checks


def _array2(who: str, domain: Domain[Any]) -> NPArray2Domain:
    if not isinstance(domain, NPArray2Domain):
        raise NotImplementedForType(
            f"{who} needs input_domain = array2_domain(...), got {domain!r}"
        )
    return domain


def _symmetric(who: str, metric: Metric[Any]) -> None:
    if not isinstance(metric, SymmetricDistance):
        raise NotImplementedForType(
            f"{who} needs input_metric = symmetric_distance(), got {metric!r}"
        )


def _bounded(who: str, dom: NPArray2Domain) -> tuple[float, Literal[1, 2], tuple[float, ...], int]:
    """``(R, p, origin, d)`` of a bounded domain of known width."""
    if dom.norm is None or dom.p is None or dom.origin is None:
        raise InvalidParameter(
            f"{who} needs rows of bounded norm: input_domain {dom!r} has none (chain "
            "then_np_clamp first)"
        )
    if dom.num_columns is None:
        raise InvalidParameter(
            f"{who} needs the number of columns: give array2_domain(num_columns=...)"
        )
    origin = dom.origin if isinstance(dom.origin, tuple) else (0.0,) * dom.num_columns
    return dom.norm, dom.p, origin, dom.num_columns


def _norm_up(v: tuple[float, ...], p: int) -> ar.Rational:
    """An upper bound on ``‖v‖_p``, as an exact rational."""
    if p == 1:
        return sum((abs(ar.q(x)) for x in v), ar.q(0))
    return ar.q(ar.sqrt_up(sum((ar.q(x) ** 2 for x in v), ar.q(0))))


def _root_up(d: int, p: int) -> ar.Rational:
    """An upper bound on ``d^(1/p)``."""
    return ar.q(d) if p == 1 else ar.q(ar.sqrt_up(d))
