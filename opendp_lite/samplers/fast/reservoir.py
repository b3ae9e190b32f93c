"""The plan's reservoir: accepted attempts of the vector path drawn ahead for scalar releases
(lemma S5)."""

from __future__ import annotations

from itertools import repeat

import numpy as np

from ..rng import EPOCH
from .plan import _Plan, _Reservoir
from .scalar import _scalar_draw
from .vector import _accepted

#: Reservoir batch sizes: a plan's first refill draws _RES_FIRST attempts, each later one
#: twice the last, up to _RES_MAX (about 0.2 MB per plan; plans are cached, at most 256).
_RES_FIRST, _RES_MAX = 32, 2048


def _draw(p: _Plan) -> tuple[int, int, int]:
    """One accepted attempt (negative, M_top, lazy) of the plan's law, as :func:`_scalar_draw`
    returns it: from the plan's reservoir when it holds one drawn in the current randomness
    epoch, else via :func:`_refill` (lemma S5)."""
    r = p.reservoir
    if r.epoch == EPOCH[0]:
        try:
            return r.items.pop()
        except IndexError:
            pass
    return _refill(p, r)


def _refill(p: _Plan, r: _Reservoir) -> tuple[int, int, int]:
    """A draw when the reservoir is empty or stale: the first release of a plan in an epoch
    (and every release of a plan without the vector path) draws only its own attempt; later
    ones refill the reservoir with a batch of the vector path's accepted attempts."""
    epoch = EPOCH[0]
    if r.epoch != epoch:  # stale: drop what was drawn before (and restart the sizes)
        r.items, r.calls, r.size = [], 0, 0
        r.epoch = epoch
    r.calls += 1
    if r.calls < 2 or not p.floats_ok:
        return _scalar_draw(p)
    r.size = min(_RES_MAX, max(_RES_FIRST, 2 * r.size))
    items = _batch_draws(p, r.size)
    out = items.pop()
    if EPOCH[0] == epoch:  # else the epoch moved on while drawing: keep nothing
        r.items = items
    return out


def _batch_draws(p: _Plan, n: int) -> list[tuple[int, int, int]]:
    """The first n accepted attempts of the vector path as draws (negative, M_top, lazy),
    reversed (``pop`` returns them in draw order).  M = N·2^a + R with R's first s64 bits
    known: M_top = N·2^s64 + R_top and lazy = a − s64 unrevealed low bits, which every
    decision was certified for (as on the scalar path); exactly resolved lanes have lazy = 0.
    """
    acc = _accepted(p, n)
    lazy, s64 = p.a - p.s64, p.s64
    negs = (acc.sign < 0).view(np.uint8).tolist()
    items: list[tuple[int, int, int]]
    with np.errstate(invalid="ignore"):  # exact-path positions hold junk; replaced below
        if p.int_ok and not lazy:  # M = N·2^a + R < 2^61 (N < 2^20, T < 2^40): int64 math
            mags = ((acc.N.astype(np.int64) << s64) + acc.Rtop.astype(np.int64)).tolist()
            items = list(zip(negs, mags, repeat(0)))
        else:
            ns = acc.N.astype(np.int64).tolist()
            rs = acc.Rtop.tolist()
            items = [(g, (q << s64) + r, lazy) for g, q, r in zip(negs, ns, rs, strict=True)]
    for pos, z in zip(acc.exact_pos, acc.exact_z, strict=True):
        items[pos] = (int(z < 0), abs(z), 0)
    items.reverse()
    return items


def _take(p: _Plan, n: int) -> list[tuple[int, int, int]]:
    """n draws, each as :func:`_draw` gives it (popped one by one: each handed out once)."""
    r = p.reservoir
    items = r.items
    if r.epoch == EPOCH[0] and len(items) >= n:
        pop = items.pop
        try:
            return [pop() for _ in range(n)]
        except IndexError:  # another thread emptied it meanwhile: the draws popped here are
            pass  # dropped (by a race, never by their values) and _draw takes fresh ones
    return [_draw(p) for _ in range(n)]
