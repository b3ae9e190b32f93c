"""The reader fails closed: UDFs, windows, aggregations, unknown nodes and options, forged
markers and JSON it does not know are refused with a typed error naming the construct."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from typing import Any

import pytest

pl = pytest.importorskip("polars")

from opendp_lite.errors import NotImplementedForType  # noqa: E402
from opendp_lite.table import dp_namespace  # noqa: E402
from opendp_lite.table import nodes as n  # noqa: E402
from opendp_lite.table.polars_reader import (  # noqa: E402
    UnsupportedPolarsExpression,
    read_expr,
    read_expr_json,
)

dp_namespace.ensure_registered()
MAJOR = int(pl.__version__.split(".")[0])


def _map_elements() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pl.col("a").map_elements(lambda v: v + 1, return_dtype=pl.Int64)


#: name -> (the expression, words its refusal names; a tuple: any of them, by Polars version)
REFUSED: dict[str, tuple[Callable[[], Any], str | tuple[str, ...]]] = {
    "map_elements": (_map_elements, "Python function"),
    "map_batches": (lambda: pl.col("a").map_batches(lambda s: s), "Python function"),
    "over": (lambda: pl.col("a").sum().over("b"), "window"),
    # (mean, min, max, median, var, std are read: a stable group_by(...).agg(...) holds them)
    "exact_quantile": (lambda: pl.col("a").quantile(0.5), "exact Polars aggregation 'Quantile'"),
    "exact_first": (lambda: pl.col("a").first(), "first() (it depends on the rows' order"),
    "exact_last": (lambda: pl.col("a").last(), "last() (it depends on the rows' order"),
    "exact_std_ddof0": (lambda: pl.col("a").std(ddof=0), "std(ddof=0)"),
    "nan_max": (lambda: pl.col("a").nan_max(), ("nan_max", "NanMax", "'Max'")),
    "when": (lambda: pl.when(pl.col("a") > 1).then(1).otherwise(0), "when/then/otherwise"),
    "all": (lambda: pl.all(), "selector"),
    "two_columns": (lambda: pl.col("a", "b"), "selector"),
    "regex": (lambda: pl.col("^a.*$"), "selector"),
    "name_suffix": (
        lambda: pl.col("a").name.suffix("_x"),
        (".name", "cannot write as JSON"),  # Polars 1.30 cannot write it
    ),
    "struct": (lambda: pl.struct(pl.col("a"), pl.col("b")), "pl.struct"),
    "fill_null_strategy": (lambda: pl.col("a").fill_null(strategy="forward"), "strategy"),
    "fill_null_zero": (lambda: pl.col("a").fill_null(strategy="zero"), "strategy"),
    "floor": (lambda: pl.col("a").floor(), "'Floor'"),
    "eq_missing": (lambda: pl.col("a").eq_missing(1), "eq_missing"),
    "nan_literal": (lambda: pl.lit(float("nan")), "non-finite"),
    "inf_literal": (lambda: pl.lit(float("inf"), dtype=pl.Float64), "non-finite"),
    "series_literal": (lambda: pl.lit(pl.Series([1, 2])), "Series literal"),
    "cast_list": (lambda: pl.col("a").cast(pl.List(pl.Int8)), "data type List"),
    "cast_decimal": (lambda: pl.col("a").cast(pl.Decimal(10, 2)), "data type Decimal"),
    "clip_by_column": (lambda: pl.col("a").clip(pl.col("b"), 3), "non-literal clip bound"),
    "strptime_no_format": (lambda: pl.col("a").str.strptime(pl.Date), "without a format"),
    "strptime_inexact": (
        lambda: pl.col("a").str.strptime(pl.Date, "%Y", exact=False),
        "exact=False",
    ),
    "string_function": (lambda: pl.col("a").str.to_uppercase(), "string function 'Uppercase'"),
    "string_len": (lambda: pl.col("a").str.len_chars(), "string function 'LenChars'"),
    "is_in": (lambda: pl.col("a").is_in([1, 2]), "boolean function 'IsIn'"),
    "is_between": (lambda: pl.col("a").is_between(1, 2), "boolean function 'IsBetween'"),
    "dt_truncate": (lambda: pl.col("a").dt.truncate("1d"), "temporal function 'Truncate'"),
    "dt_strftime": (lambda: pl.col("a").dt.strftime("%Y"), "temporal function 'ToString'"),
    "round": (lambda: pl.col("a").round(1), "function 'Round'"),
    "sort": (lambda: pl.col("a").sort(), "sort"),
    "head": (lambda: pl.col("a").head(3), "row positions"),
    "replace_by_column": (lambda: pl.col("a").replace(pl.col("b"), 1), "non-literal"),
    "opendp_marker_literal_alone": (
        lambda: pl.lit(dp_namespace.MARKER_PREFIX + "{}"),
        "DP marker outside a .dp call",
    ),
}
if MAJOR >= 2:
    REFUSED["bin_count"] = (
        lambda: pl.col("a").bin_intervals(3, labels=False),
        "number of bins",
    )
    REFUSED["bin_index"] = (
        lambda: pl.col("a").bin_intervals([1, 2], labels=False),
        "labels=False",
    )
    REFUSED["bin_struct"] = (
        lambda: pl.col("a").bin_intervals([1, 2], labels=["a", "b", "c"], include_intervals=True),
        "include_intervals",
    )


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_unsupported_construct_is_refused_by_name(name: str) -> None:
    build, words = REFUSED[name]
    with pytest.raises(UnsupportedPolarsExpression, match="not supported") as info:
        read_expr(build())
    message = str(info.value)
    assert any(w in message for w in ((words,) if isinstance(words, str) else words))
    assert "supported: pl.col(name)" in message  # names the alternatives
    assert isinstance(info.value, NotImplementedForType)


def test_udf_bytes_are_never_unpickled() -> None:
    """The pickled function in an AnonymousFunction node is refused by the node kind; the
    bytes are not looked at (a payload that would run code on unpickling runs nothing)."""
    text = json.dumps(
        {"AnonymousFunction": {"input": [{"Column": "a"}], "function": list(b"cos\nsystem\n")}}
    )
    with pytest.raises(UnsupportedPolarsExpression, match="Python function"):
        read_expr_json(text)


def _json(e: Any) -> Any:
    return json.loads(e.meta.serialize(format="json"))


@pytest.mark.parametrize(
    "tamper",
    [
        lambda d: {**d, "Extra": 1},  # two keys at the top
        lambda d: {"Column": 5},  # wrong payload type
        lambda d: {"BinaryExpr": {"left": {"Column": "a"}, "op": "Pow", "right": {"Column": "b"}}},
        lambda d: {"BinaryExpr": {"left": {"Column": "a"}, "op": "Plus"}},  # missing field
        lambda d: {
            "Cast": {"expr": {"Column": "a"}, "dtype": {"Literal": "Int32"}, "options": "X"}
        },
        lambda d: {"Literal": {"Dyn": {"Complex": 1}}},
        lambda d: {"Literal": {"Scalar": {"Int8": "1"}}},
        lambda d: {"Function": {"input": [{"Column": "a"}], "function": {"Clip": {"has_min": 1}}}},
        lambda d: {"Function": {"input": [], "function": "Negate"}},
        lambda d: {"Function": {"input": [{"Column": "a"}], "function": {"Boolean": "IsEven"}}},
        lambda d: {"SomethingNew": {"input": {"Column": "a"}}},
        lambda d: [d],
        lambda d: None,
    ],
)
def test_unknown_json_shapes_are_refused_not_guessed(tamper: Callable[[Any], Any]) -> None:
    with pytest.raises(UnsupportedPolarsExpression):
        read_expr_json(json.dumps(tamper(_json(pl.col("a")))))


def test_not_json_is_refused() -> None:
    with pytest.raises(UnsupportedPolarsExpression):
        read_expr_json("{not json")


def _marker_scalar(d: Any) -> tuple[dict[str, Any], str]:
    """The dict holding the marker string, and its key (Polars 1.30 nests it further)."""
    scalar = d["Function"]["input"][1]["Alias"][0]["Literal"]["Scalar"]
    if "value" in scalar:  # Polars 1.30
        return scalar["value"], "StringOwned"
    return scalar, "String"


def _marker_json(e: Any) -> tuple[Any, str]:
    d = _json(e)
    holder, key = _marker_scalar(d)
    return d, holder[key]


def _with_marker(d: Any, text: str) -> str:
    holder, key = _marker_scalar(d)
    holder[key] = text
    return json.dumps(d)


@pytest.mark.parametrize(
    "edit",
    [
        lambda p: {**p, "v": 2},  # another marker version
        lambda p: {**p, "kind": "max"},  # unknown aggregate
        lambda p: {**p, "kind": "len"},  # parameters of another kind
        lambda p: {**p, "extra": 1},
        lambda p: {k: v for k, v in p.items() if k != "scale"},
        lambda p: {**p, "bounds": [10, 0]},  # lower > upper
        lambda p: {**p, "bounds": [0, "10"]},
        lambda p: {**p, "bounds": [0, 1, 2]},
        lambda p: {**p, "scale": -1.0},
        lambda p: {**p, "scale": True},
    ],
)
def test_forged_or_altered_marker_is_refused(edit: Callable[[Any], Any]) -> None:
    d, text = _marker_json(pl.col("a").dp.sum((0, 10)))
    payload = json.loads(text.removeprefix(dp_namespace.MARKER_PREFIX))
    forged = dp_namespace.MARKER_PREFIX + json.dumps(edit(payload))
    with pytest.raises(UnsupportedPolarsExpression, match="marker"):
        read_expr_json(_with_marker(d, forged))


@pytest.mark.parametrize(
    "text",
    [
        "opendp.dp:{}",  # another prefix
        dp_namespace.MARKER_PREFIX + "not json",
        dp_namespace.MARKER_PREFIX + '{"v": 1, "kind": "sum", "bounds": [0, Infinity], '
        '"scale": null}',
        dp_namespace.MARKER_PREFIX + "[1]",
    ],
)
def test_malformed_marker_text_is_refused(text: str) -> None:
    d, _ = _marker_json(pl.col("a").dp.sum((0, 10)))
    with pytest.raises(UnsupportedPolarsExpression, match="marker"):
        read_expr_json(_with_marker(d, text))


def test_marker_field_that_is_not_a_string_literal_is_refused() -> None:
    d, _ = _marker_json(pl.col("a").dp.sum((0, 10)))
    d["Function"]["input"][1]["Alias"][0] = {"Column": "b"}
    with pytest.raises(UnsupportedPolarsExpression, match="marker"):
        read_expr_json(json.dumps(d))


def test_hand_built_marker_reads_as_the_call_it_spells() -> None:
    """A marker built by hand with valid parameters is the same DP aggregate as the call:
    it can express nothing the .dp methods cannot."""
    payload = {"v": 1, "kind": "sum", "bounds": [0, 10], "scale": None}
    e = pl.struct(
        pl.col("a"),
        pl.lit(dp_namespace.MARKER_PREFIX + json.dumps(payload)).alias(dp_namespace.MARKER_FIELD),
    )
    assert read_expr(e) == read_expr(pl.col("a").dp.sum((0, 10)))
    assert read_expr(e) == n.DPAgg("sum", n.Col("a"), bounds=(0, 10))


def test_not_an_expression_is_refused() -> None:
    with pytest.raises(UnsupportedPolarsExpression, match="expected a Polars expression"):
        read_expr(1)  # type: ignore[arg-type]


def test_a_string_is_a_column_name_but_not_a_pattern() -> None:
    assert read_expr("a") == n.Col("a")
    for pattern in ("^a.*$", "*"):
        with pytest.raises(UnsupportedPolarsExpression, match="as a pattern"):
            read_expr(pattern)


def test_tampered_series_bytes_are_refused_or_read_never_a_crash() -> None:
    """A literal Series is Arrow IPC bytes in the JSON: altered bytes are refused (or read as
    other values), and a Rust panic inside Polars' IPC reader is refused too, not raised as
    a ``BaseException`` past ``except Exception``."""
    doc = _json(pl.col("a").replace([1, 2], [3, 4]))
    original = doc["Function"]["input"][1]["Literal"]["Series"]
    outcomes = set()
    for i in range(len(original)):
        for value in (0, 255, 0x7F):
            edited = list(original)
            edited[i] = value
            doc["Function"]["input"][1]["Literal"]["Series"] = edited
            try:
                read_expr_json(json.dumps(doc))
                outcomes.add("read")
            except UnsupportedPolarsExpression:
                outcomes.add("refused")
    assert outcomes == {"read", "refused"}


# --- OpenDP 0.16's own .dp calls ----------------------------------------------------------------
# What OpenDP 0.16's namespace writes on Polars 1.36 (its .dp methods are plugin calls into its
# library): read as the same aggregates, so expressions built while ``opendp`` had registered
# its namespace last are read too.  (The JSON is written here, not built by importing OpenDP,
# which would replace this process's ``.dp`` namespace.)


def _opendp_call(symbol: str, inputs: list[Any], lib: str = "") -> str:
    flags = {"check_lengths": True, "flags": "RETURNS_SCALAR"}
    lib = lib or "lib/python3.11/site-packages/opendp/lib/opendp.abi3.so"
    plugin = {"flags": flags, "lib": lib, "symbol": symbol, "kwargs": []}
    return json.dumps({"Function": {"input": inputs, "function": {"FfiPlugin": plugin}}})


A = {"Column": "a"}
NULL = {"Literal": {"Scalar": {"Null": "Null"}}}


def _lit(v: Any) -> Any:
    if isinstance(v, bool):
        return {"Literal": {"Scalar": {"Boolean": v}}}
    return {"Literal": {"Dyn": {"Int" if isinstance(v, int) else "Float": v}}}


#: OpenDP 0.16's dp.quantile(0.25, [1, 2, 3], scale=1.0) on Polars 1.36.1
OPENDP_QUANTILE = json.loads(
    '"{\\"Function\\":{\\"input\\":[{\\"Column\\":\\"a\\"},{\\"Literal\\":{\\"Dyn\\":{\\"Float\\":0.25}}},{\\"Literal\\":{\\"Series\\":[255,255,255,255,184,0,0,0,4,0,0,0,242,255,255,255,20,0,0,0,4,0,1,0,0,0,10,0,11,0,8,0,10,0,4,0,242,255,255,255,72,0,0,0,16,0,0,0,0,0,10,0,12,0,0,0,4,0,8,0,1,0,0,0,4,0,0,0,244,255,255,255,24,0,0,0,12,0,0,0,8,0,12,0,4,0,8,0,3,0,0,0,91,48,93,0,9,0,0,0,95,80,76,95,70,76,65,71,83,0,0,0,1,0,0,0,4,0,0,0,236,255,255,255,56,0,0,0,32,0,0,0,24,0,0,0,1,2,0,0,16,0,18,0,4,0,16,0,17,0,8,0,0,0,12,0,0,0,0,0,244,255,255,255,64,0,0,0,1,0,0,0,8,0,9,0,4,0,8,0,0,0,0,0,0,0,0,0,0,0,0,0,255,255,255,255,128,0,0,0,4,0,0,0,236,255,255,255,64,0,0,0,0,0,0,0,20,0,0,0,4,0,3,0,12,0,19,0,16,0,18,0,12,0,4,0,234,255,255,255,3,0,0,0,0,0,0,0,60,0,0,0,16,0,0,0,0,0,10,0,20,0,4,0,12,0,16,0,2,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,24,0,0,0,0,0,0,0,0,0,0,0,1,0,0,0,3,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1,0,0,0,0,0,0,0,2,0,0,0,0,0,0,0,3,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,255,255,255,255,0,0,0,0]}},{\\"Literal\\":{\\"Dyn\\":{\\"Float\\":1.0}}}],\\"function\\":{\\"FfiPlugin\\":{\\"flags\\":{\\"check_lengths\\":true,\\"flags\\":\\"RETURNS_SCALAR\\"},\\"lib\\":\\"lib/python3.11/site-packages/opendp/lib/opendp.abi3.so\\",\\"symbol\\":\\"dp_quantile\\",\\"kwargs\\":[]}}}}"'
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (_opendp_call("dp_len", [A, NULL, _lit(True)]), n.DPAgg("len", n.Col("a"), signed=True)),
        (
            _opendp_call("dp_count", [A, _lit(1.0), _lit(False)]),
            n.DPAgg("count", n.Col("a"), scale=1.0, signed=False),
        ),
        (
            _opendp_call("dp_null_count", [A, NULL, _lit(True)]),
            n.DPAgg("null_count", n.Col("a"), signed=True),
        ),
        (
            _opendp_call("dp_n_unique", [A, NULL, _lit(False)]),
            n.DPAgg("n_unique", n.Col("a"), signed=False),
        ),
        (
            _opendp_call("dp_sum", [A, _lit(0), _lit(10), NULL]),
            n.DPAgg("sum", n.Col("a"), bounds=(0, 10)),
        ),
        (
            _opendp_call("dp_mean", [A, _lit(0.5), _lit(10.0), _lit(2.0)]),
            n.DPAgg("mean", n.Col("a"), bounds=(0.5, 10.0), scale=2.0),
        ),
        (
            OPENDP_QUANTILE,
            n.DPAgg("quantile", n.Col("a"), candidates=(1, 2, 3), alpha=0.25, scale=1.0),
        ),
        (_opendp_call("noise", ["Len", NULL]), n.DPAgg("noise", n.Len())),
        (
            _opendp_call("dp_frame_len", [_lit(2), _lit(False)]),
            n.DPAgg("len", n.Len(), scale=2.0, signed=False),
        ),
    ],
)
def test_opendp_016_dp_calls_read_as_the_same_aggregates(text: str, expected: n.Expr) -> None:
    assert read_expr_json(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        _opendp_call("dp_sum", [A, _lit(0), _lit(10), NULL], lib="/x/evil/lib.so"),  # not OpenDP
        _opendp_call("dp_histogram", [A, NULL]),  # unknown symbol
        _opendp_call("noise", ["Len", {"Literal": {"Scalar": {"String": "Laplace"}}}, _lit(0.7)]),
        _opendp_call("dp_sum", [A, {"Column": "b"}, _lit(10), NULL]),  # a bound from data
        _opendp_call("dp_len", [A, NULL]),  # OpenDP < 0.16: no signed argument
        json.dumps(
            {
                "Function": {
                    "input": ["Len", NULL],
                    "function": {
                        "FfiPlugin": {
                            "flags": {},
                            "lib": "opendp/lib/opendp.abi3.so",
                            "symbol": "noise",
                            "kwargs": [128, 4, 149],  # pickled keyword arguments
                        }
                    },
                }
            }
        ),
    ],
)
def test_other_plugin_calls_are_refused(text: str) -> None:
    with pytest.raises(UnsupportedPolarsExpression, match="plugin function"):
        read_expr_json(text)


def test_opendp_call_with_bad_parameters_is_refused() -> None:
    with pytest.raises(UnsupportedPolarsExpression, match="out of range"):
        read_expr_json(_opendp_call("dp_sum", [A, _lit(10), _lit(0), NULL]))
