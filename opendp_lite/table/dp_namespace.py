"""The ``.dp`` namespace on Polars expressions, and the top-level ``dp.len()``.

Each call returns a plain ``pl.Expr`` that encodes the private aggregate: a struct of the
input expression and a string literal, the *marker*, carrying the call's kind and parameters
as JSON (``opendp_lite.dp:{"kind": "sum", ...}`` in a field named ``__opendp_lite_dp__``).
The struct takes its first field's name, so ``pl.col("x").dp.sum(...)`` is named ``x`` as in
OpenDP; it survives ``meta.serialize`` on Polars 1.x and 2.x, ``.alias`` and arithmetic
post-processing.  :mod:`~opendp_lite.table.polars_reader` reads it back into a
:class:`~opendp_lite.table.nodes.DPAgg`, checking the marker as strictly as the calls check
their arguments (a marker of an unknown version, kind or parameter is refused).  Nothing is
computed by Polars: the query reads the expression and runs its own plan.

The signatures and warnings are OpenDP 0.16's: ``signed=`` on the counts (left unset: a
``FutureWarning``, and unsigned counts), ``.dp.laplace``/``.dp.gaussian`` deprecated aliases
of ``.dp.noise`` (whose law is chosen by the privacy measure).

Importing this module does not import Polars; :func:`ensure_registered` registers the
namespace when Polars is importable (idempotent).

>>> import polars as pl
>>> ensure_registered()
>>> from opendp_lite.table.polars_reader import read_expr
>>> agg = read_expr(pl.col("x").dp.sum((0, 10)))
>>> agg.kind, agg.expr, agg.bounds
('sum', Col(name='x'), (0, 10))
"""

from __future__ import annotations

import builtins
import json
import math
import numbers
import sys
import warnings
from collections.abc import Callable, Iterable
from types import FrameType
from typing import TYPE_CHECKING, Any

from opendp_lite.errors import InvalidParameter, ParameterTypeError
from opendp_lite.table import nodes as n

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl

__all__ = ["MARKER_FIELD", "MARKER_PREFIX", "DPExpr", "ensure_registered", "len"]

#: the marker literal's prefix (the version is part of it: another version is refused)
MARKER_PREFIX = "opendp_lite.dp:"
_VERSION = 1
#: the name of the struct field that holds the marker
MARKER_FIELD = "__opendp_lite_dp__"

_COUNTS = frozenset({"len", "count", "null_count", "n_unique"})
#: the parameters each kind carries (all present in a marker; None when unset)
_PARAMS: dict[str, frozenset[str]] = {
    **{k: frozenset({"scale", "signed"}) for k in _COUNTS},
    "sum": frozenset({"bounds", "scale"}),
    "mean": frozenset({"bounds", "scale"}),
    "quantile": frozenset({"alpha", "candidates", "scale"}),
    "median": frozenset({"candidates", "scale"}),
    "noise": frozenset({"scale"}),
}


# --- the parameters, checked alike by the calls and by the reader ---------------------------


def _number(v: Any, what: str) -> int | float:
    """An int stays an int (an integer sum is exact), a real becomes a float; finite."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise ParameterTypeError(f"{what} must be a number, got {type(v).__name__}")
    if isinstance(v, numbers.Integral):
        return int(v)
    f = float(v)
    if not math.isfinite(f):
        raise InvalidParameter(f"{what} must be finite, got {f}")
    return f


def _scale(v: Any) -> float | None:
    if v is None:
        return None
    s = float(_number(v, "scale"))
    if s < 0:
        raise InvalidParameter(f"scale must be non-negative, got {s}")
    return s


def _signed(v: Any) -> bool | None:
    if v is not None and not isinstance(v, bool):
        raise ParameterTypeError("signed must be a bool or None")
    return v


def _bounds(v: Any) -> tuple[int | float, int | float]:
    if isinstance(v, (str, bytes)) or not isinstance(v, Iterable):
        raise ParameterTypeError(f"bounds must be a pair (lower, upper), got {type(v).__name__}")
    pair = tuple(v)
    if builtins.len(pair) != 2:
        raise InvalidParameter(
            f"bounds must be a pair (lower, upper), got {builtins.len(pair)} values"
        )
    lower, upper = _number(pair[0], "the lower bound"), _number(pair[1], "the upper bound")
    if lower > upper:
        raise InvalidParameter(f"bounds must have lower <= upper, got ({lower}, {upper})")
    return lower, upper


def _alpha(v: Any) -> float:
    a = float(_number(v, "alpha"))
    if not 0.0 <= a <= 1.0:
        raise InvalidParameter(f"alpha must be in [0, 1], got {a}")
    return a


def _candidates(v: Any) -> tuple[int | float, ...]:
    if isinstance(v, (str, bytes)) or not isinstance(v, Iterable):
        raise ParameterTypeError(
            f"candidates must be a sequence of numbers, got {type(v).__name__}"
        )
    values = tuple(_number(c, "a candidate") for c in v)
    if not values:
        raise InvalidParameter("candidates must not be empty")
    return values


_CHECKS: dict[str, Callable[[Any], Any]] = {
    "scale": _scale,
    "signed": _signed,
    "bounds": _bounds,
    "alpha": _alpha,
    "candidates": _candidates,
}


def _user_stacklevel() -> int:
    """The ``stacklevel`` of the first caller outside opendp_lite (``warnings.warn`` called
    from the function calling this), so a warning points at the user's line however many
    of the library's wrappers (``dp.len``) lie between."""
    frame: FrameType | None = sys._getframe(1)  # the function that warns (stacklevel 1)
    level = 1
    while frame is not None and str(frame.f_globals.get("__name__", "")).startswith("opendp_lite."):
        frame = frame.f_back
        level += 1
    return level


def _resolve_signed(signed: bool | None) -> bool:
    """OpenDP 0.16's rule: unset means unsigned, with a FutureWarning at the caller."""
    if signed is None:
        warnings.warn(
            "signed= was left unset: counts are unsigned and clamped at zero, as in past "
            "releases, but the default will become signed=True; pass signed=True or "
            "signed=False to choose (and silence this warning)",
            FutureWarning,
            stacklevel=_user_stacklevel(),
        )
        return False
    return _signed(signed) is True


# --- the marker -----------------------------------------------------------------------------


def _mark(expr: pl.Expr, kind: str, **params: Any) -> pl.Expr:
    import polars as pl

    checked = {k: _CHECKS[k](v) for k, v in params.items()}
    if set(checked) != _PARAMS[kind]:  # pragma: no cover - a call passes its kind's set
        raise AssertionError(f"the parameters of {kind}")
    payload = {"v": _VERSION, "kind": kind, **checked}
    text = MARKER_PREFIX + json.dumps(payload, sort_keys=True, allow_nan=False)
    return pl.struct(expr, pl.lit(text).alias(MARKER_FIELD))


class _ForgedMarker(Exception):
    """A .dp marker that this version's methods do not write (the reader refuses it as
    ``UnsupportedPolarsExpression``; this module stays below the reader)."""


def _forged(detail: str) -> _ForgedMarker:
    return _ForgedMarker(detail)


def _no_constants(token: str) -> Any:
    raise ValueError(token)


def _decode(text: str) -> dict[str, Any]:
    if not text.startswith(MARKER_PREFIX):
        raise _forged("the marker does not start with opendp_lite's prefix")
    try:
        payload = json.loads(text[builtins.len(MARKER_PREFIX) :], parse_constant=_no_constants)
    except ValueError:
        raise _forged("the marker's parameters are not JSON") from None
    if not isinstance(payload, dict) or payload.get("v") != _VERSION:
        raise _forged("the marker's version is not this reader's")
    kind = payload.get("kind")
    if not isinstance(kind, str) or kind not in _PARAMS:
        raise _forged(f"unknown aggregate kind {kind!r}")
    if set(payload) != _PARAMS[kind] | {"v", "kind"}:
        raise _forged(f"the parameters of .dp.{kind} are not as the call writes them")
    return payload


def _read_marker(
    inputs: list[Any],
    read: Callable[[Any], n.Expr],
    string_literal: Callable[[Any], str | None],
) -> n.DPAgg | None:
    """The DP aggregate a struct's JSON inputs encode, or None if it is no marker struct."""
    if builtins.len(inputs) != 2:
        return None
    field = inputs[1]
    if not (isinstance(field, dict) and set(field) == {"Alias"}):
        return None
    alias = field["Alias"]
    if not (isinstance(alias, list) and builtins.len(alias) == 2 and alias[1] == MARKER_FIELD):
        return None
    text = string_literal(alias[0])
    if text is None:
        raise _forged("the marker field is not a string literal")
    payload = _decode(text)
    kind = payload["kind"]
    try:
        params = {k: _CHECKS[k](payload[k]) for k in _PARAMS[kind]}
    except (InvalidParameter, TypeError) as error:
        raise _forged(f"a parameter of .dp.{kind} is out of range: {error}") from None
    return _agg(kind, read(inputs[0]), params)


#: OpenDP 0.16's plugin symbols: the aggregate and the arguments after the input expression
_OPENDP_SYMBOLS: dict[str, tuple[str, tuple[str, ...]]] = {
    "dp_len": ("len", ("scale", "signed")),
    "dp_count": ("count", ("scale", "signed")),
    "dp_null_count": ("null_count", ("scale", "signed")),
    "dp_n_unique": ("n_unique", ("scale", "signed")),
    "dp_sum": ("sum", ("lower", "upper", "scale")),
    "dp_mean": ("mean", ("lower", "upper", "scale")),
    "dp_quantile": ("quantile", ("alpha", "candidates", "scale")),
    "dp_median": ("median", ("candidates", "scale")),
    "noise": ("noise", ("scale",)),
    "dp_frame_len": ("len", ("scale", "signed")),  # dp.len(): no input expression
}


def _read_opendp_plugin(
    inputs: list[Any],
    payload: Any,
    read: Callable[[Any], n.Expr],
    values: Callable[[Any, str], tuple[Any, ...]],
) -> n.DPAgg | None:
    """The DP aggregate an OpenDP 0.16 ``.dp`` call encodes (a Polars plugin call into
    OpenDP's library, as OpenDP's own namespace writes it when ``opendp`` was imported after
    opendp_lite), or None if ``payload`` is no such call.  Only the symbol and the literal
    arguments are read; nothing is loaded or called, and a call with keyword arguments
    (pickled by Polars) is not one."""
    if not (isinstance(payload, dict) and set(payload) == {"flags", "lib", "symbol", "kwargs"}):
        return None
    lib, symbol = payload["lib"], payload["symbol"]
    if not (isinstance(lib, str) and "opendp" in lib.replace("\\", "/").split("/")):
        return None
    if payload["kwargs"] != [] or symbol not in _OPENDP_SYMBOLS:
        return None
    kind, names = _OPENDP_SYMBOLS[symbol]
    has_input = symbol != "dp_frame_len"
    if builtins.len(inputs) != has_input + builtins.len(names):
        return None
    args = dict(zip(names, inputs[has_input:], strict=True))
    try:
        raw: dict[str, Any] = {}
        for name, node in args.items():
            if name == "candidates":
                raw[name] = values(node, "candidates")
                continue
            value = read(node)
            if not isinstance(value, n.Lit):
                return None
            raw[name] = value.value
        if "lower" in raw:
            raw["bounds"] = (raw.pop("lower"), raw.pop("upper"))
        params = {k: _CHECKS[k](v) for k, v in raw.items()}
    except (InvalidParameter, TypeError) as error:
        raise _forged(f"a parameter of OpenDP's .dp.{kind} is out of range: {error}") from None
    expr = read(inputs[0]) if has_input else n.Len()
    return _agg(kind, expr, params)


def _agg(kind: str, expr: n.Expr, params: dict[str, Any]) -> n.DPAgg:
    candidates = params.get("candidates")
    alpha = params.get("alpha", 0.5 if kind == "median" else None)
    return n.DPAgg(
        kind,
        expr,
        bounds=params.get("bounds"),
        candidates=candidates,
        alpha=alpha,
        scale=params.get("scale"),
        signed=params.get("signed"),
    )


# --- the namespace ---------------------------------------------------------------------------


class DPExpr:
    """The ``.dp`` namespace of a Polars expression (registered by :func:`ensure_registered`).

    ``scale`` left as None is chosen by the query's budget.
    """

    def __init__(self, expr: pl.Expr) -> None:
        self.expr = expr

    def noise(self, scale: float | None = None) -> pl.Expr:
        """Noise added to the (aggregate) expression: Laplace under pure DP, Gaussian under
        zCDP (``scale`` is the Laplace scale, or the Gaussian standard deviation)."""
        return _mark(self.expr, "noise", scale=scale)

    def laplace(self, scale: float | None = None) -> pl.Expr:
        """Deprecated (OpenDP 0.14.1): ``.dp.noise``, whose law follows the privacy measure."""
        _deprecated("laplace", "gaussian noise if your privacy definition is zCDP")
        return self.noise(scale=scale)

    def gaussian(self, scale: float | None = None) -> pl.Expr:
        """Deprecated (OpenDP 0.14.1): ``.dp.noise``, whose law follows the privacy measure."""
        _deprecated("gaussian", "laplace noise if your privacy definition is pure-DP")
        return self.noise(scale=scale)

    def len(self, scale: float | None = None, signed: bool | None = None) -> pl.Expr:
        """The noisy number of elements, nulls included (``signed=True``: an Int64 count
        whose negative noisy values are kept)."""
        return _mark(self.expr, "len", scale=scale, signed=_resolve_signed(signed))

    def count(self, scale: float | None = None, signed: bool | None = None) -> pl.Expr:
        """The noisy number of non-null elements."""
        return _mark(self.expr, "count", scale=scale, signed=_resolve_signed(signed))

    def null_count(self, scale: float | None = None, signed: bool | None = None) -> pl.Expr:
        """The noisy number of null elements."""
        return _mark(self.expr, "null_count", scale=scale, signed=_resolve_signed(signed))

    def n_unique(self, scale: float | None = None, signed: bool | None = None) -> pl.Expr:
        """The noisy number of distinct elements."""
        return _mark(self.expr, "n_unique", scale=scale, signed=_resolve_signed(signed))

    def sum(self, bounds: tuple[float, float], scale: float | None = None) -> pl.Expr:
        """The noisy sum of the values clipped to ``bounds``."""
        return _mark(self.expr, "sum", bounds=bounds, scale=scale)

    def mean(self, bounds: tuple[float, float], scale: float | None = None) -> pl.Expr:
        """The noisy sum over the noisy count of the values clipped to ``bounds``."""
        if isinstance(scale, tuple):
            raise InvalidParameter(
                "the scale of .dp.mean is one number (since OpenDP 0.14.1); to weigh the sum "
                "and the count differently, release .dp.sum and .dp.len separately"
            )
        return _mark(self.expr, "mean", bounds=bounds, scale=scale)

    def quantile(
        self, alpha: float, candidates: list[float], scale: float | None = None
    ) -> pl.Expr:
        """The candidate chosen by the exponential mechanism as the ``alpha``-quantile."""
        return _mark(self.expr, "quantile", alpha=alpha, candidates=candidates, scale=scale)

    def median(self, candidates: list[float], scale: float | None = None) -> pl.Expr:
        """The candidate chosen by the exponential mechanism as the median."""
        return _mark(self.expr, "median", candidates=candidates, scale=scale)


def _deprecated(name: str, now: str) -> None:
    warnings.warn(
        f".dp.{name} is deprecated since OpenDP 0.14.1: use .dp.noise (it now applies {now})",
        DeprecationWarning,
        stacklevel=_user_stacklevel(),
    )


def len(scale: float | None = None, signed: bool | None = None) -> pl.Expr:
    """The noisy number of rows (OpenDP's ``dp.len()``), named ``len``.

    >>> import warnings
    >>> from opendp_lite.table.polars_reader import read_expr
    >>> read_expr(len(signed=True)).kind
    'len'
    """
    import polars as pl

    return _mark(pl.len(), "len", scale=scale, signed=_resolve_signed(signed))


def ensure_registered() -> None:
    """Register :class:`DPExpr` as ``pl.Expr.dp`` if Polars is importable (idempotent).

    Raises ImportError if Polars is not installed (callers that treat Polars as optional
    catch it).
    """
    import polars as pl

    if getattr(pl.Expr, "dp", None) is DPExpr:
        return
    with warnings.catch_warnings():
        # another library's ``dp`` namespace (OpenDP's) is replaced: Polars warns about it
        warnings.simplefilter("ignore")
        pl.api.register_expr_namespace("dp")(DPExpr)
