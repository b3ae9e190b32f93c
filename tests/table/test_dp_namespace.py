"""The ``.dp`` namespace: OpenDP 0.16's signatures, warnings and output names; the calls are
plain expressions that survive chaining; registration is lazy and idempotent."""

from __future__ import annotations

import inspect
import subprocess
import sys
import warnings

import pytest

pl = pytest.importorskip("polars")

from opendp_lite.errors import InvalidParameter, ParameterTypeError  # noqa: E402
from opendp_lite.table import dp_namespace  # noqa: E402
from opendp_lite.table import nodes as n  # noqa: E402
from opendp_lite.table.dp_namespace import DPExpr, ensure_registered  # noqa: E402
from opendp_lite.table.polars_reader import read_expr  # noqa: E402

ensure_registered()

#: OpenDP 0.16's parameters, in order, with their defaults (from its source and docs)
OPENDP_SIGNATURES = {
    "noise": [("scale", None)],
    "laplace": [("scale", None)],
    "gaussian": [("scale", None)],
    "len": [("scale", None), ("signed", None)],
    "count": [("scale", None), ("signed", None)],
    "null_count": [("scale", None), ("signed", None)],
    "n_unique": [("scale", None), ("signed", None)],
    "sum": [("bounds", inspect.Parameter.empty), ("scale", None)],
    "mean": [("bounds", inspect.Parameter.empty), ("scale", None)],
    "quantile": [
        ("alpha", inspect.Parameter.empty),
        ("candidates", inspect.Parameter.empty),
        ("scale", None),
    ],
    "median": [("candidates", inspect.Parameter.empty), ("scale", None)],
}


@pytest.mark.parametrize("method", sorted(OPENDP_SIGNATURES))
def test_signatures_are_opendp_016s(method: str) -> None:
    params = list(inspect.signature(getattr(DPExpr, method)).parameters.values())[1:]
    assert [(p.name, p.default) for p in params] == OPENDP_SIGNATURES[method]


def test_top_level_len_signature() -> None:
    params = inspect.signature(dp_namespace.len).parameters.values()
    assert [(p.name, p.default) for p in params] == [("scale", None), ("signed", None)]


def test_namespace_is_registered_once_and_idempotently() -> None:
    ensure_registered()
    ensure_registered()
    assert pl.Expr.dp is DPExpr
    assert isinstance(pl.col("a").dp, DPExpr)


def test_importing_opendp_lite_does_not_import_polars() -> None:
    code = (
        "import sys; import opendp_lite, opendp_lite.table.dp_namespace, "
        "opendp_lite.table.polars_reader; print('polars' in sys.modules)"
    )
    out = subprocess.run(  # noqa: S603 - our own interpreter and code
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("method", ["len", "count", "null_count", "n_unique"])
def test_unset_signed_warns_as_opendp_and_means_unsigned(method: str) -> None:
    with pytest.warns(FutureWarning, match="signed=True") as record:
        e = getattr(pl.col("a").dp, method)()
    assert record[0].filename == __file__  # the warning points at the caller
    assert read_expr(e) == n.DPAgg(method, n.Col("a"), signed=False)


def test_warnings_point_at_the_user_through_library_wrappers() -> None:
    """A wrapper inside opendp_lite (the prelude's ``dp.len``) does not move the warning off
    the user's line."""
    namespace: dict[str, object] = {"__name__": "opendp_lite.some_wrapper", "inner": dp_namespace}
    exec("def wrapper(**kw):\n    return inner.len(**kw)\n", namespace)  # noqa: S102
    with pytest.warns(FutureWarning) as record:
        namespace["wrapper"]()  # type: ignore[operator]
    assert record[0].filename == __file__
    with pytest.warns(DeprecationWarning) as record:
        pl.len().dp.laplace()
    assert record[0].filename == __file__


def test_top_level_len_warns_when_signed_is_unset() -> None:
    with pytest.warns(FutureWarning):
        e = dp_namespace.len()
    assert read_expr(e) == n.DPAgg("len", n.Len(), signed=False)


@pytest.mark.parametrize("method", ["len", "count"])
def test_set_signed_does_not_warn(method: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        getattr(pl.col("a").dp, method)(signed=True)
        dp_namespace.len(signed=False)


def test_signed_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match="signed must be a bool or None"):
        pl.col("a").dp.count(signed=1)


@pytest.mark.parametrize("alias", ["laplace", "gaussian"])
def test_laplace_and_gaussian_are_deprecated_aliases_of_noise(alias: str) -> None:
    with pytest.warns(DeprecationWarning, match="use .dp.noise"):
        e = getattr(pl.len().dp, alias)(scale=2.0)
    # as in OpenDP 0.16: the law follows the privacy measure, not the alias's name
    assert read_expr(e) == read_expr(pl.len().dp.noise(scale=2.0))


def test_mean_refuses_a_tuple_scale_as_opendp() -> None:
    with pytest.raises(InvalidParameter, match="one number"):
        pl.col("a").dp.mean((0, 1), scale=(1.0, 2.0))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "call",
    [
        lambda: pl.col("a").dp.sum((1, 0)),
        lambda: pl.col("a").dp.sum((0, float("inf"))),
        lambda: pl.col("a").dp.sum((0, 1, 2)),  # type: ignore[arg-type]
        lambda: pl.col("a").dp.sum((0, 1), scale=-1.0),
        lambda: pl.col("a").dp.sum((0, 1), scale=float("nan")),
        lambda: pl.col("a").dp.quantile(1.5, [1, 2]),
        lambda: pl.col("a").dp.median([]),
    ],
)
def test_bad_parameters_are_refused_when_the_expression_is_built(call: object) -> None:
    with pytest.raises(InvalidParameter):
        call()  # type: ignore[operator]


@pytest.mark.parametrize(
    "call",
    [
        lambda: pl.col("a").dp.sum("ab"),  # type: ignore[arg-type]
        lambda: pl.col("a").dp.sum((0, "1")),  # type: ignore[arg-type]
        lambda: pl.col("a").dp.median(["a", "b"]),  # type: ignore[list-item]
        lambda: pl.col("a").dp.sum((False, True)),
    ],
)
def test_parameters_of_the_wrong_type_are_refused(call: object) -> None:
    with pytest.raises(ParameterTypeError):
        call()  # type: ignore[operator]


def test_numpy_and_series_parameters_are_read_as_python_numbers() -> None:
    np = pytest.importorskip("numpy")
    e = pl.col("a").dp.sum((np.int64(0), np.int64(10)), scale=np.float64(1.5))
    assert read_expr(e) == n.DPAgg("sum", n.Col("a"), bounds=(0, 10), scale=1.5)
    e = pl.col("a").dp.quantile(np.float64(0.5), pl.Series([1.0, 2.0]))
    assert read_expr(e) == n.DPAgg("quantile", n.Col("a"), candidates=(1.0, 2.0), alpha=0.5)


def test_int_bounds_stay_ints_and_float_bounds_stay_floats() -> None:
    assert read_expr(pl.col("a").dp.sum((0, 10))).bounds == (0, 10)  # type: ignore[union-attr]
    bounds = read_expr(pl.col("a").dp.sum((0.0, 0.1))).bounds  # type: ignore[union-attr]
    assert bounds == (0.0, 0.1) and all(type(v) is float for v in bounds)


@pytest.mark.parametrize(
    ("build", "name"),
    [
        (lambda: pl.col("x").dp.sum((0, 10)), "x"),
        (lambda: pl.col("x").dp.len(signed=True), "x"),
        (lambda: pl.len().dp.noise(), "len"),
        (lambda: dp_namespace.len(signed=True), "len"),
        (lambda: pl.col("x").dp.mean((0, 1)).alias("m"), "m"),
    ],
)
def test_output_name_is_opendps(build: object, name: str) -> None:
    e = build()  # type: ignore[operator]
    assert e.meta.output_name() == name
    assert n.output_name(read_expr(e)) == name


def test_marker_survives_chaining_and_evaluation_shape() -> None:
    """The encoded call is an ordinary expression: Polars accepts it in a select (a struct
    column; nothing private is computed by it) and in arithmetic."""
    e = (pl.col("x").dp.sum((0, 10)) / pl.len().dp.noise()).alias("r")
    assert isinstance(e, pl.Expr)
    frame = pl.DataFrame({"x": [1, 2]}).select(pl.col("x").dp.sum((0, 10)))
    assert frame.columns == ["x"]
