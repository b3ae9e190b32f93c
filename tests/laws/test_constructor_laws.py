"""The contract suite: the same laws, generated for every public constructor.

Each law is one Hypothesis test parametrised over ``tests/laws/registry.py`` (in the manner of
Tumult Core's abstract contract tests and the ``returns`` library's law generation):

1. **stability**: on neighbouring inputs ``x, x′`` at most ``d`` apart under the input metric,
   a transformation's outputs are at most ``map(d)`` apart, computed exactly;
2. **maps**: ``map`` is monotone in ``d_in`` and never below an exact recomputation of the
   formula its docstring states (see each entry's ``formula``);
3. **check**: ``check(d, map(d))`` holds, and fails just below ``map(d)`` (the next float
   below a positive float loss, ``map(d) − 1`` for an integer one);
4. **chaining** is associative on triples joined from the registry, and ``m >> f`` keeps
   ``m``'s map for every post-processing constructor;
5. **coverage**: every public constructor is in the registry or in ``EXEMPT``.

The default run uses few examples per constructor; ``-m slow`` runs many more.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from typing import Any

import gmpy2
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite.errors import FailedFunction, FailedMap
from opendp_lite.measures import PrivacyProfile
from opendp_lite.metrics import (
    ChangeOneDistance,
    HammingDistance,
    InsertDeleteDistance,
    SymmetricDistance,
)
from opendp_lite.samplers import rng
from tests.conftest import SLOW_SCALE
from tests.laws.registry import (
    EXEMPT,
    REGISTRY,
    TIGHT,
    Case,
    Entry,
    Ln,
    _loss_sum,
    joined,
)
from tests.laws.spaces import _key, distances, neighbours, within
from tools.proofs import public_constructors

FAST = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
)
#: the slow run; CI scales it down with OPENDP_LITE_SLOW_SCALE like the statistical tests
SLOW = settings(FAST, max_examples=max(20, int(200 * SLOW_SCALE)))

#: joined chains try many constructors per draw, which makes shrinking a failure take
#: minutes: report the first counterexample as found
CHAIN = settings(FAST, phases=[Phase.explicit, Phase.reuse, Phase.generate])

#: laws known to fail for a constructor, with the counterexample; strict xfail, so the case
#: turns red again once the owner fixes the constructor (remove the line then)
KNOWN: dict[tuple[str, str], str] = {}


@pytest.fixture(autouse=True)
def _trusted() -> None:
    dp.enable_features("honest-but-curious")


def _params(kind: str, law: str) -> list[Any]:
    out = []
    for name, e in sorted(REGISTRY.items()):
        if e.kind not in kind:
            continue
        marks = []
        if (name, law) in KNOWN:
            marks.append(pytest.mark.xfail(strict=True, reason=KNOWN[name, law]))
        out.append(pytest.param(name, id=name, marks=marks))
    return out


# ----------------------------------------------------------------------------------------------
# helpers


def _dists(e: Entry, c: Case) -> st.SearchStrategy[Any]:
    return e.dists(c) if e.dists is not None else distances(c.obj.input_metric)


def loss_le(a: Any, b: Any) -> bool:
    """``a <= b`` for losses: scalars, pairs (componentwise), profiles (δ at fixed ε)."""
    if isinstance(a, PrivacyProfile):
        return all(a.delta(e) <= b.delta(e) for e in (0.0, 0.1, 0.5, 1.0, 2.0, 5.0, 20.0))
    if isinstance(a, tuple):
        return all(loss_le(u, v) for u, v in zip(a, b, strict=True))
    return bool(a <= b)


def meets(loss: Any, f: Any) -> bool:
    """Whether ``loss`` is >= the exact formula value ``f``."""
    if f is None:
        return True
    if callable(f):
        return bool(f(loss))
    if isinstance(f, tuple):
        return all(meets(v, g) for v, g in zip(loss, f, strict=True))
    if isinstance(loss, float) and math.isinf(loss):
        return True
    if isinstance(f, Ln):
        if f.r <= 1:
            return Fraction(loss) >= 0
        x = gmpy2.mpq(Fraction(loss) / f.coef)  # loss >= c·ln r  <=>  exp(loss / c) >= r
        with gmpy2.context(gmpy2.get_context(), precision=256, round=gmpy2.RoundDown):
            return bool(gmpy2.exp(x) >= gmpy2.mpq(f.r.numerator, f.r.denominator))
    return Fraction(loss) >= f


def tight(loss: Any, f: Any) -> bool:
    """Whether ``loss`` is the least float (or integer) ``>=`` the exact value ``f``."""
    if f is None or callable(f) or isinstance(f, Ln):
        return True
    if isinstance(f, tuple):
        return all(tight(v, g) for v, g in zip(loss, f, strict=True))
    if isinstance(loss, int) and not isinstance(loss, bool):
        return loss == math.ceil(f)
    return loss == 0 or Fraction(math.nextafter(loss, -math.inf)) < f


def _below(loss: Any) -> list[Any]:
    """Losses just below ``loss`` that ``check`` must refuse."""
    if isinstance(loss, bool):
        return []
    if isinstance(loss, int):
        return [loss - 1] if loss >= 1 else []
    if isinstance(loss, float):
        return [math.nextafter(loss, 0.0)] if 0 < loss < math.inf else []
    if isinstance(loss, tuple):
        out = []
        for i, v in enumerate(loss):
            for w in _below(v):
                out.append(tuple(w if j == i else u for j, u in enumerate(loss)))
        return out
    return []


_DATASET = (SymmetricDistance, InsertDeleteDistance, ChangeOneDistance, HammingDistance)


def _unordered(metric: Any) -> Any:
    if isinstance(metric, InsertDeleteDistance):
        return dp.symmetric_distance()
    if isinstance(metric, HammingDistance):
        return dp.change_one_distance()
    return metric


def _sorted(y: Any) -> list[Any]:
    return sorted(list(y), key=lambda v: repr(_key(v)))


# ----------------------------------------------------------------------------------------------
# law 1: stability on neighbouring inputs


def stability(e: Entry, data: st.DataObject) -> None:
    c = data.draw(e.build, label="case")
    if c.p.get("uncoupled"):
        return  # a chain through a part whose law 1 is masked or restricted (see that entry)
    t = c.obj
    x, x2, d = data.draw(neighbours(t.input_domain, t.input_metric), label="x, x2, d")
    if e.restrict is not None and not e.restrict(c, x, x2):
        return
    bound = t.map(d)
    try:
        y, y2 = t(x), t(x2)
    except FailedFunction:
        return  # refused at invocation: nothing released
    metric = t.output_metric
    if e.mask is not None:
        y, y2 = e.mask(x, y), e.mask(x2, y2)
    if e.randomized or c.p.get("randomized"):
        # independent runs are not coupled as in the proof: compare the multisets, which any
        # coupling bounds (symmetric <= insert-delete, change-one <= Hamming); an aggregate
        # of a random dataset (a chain such as resize >> sum) has no such necessary condition
        if not isinstance(metric, _DATASET):
            return
        metric, y, y2 = _unordered(metric), _sorted(y), _sorted(y2)
    assert within(metric, y, y2, bound), (
        f"{e.name}: d_in={d!r}, map={bound!r}\n  x ={x!r}\n  x'={x2!r}\n  y ={y!r}\n  y'={y2!r}"
    )


@pytest.mark.parametrize("name", _params("T", "stability"))
@FAST
@given(data=st.data())
def test_stability(name: str, data: st.DataObject) -> None:
    stability(REGISTRY[name], data)


@pytest.mark.slow
@pytest.mark.parametrize("name", _params("T", "stability"))
@SLOW
@given(data=st.data())
def test_stability_slow(name: str, data: st.DataObject) -> None:
    stability(REGISTRY[name], data)


# ----------------------------------------------------------------------------------------------
# law 2: maps are monotone and never below the stated formula


def maps(e: Entry, data: st.DataObject) -> None:
    c = data.draw(e.build, label="case")
    ds = _dists(e, c)
    d1, d2 = data.draw(ds, label="d1"), data.draw(ds, label="d2")
    if isinstance(d1, tuple):  # (l0, lp, l∞) distances: the componentwise max is larger
        lo, hi = d1, tuple(max(u, v) for u, v in zip(d1, d2, strict=True))
    else:
        lo, hi = min(d1, d2), max(d1, d2)
    (s_lo, m_lo), (s_hi, m_hi) = _outcome(c.obj.map, lo), _outcome(c.obj.map, hi)
    if s_hi == "failed":  # a loss beyond the float range: refused, no claim at hi
        if s_lo == "failed":
            return
        m_hi = math.inf
    assert s_lo == "ok", f"{e.name}: map({lo!r}) fails but map({hi!r}) = {m_hi!r}"
    if m_hi is not math.inf:
        assert loss_le(m_lo, m_hi), f"{e.name}: map({lo!r}) = {m_lo!r} > map({hi!r}) = {m_hi!r}"
    if e.formula is not None:
        for d, m in ((lo, m_lo), (hi, m_hi)):
            if m is math.inf:
                continue
            if not any(d) if isinstance(d, tuple) else d == 0:
                # identical inputs: a map may return the exact loss 0 where the stated formula
                # (e.g. a rounding penalty for d_in > 0) is positive
                continue
            f = e.formula(c, d)
            assert meets(m, f), f"{e.name}: map({d!r}) = {m!r} is below the formula {f!r}"
            if e.name in TIGHT:
                assert tight(m, f), f"{e.name}: map({d!r}) = {m!r} is > 1 ulp above {f!r}"


@pytest.mark.parametrize("name", _params("TM", "maps"))
@FAST
@given(data=st.data())
def test_maps_monotone_and_above_formula(name: str, data: st.DataObject) -> None:
    maps(REGISTRY[name], data)


@pytest.mark.slow
@pytest.mark.parametrize("name", _params("TM", "maps"))
@SLOW
@given(data=st.data())
def test_maps_monotone_and_above_formula_slow(name: str, data: st.DataObject) -> None:
    maps(REGISTRY[name], data)


def _limited() -> list[Any]:
    return [pytest.param(n, id=n) for n, e in sorted(REGISTRY.items()) if e.limit is not None]


@pytest.mark.parametrize("name", _limited())
@FAST
@given(data=st.data())
def test_maps_refuse_beyond_their_limit(name: str, data: st.DataObject) -> None:
    e = REGISTRY[name]
    c = data.draw(e.build, label="case")
    top = e.limit(c)  # type: ignore[misc]
    if isinstance(top, int):
        d: Any = data.draw(st.integers(top + 1, top + 100), label="d")
    else:
        d = data.draw(st.floats(top, top * 2 + 10, exclude_min=True), label="d")
    with pytest.raises(FailedMap):
        c.obj.map(d)
    with pytest.raises(FailedMap):
        c.obj.check(d, sys.float_info.max)


# ----------------------------------------------------------------------------------------------
# law 3: check(d, map(d)) holds and is tight


def check(e: Entry, data: st.DataObject) -> None:
    c = data.draw(e.build, label="case")
    d = data.draw(_dists(e, c), label="d")
    status, loss = _outcome(c.obj.map, d)
    if status == "failed":  # e.g. a loss that overflows: check refuses too, never says True
        with pytest.raises(FailedMap):
            c.obj.check(d, sys.float_info.max)
        return
    if isinstance(loss, PrivacyProfile):
        with pytest.raises(FailedMap):  # profiles are not totally ordered: fix δ first
            c.obj.check(d, loss)
        return
    assert c.obj.check(d, loss), f"{e.name}: check({d!r}, map(d) = {loss!r}) is False"
    for below in _below(loss):
        assert not c.obj.check(d, below), f"{e.name}: check({d!r}, {below!r}) < map(d) = {loss!r}"


@pytest.mark.parametrize("name", _params("TM", "check"))
@FAST
@given(data=st.data())
def test_check_of_map(name: str, data: st.DataObject) -> None:
    check(REGISTRY[name], data)


# ----------------------------------------------------------------------------------------------
# law 4: chaining


def _same_release(a: Any, b: Any) -> bool:
    return bool(_key(a) == _key(b))


def _run(obj: Any, x: Any) -> Any:
    with pytest.warns(Warning), rng.scripted_randomness(seed=b"laws"):
        try:
            return ("ok", obj(x))
        except FailedFunction as err:
            return ("failed", type(err).__name__)


def _outcome(fn: Any, d: Any) -> tuple[str, Any]:
    try:
        return ("ok", fn(d))
    except FailedMap as err:
        return ("failed", type(err).__name__)


def associativity(data: st.DataObject, last: tuple[str, ...]) -> None:
    a, b, c = data.draw(joined(3, last), label="a, b, c")
    left, right = (a >> b) >> c, a >> (b >> c)
    assert (left.input_domain, left.input_metric) == (right.input_domain, right.input_metric)
    for d in [data.draw(distances(a.input_metric), label="d") for _ in range(2)]:
        # both sides give the same loss, or refuse alike (e.g. a loss that overflows to inf)
        ml, mr = _outcome(left.map, d), _outcome(right.map, d)
        assert ml == mr, f"maps differ at {d!r}: {ml!r} vs {mr!r}\n{a}\n{b}\n{c}"
        # a chain's map is the composition of the maps
        assert ml == _outcome(lambda d_: c.map(b.map(a.map(d_))), d)
    x, _, _ = data.draw(neighbours(a.input_domain, a.input_metric), label="x")
    assert _same_release(_run(left, x), _run(right, x))


@settings(CHAIN, max_examples=40)
@given(data=st.data())
def test_chaining_is_associative_on_transformations(data: st.DataObject) -> None:
    associativity(data, ("T",))


@settings(CHAIN, max_examples=40)
@given(data=st.data())
def test_chaining_is_associative_ending_in_a_measurement(data: st.DataObject) -> None:
    associativity(data, ("M",))


@pytest.mark.slow
@settings(CHAIN, max_examples=2 * SLOW.max_examples)
@given(data=st.data())
def test_chaining_is_associative_slow(data: st.DataObject) -> None:
    associativity(data, ("T",))
    associativity(data, ("M",))


@pytest.mark.parametrize("name", _params("F", "postprocess"))
@FAST
@given(data=st.data(), eps=st.floats(0, 10))
def test_postprocessing_keeps_the_map(name: str, data: st.DataObject, eps: float) -> None:
    c = data.draw(REGISTRY[name].build, label="case")
    f = c.obj
    x = data.draw(c.p["inputs"], label="x")
    space = dp.vector_domain(dp.atom_domain(T=type(x[0]))), dp.l1_distance(T=float)
    m = dp.m.make_user_measurement(*space, dp.max_divergence(), lambda v: v, lambda d: eps * d)
    post = m >> f
    for d in (0.0, 1.0, 3.5):
        assert post.map(d) == m.map(d)
    try:
        expected = ("ok", f(m(x)))
    except FailedFunction as err:
        expected = ("failed", type(err).__name__)
    assert _same_release(_run(post, x), expected)


@FAST
@given(data=st.data(), x=st.floats(-100, 100))
def test_odometer_loss_is_the_sum_of_its_queries(data: st.DataObject, x: float) -> None:
    c = data.draw(REGISTRY["make_fully_adaptive_composition"].build, label="case")
    queryable = c.obj(x)
    for m in c.p["queries"]:
        queryable(m)
    d1, d2 = sorted(data.draw(st.floats(0, 1e3), label="d") for _ in range(2))
    l1, l2 = queryable.privacy_loss(d1), queryable.privacy_loss(d2)
    assert loss_le(l1, l2)
    for d, loss in ((d1, l1), (d2, l2)):
        exact = _loss_sum([m.map(d) for m in c.p["queries"]])
        assert meets(loss, exact) and tight(loss, exact), (d, loss, exact)


# ----------------------------------------------------------------------------------------------
# law 5: coverage


def test_every_public_constructor_is_covered() -> None:
    names = {name for name, _ in public_constructors()}
    uncovered = sorted(names - set(REGISTRY) - set(EXEMPT))
    assert not uncovered, f"add a registry entry (or an EXEMPT reason) for {uncovered}"
    stale = sorted((set(REGISTRY) | set(EXEMPT)) - names)
    assert not stale, f"registry/EXEMPT names no public constructor: {stale}"
    assert not set(REGISTRY) & set(EXEMPT)
    for name, reason in EXEMPT.items():
        assert len(reason.split()) >= 8, f"EXEMPT[{name!r}] needs a precise reason"


# ----------------------------------------------------------------------------------------------
# the laws have teeth: deliberately wrong constructors are caught


def _finds_counterexample(law: Any, entry: Entry, n: int = 300) -> bool:
    """Whether ``n`` Hypothesis examples of ``law`` on ``entry`` include a counterexample.

    The search stops at the first one, unshrunk: only its existence is asserted, and shrinking
    (rebuilding the constructor for each smaller candidate) took most of the time."""

    @settings(FAST, max_examples=n, database=None, phases=CHAIN.phases, report_multiple_bugs=False)
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        law(entry, data)

    try:
        run()
    except Exception as err:  # one AssertionError, or a group of them (distinct failures)
        leaves = getattr(err, "exceptions", (err,))
        if all(isinstance(x, AssertionError) for x in leaves):
            return True
        raise
    return False


def _with_map(obj: Any, stated: Any) -> Any:
    """``obj`` with its map replaced by ``stated`` (the function is unchanged)."""
    if isinstance(obj, dp.Transformation):
        return dp.Transformation(
            obj.input_domain,
            obj.input_metric,
            obj.output_domain,
            obj.output_metric,
            obj.function,
            stated,
        )
    return dp.Measurement(
        obj.input_domain, obj.input_metric, obj.output_measure, obj.function, stated
    )


def _broken(name: str, stated: Any) -> Entry:
    e = REGISTRY[name]
    build = e.build.map(lambda c: Case(_with_map(c.obj, lambda d: stated(c.obj, d)), c.p))
    return Entry(f"broken {name}", e.kind, build, formula=e.formula, dists=e.dists)


def _halve(v: Any) -> Any:
    return v // 2 if isinstance(v, int) else v / 2


def test_law_1_catches_an_understated_sensitivity() -> None:
    # a sum claiming half its sensitivity (Casacuberta et al.'s failure, made blatant)
    half = _broken("make_sum", lambda t, d: _halve(t.map(d)))
    assert _finds_counterexample(stability, half)
    # a count by categories that claims d_out = d_in / 2, rounded down
    broken = _broken("make_count_by_categories", lambda t, d: d // 2)
    assert _finds_counterexample(stability, broken)
    # the honest constructors pass the same search
    assert not _finds_counterexample(stability, REGISTRY["make_sum"], 50)


def test_law_2_catches_maps_below_their_formula_or_not_monotone() -> None:
    # noise 30% wider than the scale the formula reads: ε below the stated d/scale
    assert _finds_counterexample(maps, _broken("make_laplace", lambda m, d: m.map(d) * 0.7))
    assert _finds_counterexample(maps, _broken("make_gaussian", lambda m, d: m.map(d) * 0.7))
    # a map that decreases in d_in
    assert _finds_counterexample(maps, _broken("make_count", lambda t, d: max(0, 40 - d)))
    assert not _finds_counterexample(maps, REGISTRY["make_laplace"], 50)


# ----------------------------------------------------------------------------------------------
# maps below the formula their docstring states, found by law 2. Each map is *sound* (the
# refinement is argued in tests/laws/registry.py), but the docstring overstates it: law 2
# checks the refined formula, and these pin the literal docstring formula at the
# counterexample, strictly expected to fail until the docstring states what the code does
# (then delete the test).

_E64 = Fraction(1, 2**53)


def test_b_ary_tree_l2_map_is_its_docstring_formula() -> None:
    # s_l = min(b^(D−1−l), leaf_count): a node covers at most leaf_count non-padding leaves
    space = dp.vector_domain(dp.atom_domain(T="i32")), dp.l2_distance(T="i32")
    t = dp.t.make_b_ary_tree(*space, leaf_count=5, branching_factor=4)
    d, sizes = 4, (min(16, 5), 4, 1)  # D = 3 levels
    stated = math.isqrt(sum(min(s * d * d, d**4) for s in sizes) - 1) + 1
    assert t.map(d) == stated == 13


def test_float_sum_map_is_its_docstring_formula() -> None:
    # the rounding term is 0 when size_limit·K <= 2^53 (every grid total is a binary64 value)
    t = dp.t.make_bounded_float_checked_sum(1, (0.0, 1.0))
    assert t.map(1) == 1.0
    big = dp.t.make_bounded_float_checked_sum(2**30, (0.0, 1.0))  # limit·K > 2^53
    assert Fraction(big.map(1)) >= 1 + 2 * _E64


def test_mean_map_is_its_docstring_formula() -> None:
    # the rounding term is 0 when n is a power of two and n·K <= 2^53 (the mean is exact)
    space = dp.vector_domain(dp.atom_domain(bounds=(0.0, 1.0)), size=1), dp.symmetric_distance()
    assert dp.t.make_mean(*space).map(2) == 1.0
    space3 = dp.vector_domain(dp.atom_domain(bounds=(0.0, 1.0)), size=3), dp.symmetric_distance()
    assert Fraction(dp.t.make_mean(*space3).map(2)) > Fraction(1, 3)


def _int_vectors(n: int, r2: int) -> Any:
    """Every integer vector of length ``n`` with squared norm <= ``r2``."""
    if n == 0:
        yield ()
        return
    r = math.isqrt(r2)
    for v in range(-r, r + 1):
        for rest in _int_vectors(n - 1, r2 - v * v):
            yield (v, *rest)


@pytest.mark.parametrize("leaves, b", [(2, 2), (3, 2), (5, 2), (4, 3), (5, 4)])
def test_b_ary_tree_l2_map_covers_the_exact_sensitivity(leaves: int, b: int) -> None:
    """The refined L2 map against the exact sensitivity, by enumeration (the tree is linear,
    so the output difference of neighbours is the tree of the input difference)."""
    space = dp.vector_domain(dp.atom_domain(T="i32")), dp.l2_distance(T="i32")
    t = dp.t.make_b_ary_tree(*space, leaf_count=leaves, branching_factor=b)
    zero = np.asarray(t([0] * leaves))
    for d in (1, 2, 3):
        worst = max(
            sum(int(u) ** 2 for u in np.asarray(t(list(v))) - zero)
            for v in _int_vectors(leaves, d * d)
        )
        assert t.map(d) ** 2 >= worst, (leaves, b, d, t.map(d), worst)


def test_law_3_catches_a_measure_that_ignores_delta() -> None:
    from dataclasses import dataclass

    from opendp_lite.measures import Approximate

    @dataclass(frozen=True)
    class LaxApproximate(Approximate[float]):
        def _le(self, a: Any, b: Any) -> bool:
            return bool(a[0] <= b[0])  # forgets δ

    def build(measure: Any) -> Entry:
        def make(k: float) -> Case:
            m = dp.m.make_user_measurement(
                dp.atom_domain(T=float, nan=False),
                dp.absolute_distance(T=float),
                measure,
                lambda x: x,
                lambda d: (k * d, min(1.0, 1e-6 * d)),
            )
            return Case(m)

        return Entry("lax", "M", st.floats(0.1, 10).map(make))

    assert _finds_counterexample(check, build(LaxApproximate(dp.max_divergence())))
    assert not _finds_counterexample(check, build(dp.approximate(dp.max_divergence())), 50)
