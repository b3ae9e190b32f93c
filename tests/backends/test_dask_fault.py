"""Faults during a release on a LocalCluster: a worker killed mid-computation, a task that
keeps killing its worker, a task that raises.  Each release either completes with exactly the
numpy release (same aggregate, noise drawn once) or fails with nothing released; either way
the odometer has recorded its charge before the query ran.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import warnings
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import FailedFunction
from opendp_lite.samplers import rng

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

SYM = dp.symmetric_distance()
BLOCK = 4_000
NBLOCKS = 24
N = BLOCK * NBLOCKS


def _slow(block: npt.NDArray[Any]) -> npt.NDArray[Any]:
    time.sleep(0.15)  # long enough to kill a worker while blocks are in flight
    return block


def _exit_worker(block: npt.NDArray[Any]) -> npt.NDArray[Any]:
    os._exit(1)  # a hard crash of the worker process, every time this block runs


def _raise(block: npt.NDArray[Any]) -> npt.NDArray[Any]:
    raise OSError("storage lost")


@pytest.fixture(scope="module")
def data() -> npt.NDArray[np.float64]:
    return np.random.default_rng(21).uniform(-1.0, 2.0, N)


def _query() -> Any:
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=N), SYM
    return space >> dp.t.then_clamp((0.0, 1.0)) >> dp.t.then_mean() >> dp.m.then_laplace(0.01)


def _odometer() -> Any:
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=N), SYM
    return dp.c.make_fully_adaptive_composition(*space, dp.max_divergence())


def _scripted(seed: bytes) -> Any:
    warnings.simplefilter("ignore")
    return rng.scripted_randomness(seed=seed)


def test_worker_killed_mid_release(client: Any, data: npt.NDArray[np.float64]) -> None:
    query = _query()
    with warnings.catch_warnings(), _scripted(b"kill"):
        expected = query(data)  # the numpy release under the same random stream
    x = da.from_array(data, chunks=BLOCK).map_blocks(_slow, dtype=float, meta=np.empty(0))
    with warnings.catch_warnings():
        queryable = _odometer()(x)
    outcome: dict[str, Any] = {}

    def release() -> None:
        try:
            with warnings.catch_warnings(), _scripted(b"kill"):
                outcome["value"] = queryable(query)
        except Exception as e:  # a clean failure is an allowed outcome; recorded below
            outcome["error"] = e

    pids = client.run(os.getpid)
    thread = threading.Thread(target=release)
    thread.start()
    deadline = time.monotonic() + 20
    while not any(client.processing().values()) and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.6)  # some partials done, others in flight
    victim = sorted(pids)[0]
    assert thread.is_alive()  # the release is still computing
    os.kill(pids[victim], signal.SIGKILL)
    thread.join(timeout=60)
    assert not thread.is_alive()
    client.wait_for_workers(2, timeout=30)
    assert pids[victim] not in client.run(os.getpid).values()  # it was killed (and replaced)
    # the query was charged exactly once, whatever happened
    assert queryable.privacy_loss(2) == query.map(2)
    if "error" in outcome:  # failed cleanly: nothing was released
        assert "value" not in outcome
    else:  # completed: exactly the numpy release (same aggregate, noise drawn once)
        assert outcome["value"] == expected


def test_task_that_keeps_crashing_fails_cleanly(client: Any) -> None:
    x = da.from_array(np.zeros(N), chunks=BLOCK)
    poisoned = da.concatenate(
        [x[:-BLOCK], x[-BLOCK:].map_blocks(_exit_worker, dtype=float, meta=np.empty(0))]
    )
    query = _query()
    queryable = _odometer()(poisoned)
    drawn: list[int] = []

    def source(n: int) -> bytes:
        drawn.append(n)
        return bytes(n)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with (
            rng.scripted_randomness(source=source),
            pytest.raises(FailedFunction, match="withheld"),
        ):
            # a failure inside the odometer reaches the analyst without its message
            # (KilledWorker here; core.invoke_private)
            queryable(query)
    assert drawn == []  # no noise was drawn, so nothing noisy exists to be released
    assert queryable.privacy_loss(2) == query.map(2)  # the failed query is on record
    client.wait_for_workers(2, timeout=30)


def test_failed_then_retried_query_is_charged_twice(
    client: Any, data: npt.NDArray[np.float64]
) -> None:
    good = da.from_array(data, chunks=BLOCK)
    bad = da.concatenate(
        [good[:-BLOCK], good[-BLOCK:].map_blocks(_raise, dtype=float, meta=np.empty(0))]
    )
    query = _query()
    queryable = _odometer()(bad)
    with pytest.raises(FailedFunction, match="withheld"):  # OSError, message withheld
        queryable(query)
    with pytest.raises(FailedFunction, match="withheld"):
        queryable(query)
    total = dp.c.make_basic_composition([query, query]).map(2)
    assert queryable.privacy_loss(2) == total  # each attempt, failed or not, was charged
    assert queryable.privacy_loss(2) == 2 * query.map(2)
