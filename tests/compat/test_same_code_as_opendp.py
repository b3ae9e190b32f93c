"""The same source, run once with ``import opendp.prelude as dp`` and once with
``import opendp_lite.prelude as dp``, records the same deterministic results (solved scales,
budget shares, shorthands, result types).  Skipped if OpenDP 0.16 is not installed."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

pytest.importorskip("opendp")

SCENARIO = textwrap.dedent(
    """
    import {lib}.prelude as dp
    dp.enable_features("contrib")

    out = []
    data = [float((i * 37) % 101) for i in range(100)]
    context = dp.Context.compositor(
        data=data,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=3,
    )
    out.append(("d_mids", context.d_mids))
    count_query = context.query().count().laplace()
    out.append(("count scale", count_query.param()))
    out.append(("count type", type(count_query.release()).__name__))
    out.append(("consumed", context.current_privacy_loss()))
    out.append(("remaining", context.remaining_privacy_loss()))

    ints = dp.Context.compositor(
        data=list(range(100)),
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_by_weights=[3, 1],
    )
    out.append(("weights", ints.d_mids))
    sum_query = ints.query().clamp((0, 10)).sum().laplace()
    out.append(("sum scale", sum_query.param()))
    out.append(("sum type", type(sum_query.release()).__name__))

    zcdp = dp.Context.compositor(
        data=list(range(100)),
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(rho=0.5),
        split_evenly_over=2,
    )
    out.append(("gauss scale", zcdp.query().count().gaussian().param()))

    approx = dp.Context.compositor(
        data=list(range(100)),
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0, delta=1e-7),
        split_evenly_over=2,
    )
    out.append(("approx d_mids", approx.d_mids))

    flexible = dp.Context.compositor(
        data=list(range(100)),
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
    )
    out.append(("filter scale", flexible.query(epsilon=0.4).count().laplace().param()))

    outer = dp.Context.compositor(
        data=list(range(100)),
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=2,
    )
    inner = outer.query().compositor(split_evenly_over=2).release()
    out.append(("nested d_mids", inner.d_mids))
    out.append(("nested scale", inner.query().count().laplace().param()))

    out.append(("space_of", repr(dp.space_of(list[int]))))
    out.append(("domain_of", repr(dp.domain_of("Vec<int>"))))
    out.append(("unit_of", repr(dp.unit_of(contributions=3))))
    out.append(("unit_of l1", repr(dp.unit_of(l1=2.0))))
    out.append(("Vec", repr(dp.Vec[dp.i32])))
    out.append(("parse", repr(dp.RuntimeType.parse("Vec<int>"))))
    out.append(("infer", repr(dp.RuntimeType.infer([1.5]))))
    out.append(("L1", repr(dp.L1Distance[int])))
    m = ints.query().count().laplace(scale=1.0).resolve()
    out.append(("types", (str(m.input_carrier_type), str(m.input_distance_type),
                          str(m.output_distance_type))))
    """
)


def _run(lib: str) -> list[tuple[str, Any]]:
    namespace: dict[str, Any] = {"__name__": f"scenario_{lib}"}
    exec(compile(SCENARIO.format(lib=lib), f"<scenario {lib}>", "exec"), namespace)  # noqa: S102
    return namespace["out"]  # type: ignore[no-any-return]


def test_the_same_code_gives_the_same_results() -> None:
    ours = _run("opendp_lite")
    theirs = _run("opendp")
    assert [k for k, _ in ours] == [k for k, _ in theirs]
    for (key, mine), (_, opendp) in zip(ours, theirs, strict=True):
        assert mine == opendp, f"{key}: opendp_lite {mine!r} != OpenDP {opendp!r}"
