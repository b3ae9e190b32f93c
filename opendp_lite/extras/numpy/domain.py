"""The 2-d array domains: ``array2_domain`` (rows in a norm ball), ``arrayd_domain`` and the
SSCP domain.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ..._types import carrier_dtype, is_float
from ...core import (
    Domain,
)
from ...errors import InvalidParameter, NotImplementedForType, NotInDomain
from ._checks import _check_count, _check_norm_p, _check_origin, _check_T, _rows_in_ball

Array = npt.NDArray[Any]

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
