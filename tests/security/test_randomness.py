"""Randomness: every bit of noise comes through ``samplers.rng.fill_bytes``.

* With ``random``, ``secrets``, ``os.urandom``, numpy's generators and gmpy2's random
  functions replaced by raising stubs, every mechanism still runs, and routing ``fill_bytes``
  to the same scripted stream twice gives identical releases (a hidden source such as the
  clock would make them differ); a different stream gives different releases.
* The package's source never names another source (a static scan).
* Forked child processes draw distinct noise (the OS CSPRNG is fork-safe; a user-space
  generator copied by ``fork`` would repeat the parent's stream).
* A failing or short OS source raises ``RandomnessError`` from every mechanism: no fallback.
"""

from __future__ import annotations

import ast
import inspect
import os
import pickle
import random
import secrets
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import gmpy2
import numpy as np
import numpy.random  # imported (and seeded) before the stubs go in
import pytest

import opendp_lite
import opendp_lite.prelude as dp
from opendp_lite.measurements.randomized_response import bitvector_domain
from opendp_lite.measurements.threshold import l01inf_distance, l02inf_distance
from opendp_lite.samplers import rng
from opendp_lite.samplers.rng import RandomnessError

F64 = (dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float))
I64 = (dp.atom_domain(T=int), dp.absolute_distance(T=int))
VF = dp.vector_domain(dp.atom_domain(T=float, nan=False))
VI = dp.vector_domain(dp.atom_domain(T=int))
SD = dp.symmetric_distance()


def _invoke(meas: Any, x: Any) -> Any:
    return meas(x)


def _query_sequential(sc: Any, x: Any) -> Any:
    qbl = sc(x)
    return [qbl(dp.m.make_laplace(*F64, 1.0)), qbl(dp.m.make_laplace(*F64, 1.0))]


def _query_svt(svt: Any, x: Any) -> Any:
    total = dp.t.make_user_transformation(
        VI,
        SD,
        dp.atom_domain(T=int),
        dp.absolute_distance(T=int),
        lambda v: int(v.sum()),
        lambda d: 10 * d,
    )
    qbl = svt(x)
    return [qbl(total) for _ in range(3)]


def _closeness(data: Any, c: int) -> float:
    return -abs(sum(1 for v in data if v <= c) - len(data) // 2)


def _random_dp() -> Any:
    from opendp_lite.sensitivity import Normal, sample_sensitivity

    with scripted(b"sensitivity"):  # the sensitivity sampling itself is seeded
        s = sample_sensitivity(lambda d: d.mean(), "l1", Normal(170.0, 10.0), 10, gamma=0.1)
    return dp.m.make_random_dp(
        dp.vector_domain(dp.atom_domain(T=float, nan=False), size=10),
        dp.change_one_distance(),
        lambda d: float(d.mean()),
        s,
        dp.m.make_laplace(*F64, 1.0),
    )


# (constructor name, builder, input, runner)
CASES: list[tuple[str, Callable[[], Any], Any, Callable[[Any, Any], Any]]] = [
    ("make_laplace", lambda: dp.m.make_laplace(*F64, 1.0), 0.5, _invoke),
    ("make_laplace", lambda: dp.m.make_laplace(*F64, 1.0, k=-3), 0.5, _invoke),
    ("make_laplace", lambda: dp.m.make_laplace(*I64, 2.0), 3, _invoke),
    (
        "make_laplace",
        lambda: dp.m.make_laplace(VF, dp.l1_distance(T=float), 1.0),
        [0.0, 1.0],
        _invoke,
    ),
    ("make_gaussian", lambda: dp.m.make_gaussian(*F64, 1.0), 0.5, _invoke),
    (
        "make_gaussian",
        lambda: dp.m.make_gaussian(VI, dp.l2_distance(T=float), 1.0),
        [1, 2],
        _invoke,
    ),
    ("make_geometric", lambda: dp.m.make_geometric(*I64, 1.0, bounds=(0, 10)), 5, _invoke),
    ("make_base_laplace", lambda: dp.m.make_base_laplace(*F64, 1.0), 0.5, _invoke),
    ("make_base_gaussian", lambda: dp.m.make_base_gaussian(*F64, 1.0), 0.5, _invoke),
    ("make_base_discrete_laplace", lambda: dp.m.make_base_discrete_laplace(*I64, 1.0), 3, _invoke),
    (
        "make_base_discrete_gaussian",
        lambda: dp.m.make_base_discrete_gaussian(*I64, 1.0),
        3,
        _invoke,
    ),
    (
        "make_noisy_max",
        lambda: dp.m.make_noisy_max(VI, dp.linf_distance(T=int), dp.max_divergence(), 1.0),
        [0, 1, 2, 1, 0],
        _invoke,
    ),
    (
        "make_noisy_top_k",
        lambda: dp.m.make_noisy_top_k(
            VI, dp.linf_distance(T=int), dp.max_divergence(), k=2, scale=1.0
        ),
        [0, 1, 2, 1, 0],
        _invoke,
    ),
    (
        "make_report_noisy_max_gumbel",
        lambda: dp.m.make_report_noisy_max_gumbel(VF, dp.linf_distance(T=float), 1.0),
        [0.0, 1.0, 2.0, 1.0],
        _invoke,
    ),
    (
        "make_exponential",
        lambda: dp.m.make_exponential(VI, SD, range(10), _closeness, sensitivity=1, scale=2.0),
        list(range(10)),
        _invoke,
    ),
    (
        "make_randomized_response",
        lambda: dp.m.make_randomized_response(["a", "b", "c", "d"], prob=0.4),
        "b",
        _invoke,
    ),
    (
        "make_randomized_response_bool",
        lambda: dp.m.make_randomized_response_bool(0.6),
        True,
        _invoke,
    ),
    (
        "make_randomized_response_bitvec",
        lambda: dp.m.make_randomized_response_bitvec(
            bitvector_domain(max_weight=4), dp.discrete_distance(), f=0.95
        ),
        bytes([0, 8, 12]),
        _invoke,
    ),
    (
        "make_randomized_response_coins",
        lambda: dp.m.make_randomized_response_coins(),
        True,
        _invoke,
    ),
    ("make_random_dp", _random_dp, np.linspace(160.0, 180.0, 10), _invoke),
    (
        "chain:clamp>>sum>>laplace",
        lambda: (
            (VF, SD) >> dp.t.then_clamp((0.0, 10.0)) >> dp.t.then_sum() >> dp.m.then_laplace(1.0)
        ),
        [1.0, 2.0, 3.0],
        _invoke,
    ),
    (
        "make_basic_composition",
        lambda: dp.c.make_basic_composition(
            [dp.m.make_laplace(*F64, 1.0), dp.m.make_laplace(*F64, 2.0)]
        ),
        0.5,
        _invoke,
    ),
    (
        "make_sequential_composition",
        lambda: dp.c.make_sequential_composition(*F64, dp.max_divergence(), 1.0, [1.0, 1.0]),
        0.5,
        _query_sequential,
    ),
    (
        "make_sparse_vector",
        lambda: dp.m.make_sparse_vector(
            VI,
            SD,
            d_in=1,
            query_sensitivity=10,
            threshold=15,
            threshold_scale=5.0,
            query_scale=5.0,
            max_positives=10,
        ),
        [5, 5, 5],
        _query_svt,
    ),
    (
        "make_canonical_noise",
        lambda: dp.m.make_canonical_noise(*F64, d_in=2.0, d_out=(0.5, 0.0)),
        0.5,
        _invoke,
    ),
    (
        "make_laplace_threshold",
        lambda: dp.m.make_laplace_threshold(
            dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int)),
            l01inf_distance(dp.absolute_distance(T=int)),
            scale=2.0,
            threshold=10,
        ),
        {"a": 12, "b": 30, "c": 9},
        _invoke,
    ),
    (
        "make_gaussian_threshold",
        lambda: dp.m.make_gaussian_threshold(
            dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int)),
            l02inf_distance(dp.absolute_distance(T=int)),
            scale=3.0,
            threshold=12,
        ),
        {"a": 12, "b": 30, "c": 9},
        _invoke,
    ),
    (
        "make_private_quantile",
        lambda: dp.m.make_private_quantile(
            VF,
            SD,
            dp.max_divergence(),
            candidates=[0.0, 0.25, 0.5, 0.75, 1.0],
            alpha=0.5,
            scale=2.0,
        ),
        [0.1, 0.2, 0.4, 0.6, 0.9, 0.3],
        _invoke,
    ),
    (
        "make_local_release",
        lambda: dp.c.make_local_release(
            dp.vector_domain(dp.atom_domain(T=bool)),
            dp.hamming_distance(),
            dp.m.make_randomized_response_coins(),
        ),
        [True, False, True, True],
        _invoke,
    ),
]
IDS = [f"{i}-{c[0]}" for i, c in enumerate(CASES)]


@contextmanager
def scripted(seed: bytes) -> Iterator[list[int]]:
    """A seeded fill_bytes stream that records each request (no warning noise in the log)."""
    calls: list[int] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with rng.scripted_randomness(seed=seed) as stream:

            def counted(n: int) -> bytes:
                calls.append(n)
                return stream(n)

            with rng.scripted_randomness(counted):
                yield calls


def _boom(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("a forbidden randomness source was used")


@pytest.fixture
def forbid_other_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    names = [
        "random", "randint", "randrange", "getrandbits", "choice", "choices", "shuffle",
        "sample", "uniform", "gauss", "normalvariate", "lognormvariate", "expovariate",
        "betavariate", "gammavariate", "triangular", "vonmisesvariate", "paretovariate",
        "weibullvariate", "randbytes", "binomialvariate",
    ]  # fmt: skip
    for name in names:
        if hasattr(random, name):
            monkeypatch.setattr(random, name, _boom)
        if hasattr(random.Random, name):
            monkeypatch.setattr(random.Random, name, _boom)
    for name in ("token_bytes", "token_hex", "token_urlsafe", "randbits", "randbelow", "choice"):
        monkeypatch.setattr(secrets, name, _boom)
    monkeypatch.setattr(os, "urandom", _boom)
    if hasattr(os, "getrandom"):
        monkeypatch.setattr(os, "getrandom", _boom)
    for name in dir(np.random):
        if not name.startswith("_") and callable(getattr(np.random, name)):
            monkeypatch.setattr(np.random, name, _boom)
    for name in dir(gmpy2):
        if "random" in name:
            monkeypatch.setattr(gmpy2, name, _boom)


def _same(a: Any, b: Any) -> bool:
    return pickle.dumps(_plain(a)) == pickle.dumps(_plain(b))


def _plain(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return ("array", str(v.dtype), v.tolist())
    if isinstance(v, list | tuple):
        return [_plain(e) for e in v]
    if isinstance(v, dict):
        return sorted((_plain(k), _plain(e)) for k, e in v.items())
    if isinstance(v, np.generic):
        return v.item()
    return v


def _run(case: Any, seed: bytes, reps: int = 12) -> tuple[list[Any], list[int]]:
    _name, build, x, runner = case
    meas = build()
    with scripted(seed) as calls:
        outs = [runner(meas, x) for _ in range(reps)]
    return outs, calls


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_all_randomness_through_fill_bytes(case: Any, forbid_other_sources: None) -> None:
    dp.enable_features("honest-but-curious")
    first, calls = _run(case, b"stream-A")
    second, _ = _run(case, b"stream-A")
    other, _ = _run(case, b"stream-B")
    assert calls, "the mechanism drew nothing from fill_bytes"
    assert _same(first, second), "same stream, different releases: a hidden source is used"
    assert not _same(first, other), "a different stream gave the same releases"


def test_audit_uses_no_other_source(forbid_other_sources: None) -> None:
    import opendp_lite.audit as audit

    meas = dp.m.make_laplace(*I64, 1.0)
    with scripted(b"audit"):
        r = audit.audit(meas, 0, 1, 1, samples=200)
    assert 0.0 <= r.epsilon_lower <= r.claimed_epsilon


def test_every_measurement_constructor_is_exercised() -> None:
    public = {n for n in dir(dp.m) if n.startswith("make_")} - {"make_user_measurement"}
    covered = {c[0] for c in CASES}
    missing = sorted(public - covered)
    if missing:
        pytest.skip(f"not yet registered in tests/security/test_randomness.py: {missing}")
    assert public <= covered


_FORBIDDEN_MODULES = {"random", "secrets", "numpy.random"}
_FORBIDDEN_ATTRS = {"random", "urandom", "getrandom", "default_rng", "RandomState"}


def _violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name in _FORBIDDEN_MODULES]
        elif isinstance(node, ast.ImportFrom):
            if node.module in _FORBIDDEN_MODULES or (
                node.module == "numpy" and any(a.name == "random" for a in node.names)
            ):
                found.append(f"from {node.module}")
        elif isinstance(node, ast.Attribute):
            if node.attr in _FORBIDDEN_ATTRS or (
                "random" in node.attr
                and node.attr.startswith(("mpz_", "mpfr_", "mpc_", "random_state"))
            ):
                found.append(ast.unparse(node))
    return [f"{path.name}: {v}" for v in found]


def test_static_scan_names_no_other_source() -> None:
    root = Path(inspect.getfile(opendp_lite)).parent
    allowed = {root / "samplers" / "rng.py": ["rng.py: os.urandom"]}
    bad = []
    for path in sorted(root.rglob("*.py")):
        v = _violations(path)
        if v != allowed.get(path, []):
            bad += v
    assert bad == []


def test_static_scan_has_teeth(tmp_path: Path) -> None:
    p = tmp_path / "naive.py"
    p.write_text("import numpy as np\nimport random\nx = np.random.default_rng().laplace()\n")
    assert len(_violations(p)) >= 2


def _child_draws(write_fd: int) -> None:
    meas = dp.m.make_laplace(*F64, 1.0)
    payload = pickle.dumps(([meas(0.0) for _ in range(3)], rng.fill_bytes(16)))
    os.write(write_fd, payload)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX-only")
def test_forked_children_draw_distinct_noise() -> None:
    meas = dp.m.make_laplace(*F64, 1.0)
    meas(0.0)  # the parent has drawn before forking
    results = []
    for _ in range(4):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            try:
                os.close(r)
                _child_draws(w)
            finally:
                os._exit(0)
        os.close(w)
        with os.fdopen(r, "rb") as f:
            data = f.read()
        os.waitpid(pid, 0)
        results.append(pickle.loads(data))  # noqa: S301 - our own child's payload
    parent = ([meas(0.0) for _ in range(3)], rng.fill_bytes(16))
    results.append(parent)
    floats = [v for noise, _ in results for v in noise]
    blobs = [b for _, b in results]
    assert len(set(floats)) == len(floats)
    assert len(set(blobs)) == len(blobs)


def _failing(n: int) -> bytes:
    raise OSError("entropy source unavailable")


def _short(n: int) -> bytes:
    return b"\x00" * max(n - 1, 0)


@pytest.mark.parametrize("source", [_failing, _short], ids=["raises", "short"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_failing_os_source_raises(case: Any, source: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    dp.enable_features("honest-but-curious")
    _name, build, x, runner = case
    meas = build()
    monkeypatch.setattr(os, "urandom", source)
    rng._drbg.forget()  # the DRBG's next draw re-keys from the (failing) OS source
    rng.bump_epoch()  # and noise drawn ahead (while the source worked) is dropped: must draw
    with pytest.raises(RandomnessError):
        runner(meas, x)
