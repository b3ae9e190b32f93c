"""LazyFrame plans read through the whitelist: golden plans (as the installed Polars writes
them, and as every tested Polars version wrote them, stored under ``golden/``), and the
refusals (file-free scans only read for their schema, never for their data)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pl = pytest.importorskip("polars")

from opendp_lite.table import dp_namespace  # noqa: E402
from opendp_lite.table import nodes as n  # noqa: E402
from opendp_lite.table.polars_plan import read_plan, read_plan_json  # noqa: E402
from opendp_lite.table.polars_reader import (  # noqa: E402
    GroupByAgg,
    JoinKeys,
    PlanReading,
    SortStep,
    UnsupportedPolarsExpression,
)

dp_namespace.ensure_registered()
GOLDEN = Path(__file__).parent / "golden"
MINOR = tuple(int(p) for p in pl.__version__.split(".")[:2])

SCHEMA = {"a": pl.Int64, "g": pl.String}
READ_SCHEMA = (("a", "Int64"), ("g", "String"))
a, g = n.Col("a"), n.Col("g")
LEN = n.DPAgg("len", n.Len(), signed=True)


def _frame() -> Any:
    return pl.LazyFrame(schema=SCHEMA)


def _keys() -> Any:
    return pl.LazyFrame({"g": ["x", None, "z"]})


KEYS = (("g", "String", ("x", None, "z")),)

CASES: dict[str, tuple[Callable[[], Any], PlanReading]] = {
    "scan_schema": (_frame, PlanReading(READ_SCHEMA, ())),
    "scan_data": (
        lambda: pl.LazyFrame({"a": [1, 2], "g": ["p", "q"]}),
        PlanReading(READ_SCHEMA, ()),
    ),
    "scan_types": (
        lambda: pl.LazyFrame(
            schema={
                "d": pl.Date,
                "t": pl.Datetime("ms", "UTC"),
                "c": pl.Categorical,
                "e": pl.Enum(["p", "q"]),
                "f": pl.Float32,
                "b": pl.Boolean,
                "u": pl.UInt8,
            }
        ),
        PlanReading(
            (
                ("d", "Date"),
                ("t", ("Datetime", "ms", "UTC")),
                ("c", "Categorical"),
                ("e", ("Enum", ("p", "q"))),
                ("f", "Float32"),
                ("b", "Boolean"),
                ("u", "UInt8"),
            ),
            (),
        ),
    ),
    "steps": (
        lambda: (
            _frame()
            .filter(pl.col("a") > 1)
            .with_columns(b=pl.col("a") * 2)
            .select(pl.col("b"), "g")
        ),
        PlanReading(
            READ_SCHEMA,
            (
                n.FilterRows(n.Binary(">", a, n.Lit(1))),
                n.WithColumns((n.Alias(n.Binary("*", a, n.Lit(2)), "b"),)),
                n.Select((n.Col("b"), g)),
            ),
        ),
    ),
    "select_dp": (
        lambda: _frame().select(dp_namespace.len(signed=True), pl.col("a").dp.sum((0, 10))),
        PlanReading(READ_SCHEMA, (n.Select((LEN, n.DPAgg("sum", a, bounds=(0, 10)))),)),
    ),
    "group_by_sort": (
        lambda: (
            _frame()
            .group_by("g", maintain_order=True)
            .agg(dp_namespace.len(signed=True), pl.col("a").dp.mean((0, 10)).alias("m"))
            .sort("g", descending=True, nulls_last=True)
        ),
        PlanReading(
            READ_SCHEMA,
            (
                GroupByAgg((g,), (LEN, n.Alias(n.DPAgg("mean", a, bounds=(0, 10)), "m")), True),
                SortStep((g,), (True,), (True,)),
            ),
        ),
    ),
    "with_keys_left": (
        lambda: _keys().join(
            _frame().group_by("g").agg(dp_namespace.len(signed=True)),
            on="g",
            how="left",
            nulls_equal=True,
        ),
        PlanReading(
            READ_SCHEMA,
            (GroupByAgg((g,), (LEN,)), JoinKeys(KEYS, True, "left", (g,), (g,), True)),
        ),
    ),
    "with_keys_right": (
        lambda: (
            _frame()
            .group_by("g")
            .agg(dp_namespace.len(signed=True))
            .join(_keys(), on="g", how="right")
        ),
        PlanReading(
            READ_SCHEMA,
            (GroupByAgg((g,), (LEN,)), JoinKeys(KEYS, False, "right", (g,), (g,))),
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_plan_reads_into_its_steps(name: str) -> None:
    build, expected = CASES[name]
    assert read_plan(build()) == expected


def test_key_frame_values_are_read_as_a_dict_of_columns() -> None:
    step = read_plan(CASES["with_keys_right"][0]()).steps[-1]
    assert isinstance(step, JoinKeys)
    assert step.keys_dict() == {"g": ["x", None, "z"]}


def test_group_by_property_finds_the_aggregation() -> None:
    plan = read_plan(CASES["group_by_sort"][0]())
    assert plan.group_by is not None and plan.group_by.by == (g,)
    assert read_plan(_frame()).group_by is None


def test_frames_whose_schema_was_resolved_are_read_through_the_ir_wrapper() -> None:
    """``collect_schema()`` (which OpenDP's ``with_keys`` calls on the keys) makes Polars
    write the frame inside an ``IR`` node."""
    keys, frame = _keys(), _frame()
    keys.collect_schema()
    frame.collect_schema()
    plan = keys.join(frame.group_by("g").agg(dp_namespace.len(signed=True)), on="g", how="left")
    assert read_plan(plan) == PlanReading(
        READ_SCHEMA, (GroupByAgg((g,), (LEN,)), JoinKeys(KEYS, True, "left", (g,), (g,)))
    )


def test_file_scan_input_stands_for_the_data(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text("a,g\n1,p\n")
    plan = read_plan(pl.scan_csv(path).filter(pl.col("a") > 0))
    assert plan.schema is None  # the input domain's
    assert plan.steps == (n.FilterRows(n.Binary(">", a, n.Lit(0))),)


@pytest.mark.filterwarnings("ignore:.json. serialization format")
def test_private_data_bytes_are_not_read() -> None:
    """The private scan's data bytes are never decoded: garbage there reads the same."""
    text = _frame().filter(pl.col("a") > 1).serialize(format="json")
    doc = json.loads(text)
    doc["Filter"]["input"]["DataFrameScan"]["df"] = [0, 1, 2]
    assert read_plan_json(json.dumps(doc)) == read_plan(_frame().filter(pl.col("a") > 1))


def _plan_golden_files() -> list[Path]:
    return sorted(GOLDEN.glob("plans-polars-*.json"))


def test_plan_golden_files_cover_both_major_versions() -> None:
    majors = {p.stem.removeprefix("plans-polars-").split(".")[0] for p in _plan_golden_files()}
    assert {"1", "2"} <= majors


@pytest.mark.parametrize("path", _plan_golden_files(), ids=lambda p: p.stem)
def test_stored_plans_of_each_tested_polars_read_into_the_same_steps(path: Path) -> None:
    stored: dict[str, str] = json.loads(path.read_text())
    assert set(stored) == set(CASES) - {"file_scan"}
    for name, text in stored.items():
        assert read_plan_json(text) == CASES[name][1], name


def test_write_plan_golden_file() -> None:
    """``OPENDP_LITE_WRITE_GOLDEN=1`` (re)writes the installed Polars' plan JSON."""
    if not os.environ.get("OPENDP_LITE_WRITE_GOLDEN"):
        pytest.skip("set OPENDP_LITE_WRITE_GOLDEN=1 to write")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        current = {name: build().serialize(format="json") for name, (build, _) in CASES.items()}
    path = GOLDEN / f"plans-polars-{pl.__version__}.json"
    path.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")


# --- refusals ----------------------------------------------------------------------------------


def _lf() -> Any:
    return pl.LazyFrame({"a": [1, 2], "g": ["x", "y"]})


def _agg() -> Any:
    return _lf().group_by("g").agg(dp_namespace.len(signed=True))


REFUSED: dict[str, tuple[Callable[[], Any], str]] = {
    "head": (lambda: _lf().head(2), "row positions"),
    "unique": (lambda: _lf().unique(), "unique"),
    "concat": (lambda: pl.concat([_lf(), _lf()]), "concat"),
    "rename": (lambda: _lf().rename({"a": "b"}), "frame function"),
    "explode": (lambda: _lf().explode("a"), "frame function"),
    "with_row_index": (lambda: _lf().with_row_index(), "frame function"),
    "map_batches": (lambda: _lf().map_batches(lambda d: d), "Python function"),
    "cache": (lambda: _lf().cache(), "cache"),
    "drop": (lambda: _lf().drop("a"), "drop" if MINOR < (1, 31) else "selector"),
    "join_before_agg": (lambda: _lf().join(_keys(), on="g", how="left"), "join other than"),
    "join_private_private": (lambda: _agg().join(_agg(), on="g", how="left"), "join other than"),
    "join_keeps_private_groups": (
        lambda: _agg().join(_keys(), on="g", how="left"),
        "does not keep the key frame",
    ),
    "join_inner": (lambda: _agg().join(_keys(), on="g", how="inner"), "does not keep"),
    "join_cross": (lambda: _agg().join(_keys(), how="cross"), "Cross join"),
    "join_semi": (lambda: _agg().join(_keys(), on="g", how="semi"), "Semi join"),
    "join_validate": (
        lambda: _agg().join(_keys(), on="g", how="right", validate="1:1"),
        "validate",
    ),
    "udf_in_select": (lambda: _lf().select(pl.col("a").map_batches(lambda s: s)), "Python"),
    "window_in_with_columns": (
        lambda: _lf().with_columns(pl.col("a").sum().over("g")),
        "window",
    ),
    "top_k": (lambda: _lf().top_k(1, by="a"), "slice"),
    "unsupported_schema_type": (
        lambda: pl.LazyFrame(schema={"l": pl.List(pl.Int8)}),
        "column 'l'",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_unsupported_plan_is_refused_by_name(name: str) -> None:
    build, words = REFUSED[name]
    with pytest.raises(UnsupportedPolarsExpression, match="not supported") as info:
        read_plan(build())
    assert words in str(info.value)


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        '{"DataFrameScan": {"df": [], "schema": {"fields": {"a": "Int64"}}, "extra": 1}}',
        '{"DataFrameScan": {"df": [], "schema": {"fields": {"a": "Int64"}, "metadata": {"k": 1}}}}',
        '{"Filter": {"input": {"DataFrameScan": {"df": [], "schema": {"fields": {}}}}}}',
        '{"SomethingNew": {}}',
        "[]",
    ],
)
def test_unknown_plan_json_is_refused(text: str) -> None:
    with pytest.raises(UnsupportedPolarsExpression):
        read_plan_json(text)


def test_not_a_lazyframe_is_refused() -> None:
    with pytest.raises(UnsupportedPolarsExpression, match="expected a Polars LazyFrame"):
        read_plan(pl.DataFrame({"a": [1]}))


def test_a_querys_polars_plan_stands_in_without_data_and_fails_to_collect() -> None:
    """As OpenDP's test_execute_shim and the explain part of test_polars_non_wrapping."""
    import polars as pl

    import opendp_lite.prelude as dp

    data = pl.LazyFrame({"A": ["x", "x", "y", None]})
    c = dp.Context.compositor(
        data=data,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=2,
    )
    q = c.query()
    assert q.explain() == 'DF ["A"]; PROJECT */1 COLUMNS'
    steps = q.with_columns(B=dp.col("A").is_null()).filter(dp.col("B"))
    assert "WITH_COLUMNS" in steps.explain() and "FILTER" in steps.explain()
    # the stand-in holds no row of the data, and nothing was charged
    assert steps.polars_plan.collect().height == 0
    assert steps.polars_plan.collect_schema() == {"A": pl.String, "B": pl.Boolean}
    with pytest.raises(pl.exceptions.ComputeError, match="must be passed through"):
        steps.select(dp.len(signed=True)).polars_plan.collect()
    assert c.d_mids_consumed == []
