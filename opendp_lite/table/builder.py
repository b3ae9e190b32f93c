"""A Polars-free expression builder: ``dp.col("x")`` and ``dp.len()`` build :mod:`.nodes`.

For code that should not depend on Polars at all: the same queries as with ``pl.col``, the
same nodes, the same analysis.

>>> e = (col("age").clip(0, 100) + 1).alias("a1")
>>> e.node == n.Alias(n.Binary("+", n.Clip(n.Col("age"), 0, 100), n.Lit(1)), "a1")
True
>>> col("x").dp.sum((0, 10)).node == n.DPAgg("sum", n.Col("x"), bounds=(0, 10))
True
>>> len(signed=True).node == n.DPAgg("len", n.Len(), signed=True)
True
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Sequence
from typing import Any

from ..errors import InvalidParameter, NotImplementedForType, ParameterTypeError
from . import nodes as n

__all__ = ["DPExpr", "col", "len", "lit", "to_node"]

_SCALARS = (bool, int, float, str, bytes)


def to_node(x: Any) -> n.Expr:
    """An expression as a node: a :class:`DPExpr`, a node, a column name (``str``), a
    ``pl.Expr`` (through the fail-closed reader) or a scalar literal.

    Raises:
        NotImplementedForType: for anything else (or a ``pl.Expr`` while no reader is
            installed).
    """
    if isinstance(x, DPExpr):
        return x.node
    if isinstance(x, str):
        return n.Col(x)
    if isinstance(x, _NODE_TYPES):
        return x
    if type(x).__module__.partition(".")[0] == "polars" and type(x).__name__ == "Expr":
        return _read_polars(x)
    if x is None or isinstance(x, _SCALARS):
        return n.Lit(x)
    raise NotImplementedForType(
        f"expected an expression (dp.col(...), pl.col(...)) or a column name, got "
        f"{type(x).__name__}"
    )


def _lit_node(x: Any) -> n.Expr:
    if isinstance(x, str):  # a string operand is a literal, not a column (as in Polars)
        return n.Lit(x)
    return to_node(x)


def _read_polars(x: Any) -> n.Expr:
    try:
        from .polars_reader import read_expr
    except ImportError:
        raise NotImplementedForType(
            "Polars expressions need the Polars expression reader (opendp_lite.table."
            "polars_reader), which this build does not have yet; build the expression with "
            "dp.col(...) instead"
        ) from None
    node: n.Expr = read_expr(x)
    return node


_NODE_TYPES = (
    n.Col,
    n.Lit,
    n.Len,
    n.Alias,
    n.Binary,
    n.Unary,
    n.Cast,
    n.Clip,
    n.FillNull,
    n.FillNan,
    n.FilterExpr,
    n.Cut,
    n.Replace,
    n.StrPTime,
    n.DtPart,
    n.DPAgg,
)


class DPExpr:
    """An expression being built (a node inside); immutable: each method returns a new one."""

    __slots__ = ("node",)

    def __init__(self, node: n.Expr) -> None:
        self.node = node

    def __repr__(self) -> str:
        return f"<dp expr {self.node!r}>"

    def __bool__(self) -> bool:
        raise InvalidParameter(
            "an expression has no truth value: combine conditions with & and |, not and/or"
        )

    def _bin(self, op: str, other: Any, swap: bool = False) -> DPExpr:
        o = _lit_node(other)
        return DPExpr(n.Binary(op, o, self.node) if swap else n.Binary(op, self.node, o))

    def __add__(self, o: Any) -> DPExpr:
        return self._bin("+", o)

    def __radd__(self, o: Any) -> DPExpr:
        return self._bin("+", o, True)

    def __sub__(self, o: Any) -> DPExpr:
        return self._bin("-", o)

    def __rsub__(self, o: Any) -> DPExpr:
        return self._bin("-", o, True)

    def __mul__(self, o: Any) -> DPExpr:
        return self._bin("*", o)

    def __rmul__(self, o: Any) -> DPExpr:
        return self._bin("*", o, True)

    def __truediv__(self, o: Any) -> DPExpr:
        return self._bin("/", o)

    def __rtruediv__(self, o: Any) -> DPExpr:
        return self._bin("/", o, True)

    def __floordiv__(self, o: Any) -> DPExpr:
        return self._bin("//", o)

    def __rfloordiv__(self, o: Any) -> DPExpr:
        return self._bin("//", o, True)

    def __mod__(self, o: Any) -> DPExpr:
        return self._bin("%", o)

    def __rmod__(self, o: Any) -> DPExpr:
        return self._bin("%", o, True)

    def __eq__(self, o: Any) -> DPExpr:  # type: ignore[override]
        return self._bin("==", o)

    def __ne__(self, o: Any) -> DPExpr:  # type: ignore[override]
        return self._bin("!=", o)

    def __lt__(self, o: Any) -> DPExpr:
        return self._bin("<", o)

    def __le__(self, o: Any) -> DPExpr:
        return self._bin("<=", o)

    def __gt__(self, o: Any) -> DPExpr:
        return self._bin(">", o)

    def __ge__(self, o: Any) -> DPExpr:
        return self._bin(">=", o)

    def __and__(self, o: Any) -> DPExpr:
        return self._bin("&", o)

    def __rand__(self, o: Any) -> DPExpr:
        return self._bin("&", o, True)

    def __or__(self, o: Any) -> DPExpr:
        return self._bin("|", o)

    def __ror__(self, o: Any) -> DPExpr:
        return self._bin("|", o, True)

    def __xor__(self, o: Any) -> DPExpr:
        return self._bin("^", o)

    def __invert__(self) -> DPExpr:
        return DPExpr(n.Unary("not", self.node))

    def __neg__(self) -> DPExpr:
        return DPExpr(n.Unary("neg", self.node))

    def __abs__(self) -> DPExpr:
        return DPExpr(n.Unary("abs", self.node))

    __hash__ = None  # type: ignore[assignment]

    # -- methods -----------------------------------------------------------------------------

    def alias(self, name: str) -> DPExpr:
        return DPExpr(n.Alias(self.node, name))

    def clip(self, lower_bound: Any = None, upper_bound: Any = None) -> DPExpr:
        return DPExpr(n.Clip(self.node, lower_bound, upper_bound))

    def cast(self, dtype: Any, strict: bool = True) -> DPExpr:
        return DPExpr(n.Cast(self.node, _dtype(dtype), strict))

    def fill_null(self, value: Any) -> DPExpr:
        return DPExpr(n.FillNull(self.node, _lit_node(value)))

    def fill_nan(self, value: Any) -> DPExpr:
        return DPExpr(n.FillNan(self.node, _lit_node(value)))

    def is_null(self) -> DPExpr:
        return DPExpr(n.Unary("is_null", self.node))

    def is_not_null(self) -> DPExpr:
        return DPExpr(n.Unary("is_not_null", self.node))

    def is_nan(self) -> DPExpr:
        return DPExpr(n.Unary("is_nan", self.node))

    def is_not_nan(self) -> DPExpr:
        return DPExpr(n.Unary("is_not_nan", self.node))

    def is_finite(self) -> DPExpr:
        return DPExpr(n.Unary("is_finite", self.node))

    def is_infinite(self) -> DPExpr:
        return DPExpr(n.Unary("is_infinite", self.node))

    def not_(self) -> DPExpr:
        return DPExpr(n.Unary("not", self.node))

    def abs(self) -> DPExpr:
        return DPExpr(n.Unary("abs", self.node))

    def drop_nulls(self) -> DPExpr:
        return DPExpr(n.Unary("drop_nulls", self.node))

    def drop_nans(self) -> DPExpr:
        return DPExpr(n.Unary("drop_nans", self.node))

    def to_physical(self) -> DPExpr:
        return DPExpr(n.Unary("to_physical", self.node))

    def filter(self, predicate: Any) -> DPExpr:
        return DPExpr(n.FilterExpr(self.node, to_node(predicate)))

    def cut(
        self, breaks: Sequence[Any], labels: Sequence[str] | None = None, left_closed: bool = False
    ) -> DPExpr:
        return DPExpr(
            n.Cut(self.node, tuple(breaks), None if labels is None else tuple(labels), left_closed)
        )

    def replace(self, old: Any, new: Any = None) -> DPExpr:
        o, w = _mapping(old, new)
        return DPExpr(n.Replace(self.node, o, w))

    def replace_strict(
        self, old: Any, new: Any = None, *, default: Any = None, return_dtype: Any = None
    ) -> DPExpr:
        o, w = _mapping(old, new)
        d = None if default is None else _lit_node(default)
        rd = None if return_dtype is None else _dtype(return_dtype)
        return DPExpr(n.Replace(self.node, o, w, True, d, rd))

    @property
    def dp(self) -> DPNamespace:
        """The private aggregates of this expression (``.dp.sum(bounds)``, ...)."""
        return DPNamespace(self.node)

    @property
    def dt(self) -> _DtNamespace:
        return _DtNamespace(self.node)

    @property
    def str(self) -> _StrNamespace:
        return _StrNamespace(self.node)


def _mapping(old: Any, new: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    if isinstance(old, dict) and new is None:
        return tuple(old), tuple(old.values())
    olds = tuple(old) if isinstance(old, list | tuple) else (old,)
    news = tuple(new) if isinstance(new, list | tuple) else (new,) * builtins.len(olds)
    if builtins.len(olds) != builtins.len(news):
        raise InvalidParameter(
            f"replace: {builtins.len(olds)} old values, {builtins.len(news)} new"
        )
    return olds, news


def _dtype(dtype: Any) -> n.DType:
    """A data type by its Polars name: a string, a Python type, or a Polars dtype object."""
    if isinstance(dtype, str | tuple):
        return dtype
    py = {int: "Int64", float: "Float64", bool: "Boolean", str: "String"}
    if dtype in py:
        return py[dtype]
    name = getattr(dtype, "__name__", None) or type(dtype).__name__
    if name in ("Enum",) and hasattr(dtype, "categories"):
        return ("Enum", tuple(dtype.categories.to_list()))
    if name == "Datetime" and hasattr(dtype, "time_unit"):
        return ("Datetime", dtype.time_unit, dtype.time_zone)
    return str(name)


class _DtNamespace:
    def __init__(self, node: n.Expr) -> None:
        self._node = node

    def __getattr__(self, part: str) -> Any:
        if part not in n.DT_PARTS:
            raise NotImplementedForType(
                f"dt.{part} is not supported; supported: {sorted(n.DT_PARTS)}"
            )
        return lambda: DPExpr(n.DtPart(self._node, part))


class _StrNamespace:
    def __init__(self, node: n.Expr) -> None:
        self._node = node

    def strptime(self, dtype: Any, format: str | None = None, strict: bool = False) -> DPExpr:
        return DPExpr(n.StrPTime(self._node, _dtype(dtype), format))

    def to_date(self, format: str | None = None) -> DPExpr:
        return self.strptime("Date", format)

    def to_datetime(self, format: str | None = None) -> DPExpr:
        return self.strptime(("Datetime", "us", None), format)


def _signed(signed: bool | None) -> bool | None:
    """``signed`` checked; unset warns as OpenDP 0.16 does (the default is to change)."""
    if signed is None:
        warnings.warn(
            "The default value is currently signed=False, and counts are clamped at zero, "
            "consistent with past releases, but the default will be changing to signed=True. ",
            FutureWarning,
            stacklevel=3,
        )
        return None
    if not isinstance(signed, bool):
        raise ParameterTypeError(f"signed must be a bool or None, got {signed!r}")
    return signed


class DPNamespace:
    """``expr.dp``: the private aggregates, each a :class:`~.nodes.DPAgg` node."""

    def __init__(self, node: n.Expr) -> None:
        self._node = node

    def _agg(self, kind: str, **kw: Any) -> DPExpr:
        return DPExpr(n.DPAgg(kind, self._node, **kw))

    def len(self, scale: float | None = None, signed: bool | None = None) -> DPExpr:
        """The number of rows (nulls included)."""
        return self._agg("len", scale=scale, signed=_signed(signed))

    def count(self, scale: float | None = None, signed: bool | None = None) -> DPExpr:
        """The number of non-null values."""
        return self._agg("count", scale=scale, signed=_signed(signed))

    def null_count(self, scale: float | None = None, signed: bool | None = None) -> DPExpr:
        """The number of null values."""
        return self._agg("null_count", scale=scale, signed=_signed(signed))

    def n_unique(self, scale: float | None = None, signed: bool | None = None) -> DPExpr:
        """The number of distinct values."""
        return self._agg("n_unique", scale=scale, signed=_signed(signed))

    def sum(self, bounds: tuple[Any, Any], scale: float | None = None) -> DPExpr:
        """The sum of the values clipped to ``bounds`` (nulls skipped)."""
        return self._agg("sum", bounds=_bounds(bounds), scale=scale)

    def mean(self, bounds: tuple[Any, Any], scale: float | None = None) -> DPExpr:
        """The noisy sum over the noisy count (post-processing of two releases)."""
        return self._agg("mean", bounds=_bounds(bounds), scale=scale)

    def quantile(
        self, alpha: float, candidates: Sequence[Any], scale: float | None = None
    ) -> DPExpr:
        """The ``alpha``-quantile among ``candidates`` (exponential mechanism)."""
        return self._agg("quantile", alpha=float(alpha), candidates=tuple(candidates), scale=scale)

    def median(self, candidates: Sequence[Any], scale: float | None = None) -> DPExpr:
        """The median among ``candidates``."""
        return self._agg("median", alpha=0.5, candidates=tuple(candidates), scale=scale)

    def noise(self, scale: float | None = None, distribution: str | None = None) -> DPExpr:
        """Noise on an aggregate: Laplace under pure DP, Gaussian under zCDP (or as given)."""
        mech: Any = None if distribution is None else str(distribution).lower()
        if mech not in (None, "laplace", "gaussian"):
            raise InvalidParameter(f'distribution must be "Laplace" or "Gaussian", got {mech!r}')
        return self._agg("noise", scale=scale, mechanism=mech)

    def laplace(self, scale: float | None = None) -> DPExpr:
        """Deprecated: ``.dp.noise`` (Laplace)."""
        return self._agg("noise", scale=scale, mechanism="laplace")

    def gaussian(self, scale: float | None = None) -> DPExpr:
        """Deprecated: ``.dp.noise`` (Gaussian)."""
        return self._agg("noise", scale=scale, mechanism="gaussian")


def _bounds(bounds: Any) -> tuple[Any, Any]:
    if not isinstance(bounds, tuple | list) or builtins.len(bounds) != 2:
        raise InvalidParameter(f"bounds must be a pair (lower, upper), got {bounds!r}")
    return bounds[0], bounds[1]


def col(name: str) -> DPExpr:
    """A column by name."""
    if not isinstance(name, str):
        raise InvalidParameter(f"col takes a column name, got {name!r}")
    return DPExpr(n.Col(name))


def lit(value: Any, dtype: Any = None) -> DPExpr:
    """A literal."""
    return DPExpr(n.Lit(value, None if dtype is None else _dtype(dtype)))


def len(scale: float | None = None, signed: bool | None = None) -> DPExpr:
    """The private number of rows (``dp.len()``): a count of rows with noise."""
    return DPExpr(n.DPAgg("len", n.Len(), scale=scale, signed=_signed(signed)))
