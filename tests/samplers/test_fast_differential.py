"""Differential test of the certified samplers: the scalar attempt, the vector path (one lane and
many lanes) and the exact path, driven from the same given uniforms, accept the same attempts and
release the same values (issue 23).

Each attempt is given as uniforms of 512 bits (sign S, U, W, V) and the whole integer R.  They
are encoded into the scalar attempt's bytes (``_attempt_bytes``) and into the vector path's words
(``_Plan.layout``); every continuation reads the same uniforms: a :class:`_LazyU` that reveals more
bits of U, W or V gets that uniform's next bits, and R's unrevealed low bits (the lazy tail) are
R's own low bits.  So the three paths see one realisation of the attempt's uniforms, and as each
computes the same function of them (lemmas S1, S3, S4, S6), they must agree attempt by attempt:

* ``_attempt`` (the scalar attempt, float certificates first) and ``_scalar_draw`` (its byte
  stream) against ``_attempt_exact`` (every comparison exact);
* ``_draw_attempts`` + ``_exact_lane`` (the vector path, on one lane at a time and on all lanes)
  against ``_attempt_exact``, or ``_attempt_exact_merged`` for the wide Gaussian layout whose
  vector attempt merges R's and V's tests into one (a different function of the uniforms, with
  the same law: lemma S1);
* the released values: ``_float_x`` of the scalar draws, ``float_noise`` / ``int_noise`` on the
  numpy vector path, and the exact rounding ``_round_out`` of the exact path's Z;

and again with the certification band widened (``certification_margin(0.9)``) so that every
float decision is refused and taken exactly.  Some attempts put U and W within 2^-480 of their
thresholds, so the exact continuation reveals several 64-bit words.  The uniforms come from
``scripted_randomness`` (test data).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import gmpy2
import numpy as np
import pytest

from opendp_lite.samplers import fast
from opendp_lite.samplers.fast import attempt as fa
from opendp_lite.samplers.fast import rounding as fr
from opendp_lite.samplers.fast import scalar as fs
from opendp_lite.samplers.fast import vector as fv
from opendp_lite.samplers.rng import scripted_randomness
from opendp_lite.samplers.uniform import sample_uniform_bits

pytestmark = pytest.mark.filterwarnings("ignore:randomness is scripted")

FULL = 512  # bits of each given uniform (a continuation past them reads zeros)
MASK64 = (1 << 64) - 1


@dataclass(frozen=True)
class Given:
    """One attempt's uniforms: sign bit, U, W, V (FULL-bit fractions) and R (a bits)."""

    s: int
    U: int
    W: int
    V: int
    R: int


def _pre(x: int, nb: int) -> int:
    return x >> (FULL - nb)


class _Source:
    """The given attempts as the samplers' byte and word sources, and the continuations."""

    def __init__(self, p: Any, attempts: list[Given]) -> None:
        self.p, self.attempts, self.pos = p, attempts, 0
        self.pending: Any = None
        self.active: list[Any] = []
        self.tail = 0
        self.registry: dict[tuple[int, int], int] = {}
        self.tails: dict[int, int] = {}

    # -- encodings -------------------------------------------------------------------------
    def lazy(self) -> int:
        return int(self.p.scalar_bytes[0])

    def scalar_words(self, g: Given) -> tuple[int, int, int]:
        w0 = (_pre(g.U, 32) << 32) | (_pre(g.W, 31) << 1) | g.s
        return w0, g.R >> self.lazy(), _pre(g.V, 64)

    def scalar_bytes(self, g: Given) -> bytes:
        lazy, _, nbytes, r_shift, _, w2_shift = self.p.scalar_bytes
        w0, r, w2 = self.scalar_words(g)
        word = w0 | (r << (64 + r_shift))
        if nbytes > 8 + (self.p.a - lazy + 7) // 8:
            word |= w2 << w2_shift
        return word.to_bytes(nbytes, "little")

    def vector_words(self, g: Given) -> tuple[int, int]:
        p = self.p
        if p.layout == 1:
            return (_pre(g.U, 24) << 40) | (_pre(g.W, 24) << 16) | (g.R << 1) | g.s, 0
        w0 = (_pre(g.U, 32) << 32) | (_pre(g.W, 31) << 1) | g.s
        if p.a == 0:
            return w0, 0
        if p.layout == 2:
            return w0, (g.R << (64 - p.a)) | _pre(g.V, 32)
        return w0, (g.R << (64 - p.a)) if p.a <= 64 else g.R >> (p.a - 64)

    # -- the samplers' sources (patched in) ----------------------------------------------------
    def fill_bytes(self, n: int) -> bytes:  # the scalar attempt's bytes
        g = self.attempts[self.pos]
        self.pos += 1
        out = self.scalar_bytes(g)
        assert len(out) == n
        return out

    def fill_uint64(self, m: int) -> Any:  # the vector path's word rows: w0, then w1
        if self.pending is not None:
            row, self.pending = self.pending, None
            assert len(row) == m
            return row
        gs = self.attempts[self.pos : self.pos + m]
        assert len(gs) == m, "ran out of given attempts"
        self.pos += m
        words = [self.vector_words(g) for g in gs]
        if self.p.a > 0 and self.p.layout != 1:
            self.pending = np.array([w[1] for w in words], dtype=np.uint64)
        return np.array([w[0] for w in words], dtype=np.uint64)

    def continuation(self, n: int) -> bytes:  # the next 64 bits of the uniform being compared
        u = self.active[-1]
        assert n == 8
        full = self.registry[u.key]
        bits = ((full << 64) >> (FULL - u.nb)) & MASK64  # bits nb … nb + 63 (zeros past FULL)
        return bits.to_bytes(8, "little")

    def tail_bits(self, n: int) -> int:  # R's unrevealed low bits
        assert n == self.p.a - 64 and self.tail >> n == 0
        return self.tail

    def set_tail(self, r_top: int) -> None:
        self.tail = self.tails[r_top & MASK64]


def _lazy_class(src: _Source) -> type:
    base = fa._LazyU

    class GivenU(base):  # type: ignore[misc, valid-type]
        """A lazily revealed uniform whose further bits are the given uniform's."""

        def __init__(self, p: int, nb: int) -> None:
            super().__init__(p, nb)
            self.key = (p, nb)

        def below_exp(self, g: Any) -> bool:
            src.active.append(self)
            try:
                return bool(super().below_exp(g))
            finally:
                src.active.pop()

    return GivenU


@contextmanager
def _driven(monkeypatch: pytest.MonkeyPatch, src: _Source) -> Iterator[None]:
    """Every bit the samplers read comes from ``src`` (patched where each module looks it up)."""
    reveal, full_R = fa._reveal, fv._full_R

    def reveal_given(R: int, lazy: int) -> tuple[int, int]:
        src.set_tail(R)
        return reveal(R, lazy)

    def full_R_given(p: Any, w1: int) -> int:
        if p.a > 64:
            src.set_tail(w1)
        return full_R(p, w1)

    with monkeypatch.context() as mp:
        mp.setattr(fa, "_LazyU", _lazy_class(src))
        mp.setattr(fa, "fill_bytes", src.continuation)
        mp.setattr(fa, "_reveal", reveal_given)
        for module in (fa, fr, fs):
            mp.setattr(module, "sample_uniform_bits", src.tail_bits)
        mp.setattr(fv, "_full_R", full_R_given)
        mp.setattr(fv, "fill_uint64", src.fill_uint64)
        mp.setattr(fs, "fill_bytes", src.fill_bytes)
        yield


def _boundary(g: Any, sign: int) -> int:
    """A FULL-bit uniform within 2^-480 of exp(−g), g ≥ 0 rational (on side ``sign``)."""
    with gmpy2.context(gmpy2.get_context(), precision=FULL + 64):
        v = int(gmpy2.floor(gmpy2.exp(-gmpy2.mpfr(g)) * gmpy2.mpfr(2) ** FULL))
    return max(0, min((1 << FULL) - 1, v + sign * (1 << 32)))


def _attempts(p: Any, n: int, seed: bytes) -> list[Given]:
    """n attempts from a scripted stream, some put on U's and W's thresholds; attempts whose
    prefixes or R's top bits collide with an earlier attempt's are left out (the registry of
    continuations is keyed by them)."""
    out: list[Given] = []
    with scripted_randomness(seed=seed):
        raw = [
            (
                sample_uniform_bits(1),
                *(sample_uniform_bits(FULL) for _ in range(3)),
                sample_uniform_bits(p.a),
            )
            for _ in range(n)
        ]
        for i, (s, U, W, V, R) in enumerate(raw):
            if i % 7 == 3:  # U within 2^-480 of e^{-n·λ}: N's float certificate must refuse
                U = _boundary((i % 3) * p.lam, 1 if i % 2 else -1)
            if i % 7 == 5 and R:  # W within 2^-480 of e^{-R/T}
                W = _boundary(R * p.inv_T, 1 if i % 2 else -1)
            if p.gauss and i % 7 in (4, 6):  # the Gaussian test's uniform on its threshold
                M = (fa._geometric(fa._LazyU(U, FULL), p.lam, 0) << p.a) + R
                gamma = (M - p.center) ** 2 / p.two_sigma2
                side = 1 if i % 2 else -1
                if i % 7 == 4 and fv._merged(p):  # the vector path's merged test
                    W = _boundary(R * p.inv_T + gamma, side)
                elif p.v_in_w0:
                    W = _boundary(gamma, side)
                else:
                    V = _boundary(gamma, side)
            if p.v_in_w0:
                V = W
            out.append(Given(s, U, W, V, R))
    return out


def _register(src: _Source) -> None:
    kept = []
    for g in src.attempts:
        pairs = [((_pre(x, nb), nb), x) for x, nb in ((g.U, 24), (g.U, 32), (g.W, 24), (g.W, 31))]
        pairs += [((_pre(g.V, nb), nb), g.V) for nb in (32, 64)]
        keys = dict(pairs)
        top = (g.R >> (src.p.a - 64)) & MASK64 if src.p.a > 64 else None
        if any(src.registry.get(k, v) != v or keys[k] != v for k, v in pairs):
            continue  # two uniforms share a prefix: their continuations could not be told apart
        src.registry.update(keys)
        if top is not None:
            src.tails[top] = g.R & ((1 << (src.p.a - 64)) - 1)
        kept.append(g)
    src.attempts = kept


def _exact(p: Any, g: Given, merged: bool) -> int | None:
    u, w = (_pre(g.U, 32), 32), (_pre(g.W, 31), 31)
    if merged:
        return fa._attempt_exact_merged(p, g.s, u, w, g.R)
    v = (_pre(g.W, 31), 31) if p.v_in_w0 else (_pre(g.V, 64), 64)
    return fa._attempt_exact(p, g.s, u, w, g.R, v)


def _z_of_draw(src: _Source, d: tuple[int, int, int]) -> int:
    _, m, lazy = d
    if lazy:
        src.set_tail(m)
    return int(fs._z_from(d))


def _lane_z(p: Any, lanes: Any, i: int) -> int | None:
    if lanes.accept[i]:
        return int(fv._accepted_lane(p, lanes, i))
    if lanes.undecided[i]:
        z = fv._exact_lane(p, lanes, i)
        return None if z is None else int(z)
    return None


# (dist, scale, k, T): each bit layout, the lazy tail (a > 64), V in W's slot (a = 0), the
# merged wide Gaussian, f64 / f32 at their default k, coarse k, and integers (k = 0)
CASES = [
    ("laplace", 1.0, -1074, "f64"),  # a = 1066: lazy tail, wide layout
    ("gaussian", 1.0, -1074, "f64"),  # merged wide Gaussian, lazy tail
    ("laplace", 3.0e-300, -1074, "f64"),  # a ≈ 67: a tail of a few bits
    ("laplace", 1.0, -149, "f32"),
    ("gaussian", 0.5, -149, "f32"),
    ("laplace", 1.0, -2, "f64"),  # coarse k: T = 4, a = 0, layout 1
    ("gaussian", 1.0, -2, "f64"),  # coarse k: a = 0, V in W's slot
    ("laplace", 0.75, -1, "f32"),
    ("laplace", 100, 0, "i64"),  # layout 1, a = 2
    ("laplace", 40000, 0, "i64"),  # layout 1, a = 11
    ("laplace", 2**20, 0, "i64"),  # wide layout, a = 16
    ("gaussian", 3, 0, "i64"),  # a = 0, V in W's slot
    ("gaussian", 100, 0, "i64"),  # layout 2 (R and V share w1)
    ("gaussian", 2**40, 0, "i64"),  # layout 2 at its edge (a = 32)
    ("gaussian", 2**45, 0, "i64"),  # merged wide Gaussian, a = 37
]
IDS = [f"{d}-{s}-{k}-{T}" for d, s, k, T in CASES]
N_ATTEMPTS = 1200


def _plan(dist: str, scale: Any, k: int) -> Any:
    p = fast._plan_for(scale, k, dist)
    assert p is not None and p.floats_ok
    return p


def _layout_seen(p: Any) -> tuple[int, bool, bool, bool]:
    return p.layout, fv._merged(p), p.a > 64, p.v_in_w0


def test_the_cases_hit_every_layout() -> None:
    seen = {_layout_seen(_plan(d, s, k)) for d, s, k, _ in CASES}
    assert {layout for layout, *_ in seen} == {0, 1, 2}
    assert any(m for _, m, _, _ in seen) and any(lz for _, _, lz, _ in seen)
    assert any(v for *_, v in seen)


@pytest.mark.parametrize("band", [0.0, 0.9])
@pytest.mark.parametrize(("dist", "scale", "k", "T"), CASES, ids=IDS)
def test_scalar_vector_and_exact_paths_agree_on_the_same_words(
    monkeypatch: pytest.MonkeyPatch, dist: str, scale: Any, k: int, T: str, band: float
) -> None:
    p = _plan(dist, scale, k)
    src = _Source(p, _attempts(p, N_ATTEMPTS, f"diff-{dist}-{scale}-{k}".encode()))
    _register(src)
    gs = src.attempts
    assert len(gs) > N_ATTEMPTS * 0.7  # boundary attempts sharing a prefix are kept once
    merged = bool(fv._merged(p))
    with warnings.catch_warnings(), fast.certification_margin(band), _driven(monkeypatch, src):
        warnings.simplefilter("ignore")
        exact = [_exact(p, g, False) for g in gs]
        exact_vec = [_exact(p, g, True) for g in gs] if merged else exact
        assert 0 < sum(z is not None for z in exact) < len(gs)
        fast.reset_fallback_counts()

        # the scalar attempt, word by word
        lazy = src.lazy()
        for g, want in zip(gs, exact, strict=True):
            w0, r, w2 = src.scalar_words(g)
            d = fa._attempt(p, w0, r, w2, lazy)
            got = None if d is None else _z_of_draw(src, d)
            assert got == want, (g, d, want)
        if band:  # most attempts left a float decision to the exact path
            assert fast.fallback_counts()["exact_lanes"] >= len(gs) // 2

        # the vector path: all lanes at once, then one lane per call
        src.pos = 0
        lanes = fv._draw_attempts(p, len(gs))
        assert src.pos == len(gs)
        vec = [_lane_z(p, lanes, i) for i in range(len(gs))]
        assert vec == exact_vec
        for i in range(0, len(gs), 37):
            src.pos = i
            one = fv._draw_attempts(p, 1)
            assert _lane_z(p, one, 0) == exact_vec[i]

        # the scalar byte stream: the first accepted attempts, in order
        accepted = [z for z in exact if z is not None]
        src.pos = 0
        draws = [fs._scalar_draw(p) for _ in range(20)]
        assert [_z_of_draw(src, d) for d in draws] == accepted[:20]

        # released values: scalar draws through _float_x / the integer clamp, vector paths
        accepted_vec = [z for z in exact_vec if z is not None]
        n = 100  # above the float SMALL_LIMITs: the numpy vector path
        if T in ("f64", "f32"):
            dtype = np.float64 if T == "f64" else np.float32
            xs = [0.0, 1.0, -3.5e10, 0.3, 2.0**24 + 1.0, -(2.0**-130)]
            for d, z, x in zip(draws, accepted, xs * 4, strict=False):
                x = float(dtype(x))
                if d[2]:
                    src.set_tail(d[1])
                want_x = fr._round_out(fr._grid_index(x, k, T) + z, k, T)
                got_x = fr._float_x(d, x, k, T)
                assert got_x == want_x and math.copysign(1, got_x) == math.copysign(1, want_x)
            xa = np.array((xs * 20)[:n], dtype=dtype)
            src.pos = 0
            out = fast.float_noise(xa, scale, k, dist, T)
            for i in range(n):
                x = float(xa[i])
                want_x = fr._round_out(fr._grid_index(x, k, T) + accepted_vec[i], k, T)
                assert float(out[i]) == want_x, i
        else:
            xi = np.arange(-100, 100, dtype=np.int64)  # above SMALL_LIMIT["int"]
            src.pos = 0
            out = fast.int_noise(xi, scale, dist, "i64")
            zs = accepted_vec if p.int_ok else accepted  # T ≥ 2^40: the scalar attempt per lane
            assert out.tolist() == [int(x) + z for x, z in zip(xi, zs, strict=False)]
