"""Two-dimensional numpy data: domains with a row-norm bound, and the aggregates over them.

The counterpart of OpenDP's ``opendp.extras.numpy`` (``dp.numpy`` in the prelude).  A dataset
is a 2-d array whose rows are records; ``array2_domain(norm=R, p=p, origin=o)`` holds the arrays
whose every row lies in the L``p`` ball of radius ``R`` around ``o``.  ``then_np_clamp`` maps any
array into such a domain; ``then_np_count``, ``then_np_sum``, ``then_private_np_mean`` and
``then_np_sscp`` aggregate it.

What opendp_lite does differently (each stated in the constructor's proof):

* **Row norms are checked exactly.**  A row is a member iff ``‖x − o‖_p <= R`` in exact
  arithmetic: a float statistic with every rounding bounded decides all rows but those in a
  thin band around the boundary, which are decided in rationals.  The clamp checks its own
  output with the same test and shrinks a row further until it passes, so its output is always
  a member, whatever the rounding.
* **Sums are exact.**  Each column is summed exactly on the grid ``2^-p`` of
  ``transformations/_aggregate.py`` and rounded once; the sum's map charges that rounding.
  The SSCP matrix is computed exactly on a 40-bit grid (split in 20-bit halves, whose float products
  and partial sums stay below ``2^53``), then rounded once per entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from .. import _arith as ar
from .. import serialization as _serialization
from .._types import carrier_dtype, carrier_name, is_float, is_int
from .._validate import check_finite_nonneg
from ..core import (
    Domain,
    Measure,
    Measurement,
    Metric,
    PartialMeasurement,
    PartialTransformation,
    Transformation,
)
from ..domains import atom_domain, vector_domain
from ..errors import InvalidParameter, NotImplementedForType, NotInDomain, ParameterTypeError
from ..measurements import make_gaussian, make_laplace
from ..measures import MaxDivergence, ZeroConcentratedDivergence
from ..metrics import SymmetricDistance, absolute_distance, l1_distance, l2_distance
from ..transformations._aggregate import _scales, grid_shift, to_carrier
from ..transformations.sum import FloatSumPlan, default_size_limit

__all__ = [
    "NPArray2Domain",
    "NPArrayDDomain",
    "NPSSCPDomain",
    "array2_domain",
    "arrayd_domain",
    "make_np_clamp",
    "make_np_count",
    "make_np_sscp",
    "make_np_sum",
    "make_private_np_mean",
    "make_private_np_sum",
    "then_np_clamp",
    "then_np_count",
    "then_np_sscp",
    "then_np_sum",
    "then_private_np_mean",
    "then_private_np_sum",
]

Array = npt.NDArray[Any]

#: The unit roundoff of binary64, and half the least subnormal (the absolute error of a product
#: that underflows).
_U = ar.q(2) ** -53
_TINY = ar.q(2) ** -1075
#: Norms below this are refused: the float test then has room for underflow errors.
_MIN_NORM = 2.0**-500
#: The clamp's successive targets, as fractions of the radius: just inside the ball first,
#: further in if rounding pushed the scaled row out, then halving (see make_np_clamp).
_SHRINKS = (1.0 - 2.0**-40, 1.0 - 2.0**-30, 1.0 - 2.0**-20, 1.0 - 2.0**-10)
#: A row statistic at least this large (and finite) gives the clamp its factor directly: its
#: relative error is then a few ulps (the absolute underflow terms are below 2^-1070).
_STAT_MIN = 2.0**-900


def _check_T(T: object, who: str) -> str:
    if T is None:
        raise InvalidParameter(f"{who}: T, the type of the array's elements, must be given")
    try:
        name = carrier_name(T)
    except NotImplementedForType:
        # a ValueError (as OpenDP's) and a TypeError
        raise ParameterTypeError(
            f"{who}: T ({T!r}) must be a primitive type. Fix: pass a numeric or bool type, "
            "e.g. T=float"
        ) from None
    if not (is_float(name) or is_int(name) or name == "bool"):
        raise NotImplementedForType(f"{who}: T must be a numeric or bool type, got T={name}")
    return name


def _check_count(name: str, v: object) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 0:
        raise InvalidParameter(f"{name} must be a non-negative int, got {v!r}")
    return int(v)


def _check_norm_p(norm: object, p: object) -> tuple[float | None, Literal[1, 2] | None]:
    if (norm is None) != (p is None):
        raise InvalidParameter(f"norm and p must be given together, got norm={norm!r}, p={p!r}")
    if norm is None:
        return None, None
    value = check_finite_nonneg("norm", norm)
    if value < _MIN_NORM:
        raise InvalidParameter(f"norm must be >= 2^-500, got {norm!r}")
    if p not in (1, 2) or isinstance(p, bool):
        raise InvalidParameter(f"p must be 1 or 2, got {p!r}")
    return value, p


def _check_origin(
    origin: object, num_columns: int | None, T: str
) -> tuple[tuple[float, ...] | float, int | None]:
    """``origin`` as a scalar ``0.0`` or a tuple of finite floats; and the implied width."""
    arr = np.asarray(origin if origin is not None else 0.0)
    if arr.dtype.kind not in "fiu" or arr.ndim > 1:
        raise InvalidParameter(f"origin must be a number or a 1-d numeric array, got {origin!r}")
    vals = arr.astype(np.float64)
    if not np.all(np.isfinite(vals)):
        raise InvalidParameter(f"origin must be finite, got {origin!r}")
    if T == "f32" and not np.array_equal(vals.astype(np.float32).astype(np.float64), vals):
        raise InvalidParameter(f"origin must be exactly representable in f32, got {origin!r}")
    if arr.ndim == 0:
        if float(vals) != 0.0:
            raise InvalidParameter(
                f"a scalar origin must be 0, got {origin!r}; give one value per column"
            )
        if num_columns is None:
            return 0.0, None
        return (0.0,) * num_columns, num_columns
    if num_columns is not None and vals.size != num_columns:
        raise InvalidParameter(
            f"origin must have num_columns={num_columns} values, got {vals.size}"
        )
    return tuple(float(v) for v in vals), int(vals.size)


@lru_cache(maxsize=256)
def _threshold(norm: float, p: int, d: int) -> float:
    """The largest float ``t`` such that a computed row statistic ``s <= t`` proves
    ``‖x − o‖_p <= norm``.

    With ``u = 2^-53``, the computed statistic (``Σ|x_i − o_i|`` for p = 1, ``Σ(x_i − o_i)²`` for
    p = 2, summed in any order) is at least ``(1 − u)^(d+2)·‖x − o‖_p^p − d·2^-1075``, since every
    operation on non-negative terms loses at most a relative ``u`` (subtraction, products, sums)
    plus, for a product that underflows, an absolute ``2^-1075``.  By Bernoulli's inequality
    ``(1 − u)^(d+2) >= 1 − (d+2)·u``.
    """
    r = ar.q(norm) ** p
    t = r * (1 - (d + 2) * _U) - d * _TINY
    return ar.down(t) if t > 0 else 0.0


def _row_stats(x: Array, origin: tuple[float, ...] | float, p: int) -> Array:
    """The computed statistic of each row (NaN for a row with a NaN, ``inf`` for one with an
    infinite value or whose statistic overflowed).

    ``Σ (x_i − o_i)²`` (p = 2) or ``Σ |x_i − o_i|`` (p = 1) in binary64, summed by ``einsum`` in
    whatever order (and with or without fused multiply-add) it uses: the bounds of
    :func:`_threshold` and :func:`_threshold_hi` hold for any order.  With a zero origin the
    subtraction is skipped (``x − 0 = x`` exactly).
    """
    with np.errstate(all="ignore"):
        dev = x if x.dtype == np.float64 else x.astype(np.float64)
        if any(origin) if isinstance(origin, tuple) else origin != 0:
            dev = np.subtract(dev, np.asarray(origin, dtype=np.float64))
        if p == 2:
            out: Array = np.einsum("ij,ij->i", dev, dev)
        else:
            out = np.einsum("ij->i", np.abs(dev))
    return out


@lru_cache(maxsize=256)
def _threshold_hi(norm: float, p: int, d: int) -> float:
    """A float above which a computed row statistic proves ``‖x − o‖_p > norm``: the statistic
    is at most ``(1 + u)^(d+2)·‖x − o‖_p^p + d·2^-1075`` (with ``(1 + u)^k <= 1 + 2ku``)."""
    r = ar.q(norm) ** p
    return ar.up(r * (1 + 2 * (d + 2) * _U) + (d + 1) * _TINY)


def _exact_in_ball(row: Array, origin: tuple[float, ...] | float, norm: float, p: int) -> bool:
    """``‖row − o‖_p <= norm``, decided in exact rationals (for rows with finite values)."""
    o = origin if isinstance(origin, tuple) else (0.0,) * row.shape[0]
    total = sum((abs(ar.q(float(v)) - ar.q(c)) ** p for v, c in zip(row, o, strict=True)), ar.q(0))
    return bool(total <= ar.q(norm) ** p)


def _rows_in_ball(
    x: Array, origin: tuple[float, ...] | float, norm: float, p: int, stats: Array | None = None
) -> Array:
    """A boolean per row: ``‖x − o‖_p <= norm`` exactly.

    The float statistic (``stats``, computed by :func:`_row_stats` if not given) decides every
    row outside a thin band around the boundary (the bounds of :func:`_threshold` and
    :func:`_threshold_hi`); rows in the band, and finite rows whose statistic overflowed, are
    decided in exact rationals.  NaN and infinite rows are outside.
    """
    n, d = x.shape
    if d == 0:
        return np.ones(n, dtype=bool)
    if stats is None:
        stats = _row_stats(x, origin, p)
    ok: Array = stats <= _threshold(norm, p, d)
    if ok.all():
        return ok
    unsure = ~ok & ~np.isnan(stats) & ((stats <= _threshold_hi(norm, p, d)) | np.isinf(stats))
    if unsure.any():
        for i in np.flatnonzero(unsure):
            row = x[i]
            if np.isfinite(row).all():
                ok[i] = _exact_in_ball(row, origin, norm, p)
    return ok


# ----------------------------------------------------------------------------------------------
# Domains


def _as_carrier(dom: Any, x: Array) -> Array:
    """``x`` in the domain's dtype: as is, or, for a float carrier, integer data and narrower
    floats converted (as vector domains convert them; the converted array is what the function
    sees).  Any other dtype is refused."""
    want = np.dtype(carrier_dtype(dom.T))
    if x.dtype == want:
        return x
    if is_float(dom.T) and (
        x.dtype.kind in "iu" or (x.dtype.kind == "f" and x.dtype.itemsize < want.itemsize)
    ):
        with np.errstate(over="ignore"):
            out = x.astype(want)
        if not np.isfinite(out).all() and (x.dtype.kind in "iu"):
            raise NotInDomain(f"an integer overflows {dom.T}")
        return out
    raise NotInDomain(f"{dom!r} needs dtype {dom.T}, got {x.dtype}")


@dataclass(frozen=True, repr=False)
class NPArray2Domain(Domain[Array]):
    """2-d numpy arrays of carrier ``T`` (rows are records), optionally with a row-norm bound.

    ``origin`` is ``None`` (no norm), the scalar ``0.0`` (the zero vector, width unknown), or
    a tuple of one float per column.
    """

    T: str
    norm: float | None = None
    p: Literal[1, 2] | None = None
    origin: tuple[float, ...] | float | None = None
    size: int | None = None
    num_columns: int | None = None
    nan: bool = False

    def __repr__(self) -> str:
        parts = [
            f"{k}={getattr(self, k)!r}"
            for k in ("norm", "p", "origin", "size", "num_columns")
            if getattr(self, k) is not None
        ]
        return f"NPArray2Domain({', '.join([*parts, f'nan={self.nan}', f'T={self.T}'])})"

    @property
    def descriptor(self) -> NPArray2Domain:
        """OpenDP's ``domain.descriptor``: the domain itself, whose fields are the parameters."""
        return self

    @property
    def carrier_type(self) -> str:
        return f"Array2<{self.T}>"

    def _normalize(self, x: object) -> Array:
        if type(x) is not np.ndarray:
            # masked arrays, matrices and other subclasses or duck arrays are refused: a mask
            # hides values from some numpy functions and not from others
            raise NotInDomain(f"{self!r} needs a plain numpy ndarray, got {type(x).__name__}")
        x = _as_carrier(self, x)
        if x.ndim != 2:
            raise NotInDomain(f"{self!r} needs a 2-d array, got shape {x.shape}")
        if self.num_columns is not None and x.shape[1] != self.num_columns:
            raise NotInDomain(f"{self!r} needs {self.num_columns} columns, got {x.shape[1]}")
        if self.size is not None and x.shape[0] != self.size:
            raise NotInDomain(f"{self!r} needs {self.size} rows, got {x.shape[0]}")
        if self.norm is None and is_float(self.T) and not self.nan and np.isnan(x).any():
            raise NotInDomain(f"NaN is not a member of {self!r}")
        if self.norm is not None:
            # a norm implies nan=False (array2_domain); a row with a NaN has a NaN statistic
            # and is outside the ball, so the norm test below also refuses every NaN
            assert self.origin is not None and self.p is not None  # noqa: S101 - constructor
            ok = _rows_in_ball(x, self.origin, self.norm, self.p)
            if not ok.all():
                if np.isnan(x).any():
                    raise NotInDomain(f"NaN is not a member of {self!r}")
                i = int(np.argmin(ok))
                raise NotInDomain(
                    f"row {i} is not within L{self.p} distance {self.norm!r} of the origin "
                    f"(clamp it with make_np_clamp): {x[i]!r}"
                )
        view = x.view()
        view.flags.writeable = False
        return view


def array2_domain(
    *,
    norm: float | None = None,
    p: Literal[1, 2] | None = None,
    origin: Any = None,
    size: int | None = None,
    num_columns: int | None = None,
    nan: bool | None = None,
    T: object = None,
) -> NPArray2Domain:
    r"""The domain of 2-d numpy arrays whose rows are records.

    Members are plain ``np.ndarray`` of dtype ``T`` with 2 dimensions, ``size`` rows and
    ``num_columns`` columns when given, no NaN unless ``nan``, and, when ``norm`` is given,
    every row ``x`` satisfying (exactly) :math:`\lVert x - o\rVert_p \le R` (R = ``norm``,
    o = ``origin``, default 0; without ``T`` a norm's origin gives it, ``f64`` for the default).
    ``nan`` defaults to ``True`` for float ``T`` without a norm (as
    in OpenDP) and to ``False`` otherwise.

    Raises:
        InvalidParameter: if ``norm``/``p`` are not given together, ``norm`` is negative, below
            2^-500 or not finite, ``p`` is not 1 or 2, the origin is given without a norm, is
            not finite, a non-zero scalar or of the wrong length, ``size``/``num_columns`` are
            not non-negative ints, or ``nan=True`` with a norm (a NaN row has no norm).
        NotImplementedForType: if ``T`` is not a numeric or bool carrier, or a norm is given
            for a non-float ``T``.

    >>> import numpy as np
    >>> import opendp_lite.prelude as dp
    >>> dom = dp.numpy.array2_domain(norm=1.0, p=2, num_columns=2, T=float)
    >>> dom
    NPArray2Domain(norm=1.0, p=2, origin=(0.0, 0.0), num_columns=2, nan=False, T=f64)
    >>> dom.member(np.array([[0.5, 0.5], [0.0, -1.0]])), dom.member(np.array([[1.0, 1.0]]))
    (True, False)
    """
    if T is None and origin is None and norm is not None:
        origin = 0.0  # a norm's default origin, whose type gives T (f64), as in OpenDP
    if origin is not None and np.asarray(origin).dtype.kind not in "iuf":
        raise InvalidParameter(f"array2_domain: the origin must be numeric, got {origin!r}")
    Tn = _check_T(
        T if T is not None or origin is None else np.asarray(origin).dtype, "array2_domain"
    )
    if Tn in ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "usize") and origin is not None:
        Tn = "f64"  # OpenDP infers a float type from an integer origin
    norm_v, p_v = _check_norm_p(norm, p)
    size_v = _check_count("size", size)
    cols = _check_count("num_columns", num_columns)
    o: tuple[float, ...] | float | None = None
    if norm_v is None:
        if origin is not None:
            raise InvalidParameter("origin may only be given with a norm")
    else:
        if not is_float(Tn):
            raise NotImplementedForType(f"array2_domain: a norm needs a float T, got T={Tn}")
        o, cols = _check_origin(origin, cols, Tn)
    nan_v = bool(is_float(Tn) and norm_v is None) if nan is None else bool(nan)
    if nan_v and norm_v is not None:
        raise InvalidParameter("nan=True cannot be combined with a norm: a NaN row has no norm")
    if nan_v and not is_float(Tn):
        raise InvalidParameter(f"nan=True needs a float T, got T={Tn}")
    return NPArray2Domain(
        T=Tn, norm=norm_v, p=p_v, origin=o, size=size_v, num_columns=cols, nan=nan_v
    )


@dataclass(frozen=True, repr=False)
class NPArrayDDomain(Domain[Array]):
    """Numpy arrays of one fixed ``shape`` and carrier ``T``."""

    shape: tuple[int, ...]
    T: str

    def __repr__(self) -> str:
        return f"NPArrayDDomain(shape={self.shape!r}, T={self.T})"

    @property
    def descriptor(self) -> NPArrayDDomain:
        return self

    @property
    def carrier_type(self) -> str:
        return f"ArrayD<{self.T}>"

    def _normalize(self, x: object) -> Array:
        if type(x) is not np.ndarray:
            raise NotInDomain(f"{self!r} needs a plain numpy ndarray, got {type(x).__name__}")
        if x.dtype != np.dtype(carrier_dtype(self.T)):
            raise NotInDomain(f"{self!r} needs dtype {self.T}, got {x.dtype}")
        if x.shape != self.shape:
            raise NotInDomain(f"{self!r} needs shape {self.shape}, got {x.shape}")
        view = x.view()
        view.flags.writeable = False
        return view


def arrayd_domain(*, shape: tuple[int, ...], T: object) -> NPArrayDDomain:
    """The domain of numpy arrays of exactly ``shape`` with elements of type ``T``.

    Raises:
        InvalidParameter: if ``shape`` is not a tuple of positive integers, or ``T`` is
            missing or names no type (``ParameterTypeError``, also a ``TypeError``).
        NotImplementedForType: if ``T`` is not a numeric or bool carrier.

    >>> import numpy as np
    >>> import opendp_lite.prelude as dp
    >>> dom = dp.numpy.arrayd_domain(shape=(2, 3), T=float)
    >>> dom.member(np.zeros((2, 3))), dom.member(np.zeros((3, 2)))
    (True, False)
    """
    if not isinstance(shape, tuple) or any(
        isinstance(s, bool) or not isinstance(s, int) or s <= 0 for s in shape
    ):
        raise InvalidParameter(f"shape must be a tuple of positive integers, got {shape!r}")
    return NPArrayDDomain(shape=shape, T=_check_T(T, "arrayd_domain"))


@dataclass(frozen=True, repr=False)
class NPSSCPDomain(Domain[Array]):
    """Square, symmetric, finite matrices: sums of squares and cross products ``XᵀX``.

    ``norm``/``p`` bound the rows of the ``X`` it came from (around zero), ``size`` its rows.
    Membership does not test positive semi-definiteness: one rounding per entry can make an
    exact PSD matrix slightly indefinite.
    """

    num_features: int
    T: str
    norm: float | None = None
    p: Literal[1, 2] | None = None
    size: int | None = None

    def __repr__(self) -> str:
        parts = [
            f"{k}={getattr(self, k)!r}"
            for k in ("num_features", "norm", "p", "size")
            if getattr(self, k) is not None
        ]
        return f"NPSSCPDomain({', '.join([*parts, f'T={self.T}'])})"

    @property
    def descriptor(self) -> NPSSCPDomain:
        return self

    @property
    def carrier_type(self) -> str:
        return f"Array2<{self.T}>"

    def _normalize(self, x: object) -> Array:
        d = self.num_features
        if type(x) is not np.ndarray or x.dtype != np.dtype(carrier_dtype(self.T)):
            raise NotInDomain(f"{self!r} needs a numpy ndarray of dtype {self.T}")
        if x.shape != (d, d):
            raise NotInDomain(f"{self!r} needs shape ({d}, {d}), got {x.shape}")
        if not np.isfinite(x).all() or not np.array_equal(x, x.T):
            raise NotInDomain(f"{self!r} needs a finite symmetric matrix")
        view = x.view()
        view.flags.writeable = False
        return view


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


# ----------------------------------------------------------------------------------------------
# Clamp


def make_np_clamp(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    norm: float,
    p: Literal[1, 2],
    origin: Any = None,
) -> Transformation[Array, Array, int, int]:
    r"""Clamp each row to the L``p`` ball of radius ``norm`` around ``origin`` (default 0).

    A row ``x`` already in the ball (exactly) is returned unchanged.  Any other row has NaN
    replaced by 0 and ±inf by ±max, and is scaled towards the origin:
    :math:`o + (x - o)\cdot c\cdot s` with :math:`c \approx \min(1, R/\lVert x - o\rVert_p)`,
    ``s`` the first of :math:`1 - 2^{-40}, \dots, 1 - 2^{-10}, 2^{-1}, \dots, 2^{-64}` for which
    the rounded row passes the domain's exact membership test, or ``o`` itself if none
    does.  Every output row is therefore a member of the output domain
    ``array2_domain(norm, p, origin, size, num_columns, nan=False, T)``.  Stability map (row by
    row, symmetric distance): :math:`d_{out} = d_{in}`.

    Raises:
        NotImplementedForType: if the input is not an ``array2_domain`` of float ``T``, or the
            metric is not ``symmetric_distance()``.
        InvalidParameter: if ``norm``, ``p`` or ``origin`` are invalid (see ``array2_domain``),
            or the origin does not match ``num_columns``.

    Proof: docs/proofs/make_np_clamp.md

    >>> import numpy as np
    >>> import opendp_lite.prelude as dp
    >>> space = dp.numpy.array2_domain(T=float, num_columns=2), dp.symmetric_distance()
    >>> clamp = space >> dp.numpy.then_np_clamp(norm=1.0, p=2)
    >>> clamp(np.array([[0.3, 0.4], [3.0, 4.0]])).round(6).tolist(), clamp.map(1)
    ([[0.3, 0.4], [0.6, 0.8]], 1)
    """
    who = "make_np_clamp"
    dom = _array2(who, input_domain)
    _symmetric(who, input_metric)
    if not is_float(dom.T):
        raise NotImplementedForType(f"{who} needs a float T, got T={dom.T}")
    out = array2_domain(
        norm=norm,
        p=p,
        origin=origin,
        size=dom.size,
        num_columns=dom.num_columns,
        nan=False,
        T=dom.T,
    )
    assert out.norm is not None and out.p is not None and out.origin is not None  # noqa: S101
    R, pp, o = out.norm, out.p, out.origin
    dtype = np.dtype(carrier_dtype(dom.T))
    big = float(np.finfo(dtype).max)

    zero_origin = not any(o) if isinstance(o, tuple) else o == 0
    shrinks = [*_SHRINKS, *(0.5**j for j in range(1, 65))]

    def shrink_rows(result: Array, idx: Array, dev: Array, factor: Array, start: int) -> None:
        """Rows ``idx`` of ``result`` become ``o + dev·(factor·s)`` for the first ``s`` of
        ``shrinks[start:]`` whose rounded row passes the exact test, else ``o``."""
        origin_row = np.broadcast_to(np.asarray(o, dtype=np.float64), (result.shape[1],))
        for shrink in shrinks[start:]:
            with np.errstate(all="ignore"):
                cand = (origin_row + dev * (factor * shrink)[:, None]).astype(dtype)
            ok = _rows_in_ball(cand, o, R, pp)
            result[idx[ok]] = cand[ok]
            if ok.all():
                return
            idx, dev, factor = idx[~ok], dev[~ok], factor[~ok]
        result[idx] = origin_row.astype(dtype)  # the origin itself: norm 0, always a member

    def slow_factor(dev: Array) -> Array:
        """``c`` for rows whose statistic is not usable (non-finite values, overflow, tiny):
        the norm of each row computed on the row divided by its largest |value|, so that no
        square overflows (NaN in ``dev`` already 0, ±inf ±max)."""
        with np.errstate(all="ignore"):
            top = np.max(np.abs(dev), axis=1)
            unit = np.linalg.norm(dev / np.where(top > 0, top, 1.0)[:, None], ord=pp, axis=1)
            factor = np.minimum(np.where(top > 0, R / unit / top, 0.0), 1.0)
            out: Array = np.nan_to_num(factor, nan=0.0, posinf=0.0)
        return out

    def function(arg: Array) -> Array:
        x = np.asarray(arg, dtype=dtype)
        if x.shape[0] == 0 or x.shape[1] == 0:
            return x.copy()
        stats = _row_stats(x, o, pp)
        inside = _rows_in_ball(x, o, R, pp, stats)
        if inside.all():
            return x.copy()
        # c from the statistic already computed: sqrt(s) (p = 2) or s (p = 1) approximates
        # ‖x − o‖_p to a few ulps when s is finite and not tiny; any rounding in c is caught
        # by the exact test of the candidate below
        result: Array
        with np.errstate(all="ignore"):
            usable = np.isfinite(stats) & (stats >= _STAT_MIN)
            factor = np.minimum(R / (np.sqrt(stats) if pp == 2 else stats), 1.0)
            factor *= _SHRINKS[0]
            factor[inside | ~usable] = 1.0
            if zero_origin:
                # x·1 = x exactly: rows inside the ball come out unchanged
                result = np.multiply(x, factor[:, None], dtype=np.float64).astype(dtype, copy=False)
            else:
                dev_all = np.subtract(x, np.asarray(o, dtype=np.float64), dtype=np.float64)
                dev_all *= factor[:, None]
                dev_all += np.asarray(o, dtype=np.float64)
                result = dev_all.astype(dtype, copy=False)
                np.copyto(result, x, where=inside[:, None])
        easy = usable & ~inside
        passed = _rows_in_ball(result, o, R, pp)
        np.copyto(result, x, where=~usable[:, None])
        # rows scaled from their statistic that failed at the first shrink go on with the
        # same c; rows without a usable statistic start from c computed row by row
        origin_row = np.asarray(o, dtype=np.float64)
        redo = np.flatnonzero(easy & ~passed)
        if redo.size:
            dev = np.subtract(x[redo], origin_row, dtype=np.float64)
            c = np.minimum(R / (np.sqrt(stats[redo]) if pp == 2 else stats[redo]), 1.0)
            shrink_rows(result, redo, dev, c, 1)
        hard = np.flatnonzero(~inside & ~usable)
        if hard.size:
            with np.errstate(all="ignore"):
                dev = np.nan_to_num(
                    np.subtract(x[hard], origin_row, dtype=np.float64),
                    nan=0.0,
                    posinf=big,
                    neginf=-big,
                )
            shrink_rows(result, hard, dev, slow_factor(dev), 0)
        return result

    return Transformation(input_domain, input_metric, out, input_metric, function, lambda d: d)


def then_np_clamp(
    norm: float, p: Literal[1, 2], origin: Any = None
) -> PartialTransformation[Array, Array, int, int]:
    """Partial of :func:`make_np_clamp`: ``space >> then_np_clamp(norm, p, origin)``."""
    return PartialTransformation(lambda d, m: make_np_clamp(d, m, norm, p, origin))


# ----------------------------------------------------------------------------------------------
# Count

_I32_MAX = 2**31 - 1


def make_np_count(
    input_domain: Domain[Any], input_metric: Metric[Any]
) -> Transformation[Array, int, int, int]:
    r"""The number of rows (the length of axis 0), as an ``i32`` (saturating at 2^31 − 1).

    If the domain fixes ``size``, the output is that constant.  Stability map (symmetric
    distance): :math:`d_{out} = 0` with a known size, else :math:`d_{out} = d_{in}`.

    Raises:
        NotImplementedForType: if the input is not an ``array2_domain`` or the metric is not
            ``symmetric_distance()``.

    Proof: docs/proofs/make_np_count.md

    >>> import numpy as np
    >>> import opendp_lite.prelude as dp
    >>> space = dp.numpy.array2_domain(T=float), dp.symmetric_distance()
    >>> count = space >> dp.numpy.then_np_count()
    >>> count(np.zeros((5, 3))), count.map(2)
    (5, 2)
    """
    who = "make_np_count"
    dom = _array2(who, input_domain)
    _symmetric(who, input_metric)
    size = dom.size

    def function(arg: Array) -> int:
        return min(int(arg.shape[0]), _I32_MAX) if size is None else min(size, _I32_MAX)

    def stability_map(d_in: int) -> int:
        return 0 if size is not None else d_in

    return Transformation(
        input_domain,
        input_metric,
        atom_domain(T="i32"),
        absolute_distance(T="i32"),
        function,
        stability_map,
    )


def then_np_count() -> PartialTransformation[Array, int, int, int]:
    """Partial of :func:`make_np_count`."""
    return PartialTransformation(make_np_count)


# ----------------------------------------------------------------------------------------------
# Sum


#: Rows of a 2-d array scaled and summed at a time (a cache-sized block), and the rows whose
#: grid values are summed in floats: 64 values of magnitude <= 2^46 sum below 2^52.
_SUM_ROWS = 1 << 13
_FLOAT_GROUP = 64


def grid_column_sums(x: Array, p: int) -> list[int]:
    """The exact ``Σ_i trunc(x_ij · 2^p)`` of each column ``j`` (as :func:`grid_sums` column by
    column, without copying the columns out).

    Requires ``|x_ij| · 2^p <= 2^46``.  Each block of :data:`_SUM_ROWS` rows is scaled by
    ``2^p`` (exact: one or two power-of-two factors) and truncated (exact) into a float64
    buffer laid out column by column; groups of :data:`_FLOAT_GROUP` consecutive values of a
    column are summed in float64, exactly, since every partial sum, in any order, is an
    integer below ``64 · 2^46 = 2^52``; the group sums are cast to int64 (exact integers) and
    summed there (a block's total is below ``2^13 · 2^46 = 2^59``), blocks as Python ints.
    Summing integers held as floats avoids a float -> int64 cast of every value.
    """
    n, d = x.shape
    s1, s2 = _scales(p)
    totals = [0] * d
    buf = np.empty((d, min(n, _SUM_ROWS)), dtype=np.float64)
    for i in range(0, n, _SUM_ROWS):
        block = x[i : i + _SUM_ROWS]
        m = block.shape[0]
        b = buf[:, :m]
        np.multiply(block.T, s1, out=b, dtype=np.float64)
        if s2 != 1.0:
            np.multiply(b, s2, out=b)
        np.trunc(b, out=b)  # the grid values k, integers with |k| <= 2^46
        full = m - m % _FLOAT_GROUP
        part = np.zeros(d, dtype=np.int64)
        if full:
            groups = np.add.reduce(b[:, :full].reshape(d, -1, _FLOAT_GROUP), axis=2)
            part += np.add.reduce(groups, axis=1, dtype=np.int64)
        if full < m:
            part += np.add.reduce(b[:, full:], axis=1, dtype=np.int64)
        totals = [t + int(v) for t, v in zip(totals, part.tolist(), strict=True)]
    return totals


def make_np_sum(
    input_domain: Domain[Any], input_metric: Metric[Any]
) -> Transformation[Array, Array, int, float]:
    r"""The column sums of an array whose rows lie in an L``p`` ball: a vector of ``d`` floats.

    Each value is truncated to the grid :math:`2^{-g}` (``g`` keeps 46 bits of
    :math:`M = R + \max_j |o_j|`, which bounds every value), each column is summed exactly,
    saturated at :math:`\pm L\cdot M'` (``L`` = ``size``, or the default size limit of
    ``make_sum`` when the size is unknown) and rounded once to ``T``.  Output metric:
    ``l1_distance`` for p = 1, ``l2_distance`` for p = 2.  Stability map, with :math:`e` the
    one-rounding relaxation of ``make_sum`` (zero when no rounding can happen):

    .. math::

        d_{out} = \begin{cases}
            d_{in}\,(R + \lVert o\rVert_p) + d^{1/p}\,e & \text{unknown size} \\
            \lfloor d_{in}/2\rfloor \min(2R + d^{1/p} 2^{-g},\ 2(R + \lVert o\rVert_p))
              + d^{1/p}\,e & \text{known size}
        \end{cases}

    with every root and norm rounded up.

    Raises:
        NotImplementedForType: if the input is not an ``array2_domain`` or the metric is not
            ``symmetric_distance()``.
        InvalidParameter: if the domain has no norm or no ``num_columns``, or
            ``L · M`` could overflow ``T``.

    Proof: docs/proofs/make_np_sum.md

    >>> import numpy as np
    >>> import opendp_lite.prelude as dp
    >>> dom = dp.numpy.array2_domain(norm=1.0, p=1, size=3, num_columns=2, T=float)
    >>> space = dom, dp.symmetric_distance()
    >>> sum_ = space >> dp.numpy.then_np_sum()
    >>> sum_(np.array([[0.5, 0.5], [0.25, -0.75], [0.0, 1.0]])).tolist(), sum_.map(2)
    ([0.75, 0.75], 2.0)
    """
    who = "make_np_sum"
    dom = _array2(who, input_domain)
    _symmetric(who, input_metric)
    R, p, origin, d = _bounded(who, dom)
    m_up = ar.up(ar.q(R) + max((abs(ar.q(v)) for v in origin), default=ar.q(0)))
    limit = dom.size if dom.size is not None else default_size_limit(who, dom.T, -m_up, m_up)
    plan = FloatSumPlan(who, dom.T, -m_up, m_up, max(limit, 1))
    T = dom.T
    o_norm = _norm_up(origin, p)
    relax = _root_up(d, p) * plan.relax
    if dom.size is None:

        def stability_map(d_in: int) -> float:
            return ar.up(d_in * (ar.q(R) + o_norm) + relax)
    else:
        width = min(2 * ar.q(R) + _root_up(d, p) * ar.q(2) ** -plan.p, 2 * (ar.q(R) + o_norm))

        def stability_map(d_in: int) -> float:
            return ar.up((d_in // 2) * width + relax)

    def function(arg: Array) -> Array:
        cap = plan.c_int
        sums = [
            to_carrier(min(max(k, -cap), cap), 1, plan.p, T) for k in grid_column_sums(arg, plan.p)
        ]
        return np.asarray(sums, dtype=carrier_dtype(T))

    metric = l1_distance(T=T) if p == 1 else l2_distance(T=T)
    out: Domain[Any] = vector_domain(atom_domain(T=T, nan=False), size=d)
    return Transformation(
        input_domain,
        input_metric,
        out,
        metric,
        function,
        stability_map,
    )


def then_np_sum() -> PartialTransformation[Array, Array, int, float]:
    """Partial of :func:`make_np_sum`."""
    return PartialTransformation(make_np_sum)


def _noise(measure: Measure[Any], scale: float) -> Any:
    if isinstance(measure, MaxDivergence):
        return lambda d, m: make_laplace(d, m, scale)
    if isinstance(measure, ZeroConcentratedDivergence):
        return lambda d, m: make_gaussian(d, m, scale)
    raise NotImplementedForType(
        "privacy_measure must be max_divergence() or zero_concentrated_divergence(), "
        f"got {measure!r}"
    )


def make_private_np_sum(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    privacy_measure: Measure[Any],
    scale: float,
) -> Measurement[Array, Array, int, float]:
    r""":func:`make_np_sum` followed by vector Laplace (max divergence, p = 1) or Gaussian (zCDP,
    p = 2) noise of ``scale``.

    Privacy map: the noise mechanism's map at the sum's :math:`d_{out}`, e.g.
    :math:`\varepsilon = (\Delta_1 + \text{penalty}_k)/\text{scale}` for Laplace.

    Raises:
        NotImplementedForType: as :func:`make_np_sum`, or if the measure is neither
            max nor zero-concentrated divergence, or does not fit ``p`` (Laplace needs an
            L1 norm, Gaussian an L2 norm).
        InvalidParameter: as :func:`make_np_sum` and the noise mechanism.

    Proof: docs/proofs/make_private_np_sum.md

    >>> import numpy as np
    >>> import opendp_lite.prelude as dp
    >>> dom = dp.numpy.array2_domain(norm=1.0, p=1, num_columns=2, T=float)
    >>> space = dom, dp.symmetric_distance()
    >>> m = space >> dp.numpy.then_private_np_sum(dp.max_divergence(), scale=10.0)
    >>> m(np.array([[0.5, 0.5]])).shape, round(m.map(1), 6)
    ((2,), 0.100049)
    """
    t_sum = make_np_sum(input_domain, input_metric)
    return t_sum >> PartialMeasurement(_noise(privacy_measure, scale))


def then_private_np_sum(
    privacy_measure: Measure[Any], scale: float
) -> PartialMeasurement[Array, Array, int, float]:
    """Partial of :func:`make_private_np_sum`."""
    return PartialMeasurement(lambda d, m: make_private_np_sum(d, m, privacy_measure, scale))


# ----------------------------------------------------------------------------------------------
# Mean


def make_private_np_mean(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    scale: float,
    norm: float | None = None,
    p: Literal[1, 2] | None = 2,
    origin: Any = None,
) -> Measurement[Array, Array, int, float]:
    r"""The column means of ``size`` rows: a noisy :func:`make_np_sum` divided by ``size``.

    If ``norm`` is given the rows are first clamped (:func:`make_np_clamp` with ``norm``,
    ``p``, ``origin``).  The sum gets Laplace noise (p = 1, max divergence) or Gaussian noise
    (p = 2, zCDP) of scale ``scale · size``, so the mean's noise has scale ``scale``; the
    division is post-processing.  Privacy map: the noisy sum's, e.g.
    :math:`\varepsilon = (\Delta_1 + \text{penalty}_k)/(\text{scale}\cdot n)` for Laplace.

    Raises:
        InvalidParameter: if the domain has no ``size``, or the arguments of the clamp, the sum
            or the noise are invalid.
        NotImplementedForType: as :func:`make_np_sum`.

    Proof: docs/proofs/make_private_np_mean.md

    >>> import numpy as np
    >>> import opendp_lite.prelude as dp
    >>> space = dp.numpy.array2_domain(size=4, num_columns=2, T=float), dp.symmetric_distance()
    >>> m = space >> dp.numpy.then_private_np_mean(scale=0.1, norm=1.0, p=1)
    >>> m(np.ones((4, 2))).shape, m.output_measure
    ((2,), MaxDivergence)
    """
    who = "make_private_np_mean"
    dom = _array2(who, input_domain)
    chain: Any = None
    if norm is not None:
        chain = make_np_clamp(input_domain, input_metric, norm, p if p is not None else 2, origin)
        dom = _array2(who, chain.output_domain)
    if dom.size is None:
        raise InvalidParameter(f"{who} needs a known size: give array2_domain(size=...)")
    if dom.size == 0:
        raise InvalidParameter(f"{who} needs size >= 1, got {dom.size}")
    if dom.p is None:
        raise InvalidParameter(f"{who} needs rows of bounded norm: give norm and p")
    measure = MaxDivergence() if dom.p == 1 else ZeroConcentratedDivergence()
    s = check_finite_nonneg("scale", scale)
    n = dom.size
    m_sum = make_private_np_sum(dom, input_metric, measure, ar.up(ar.q(s) * n))
    meas = chain >> m_sum if chain is not None else m_sum

    def divide(sums: Array) -> Array:
        return np.asarray(sums, dtype=np.float64) / n

    return meas >> divide


def then_private_np_mean(
    scale: float, norm: float | None = None, p: Literal[1, 2] | None = 2, origin: Any = None
) -> PartialMeasurement[Array, Array, int, float]:
    """Partial of :func:`make_private_np_mean`."""
    return PartialMeasurement(lambda d, m: make_private_np_mean(d, m, scale, norm, p, origin))


# ----------------------------------------------------------------------------------------------
# Sums of squares and cross products

#: Bits of grid per value in the SSCP.  A grid value ``K`` (``|K| <= 2^40``) is split as
#: ``K = 2^20·H + L`` with ``|H| <= 2^20`` and ``0 <= L < 2^20``; products of halves are below
#: 2^40 and 2^13 of them sum below 2^53, so float matrix products over 2^13 rows are exact.
_SSCP_BITS = 40
_HALF = 2.0**20
_SSCP_ROWS = 1 << 13
#: Blocks summed in int64 before moving the totals to Python ints: 2^8 · 2^53 < 2^63.
_FLUSH = 1 << 8


def sscp_grid(m_up: float) -> int:
    """The grid exponent ``g`` of the SSCP for values of magnitude at most ``m_up``."""
    return grid_shift(m_up, _SSCP_BITS)


def exact_sscp(x: Array, g: int) -> Array:
    """``KᵀK`` exactly, as an object array of Python ints, with ``K = trunc(x · 2^g)``.

    Requires ``|K| <= 2^40``.  Each block of rows is written as ``B = [H | L]ᵀ``
    (``K = 2^20·H + L``) into one buffer, and one float matrix product ``B·Bᵀ`` gives ``HᵀH``,
    ``HᵀL`` and ``LᵀL``.  Every float operation below acts on integers whose exact result is
    below 2^53 in magnitude, so none rounds, in whatever order BLAS sums.
    """
    n, d = x.shape
    total = np.zeros((d, d), dtype=object)
    acc = np.zeros((2 * d, 2 * d), dtype=np.int64)
    s1, s2 = _scales(g)
    # [H | L] transposed: each of the 2d rows of the buffer is contiguous, so every
    # elementwise step below runs over long contiguous rows
    buf = np.empty((2 * d, min(n, _SSCP_ROWS)), dtype=np.float64)

    def flush() -> None:
        hh, hl, ll = acc[:d, :d], acc[:d, d:], acc[d:, d:]
        total[...] += (
            hh.astype(object) * 2**40 + (hl + hl.T).astype(object) * 2**20 + ll.astype(object)
        )
        acc[...] = 0

    for j, i in enumerate(range(0, n, _SSCP_ROWS)):
        block = x[i : i + _SSCP_ROWS]
        both = buf[:, : block.shape[0]]
        hi, lo = both[:d], both[d:]
        np.multiply(block.T, s1, out=lo, dtype=np.float64)  # exact: a power of two
        if s2 != 1.0:
            np.multiply(lo, s2, out=lo)
        np.trunc(lo, out=lo)  # K
        np.multiply(lo, 1.0 / _HALF, out=hi)  # exact: a power of two
        np.floor(hi, out=hi)  # H = floor(K / 2^20)
        np.subtract(lo, hi * _HALF, out=lo)  # L = K − 2^20·H, in [0, 2^20): exact
        # each entry is below 2^53; an int64 holds 2^8 blocks of three such sums
        acc += (both @ both.T).astype(np.int64)
        if j % _FLUSH == _FLUSH - 1:
            flush()
    flush()
    return total


def make_np_sscp(
    input_domain: Domain[Any], input_metric: Metric[Any]
) -> Transformation[Array, Array, int, int]:
    r"""The sum of squares and cross products :math:`X^\top X` (a ``d × d`` matrix).

    Each value is truncated to the grid :math:`2^{-g}` (``g`` keeps 40 bits of
    :math:`M = R + \max_j|o_j|`), the integer matrix :math:`K^\top K` is computed exactly and each
    entry is rounded once to ``T``.  The output domain records the bound
    :math:`R' = R + \lVert o\rVert_p` (rounded up; ``R`` if the origin is 0) on the rows'
    norms and the size; as in OpenDP the metric stays the symmetric distance:
    :math:`d_{out} = d_{in}` (a mechanism on the matrix bounds its own sensitivity from ``R'``).

    Raises:
        NotImplementedForType: if the input is not an ``array2_domain`` of float ``T`` or the
            metric is not ``symmetric_distance()``.
        InvalidParameter: if the domain has no norm or no ``num_columns``.

    Proof: docs/proofs/make_np_sscp.md

    >>> import numpy as np
    >>> import opendp_lite.prelude as dp
    >>> dom = dp.numpy.array2_domain(norm=2.0, p=2, num_columns=2, T=float)
    >>> space = dom, dp.symmetric_distance()
    >>> sscp = space >> dp.numpy.then_np_sscp()
    >>> sscp(np.array([[1.0, 0.5], [0.0, -1.0]])).tolist(), sscp.map(1)
    ([[1.0, 0.5], [0.5, 1.25]], 1)
    """
    who = "make_np_sscp"
    dom = _array2(who, input_domain)
    _symmetric(who, input_metric)
    if not is_float(dom.T):
        raise NotImplementedForType(f"{who} needs a float T, got T={dom.T}")
    R, p, origin, d = _bounded(who, dom)
    m_up = ar.up(ar.q(R) + max((abs(ar.q(v)) for v in origin), default=ar.q(0)))
    g = sscp_grid(m_up)
    T = dom.T
    row_norm = R if not any(origin) else ar.up(ar.q(R) + _norm_up(origin, p))
    out = NPSSCPDomain(num_features=d, T=T, norm=row_norm, p=p, size=dom.size)

    def function(arg: Array) -> Array:
        total = exact_sscp(arg, g)
        vals = [[to_carrier(int(v), 1, 2 * g, T) for v in row] for row in total.tolist()]
        return np.asarray(vals, dtype=carrier_dtype(T)).reshape(d, d)

    return Transformation(
        input_domain, input_metric, out, input_metric, function, lambda d_in: d_in
    )


def then_np_sscp() -> PartialTransformation[Array, Array, int, int]:
    """Partial of :func:`make_np_sscp`."""
    return PartialTransformation(make_np_sscp)


def _sscp_domain(
    num_features: Any, T: Any, norm: Any = None, p: Any = None, size: Any = None
) -> NPSSCPDomain:
    """``make_np_sscp``'s output domain from a serialized document, checked field by field."""
    if isinstance(num_features, bool) or not isinstance(num_features, int) or num_features < 1:
        raise InvalidParameter(f"num_features must be a positive int, got {num_features!r}")
    if p not in (None, 1, 2) or (norm is None) != (p is None):
        raise InvalidParameter(f"norm and p (1 or 2) come together, got {norm!r}, {p!r}")
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
        raise InvalidParameter(f"size must be a non-negative int or None, got {size!r}")
    return NPSSCPDomain(
        num_features=num_features,
        T=_check_T(T, "NPSSCPDomain"),
        norm=None if norm is None else check_finite_nonneg("norm", norm),
        p=p,
        size=size,
    )


# serialization records calls to this module's constructors (it loads after the families), and
# writes its domains as the public calls that build them
_serialization.record_constructors(__name__)
_serialization.register_space(
    NPArray2Domain,
    "array2_domain",
    array2_domain,
    ("norm", "p", "origin", "size", "num_columns", "nan", "T"),
)
_serialization.register_space(NPArrayDDomain, "arrayd_domain", arrayd_domain, ("shape", "T"))
_serialization.register_space(
    NPSSCPDomain, "np_sscp_domain", _sscp_domain, ("num_features", "T", "norm", "p", "size")
)
