"""Shared test configuration.

* Slow statistical tests scale their sample size by ``OPENDP_LITE_SLOW_SCALE`` (default 1);
  CI sets it below 1.  The significance level never changes, only the sample size.
* Tests are deterministic: outside ``tests/security`` and ``tests/samplers`` (which test the
  OS source itself), every test draws its randomness from a SHAKE-256 stream seeded by its own
  node id, through the one entry point ``samplers.rng.fill_bytes``.  A statistical test at a
  fixed α then passes or fails the same way on every run, while its power to reject a wrong
  law is unchanged.  Set ``OPENDP_LITE_TEST_OS_RANDOMNESS=1`` to run the whole suite on fresh
  OS randomness instead (to look for tests that only pass on their seed).
* Every statistical assertion uses the one significance level ``ALPHA`` below, and each test's
  sample size is chosen so that the same test still rejects a wrong law (scale x 0.7 and
  x 1.3, or the test's own wrong control) at that level.  With a few hundred law assertions
  per run, ``ALPHA = 1e-6`` keeps the chance that a correct sampler fails some assertion of
  an OS-randomness run below 1e-3 (at 1e-3 per assertion it was about one run in four).
"""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

import opendp_lite.core as core
from opendp_lite.errors import OpenDPLiteWarning
from opendp_lite.samplers import rng

SLOW_SCALE = float(os.environ.get("OPENDP_LITE_SLOW_SCALE", "1"))
OS_RANDOMNESS = os.environ.get("OPENDP_LITE_TEST_OS_RANDOMNESS", "") not in ("", "0")
_OS_SOURCE_DIRS = {"security", "samplers"}

#: The suite's significance level for every statistical assertion (see the module docstring).
#: ``OPENDP_LITE_TEST_ALPHA`` overrides it only to audit power: at 1e-9 every wrong-law control
#: must still be rejected, which shows a margin of three orders of magnitude over 1e-6.
ALPHA = float(os.environ.get("OPENDP_LITE_TEST_ALPHA", "1e-6"))


def scaled(n: int, minimum: int = 1000) -> int:
    """A slow test's sample size, scaled for CI but never below ``minimum``."""
    return max(minimum, int(n * SLOW_SCALE))


@contextmanager
def counting_source(this_thread_only: bool = False) -> Iterator[list[int]]:
    """Route ``fill_bytes`` through the active source while recording every request's size
    (entering it warns, as any scripted source does; the warning is expected here).

    ``this_thread_only`` records only the requests of the thread that entered (an instrument
    of one release's own draws, blind to a thread that an earlier test left running)."""
    calls: list[int] = []
    source = rng._current_source()
    owner = threading.get_ident()

    def counted(n: int) -> bytes:
        if not this_thread_only or threading.get_ident() == owner:
            calls.append(n)
        return source(n)  # type: ignore[no-any-return]

    with pytest.warns(OpenDPLiteWarning), rng.scripted_randomness(counted):
        yield calls


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "stat(fits=k): the test makes at most k statistical fit assertions per item (only "
        "where tests/stat/_reference.py's static count cannot size a loop)",
    )


@pytest.fixture(autouse=True)
def _statistical_ledger(request: pytest.FixtureRequest) -> Iterator[None]:
    """Count this test's statistical assertions (``tests/stat/_reference.py``): a test may not
    make more fit assertions than the static count of its source (or its
    ``@pytest.mark.stat(fits=k)``) allows, so the budget test's count of the run's false alarms
    (``tests/stat/test_budget.py``) is an upper bound."""
    from tests.stat import _reference

    ledger = _reference._reset()
    yield
    record = os.environ.get("OPENDP_LITE_STAT_RECORD")
    if record and (ledger.fits or ledger.rejects):
        with open(record, "a", encoding="utf-8") as f:
            weakest = min((p for p, _ in ledger.powers), default=1.0)
            f.write(f"{request.node.nodeid}\t{ledger.fits}\t{ledger.rejects}\t{weakest!r}\n")
    if not ledger.fits:
        return
    marker = request.node.get_closest_marker("stat")
    if marker:
        declared = int(marker.kwargs["fits"])
    else:
        name = getattr(request.node, "originalname", request.node.name)
        declared = _reference.declared_fits(str(request.node.path), name)
    if ledger.fits > declared:
        pytest.fail(
            f"{ledger.fits} statistical fit assertions, {declared} counted in the source: call "
            "them through tests/stat/_reference.py in loops of stated length, or declare "
            f"@pytest.mark.stat(fits={ledger.fits})",
            pytrace=False,
        )


def pytest_collection_finish(session: pytest.Session) -> None:
    """No test module may leave a feature switched on at import (collection) time: the
    per-test restore below would keep it for every later test, and a test that checks a refusal
    without the feature would then fail or, worse, pass for the wrong reason.  ("contrib"
    changes nothing here.)"""
    leaked = set(core._FEATURES) - {"contrib"}
    if leaked:
        raise pytest.UsageError(f"features enabled while collecting tests: {sorted(leaked)}")


@pytest.fixture(autouse=True)
def _restore_features() -> Iterator[None]:
    """Each test starts with the feature flags it found, whatever it enables."""
    saved = set(core._FEATURES)
    yield
    core._FEATURES.clear()
    core._FEATURES.update(saved)


@pytest.fixture(autouse=True)
def _deterministic_randomness(request: pytest.FixtureRequest) -> Iterator[None]:
    """Seed this test's randomness by its node id (see the module docstring)."""
    parts = set(request.node.path.parts)
    if OS_RANDOMNESS or parts & _OS_SOURCE_DIRS:
        yield
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OpenDPLiteWarning)
        with rng.scripted_randomness(seed=request.node.nodeid.encode()):
            yield
