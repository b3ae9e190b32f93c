"""The scalar path's reservoir of pre-drawn noise (``samplers.fast``, proof §2 "Reservoir").

Repeated releases of one plan take accepted attempts drawn ahead by the vector path.  These
tests check what must hold beyond the law (tests/stat/test_reservoir_stat.py): a draw is handed
out at most once (threads), never survives its randomness epoch (a forked child, a switch of
source, a scripted stream, a changed certification band) or a copy to another process, and a
one-off release draws only its own attempt.  They run on the real source (tests/samplers is
not scripted).
"""

from __future__ import annotations

import copy
import os
import pickle
import sys
import threading

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.samplers import fast, rng
from tests.conftest import counting_source

pytestmark = pytest.mark.filterwarnings("ignore::opendp_lite.errors.OpenDPLiteWarning")

K = -1074  # the float mechanisms' default grid: the noise has ~1000 bits, values never repeat


def _plan(scale: float, dist: str = "laplace") -> fast._Plan:
    p = fast._plan_for(scale, K, dist)
    assert p is not None
    return p


def _release(scale: float, dist: str = "laplace"):  # type: ignore[no-untyped-def]
    return fast.float_noise_scalar_fn(scale, K, dist, "f64")  # type: ignore[arg-type]


def _scripted(seed: bytes):  # type: ignore[no-untyped-def]
    return rng.scripted_randomness(seed=seed)  # its warning is filtered (pytestmark)


def test_repeated_releases_use_the_reservoir_and_a_one_off_release_does_not() -> None:
    p = _plan(1.0 + 2.0**-40)
    draw = _release(1.0 + 2.0**-40)
    with counting_source() as requests:  # entering it starts a new randomness epoch
        draw(0.0)  # the plan's first release in this epoch: its own attempt only
        first = sum(requests)
        draw(0.0)  # the second refills the reservoir from the vector path
        assert p.reservoir.size == fast._RES_FIRST
        before = sum(requests)
        for _ in range(fast._RES_FIRST - 2):
            draw(0.0)  # served from the reservoir: no byte drawn
        assert sum(requests) == before
    assert first < 200  # one or two 24-byte attempts (never a batch of 32)
    assert before - first > 8 * fast._RES_FIRST  # the batch: >= one 64-bit word per attempt


def test_threads_never_share_a_draw() -> None:
    draw = _release(3.0)
    out: list[list[float]] = [[] for _ in range(8)]

    def work(i: int) -> None:
        out[i].extend(draw(0.0) for _ in range(3000))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: races show up
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    values = [v for part in out for v in part]
    # at scale 3 on the 2^-1074 grid, two independent releases coincide with probability
    # < 2^-50: a repeated value means one draw was handed out twice
    assert len(values) == 24_000
    assert len(set(values)) == len(values)


def test_leaving_a_scripted_stream_discards_its_draws() -> None:
    draw = _release(2.0)
    with _scripted(b"reservoir"):
        scripted = [draw(0.0) for _ in range(7)]
    with _scripted(b"reservoir"):  # the same stream again: the same releases (reproducible)
        again = [draw(0.0) for _ in range(6)]
    assert again == scripted[:6]
    after = draw(0.0)  # the script's seventh release sits in the reservoir, drawn ahead
    assert after != scripted[6]
    assert fast._plan_for(2.0, K, "laplace").reservoir.epoch == rng.EPOCH[0]  # type: ignore[union-attr]


def test_switching_the_source_discards_the_reservoir() -> None:
    p = _plan(5.0)
    draw = _release(5.0)
    for _ in range(3):
        draw(0.0)
    assert p.reservoir.items
    epoch = rng.EPOCH[0]
    rng.use_os_source()
    try:
        assert rng.EPOCH[0] > epoch
        draw(0.0)  # refills from the OS source: nothing drawn by the DRBG is used
        assert p.reservoir.items == [] and p.reservoir.epoch == rng.EPOCH[0]
    finally:
        rng.use_drbg()


def test_a_changed_certification_band_discards_the_reservoir() -> None:
    draw = _release(7.0, "gaussian")
    for _ in range(40):
        draw(0.0)
    fast.reset_fallback_counts()
    with fast.certification_margin(0.9):
        for _ in range(40):
            draw(0.0)  # drawn afresh under the widened band: mostly the exact path
    c = fast.fallback_counts()
    assert c["exact_lanes"] >= 0.5 * c["attempts"] > 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_never_uses_the_parents_draws() -> None:
    m = dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), 4.0)
    for _ in range(40):
        m(0.0)  # the parent's reservoir now holds pre-drawn noise
    p = _plan(4.0)
    assert len(p.reservoir.items) >= 20
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: releases, written to the pipe as raw float64
        try:
            os.close(r)
            ys = np.array([m(0.0) for _ in range(20)], dtype=np.float64)
            os.write(w, ys.tobytes())
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while len(data) < 160:
        chunk = os.read(r, 160 - len(data))
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    child = np.frombuffer(data, dtype=np.float64).tolist()
    parent = [m(0.0) for _ in range(40)]  # the parent's next releases, from its reservoir
    assert len(child) == 20
    assert not set(child) & set(parent)


def test_small_vectors_take_distinct_draws_from_the_reservoir() -> None:
    small = fast.float_noise_small_fn(1.5, K, "laplace", "f64")
    ys = np.concatenate([small(np.zeros(10)) for _ in range(300)])
    assert len(set(ys.tolist())) == len(ys)


def test_refusal_happens_before_any_draw() -> None:
    small = fast.float_noise_small_fn(1.25, K, "gaussian", "f64")
    p = _plan(1.25, "gaussian")
    for _ in range(3):
        small(np.zeros(4))
    left = len(p.reservoir.items)
    for bad in (np.inf, -np.inf, np.nan):
        x = np.zeros(6)
        x[3] = bad
        with pytest.raises(ValueError, match="finite"):
            small(x)
        assert len(p.reservoir.items) == left  # nothing taken


def test_a_pickled_or_copied_release_function_starts_with_an_empty_reservoir() -> None:
    # a release function shipped to another process (Dask pickles closures with cloudpickle)
    # must not carry the pre-drawn noise: both sides would release the same values
    cloudpickle = pytest.importorskip("cloudpickle")
    m = dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), 6.0)
    for _ in range(40):
        m(0.0)
    p = _plan(6.0)
    assert p.reservoir.items
    assert pickle.loads(pickle.dumps(p)).reservoir.items == []  # noqa: S301 (our own bytes)
    assert copy.deepcopy(p).reservoir.items == []
    clone = cloudpickle.loads(cloudpickle.dumps(m))
    theirs = [clone(0.0) for _ in range(20)]
    ours = [m(0.0) for _ in range(20)]
    assert not set(theirs) & set(ours)
