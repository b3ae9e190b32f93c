"""A real ``dask.distributed.LocalCluster`` for the Dask tests (``test_dask_*.py``, which ask for
the ``cluster`` or ``client`` fixture): 2 worker processes, 1 thread each, started once per test
module (the machine is small and shared).  The other backend tests never start it, and run
without Dask installed.

``allowed-failures`` is 1: a task whose worker dies once is retried elsewhere; a task that
kills its worker twice fails the computation with ``KilledWorker`` (the fault tests use both).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    pytest.importorskip("dask.array")
    distributed = pytest.importorskip("distributed")
    import cloudpickle
    import dask

    # test modules are not importable on the workers: ship their helpers by value
    for name, mod in list(sys.modules.items()):
        if name.split(".")[-1].startswith("test_dask") and hasattr(mod, "__file__"):
            cloudpickle.register_pickle_by_value(mod)
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        cl = distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=50,  # CRITICAL only: the fault tests provoke expected errors
        )
    try:
        yield cl
    finally:
        cl.close()


@pytest.fixture(scope="module")
def client(cluster: Any) -> Iterator[Any]:
    distributed = pytest.importorskip("distributed")
    c = distributed.Client(cluster)
    try:
        yield c
    finally:
        c.close()
