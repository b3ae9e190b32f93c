"""Static typing of chains: mypy must infer good chains and reject bad ones.

This module is checked by ``mypy --strict`` with ``warn_unused_ignores``: every line marked
``# type: ignore[<code>]`` must really be an error, or mypy reports the ignore as unused and
the check fails.  So if the types stop catching one of these ill-typed chains, CI fails.

Nothing here runs at import time (the bodies are in functions that are never called), because
the ill-typed chains would also fail at run time.
"""

from __future__ import annotations

from typing import assert_type

import opendp_lite.prelude as dp
from opendp_lite.core import Function, Measurement, PartialMeasurement, Transformation
from opendp_lite.domains import AtomDomain, VectorDomain
from opendp_lite.metrics import AbsoluteDistance, SymmetricDistance


def _pieces() -> tuple[
    Transformation[float, float, float, float],
    Transformation[int, int, int, int],
    Measurement[int, int, int, float],
    Measurement[float, float, float, float],
    Transformation[str, int, int, int],
]:
    fspace = dp.atom_domain(T=float), dp.absolute_distance(T=float)
    ispace = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    assert_type(fspace[0], AtomDomain[float])
    assert_type(ispace[1], AbsoluteDistance[int])
    t_float = dp.t.make_user_transformation(*fspace, *fspace, lambda x: 2.0 * x, lambda d: 2.0 * d)
    t_int = dp.t.make_user_transformation(*ispace, *ispace, lambda x: x + 1, lambda d: d)
    m_int = dp.m.make_user_measurement(*ispace, dp.max_divergence(), lambda x: x, lambda d: 1.0 * d)
    m_float = dp.m.make_user_measurement(*fspace, dp.max_divergence(), lambda x: x, lambda d: d)
    t_len = dp.t.make_user_transformation(
        dp.atom_domain(T=str), dp.discrete_distance(), *ispace, len, lambda d: d
    )
    return t_float, t_int, m_int, m_float, t_len


def valid_chains() -> None:
    """Chains mypy accepts, with the types it infers."""
    t_float, t_int, m_int, m_float, t_len = _pieces()

    assert_type(t_float >> t_float, Transformation[float, float, float, float])
    assert_type(t_int >> m_int, Measurement[int, int, int, float])
    assert_type(t_len >> t_int >> m_int, Measurement[str, int, int, float])
    assert_type(t_float >> t_float >> m_float, Measurement[float, float, float, float])

    # post-processing changes the output type, keeps the rest
    assert_type(m_int >> (lambda y: str(y)), Measurement[int, str, int, float])
    assert_type(m_float >> Function(round), Measurement[float, int, float, float])

    # the functional forms
    assert_type(dp.c.make_chain_tt(t_int, t_int), Transformation[int, int, int, int])
    assert_type(dp.c.make_chain_mt(m_int, t_int), Measurement[int, int, int, float])

    # calls and maps are typed by the carriers and distances
    assert_type(m_int(3), int)
    assert_type(m_float.map(1.0), float)

    # partial constructors: (domain, metric) >> partial
    partial: PartialMeasurement[int, int, int, float] = PartialMeasurement(
        lambda d, m: dp.m.make_user_measurement(d, m, dp.max_divergence(), lambda x: x, float)
    )
    ispace = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    assert_type(ispace >> partial, Measurement[int, int, int, float])
    assert_type(t_int >> partial, Measurement[int, int, int, float])

    # domains and metrics carry their types
    vd = dp.vector_domain(dp.atom_domain(bounds=(0.0, 1.0)))
    assert_type(vd, VectorDomain[float])
    assert_type(dp.symmetric_distance(), SymmetricDistance)


def invalid_chains() -> None:
    """Each line is an ill-typed chain; mypy must reject it (else the ignore is unused)."""
    t_float, t_int, m_int, m_float, t_len = _pieces()

    # 1. a float-output transformation feeding an integer-input measurement
    t_float >> m_int  # type: ignore[operator]

    # 2. transformation >> transformation with mismatched carriers (int out, float in)
    t_int >> t_float  # type: ignore[operator]

    # 3. a str-input transformation after an int-output one
    t_int >> t_len  # type: ignore[operator]

    # 4. post-processing that expects a different type than the release
    def shout(s: str) -> str:
        return s.upper()

    m_int >> shout  # type: ignore[operator]

    # 5. the functional chain in the wrong order
    dp.c.make_chain_tt(t_float, t_int)  # type: ignore[misc]

    # 6. a measurement chained on a transformation of another carrier, functional form
    dp.c.make_chain_mt(m_float, t_int)  # type: ignore[misc]

    # 7. post-processing Function of the wrong input type
    dp.c.make_chain_pm(Function(shout), m_int)  # type: ignore[misc]

    # 8. a (domain, metric) pair of the wrong carrier on the left of a partial
    partial: PartialMeasurement[int, int, int, float] = PartialMeasurement(
        lambda d, m: dp.m.make_user_measurement(d, m, dp.max_divergence(), lambda x: x, float)
    )
    (dp.atom_domain(T=float), dp.absolute_distance(T=float)) >> partial  # type: ignore[operator]

    # 9. invoking with a value of the wrong carrier
    m_int("three")  # type: ignore[arg-type]

    # 10. asking a map for a distance of the wrong type
    m_float.map("1.0")  # type: ignore[arg-type]
