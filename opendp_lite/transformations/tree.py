"""Hierarchical (b-ary tree) aggregation of counts, and its consistent post-processing."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from .._registry import constructor
from .._spine import keep
from .._types import carrier_dtype, carrier_name, int_bounds, is_float, is_int
from .._validate import check_int
from ..core import Domain, Function, Metric, Transformation
from ..domains import AtomDomain, VectorDomain, atom_domain, vector_domain
from ..errors import FailedFunction, InvalidParameter, NotImplementedForType
from ..metrics import L1Distance, L2Distance, l1_distance, l2_distance

__all__ = [
    "choose_branching_factor",
    "make_b_ary_tree",
    "make_consistent_b_ary_tree",
    "then_b_ary_tree",
]


def _levels(leaf_count: int, b: int) -> int:
    """The number of levels of a b-ary tree with ``leaf_count`` leaves (root level included)."""
    depth, width = 1, 1
    while width < leaf_count:
        width *= b
        depth += 1
    return depth


def _check_tree_args(name: str, leaf_count: object, b: object) -> tuple[int, int]:
    return (
        check_int("leaf_count", leaf_count, min=1, who=name),
        check_int("branching_factor", b, min=2, who=name),
    )


@constructor
def make_b_ary_tree(
    input_domain: Domain[Any], input_metric: Metric[Any], leaf_count: int, branching_factor: int
) -> Transformation[Any, Any, int, int]:
    r"""Expand a vector of integer counts (the leaves) into a complete b-ary tree of sums.

    The first ``leaf_count`` counts are the leaves (zero-padded to ``b^(D−1)`` for the sums);
    the output lists the levels from the root down, then the leaves given.  With
    ``D = ⌈log_b leaf_count⌉ + 1`` levels and ``s_l = min(b^(D−1−l), leaf_count)`` leaves
    (not padding) per node of level ``l``, the stability map is, for L1:
    :math:`d_{out} = D \cdot d_{in}`; for L2 (integer counts, where
    :math:`\|v\|_1 \le \|v\|_2^2`):

    .. math:: d_{out} = \left\lceil \sqrt{\textstyle\sum_l \min(s_l\, d_{in}^2,\; d_{in}^4)}
              \right\rceil

    Sums saturate at the carrier's range.

    Raises:
        InvalidParameter: if ``leaf_count < 1`` or ``branching_factor < 2``.
        NotImplementedForType: if the domain is not a vector of integers, or the metric is not
            an L1 or L2 distance.

    Proof: docs/proofs/make_b_ary_tree.md

    >>> import opendp_lite.prelude as dp
    >>> space = dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int)
    >>> t = space >> dp.t.then_b_ary_tree(leaf_count=5, branching_factor=2)
    >>> t([1, 2, 3, 4, 5]), t.map(1)
    ([15, 10, 5, 3, 7, 5, 0, 1, 2, 3, 4, 5], 4)
    """
    name = "make_b_ary_tree"
    leaf_count, b = _check_tree_args(name, leaf_count, branching_factor)
    if not (
        isinstance(input_domain, VectorDomain)
        and isinstance(input_domain.element_domain, AtomDomain)
        and is_int(input_domain.element_domain.T)
    ):
        raise NotImplementedForType(
            f"{name} needs a vector of integer counts, got {input_domain!r}"
        )
    if not isinstance(input_metric, (L1Distance, L2Distance)):
        raise NotImplementedForType(f"{name} needs an L1 or L2 distance, got {input_metric!r}")
    T = input_domain.element_domain.T
    tmin, tmax = int_bounds(T)
    D = _levels(leaf_count, b)
    full = b ** (D - 1)
    dtype = carrier_dtype(T)

    def function(x: npt.NDArray[Any]) -> npt.NDArray[Any]:
        leaves = x[:leaf_count].astype(np.int64)
        if x.dtype.itemsize == 8:
            # exact level sums for 64-bit counts: Python ints (the tree has few nodes)
            level = [int(v) for v in x[:leaf_count].tolist()] + [0] * (full - len(leaves))
            levels = []
            while len(level) > 1:
                level = [sum(level[i : i + b]) for i in range(0, len(level), b)]
                levels.append([min(max(v, tmin), tmax) for v in level])
            out = [v for lev in reversed(levels) for v in lev] + x[:leaf_count].tolist()
            return np.asarray(out, dtype=dtype)
        # counts below 2^32 in magnitude: int64 sums cannot wrap for any tree that fits memory
        padded = np.zeros(full, dtype=np.int64)
        padded[: leaves.shape[0]] = leaves
        parts = []
        cur = padded
        while cur.shape[0] > 1:
            cur = cur.reshape(-1, b).sum(axis=1)
            parts.append(np.clip(cur, tmin, tmax))
        res = np.concatenate([*reversed(parts), leaves]) if parts else leaves
        return res.astype(dtype)

    if isinstance(input_metric, L1Distance):
        out_metric: Metric[Any] = l1_distance(T=T)

        def stability_map(d_in: int) -> int:
            return D * d_in
    else:
        out_metric = l2_distance(T=T)
        sizes = [min(b ** (D - 1 - lev), leaf_count) for lev in range(D)]

        def stability_map(d_in: int) -> int:
            sq = sum(min(s * d_in * d_in, d_in**4) for s in sizes)
            r = math.isqrt(sq)
            return r if r * r == sq else r + 1

    return Transformation(
        input_domain,
        input_metric,
        vector_domain(atom_domain(T=T, nan=False)),
        out_metric,
        function,
        stability_map,
    )


then_b_ary_tree = keep(make_b_ary_tree)


@constructor
def make_consistent_b_ary_tree(
    branching_factor: int, TIA: object = "int", TOA: object = "float"
) -> Function[Any, npt.NDArray[Any]]:
    r"""Post-process a noisy b-ary tree into consistent leaf estimates (Hay et al. 2010).

    Given a tree laid out as by :func:`make_b_ary_tree` (root first; missing last-level
    leaves read as 0), returns the leaves of the least-squares estimate whose every node equals
    the sum of its children: a bottom-up pass
    :math:`z_v = \frac{b^h - b^{h-1}}{b^h - 1}\tilde h_v + \frac{b^{h-1} - 1}{b^h - 1}\sum_u z_u`
    (``h`` the height of ``v``, leaves at 1), then a top-down pass
    :math:`\bar h_v = z_v + (\bar h_{parent} - \sum_{siblings} z)/b`.
    A :class:`~opendp_lite.core.Function` (post-processing: no map).

    Raises:
        InvalidParameter: if ``branching_factor < 2``.
        NotImplementedForType: if ``TOA`` is not a float type.
        FailedFunction: (when called) if the length is not that of a b-ary tree.

    Proof: docs/proofs/make_consistent_b_ary_tree.md

    >>> import opendp_lite.prelude as dp
    >>> f = dp.t.make_consistent_b_ary_tree(branching_factor=2)
    >>> [round(v, 6) for v in f([10, 4, 7, 1, 2, 3, 4]).tolist()]
    [1.238095, 2.238095, 2.904762, 3.904762]
    """
    _, b = _check_tree_args("make_consistent_b_ary_tree", 1, branching_factor)
    T = carrier_name(TOA)
    if not is_float(T):
        raise NotImplementedForType(f"make_consistent_b_ary_tree: TOA must be float, got {TOA!r}")

    def function(tree: Any) -> npt.NDArray[Any]:
        t = np.asarray(tree, dtype=np.float64)
        n = t.shape[0] if t.ndim == 1 else 0
        # levels 1, b, b², ... are full; the last one holds 0 < ℓ <= b^(H-1) leaves
        widths = [1]
        internal = 0
        while internal + widths[-1] < n:
            internal += widths[-1]
            widths.append(widths[-1] * b)
        leaves_given = n - internal
        if n == 0:
            raise FailedFunction(f"a b-ary tree (b={b}) cannot be empty")
        H = len(widths)
        levels = []
        offset = 0
        for w in widths:
            row = np.zeros(w)
            got = t[offset : offset + w]
            row[: got.shape[0]] = got
            levels.append(row)
            offset += w
        # bottom-up: z at the leaves is the observation
        z = [np.empty(0)] * H
        z[H - 1] = levels[H - 1]
        for lev in range(H - 2, -1, -1):
            h = H - lev  # height of this level's nodes (leaves have height 1)
            child = z[lev + 1].reshape(-1, b).sum(axis=1)
            bh, bh1 = float(b**h), float(b ** (h - 1))
            z[lev] = (bh - bh1) / (bh - 1) * levels[lev] + (bh1 - 1) / (bh - 1) * child
        # top-down
        est = z[0]
        for lev in range(1, H):
            sib = z[lev].reshape(-1, b).sum(axis=1)
            est = z[lev] + np.repeat((est - sib) / b, b)
        out: npt.NDArray[Any] = est[:leaves_given].astype(np.float32 if T == "f32" else np.float64)
        return out

    return Function(function)


def choose_branching_factor(size_guess: int) -> int:
    r"""The branching factor b that minimises the error of range queries on a b-ary tree.

    As OpenDP 0.16: the b in 2, …, ``size_guess`` (the first, on ties) that minimises the
    average variance of formula (3) of Qardaji, Yang & Li 2013,
    v(b) = (b − 1)·h³ − 2(b + 1)·h²/3 with h = log_b(size_guess); ``size_guess`` itself when it
    is below 2.  A public heuristic for choosing ``branching_factor``; it reads no data.

    >>> choose_branching_factor(1000), choose_branching_factor(10), choose_branching_factor(1)
    (26, 10, 1)

    Raises:
        InvalidParameter: if ``size_guess`` is not an int in [0, 2^32 − 1].
    """
    n = check_int("size_guess", size_guess)
    if not 0 <= n < 2**32:
        raise InvalidParameter(f"size_guess must be in [0, 2^32 - 1], got {n}")
    if n < 2:
        return n
    ln_n = math.log(n)
    best_b, best_v = 0, math.inf
    for b in range(2, n + 1):
        # for 6 <= b <= n, h >= 1 gives v(b) >= h²·(b − 5)/3 >= (b − 5)/3: no later b can win
        if b >= 6 and (b - 5) / 3 > best_v + abs(best_v) * 1e-9 + 1:
            break
        h = ln_n / math.log(b)
        v = (b - 1) * h**3 - 2 * (b + 1) * h**2 / 3
        if v < best_v:
            best_b, best_v = b, v
    return best_b
