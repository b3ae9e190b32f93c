"""Resizing: force a dataset to a known size by truncation or padding."""

from __future__ import annotations

from typing import Any, Protocol, TypeVar, cast

import numpy as np
import numpy.typing as npt

from .. import backends
from .._registry import constructor
from .._spine import keep, typed_as
from .._types import Vec
from .._validate import check_int
from ..core import Domain, Metric, Transformation
from ..domains import VectorDomain, vector_domain
from ..errors import InvalidParameter, NotImplementedForType, NotInDomain
from ..metrics import InsertDeleteDistance, SymmetricDistance, insert_delete_distance
from ..metrics import symmetric_distance as _symmetric_distance
from ._rowwise import SIZE_CHANGING_METRICS, check_metric, uniform_permutation, uniform_prefix

__all__ = ["make_resize", "then_resize"]


def _output_metric(MO: object) -> Metric[Any]:
    if isinstance(MO, (SymmetricDistance, InsertDeleteDistance)):
        return MO
    name = MO if isinstance(MO, str) else getattr(MO, "__name__", repr(MO))
    if name in ("SymmetricDistance", "symmetric_distance"):
        return _symmetric_distance()
    if name in ("InsertDeleteDistance", "insert_delete_distance"):
        return insert_delete_distance()
    raise NotImplementedForType(
        f"make_resize: MO must be SymmetricDistance or InsertDeleteDistance, got {MO!r}"
    )


_T = TypeVar("_T")


class _ResizeType(Protocol):
    """Typing only: a vector of ``T`` resized with a ``T`` constant is a vector of ``T`` (a
    non-vector domain or a constant of another type is refused at construction)."""

    def __call__(
        self,
        input_domain: Domain[Vec[_T]],
        input_metric: Metric[int],
        size: int,
        constant: _T,
        MO: object = ...,
    ) -> Transformation[Vec[_T], Vec[_T], int, int]: ...


@typed_as(cast("_ResizeType", None))
@constructor
def make_resize(
    input_domain: Domain[Any],
    input_metric: Metric[Any],
    size: int,
    constant: Any,
    MO: object = "SymmetricDistance",
) -> Transformation[Any, Any, int, int]:
    r"""Truncate or pad a dataset to exactly ``size`` records.

    A longer dataset keeps ``size`` records: a uniformly random subset in random order when
    the input metric is the symmetric distance (the input order means nothing), else its first
    ``size`` records.  A shorter one is padded with ``constant``.  Output domain:
    ``vector_domain(element, size=size)``, metric ``MO`` (symmetric or insert-delete).
    Stability map: :math:`d_{out} = 2\,d_{in}` (one added record may also push one out).

    Raises:
        InvalidParameter: if ``size`` is not a positive int, or ``constant`` is not a member
            of the element domain.
        NotImplementedForType: if the input is not a vector domain, or a metric is not the
            symmetric or insert-delete distance.

    Proof: docs/proofs/make_resize.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    >>> resize = space >> dp.t.then_resize(size=4, constant=0)
    >>> sorted(resize([5, 6])), resize.map(1), resize.output_domain
    ([0, 0, 5, 6], 2, VectorDomain(AtomDomain(T=i32), size=4))
    >>> len(resize([1, 2, 3, 4, 5, 6]))
    4
    """
    if not isinstance(input_domain, VectorDomain):
        raise NotImplementedForType(f"make_resize needs a vector_domain, got {input_domain!r}")
    check_metric("make_resize", input_metric, SIZE_CHANGING_METRICS)
    out_metric = _output_metric(MO)
    size = check_int("size", size, min=1)
    elem = input_domain.element_domain
    try:
        c = elem._normalize(constant)
    except NotInDomain as e:
        raise InvalidParameter(
            f"constant must be a member of {elem!r}, got {constant!r}: {e}"
        ) from None
    shuffle = isinstance(input_metric, SymmetricDistance)
    out_domain = vector_domain(elem, size=size)

    def function(arg: npt.NDArray[Any]) -> npt.NDArray[Any]:
        arg = backends.of(arg).sized(arg)  # len() needs known lengths (threat model: finding 9)
        if shuffle:
            if len(arg) > size:
                return arg[uniform_prefix(len(arg), size)]
            arg = arg[uniform_permutation(len(arg))]
        if len(arg) >= size:
            return arg[:size]
        pad = np.empty(size - len(arg), dtype=arg.dtype)
        pad[:] = [c] * len(pad) if arg.dtype == object else c
        return np.concatenate([arg, pad])

    return Transformation(
        input_domain, input_metric, out_domain, out_metric, function, lambda d_in: 2 * d_in
    )


then_resize = keep(make_resize)
