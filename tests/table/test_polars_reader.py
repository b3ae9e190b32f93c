"""The Polars reader's golden table: each expression, as the installed Polars writes it, reads
into the expected nodes; and the JSON that every tested Polars version wrote (stored under
``golden/``) reads into the same nodes, so one run checks the reader against both versions.

``OPENDP_LITE_WRITE_GOLDEN=1`` (re)writes ``golden/polars-<version>.json`` for the installed
Polars (``python -m tools.check_polars_versions`` does it for each tested version).
"""

from __future__ import annotations

import datetime
import json
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pl = pytest.importorskip("polars")

from opendp_lite.table import dp_namespace  # noqa: E402
from opendp_lite.table import nodes as n  # noqa: E402
from opendp_lite.table.polars_reader import read_expr, read_expr_json  # noqa: E402

GOLDEN = Path(__file__).parent / "golden"
MAJOR = int(pl.__version__.split(".")[0])

dp_namespace.ensure_registered()

a, b = n.Col("a"), n.Col("b")


def _cut() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # cut is deprecated on Polars 2
        return pl.col("a").cut([1, 2.5], labels=["lo", "mid", "hi"], left_closed=True)


def _cut_default() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return pl.col("a").cut([0])


def _bin() -> Any:
    return pl.col("a").bin_intervals([1, 2], labels=["lo", "mid", "hi"])


def _agg(kind: str, expr: n.Expr, **kw: Any) -> n.DPAgg:
    return n.DPAgg(kind, expr, **kw)


#: name -> (the expression, built on the installed Polars; the nodes it reads into; the oldest
#: Polars major version that has it)
CASES: dict[str, tuple[Callable[[], Any], n.Expr, int]] = {
    "col": (lambda: pl.col("a"), a, 1),
    "lit_int": (lambda: pl.lit(1), n.Lit(1), 1),
    "lit_big_int": (lambda: pl.lit(2**70), n.Lit(2**70), 1),
    "lit_float": (lambda: pl.lit(1.5), n.Lit(1.5), 1),
    "lit_str": (lambda: pl.lit("x"), n.Lit("x"), 1),
    "lit_bool": (lambda: pl.lit(True), n.Lit(True), 1),
    "lit_none": (lambda: pl.lit(None), n.Lit(None), 1),
    "lit_int8": (lambda: pl.lit(1, dtype=pl.Int8), n.Lit(1, "Int8"), 1),
    "lit_uint32": (lambda: pl.lit(7, dtype=pl.UInt32), n.Lit(7, "UInt32"), 1),
    "lit_float32": (lambda: pl.lit(1.5, dtype=pl.Float32), n.Lit(1.5, "Float32"), 1),
    "lit_date": (
        lambda: pl.lit(datetime.date(2020, 1, 2)),
        n.Lit(datetime.date(2020, 1, 2), "Date"),
        1,
    ),
    "lit_datetime": (
        lambda: pl.lit(datetime.datetime(2020, 1, 2, 3, 4, 5, 6)),
        n.Lit(datetime.datetime(2020, 1, 2, 3, 4, 5, 6), ("Datetime", "us", None)),
        1,
    ),
    "lit_time": (
        lambda: pl.lit(datetime.time(3, 4, 5)),
        n.Lit(datetime.time(3, 4, 5), "Time"),
        1,
    ),
    "alias": (lambda: pl.col("a").alias("b"), n.Alias(a, "b"), 1),
    "len": (lambda: pl.len(), n.Len(), 1),
    **{
        f"binary_{name}": (
            (lambda op=op: op(pl.col("a"), pl.col("b"))),
            n.Binary(sym, a, b),
            1,
        )
        for name, sym, op in [
            ("eq", "==", lambda x, y: x == y),
            ("ne", "!=", lambda x, y: x != y),
            ("lt", "<", lambda x, y: x < y),
            ("le", "<=", lambda x, y: x <= y),
            ("gt", ">", lambda x, y: x > y),
            ("ge", ">=", lambda x, y: x >= y),
            ("add", "+", lambda x, y: x + y),
            ("sub", "-", lambda x, y: x - y),
            ("mul", "*", lambda x, y: x * y),
            ("truediv", "/", lambda x, y: x / y),
            ("floordiv", "//", lambda x, y: x // y),
            ("mod", "%", lambda x, y: x % y),
            ("and", "&", lambda x, y: x & y),
            ("or", "|", lambda x, y: x | y),
            ("xor", "^", lambda x, y: x ^ y),
        ]
    },
    "binary_lit": (lambda: pl.col("a") + 1, n.Binary("+", a, n.Lit(1)), 1),
    "not": (lambda: ~pl.col("a"), n.Unary("not", a), 1),
    "neg": (lambda: -pl.col("a"), n.Unary("neg", a), 1),
    "abs": (lambda: pl.col("a").abs(), n.Unary("abs", a), 1),
    **{
        m: ((lambda m=m: getattr(pl.col("a"), m)()), n.Unary(m, a), 1)
        for m in [
            "is_null",
            "is_not_null",
            "is_nan",
            "is_not_nan",
            "is_finite",
            "is_infinite",
            "drop_nulls",
            "drop_nans",
            "to_physical",
        ]
    },
    "cast_strict": (lambda: pl.col("a").cast(pl.Int32), n.Cast(a, "Int32"), 1),
    "cast_non_strict": (
        lambda: pl.col("a").cast(pl.Float64, strict=False),
        n.Cast(a, "Float64", strict=False),
        1,
    ),
    "cast_string": (lambda: pl.col("a").cast(pl.String), n.Cast(a, "String"), 1),
    "cast_categorical": (lambda: pl.col("a").cast(pl.Categorical), n.Cast(a, "Categorical"), 1),
    "cast_enum": (
        lambda: pl.col("a").cast(pl.Enum(["x", "y"])),
        n.Cast(a, ("Enum", ("x", "y"))),
        1,
    ),
    "cast_datetime": (
        lambda: pl.col("a").cast(pl.Datetime("ms", "UTC")),
        n.Cast(a, ("Datetime", "ms", "UTC")),
        1,
    ),
    "cast_date": (lambda: pl.col("a").cast(pl.Date), n.Cast(a, "Date"), 1),
    "clip": (lambda: pl.col("a").clip(0, 10), n.Clip(a, 0, 10), 1),
    "clip_lower": (lambda: pl.col("a").clip(lower_bound=0.5), n.Clip(a, 0.5, None), 1),
    "clip_upper": (lambda: pl.col("a").clip(upper_bound=3), n.Clip(a, None, 3), 1),
    "fill_null": (lambda: pl.col("a").fill_null(0), n.FillNull(a, n.Lit(0)), 1),
    "fill_null_expr": (lambda: pl.col("a").fill_null(pl.col("b")), n.FillNull(a, b), 1),
    "fill_nan": (lambda: pl.col("a").fill_nan(0.0), n.FillNan(a, n.Lit(0.0)), 1),
    "filter": (
        lambda: pl.col("a").filter(pl.col("b") > 1),
        n.FilterExpr(a, n.Binary(">", b, n.Lit(1))),
        1,
    ),
    "cut": (_cut, n.Cut(a, (1.0, 2.5), ("lo", "mid", "hi"), True), 1),
    "cut_default": (_cut_default, n.Cut(a, (0.0,), None, False), 1),
    "bin_intervals": (_bin, n.Cut(a, (1, 2), ("lo", "mid", "hi"), True), 2),
    "replace": (
        lambda: pl.col("a").replace([1, 2], [3, 4]),
        n.Replace(a, (1, 2), (3, 4)),
        1,
    ),
    "replace_mapping": (
        lambda: pl.col("a").replace({"x": "y"}),
        n.Replace(a, ("x",), ("y",)),
        1,
    ),
    "replace_scalar": (lambda: pl.col("a").replace(1, 2), n.Replace(a, (1,), (2,)), 1),
    "replace_strict": (
        lambda: pl.col("a").replace_strict([1, 2], [3, 4]),
        n.Replace(a, (1, 2), (3, 4), strict=True),
        1,
    ),
    "replace_strict_default": (
        lambda: pl.col("a").replace_strict(
            [1, 2], ["x", "y"], default="z", return_dtype=pl.Enum(["x", "y", "z"])
        ),
        n.Replace(a, (1, 2), ("x", "y"), True, n.Lit("z"), ("Enum", ("x", "y", "z"))),
        1,
    ),
    "strptime_date": (
        lambda: pl.col("a").str.strptime(pl.Date, "%Y-%m-%d"),
        n.StrPTime(a, "Date", "%Y-%m-%d"),
        1,
    ),
    "strptime_datetime": (
        lambda: pl.col("a").str.strptime(pl.Datetime("ms"), "%Y-%m-%d %H:%M", strict=False),
        n.StrPTime(a, ("Datetime", "ms", None), "%Y-%m-%d %H:%M"),
        1,
    ),
    "strptime_time": (
        lambda: pl.col("a").str.strptime(pl.Time, "%H:%M"),
        n.StrPTime(a, "Time", "%H:%M"),
        1,
    ),
    "to_date": (lambda: pl.col("a").str.to_date("%Y"), n.StrPTime(a, "Date", "%Y"), 1),
    **{
        f"dt_{part}": ((lambda part=part: getattr(pl.col("a").dt, part)()), n.DtPart(a, part), 1)
        for part in sorted(n.DT_PARTS)
    },
    "nested": (
        lambda: (pl.col("a").cast(pl.Float64).fill_null(0.0).clip(0.0, 1.0) * 2).alias("c"),
        n.Alias(
            n.Binary("*", n.Clip(n.FillNull(n.Cast(a, "Float64"), n.Lit(0.0)), 0.0, 1.0), n.Lit(2)),
            "c",
        ),
        1,
    ),
    # --- exact aggregations (private under .dp.noise) ---------------------------------------
    "agg_sum": (lambda: pl.col("a").sum(), n.Agg("sum", a), 1),
    "agg_len": (lambda: pl.col("a").len(), n.Agg("len", a), 1),
    "agg_count": (lambda: pl.col("a").count(), n.Agg("count", a), 1),
    "agg_null_count": (lambda: pl.col("a").null_count(), n.Agg("null_count", a), 1),
    "agg_n_unique": (lambda: pl.col("a").n_unique(), n.Agg("n_unique", a), 1),
    "dp_noise_sum": (
        lambda: pl.col("a").fill_null(0).clip(0, 1).sum().dp.noise(0.0),
        _agg("noise", n.Agg("sum", n.Clip(n.FillNull(a, n.Lit(0)), 0, 1)), scale=0.0),
        1,
    ),
    # --- the .dp calls -----------------------------------------------------------------------
    "dp_len_top": (lambda: dp_namespace.len(signed=True), _agg("len", n.Len(), signed=True), 1),
    "dp_len_top_scale": (
        lambda: dp_namespace.len(scale=2.0, signed=False),
        _agg("len", n.Len(), scale=2.0, signed=False),
        1,
    ),
    "dp_len": (lambda: pl.col("a").dp.len(signed=True), _agg("len", a, signed=True), 1),
    "dp_count": (
        lambda: pl.col("a").dp.count(scale=1.0, signed=False),
        _agg("count", a, scale=1.0, signed=False),
        1,
    ),
    "dp_null_count": (
        lambda: pl.col("a").dp.null_count(signed=True),
        _agg("null_count", a, signed=True),
        1,
    ),
    "dp_n_unique": (
        lambda: pl.col("a").dp.n_unique(signed=True),
        _agg("n_unique", a, signed=True),
        1,
    ),
    "dp_sum_int": (lambda: pl.col("a").dp.sum((0, 10)), _agg("sum", a, bounds=(0, 10)), 1),
    "dp_sum_float": (
        lambda: pl.col("a").dp.sum((0.0, 1.5), scale=3),
        _agg("sum", a, bounds=(0.0, 1.5), scale=3.0),
        1,
    ),
    "dp_mean": (lambda: pl.col("a").dp.mean((1, 5)), _agg("mean", a, bounds=(1, 5)), 1),
    "dp_quantile": (
        lambda: pl.col("a").dp.quantile(0.25, [1, 2, 3], scale=1.0),
        _agg("quantile", a, candidates=(1, 2, 3), alpha=0.25, scale=1.0),
        1,
    ),
    "dp_median": (
        lambda: pl.col("a").dp.median([0.5, 1.5]),
        _agg("median", a, candidates=(0.5, 1.5), alpha=0.5),
        1,
    ),
    "dp_noise_len": (lambda: pl.len().dp.noise(), _agg("noise", n.Len()), 1),
    "dp_noise_scale": (
        lambda: pl.len().dp.noise(scale=0.0),
        _agg("noise", n.Len(), scale=0.0),
        1,
    ),
    "dp_alias": (
        lambda: pl.col("a").dp.sum((0, 10)).alias("total"),
        n.Alias(_agg("sum", a, bounds=(0, 10)), "total"),
        1,
    ),
    "dp_postprocess": (
        lambda: (pl.col("a").dp.sum((0, 10)) / pl.len().dp.noise()).alias("mean"),
        n.Alias(n.Binary("/", _agg("sum", a, bounds=(0, 10)), _agg("noise", n.Len())), "mean"),
        1,
    ),
    "dp_of_preprocessed": (
        lambda: pl.col("a").fill_null(0).clip(0, 1).dp.sum((0, 1)),
        _agg("sum", n.Clip(n.FillNull(a, n.Lit(0)), 0, 1), bounds=(0, 1)),
        1,
    ),
}


#: what some Polars versions (1.30, 1.35) write differently, and the reader reads as written:
#: a typed literal as a cast of a literal, a naive datetime literal as a cast of a UTC one
UTC = datetime.timezone.utc
CAST_FORMS: dict[str, n.Expr] = {
    "lit_int8": n.Cast(n.Lit(1), "Int8"),
    "lit_uint32": n.Cast(n.Lit(7), "UInt32"),
    "lit_float32": n.Cast(n.Lit(1.5), "Float32"),
    "lit_datetime": n.Cast(
        n.Lit(datetime.datetime(2020, 1, 2, 3, 4, 5, 6, tzinfo=UTC), ("Datetime", "us", "UTC")),
        ("Datetime", "us", None),
    ),
}


def _matches(name: str, read: n.Expr) -> bool:
    return read == CASES[name][1] or (name in CAST_FORMS and read == CAST_FORMS[name])


def _available(name: str) -> bool:
    return MAJOR >= CASES[name][2]


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_expression_reads_into_its_nodes(name: str) -> None:
    if not _available(name):
        pytest.skip(f"not in Polars {pl.__version__}")
    build, _, _ = CASES[name]
    assert _matches(name, read_expr(build()))


def _golden_files() -> list[Path]:
    return sorted(GOLDEN.glob("polars-*.json"))


def test_golden_files_cover_the_oldest_and_newest_tested_polars() -> None:
    versions = {p.stem.removeprefix("polars-").split(".")[0] for p in _golden_files()}
    assert {"1", "2"} <= versions


@pytest.mark.parametrize("path", _golden_files(), ids=lambda p: p.stem)
def test_stored_json_of_each_tested_polars_reads_into_the_same_nodes(path: Path) -> None:
    stored: dict[str, str] = json.loads(path.read_text())
    major = int(path.stem.removeprefix("polars-").split(".")[0])
    expected_names = {k for k, (_, _, since) in CASES.items() if major >= since}
    assert set(stored) == expected_names, "regenerate: python -m tools.check_polars_versions"
    for name, text in stored.items():
        assert _matches(name, read_expr_json(text)), name


def test_stored_json_is_what_the_installed_polars_writes() -> None:
    """The golden file of the installed version matches its output (or is (re)written)."""
    current = {
        name: build().meta.serialize(format="json")
        for name, (build, _, _) in CASES.items()
        if _available(name)
    }
    path = GOLDEN / f"polars-{pl.__version__}.json"
    if os.environ.get("OPENDP_LITE_WRITE_GOLDEN"):
        path.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
    if not path.exists():
        pytest.skip(f"no golden file for Polars {pl.__version__}")
    stored = json.loads(path.read_text())
    assert stored == current
