"""The registry of the constructor contract suite: one :class:`Entry` per public constructor.

An entry knows how to build valid instances (a Hypothesis strategy of :class:`Case`), and,
where the constructor takes an input space, how to build one on a *given* space (``then``), so
that the chaining law can join entries.  ``formula`` recomputes the map stated in the
constructor's docstring **exactly** (``Fraction``), or as ``Ln`` (a multiple of a logarithm of
a rational, checked as ``exp(map) >= r`` at 256 bits), or as a predicate on the loss.

``EXEMPT`` names the public constructors the laws cannot reach, each with its reason.

What law 2 recomputes, per constructor (d = d_in; at d = 0 a map may return the exact 0):

* exactly, and ``map(d)`` must be the least float/integer above it (``TIGHT``): the row-by-row
  transformations, casts, lookups, nulls, counts, parsers (d); metric_bounded (⌊d/2⌋),
  metric_unbounded and resize (2d); integer sums (d·max(|L|,|U|), ⌊d/2⌋(U−L)); quantile
  scores; b-ary tree (L1: D·d; L2 with the refinement noted at ``_tree_formula``); Lipschitz
  float mul (with the 2·e_T term); Laplace / base / discrete Laplace / geometric
  ((d + n·penalty_k)/scale); discrete Gaussian (d²/2s²); noisy max / top-k / Gumbel; private
  quantile; exponential; sparse vector; the ε of the Laplace threshold (δ is only > 0);
  ALP (d₁·scale); canonical noise, adaptive/sequential composition, privacy filter (their
  fixed d_out); composition (exact sum); approximate; pureDP→zCDP (ε²/2);
  select-private-candidate (2ε); local release (d·ε_rec); random DP (inner map at Δ̂); chains
  (composition of the maps); the odometer's privacy_loss (exact sum).
* as an exact lower bound only: Gaussian / base Gaussian and the Gaussian threshold (√n
  bounded below within 2^-200, where the code bounds it above); float
  sums and the mean (the sensitivity term: the code drops the rounding term where the result
  is exact); sum of squared deviations and variance (leading term, W > U − L − 2^-24·M).
* through logarithms, at 256 bits: randomized response (bool, categorical, bit vector, two
  coins) as ``exp(map / c) >= r``; population amplification as ``expm1(ε′) >= q·expm1(ε)``.
* as a predicate: zCDP→approxDP (a valid, non-increasing profile; the CKS minimum over α
  has no closed form), fix_delta (the profile at the released ε is <= δ),
  fixed_approxDP→approxDP (δ(ε₀) >= δ₀ and δ = 1 below ε₀).
* not at all: the post-processing functions (cdf, consistent tree, quantiles from counts),
  which have no map; their law is that ``m >> f`` keeps ``m``'s map.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from hypothesis import reject
from hypothesis import strategies as st
from hypothesis.errors import UnsatisfiedAssumption

import opendp_lite.prelude as dp
from opendp_lite.domains import AtomDomain, OptionDomain, VectorDomain
from opendp_lite.errors import OpenDPLiteError
from opendp_lite.metrics import (
    InsertDeleteDistance,
    L1Distance,
    L2Distance,
)

Q = Fraction


@dataclass(frozen=True)
class Ln:
    """The value ``coef · ln(r)``."""

    r: Fraction
    coef: Fraction = Fraction(1)


@dataclass
class Case:
    """A built instance and the parameters its formula reads."""

    obj: Any
    p: dict[str, Any] = field(default_factory=dict)


Draw = Callable[[st.SearchStrategy[Any]], Any]
Then = Callable[[Draw, Any, Any], Case]


@dataclass
class Entry:
    """How the laws reach one public constructor."""

    name: str
    kind: str  # "T" transformation, "M" measurement, "F" post-processing function
    build: st.SearchStrategy[Case]
    then: Then | None = None
    formula: Callable[[Case, Any], Any] | None = None
    #: distances at which to evaluate the map (default: from the input metric)
    dists: Callable[[Case], st.SearchStrategy[Any]] | None = None
    #: the largest d_in the map answers for (an interactive release checked its queries at
    #: d_in; random DP holds for one changed record): larger distances must be refused
    limit: Callable[[Case], Any] | None = None
    #: the release is random: law 1 compares outputs as multisets (a necessary condition of
    #: the coupling the proof uses), since two independent runs are not coupled
    randomized: bool = False
    #: a restriction of law 1's inputs (docstring of the function gives the reason)
    restrict: Callable[[Case, Any, Any], bool] | None = None
    #: rewrite an output before law 1 compares (e.g. mask independent random draws)
    mask: Callable[[Any, Any], Any] | None = None


REGISTRY: dict[str, Entry] = {}


def register(e: Entry) -> Entry:
    REGISTRY[e.name] = e
    return e


def attempt(fn: Callable[[], Any], p: dict[str, Any] | None = None) -> Case:
    """Build, rejecting the example (not failing) when the parameters drawn are refused."""
    try:
        return Case(fn(), p or {})
    except OpenDPLiteError:
        reject()


def on(spaces: st.SearchStrategy[tuple[Any, Any]], then: Then) -> st.SearchStrategy[Case]:
    @st.composite
    def build(draw: Draw) -> Case:
        dom, met = draw(spaces)
        return then(draw, dom, met)

    return build()


def fixed(then: Callable[[Draw], Case]) -> st.SearchStrategy[Case]:
    @st.composite
    def build(draw: Draw) -> Case:
        return then(draw)

    return build()


# ----------------------------------------------------------------------------------------------
# spaces


@st.composite
def int_bounds(draw: Draw) -> tuple[int, int]:
    # small bounds mostly; also i32's extremes, where sums saturate or must refuse to build
    edge = st.sampled_from([-(2**31), 2**31 - 1, 2**30, -(2**30), 0])
    a, b = draw(st.integers(-100, 100) | edge), draw(st.integers(-100, 100) | edge)
    return min(a, b), max(a, b)


@st.composite
def float_bounds(draw: Draw, strict: bool = False) -> tuple[float, float]:
    # small bounds mostly; also near the float range and subnormal, where rounding, grids
    # and overflow checks are hardest
    fl = (
        st.floats(-100, 100)
        | st.sampled_from([0.0, 1.0, -1.0, 0.1, 2.0**-30])
        | st.sampled_from([1e300, -1e300, 2.0**-1022, 5e-324, -5e-324, 1e-310])
    )
    a, b = draw(fl), draw(fl)
    if strict and a == b:
        reject()
    return min(a, b), max(a, b)


@st.composite
def elements(draw: Draw, kinds: Sequence[str]) -> Any:
    """An element domain of one of ``kinds``."""
    kind = draw(st.sampled_from(list(kinds)))
    if kind == "int":
        return dp.atom_domain(T="i32")
    if kind == "intb":
        return dp.atom_domain(bounds=draw(int_bounds()), T="i32")
    if kind == "float":
        return dp.atom_domain(T="f64", nan=False)
    if kind == "floatb":
        return dp.atom_domain(bounds=draw(float_bounds()), T="f64")
    if kind == "floatnan":
        return dp.atom_domain(T="f64", nan=True)
    if kind == "str":
        return dp.atom_domain(T=str)
    if kind == "bool":
        return dp.atom_domain(T=bool)
    if kind == "optint":
        return dp.option_domain(dp.atom_domain(T="i32"))
    if kind == "optstr":
        return dp.option_domain(dp.atom_domain(T=str))
    raise AssertionError(kind)


ALL_ROW = ("sym", "id", "co", "ham")
UNSIZED_OK = ("sym", "id")


@st.composite
def rows(
    draw: Draw,
    kinds: Sequence[str],
    metrics: Sequence[str] = ALL_ROW,
    sized: bool | None = None,
) -> tuple[Any, Any]:
    """A vector space: ``vector_domain(elem, size?)`` with a dataset metric."""
    elem = draw(elements(kinds))
    met = draw(st.sampled_from(list(metrics)))
    must_size = met in ("co", "ham") or sized is True
    size = draw(st.integers(1, 5)) if must_size or (sized is None and draw(st.booleans())) else None
    metric = {
        "sym": dp.symmetric_distance(),
        "id": dp.insert_delete_distance(),
        "co": dp.change_one_distance(),
        "ham": dp.hamming_distance(),
    }[met]
    return dp.vector_domain(elem, size=size), metric


@st.composite
def sens(draw: Draw, kinds: Sequence[str], metrics: Sequence[str]) -> tuple[Any, Any]:
    """A sensitivity space: a scalar with absolute distance, or a vector with L1/L2/L∞."""
    elem = draw(elements(kinds))
    met = draw(st.sampled_from(list(metrics)))
    T = elem.T
    if met == "abs":
        return elem, dp.absolute_distance(T=T)
    size = draw(st.none() | st.integers(0, 4))
    dom = dp.vector_domain(elem, size=size)
    if met == "l1":
        return dom, dp.l1_distance(T=T)
    if met == "l2":
        return dom, dp.l2_distance(T=T)
    return dom, dp.linf_distance(T=T, monotonic=draw(st.booleans()))


def scales(lo: float = 1e-2, hi: float = 1e3) -> st.SearchStrategy[float]:
    return st.floats(lo, hi) | st.sampled_from([1.0, 0.5, 3.0])


def d_identity(c: Case, d: Any) -> Any:
    return Q(d)


def value_of(dom: Any) -> st.SearchStrategy[Any]:
    from tests.laws.spaces import members

    return members(dom)


def inner(dom: Any) -> Any:
    """The atom of a vector domain, under options (rejects the example for other domains)."""
    if not isinstance(dom, VectorDomain):
        reject()
    e = dom.element_domain
    return e.element_domain if isinstance(e, OptionDomain) else e


# ----------------------------------------------------------------------------------------------
# transformations: row by row, d_out = d_in


def vectors_only(then: Then) -> Then:
    """``then`` on vector domains only (a chain may offer any space)."""

    def guarded(draw: Draw, dom: Any, met: Any) -> Case:
        if not isinstance(dom, VectorDomain) or isinstance(dom.element_domain, VectorDomain):
            reject()
        return then(draw, dom, met)

    return guarded


def row_entry(name: str, then: Then, spaces: st.SearchStrategy[tuple[Any, Any]], **kw: Any) -> None:
    if name != "make_identity":
        then = vectors_only(then)
    register(Entry(name, "T", on(spaces, then), then=then, formula=d_identity, **kw))


def _identity(draw: Draw, dom: Any, met: Any) -> Case:
    return attempt(lambda: dp.t.make_identity(dom, met))


row_entry(
    "make_identity",
    _identity,
    rows(("int", "float", "str", "optint")) | sens(("int", "float"), ("abs", "l1", "l2", "linf")),
)


def _clamp(draw: Draw, dom: Any, met: Any) -> Case:
    T = getattr(inner(dom), "T", None) if isinstance(dom, VectorDomain) else None
    if T is None or not (T.startswith(("i", "f"))):
        reject()
    b = draw(int_bounds() if T.startswith("i") else float_bounds())
    return attempt(lambda: dp.t.make_clamp(dom, met, b))


row_entry("make_clamp", _clamp, rows(("int", "intb", "float", "floatb")))


def _cast(fn: Callable[..., Any]) -> Then:
    def then(draw: Draw, dom: Any, met: Any) -> Case:
        toa = draw(st.sampled_from(["i32", "f64", "String", "bool", "f32", "u8"]))
        return attempt(lambda: fn(dom, met, TOA=toa))

    return then


for _name in ("make_cast", "make_cast_default"):
    row_entry(_name, _cast(getattr(dp.t, _name)), rows(("int", "float", "floatnan", "str", "bool")))


def _cast_inherent(draw: Draw, dom: Any, met: Any) -> Case:
    toa = draw(st.sampled_from(["f64", "f32"]))
    return attempt(lambda: dp.t.make_cast_inherent(dom, met, TOA=toa))


row_entry("make_cast_inherent", _cast_inherent, rows(("int", "float", "str")))


def _find(draw: Draw, dom: Any, met: Any) -> Case:
    if not isinstance(dom, VectorDomain) or not isinstance(dom.element_domain, AtomDomain):
        reject()
    cats = draw(st.lists(value_of(dom.element_domain), max_size=4, unique_by=_ukey))
    return attempt(lambda: dp.t.make_find(dom, met, cats))


def _ukey(v: Any) -> Any:
    from tests.laws.spaces import _key

    return _key(v)


row_entry("make_find", _find, rows(("int", "str", "bool", "floatb", "floatnan")))


def _find_bin(draw: Draw, dom: Any, met: Any) -> Case:
    T = inner(dom).T
    num = st.integers(-50, 50) if T.startswith("i") else st.floats(-50, 50)
    edges = sorted(set(draw(st.lists(num, max_size=4))))
    return attempt(lambda: dp.t.make_find_bin(dom, met, edges))


row_entry("make_find_bin", _find_bin, rows(("int", "intb", "float", "floatb", "floatnan")))


def _index(draw: Draw, dom: Any, met: Any) -> Case:
    cats = draw(st.lists(st.text(alphabet="abc", max_size=2), max_size=4))
    return attempt(lambda: dp.t.make_index(dom, met, cats, "other"))


@st.composite
def usize_rows(draw: Draw) -> tuple[Any, Any]:
    dom, met = draw(rows(("int",)))
    return dp.vector_domain(dp.atom_domain(T="usize"), size=dom.size), met


row_entry("make_index", _index, usize_rows())


def _is_equal(draw: Draw, dom: Any, met: Any) -> Case:
    v = draw(value_of(dom.element_domain))
    return attempt(lambda: dp.t.make_is_equal(dom, met, v))


row_entry("make_is_equal", _is_equal, rows(("int", "str", "bool", "floatb", "floatnan")))


def _is_null(draw: Draw, dom: Any, met: Any) -> Case:
    return attempt(lambda: dp.t.make_is_null(dom, met))


row_entry("make_is_null", _is_null, rows(("floatnan", "optint", "optstr")))


def _drop_null(draw: Draw, dom: Any, met: Any) -> Case:
    return attempt(lambda: dp.t.make_drop_null(dom, met))


row_entry("make_drop_null", _drop_null, rows(("floatnan", "optint", "optstr"), UNSIZED_OK))


def _impute_constant(draw: Draw, dom: Any, met: Any) -> Case:
    e = inner(dom)
    c = draw(value_of(AtomDomain(T=e.T)))
    return attempt(lambda: dp.t.make_impute_constant(dom, met, c))


row_entry("make_impute_constant", _impute_constant, rows(("floatnan", "optint", "optstr")))


def _impute_uniform(draw: Draw, dom: Any, met: Any) -> Case:
    b = draw(float_bounds(strict=True))
    return attempt(lambda: dp.t.make_impute_uniform_float(dom, met, b), {"bounds": b})


def _mask_imputed(x: Any, y: Any) -> Any:
    # each NaN gets an independent draw; the proof couples neighbours' shared rows through
    # shared draws, which two runs do not have, so law 1 compares the deterministic rows
    return [
        "imputed" if isinstance(v, float) and math.isnan(v) else w
        for v, w in zip(x, y, strict=True)
    ]


row_entry(
    "make_impute_uniform_float",
    _impute_uniform,
    rows(("floatnan",)),
    mask=_mask_imputed,
)


def _count(fn: Callable[..., Any]) -> Then:
    def then(draw: Draw, dom: Any, met: Any) -> Case:
        to = draw(st.sampled_from(["i32", "u8", "i64", "f64"]))
        return attempt(lambda: fn(dom, met, to))

    return then


row_entry("make_count", _count(dp.t.make_count), rows(("int", "str", "floatnan"), UNSIZED_OK))
# floats with NaN and ±0: distinct values and keys must treat NaN as one value, 0.0 == -0.0
row_entry(
    "make_count_distinct",
    _count(dp.t.make_count_distinct),
    rows(("int", "str", "bool", "floatnan"), UNSIZED_OK),
)
row_entry(
    "make_count_by",
    _count(dp.t.make_count_by),
    rows(("int", "str", "bool", "floatnan"), UNSIZED_OK),
)
# its output metric is l01inf_distance, as in OpenDP 0.16: the map is the triple (d, d, d)
REGISTRY["make_count_by"].formula = lambda c, d: (Fraction(d),) * 3


def _count_by_categories(draw: Draw, dom: Any, met: Any) -> Case:
    cats = draw(st.lists(value_of(dom.element_domain), max_size=4, unique_by=_ukey))
    mo = draw(st.sampled_from(["L1Distance<int>", "L2Distance<int>"]))
    null = draw(st.booleans())
    return attempt(lambda: dp.t.make_count_by_categories(dom, met, cats, null, MO=mo))


row_entry(
    "make_count_by_categories", _count_by_categories, rows(("int", "str", "bool"), UNSIZED_OK)
)


def _order(fn: Callable[..., Any]) -> Then:
    def then(draw: Draw, dom: Any, met: Any) -> Case:
        return attempt(lambda: fn(dom, met))

    return then


row_entry("make_unordered", _order(dp.t.make_unordered), rows(("int", "str"), ("id", "ham")))
row_entry(
    "make_ordered_random",
    _order(dp.t.make_ordered_random),
    rows(("int", "str"), ("sym", "co")),
    randomized=True,
)
register(
    Entry(
        "make_metric_bounded",
        "T",
        on(rows(("int", "str"), ("sym",), sized=True), _order(dp.t.make_metric_bounded)),
        then=_order(dp.t.make_metric_bounded),
        formula=lambda c, d: Q(d // 2),
    )
)
register(
    Entry(
        "make_metric_unbounded",
        "T",
        on(rows(("int", "str"), ("co", "ham")), _order(dp.t.make_metric_unbounded)),
        then=_order(dp.t.make_metric_unbounded),
        formula=lambda c, d: 2 * Q(d),
    )
)


def _resize(draw: Draw, dom: Any, met: Any) -> Case:
    size = draw(st.integers(1, 8))
    c = draw(value_of(dom.element_domain))
    mo = draw(st.sampled_from(["SymmetricDistance", "InsertDeleteDistance"]))
    return attempt(lambda: dp.t.make_resize(dom, met, size, c, MO=mo), {"size": size})


def _no_random_truncation(c: Case, x: Any, x2: Any) -> bool:
    """Under the symmetric distance a longer input keeps a uniformly random subset, which two
    independent runs do not couple: law 1 then runs only where no truncation happens (the
    insert-delete case truncates deterministically, to the first ``size`` records)."""
    if isinstance(c.obj.input_metric, InsertDeleteDistance):
        return True
    return max(len(x), len(x2)) <= c.p["size"]


register(
    Entry(
        "make_resize",
        "T",
        on(rows(("int", "str"), UNSIZED_OK), _resize),
        then=vectors_only(_resize),
        formula=lambda c, d: 2 * Q(d),
        randomized=True,
        restrict=_no_random_truncation,
    )
)

# ----------------------------------------------------------------------------------------------
# aggregates


def _sum(draw: Draw, dom: Any, met: Any) -> Case:
    return attempt(lambda: dp.t.make_sum(dom, met))


def _sum_formula(c: Case, d: Any) -> Any:
    dom = c.obj.input_domain
    lo, hi = inner(dom).bounds
    if dom.size is not None:
        return Q(d // 2) * (_grid_width(lo, hi) if isinstance(lo, float) else Q(hi) - Q(lo))
    return Q(d) * (_grid_max(lo, hi) if isinstance(lo, float) else max(abs(Q(lo)), abs(Q(hi))))


def _p(lo: float, hi: float, bits: int = 46) -> int:
    m = max(abs(lo), abs(hi))
    return 0 if m == 0 else bits - math.frexp(m)[1]


def _k(x: float, p: int) -> int:
    """trunc(x · 2^p), exactly."""
    v = Q(x) * Q(2) ** p
    return math.trunc(v)


def _grid_max(lo: float, hi: float) -> Fraction:
    """M' = max(|k(L)|, |k(U)|) · 2^-p (the grid the float sums use, 46 bits of the bound)."""
    p = _p(lo, hi)
    return max(abs(_k(lo, p)), abs(_k(hi, p))) * Q(2) ** -p


def _grid_width(lo: float, hi: float) -> Fraction:
    """W = (k(U) − k(L)) · 2^-p."""
    p = _p(lo, hi)
    return (_k(hi, p) - _k(lo, p)) * Q(2) ** -p


register(
    Entry(
        "make_sum",
        "T",
        on(rows(("intb", "floatb"), UNSIZED_OK), _sum),
        then=_sum,
        formula=_sum_formula,
    )
)


def _int_sum(name: str, sized: bool) -> None:
    fn = getattr(dp.t, name)

    def build(draw: Draw) -> Case:
        b = draw(int_bounds())
        T = draw(st.sampled_from(["i32", "i64", "i8"]))
        if sized:
            n = draw(st.integers(1, 5))
            return attempt(lambda: fn(n, b, T=T), {"b": b})
        return attempt(lambda: fn(b, T=T), {"b": b})

    def formula(c: Case, d: Any) -> Any:
        lo, hi = c.p["b"]
        return Q(d // 2) * (hi - lo) if sized else Q(d) * max(abs(lo), abs(hi))

    register(Entry(name, "T", fixed(build), formula=formula))


for _name, _sized in [
    ("make_bounded_int_monotonic_sum", False),
    ("make_bounded_int_ordered_sum", False),
    ("make_bounded_int_split_sum", False),
    ("make_sized_bounded_int_checked_sum", True),
    ("make_sized_bounded_int_monotonic_sum", True),
    ("make_sized_bounded_int_ordered_sum", True),
    ("make_sized_bounded_int_split_sum", True),
]:
    _int_sum(_name, _sized)


def _e64(c: Fraction) -> Fraction:
    """The bound on one binary64 rounding of a value of magnitude <= c."""
    return Q(c) / 2**53 + Q(1, 2**1075)


def _float_sum(name: str, sized: bool) -> None:
    fn = getattr(dp.t, name)

    def build(draw: Draw) -> Case:
        b = draw(float_bounds())
        n = draw(st.integers(1, 8))
        return attempt(lambda: fn(n, b, S="Pairwise<f64>"), {"b": b, "n": n})

    def formula(c: Case, d: Any) -> Any:
        lo, hi = c.p["b"]
        m = _grid_max(lo, hi)
        # the sensitivity term only: the rounding relaxation 2·e_T(limit·M') of the docstring
        # is 0 in the code when the grid total is exactly representable (limit·K <= 2^53),
        # a sound refinement the docstring does not state (see the report)
        return Q(d // 2) * _grid_width(lo, hi) if sized else Q(d) * m

    register(Entry(name, "T", fixed(build), formula=formula))


for _name, _sized in [
    ("make_bounded_float_checked_sum", False),
    ("make_bounded_float_ordered_sum", False),
    ("make_sized_bounded_float_checked_sum", True),
    ("make_sized_bounded_float_ordered_sum", True),
]:
    _float_sum(_name, _sized)


def _mean(draw: Draw, dom: Any, met: Any) -> Case:
    return attempt(lambda: dp.t.make_mean(dom, met))


def _mean_formula(c: Case, d: Any) -> Any:
    dom = c.obj.input_domain
    lo, hi = inner(dom).bounds
    # sensitivity term only (no relaxation when the mean is exact, e.g. n a power of two)
    return Q(d // 2) * _grid_width(lo, hi) / dom.size


register(
    Entry(
        "make_mean",
        "T",
        on(rows(("floatb",), UNSIZED_OK, sized=True), _mean),
        then=_mean,
        formula=_mean_formula,
    )
)


def _ssd(draw: Draw, dom: Any, met: Any) -> Case:
    return attempt(lambda: dp.t.make_sum_of_squared_deviations(dom, met))


def _variance(draw: Draw, dom: Any, met: Any) -> Case:
    ddof = draw(st.integers(0, 1))
    return attempt(lambda: dp.t.make_variance(dom, met, ddof), {"ddof": ddof})


def _ssd_formula(c: Case, d: Any) -> Any:
    # the leading term only, with W > U − L − 2·2^-p >= U − L − 2^-24·M: the docstring's grid
    # keeps 26 bits of M = max(|L|, |U|), so a step is < 2^-25·M and each bound loses < 1 step
    dom = c.obj.input_domain
    lo, hi = inner(dom).bounds
    n = dom.size
    m = max(abs(Q(lo)), abs(Q(hi)))
    w = max(Q(hi) - Q(lo) - 2 * m / 2**25, Q(0))
    denom = n - c.p.get("ddof", 0) if "ddof" in c.p else 1
    return Q(d // 2) * w * w * (n - 1) / n / denom


register(
    Entry(
        "make_sum_of_squared_deviations",
        "T",
        on(rows(("floatb",), UNSIZED_OK, sized=True), _ssd),
        then=_ssd,
        formula=_ssd_formula,
    )
)
register(
    Entry(
        "make_variance",
        "T",
        on(rows(("floatb",), UNSIZED_OK, sized=True), _variance),
        then=_variance,
        formula=_ssd_formula,
    )
)


def _qsc(draw: Draw, dom: Any, met: Any) -> Case:
    T = inner(dom).T
    num = st.integers(-50, 50) if T.startswith("i") else st.floats(-50, 50)
    cands = sorted(set(draw(st.lists(num, min_size=1, max_size=4))))
    alpha = draw(st.floats(0, 1) | st.sampled_from([0.5, 0.25, 0.9, 0.0, 1.0]))
    return attempt(
        lambda: dp.t.make_quantile_score_candidates(dom, met, cands, alpha), {"alpha": alpha}
    )


def _qsc_formula(c: Case, d: Any) -> Any:
    a = Q(c.p["alpha"]).limit_denominator(10**4)
    num, den = a.numerator, a.denominator
    if c.obj.input_domain.size is not None:
        return Q(d // 2) * den
    return Q(d) * max(num, den - num)


register(
    Entry(
        "make_quantile_score_candidates",
        "T",
        on(rows(("int", "float", "floatb"), UNSIZED_OK), _qsc),
        then=_qsc,
        formula=_qsc_formula,
    )
)


def _tree(draw: Draw, dom: Any, met: Any) -> Case:
    leaves = draw(st.integers(1, 9))
    b = draw(st.integers(2, 4))
    return attempt(lambda: dp.t.make_b_ary_tree(dom, met, leaves, b), {"leaves": leaves, "b": b})


def _levels(leaves: int, b: int) -> int:
    depth = 0
    while b**depth < leaves:
        depth += 1
    return depth + 1


def _tree_formula(c: Case, d: Any) -> Any:
    D = _levels(c.p["leaves"], c.p["b"])
    if isinstance(c.obj.input_metric, L1Distance):
        return D * Q(d)
    b, leaves = c.p["b"], c.p["leaves"]
    # the docstring's s_l = b^(D−1−l) capped at leaf_count: a node covers at most leaf_count
    # real leaves (the rest is zero padding), a sound refinement the map uses (see the report)
    s = sum(min(min(b ** (D - 1 - lvl), leaves) * d * d, d**4) for lvl in range(D))
    r = math.isqrt(s)
    return Q(r if r * r == s else r + 1)


@st.composite
def count_vectors(draw: Draw) -> tuple[Any, Any]:
    dom = dp.vector_domain(dp.atom_domain(bounds=(0, 1000), T="i32"))
    return dom, draw(st.sampled_from([dp.l1_distance(T="i32"), dp.l2_distance(T="i32")]))


register(
    Entry(
        "make_b_ary_tree",
        "T",
        on(count_vectors(), _tree),
        then=_tree,
        formula=_tree_formula,
    )
)


def _lipschitz(draw: Draw, dom: Any, met: Any) -> Case:
    c = draw(st.floats(-1e3, 1e3) | st.sampled_from([0.0, 3.0, -0.1]))
    b = draw(float_bounds())
    return attempt(lambda: dp.t.make_lipschitz_float_mul(dom, met, c, b), {"c": c, "b": b})


def _lipschitz_formula(c: Case, d: Any) -> Any:
    k = abs(Q(c.p["c"]))
    m = max(abs(Q(c.p["b"][0])), abs(Q(c.p["b"][1])))
    return k * Q(d) + 2 * _e64(k * m)


register(
    Entry(
        "make_lipschitz_float_mul",
        "T",
        on(
            st.just((dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float))), _lipschitz
        ),
        then=_lipschitz,
        formula=_lipschitz_formula,
    )
)

# ----------------------------------------------------------------------------------------------
# dataset parsing (fixed spaces)


def _fixed_t(name: str, build: Callable[[Draw], Case]) -> None:
    register(Entry(name, "T", fixed(build), formula=d_identity))


_fixed_t("make_split_lines", lambda draw: Case(dp.t.make_split_lines()))
_fixed_t(
    "make_split_records",
    lambda draw: Case(dp.t.make_split_records(draw(st.sampled_from([",", " ", "ab"])))),
)
_fixed_t("make_create_dataframe", lambda draw: Case(dp.t.make_create_dataframe(["x", "y"])))
_fixed_t(
    "make_split_dataframe",
    lambda draw: Case(dp.t.make_split_dataframe(draw(st.sampled_from([",", " "])), ["x", "y"])),
)
_fixed_t(
    "make_filter_rows",
    lambda draw: Case(
        dp.t.make_filter_rows(
            dp.dataframe_domain(),
            dp.symmetric_distance(),
            draw(st.sampled_from(["a", "b"])),
            *draw(st.sampled_from([("==", "a"), ("!=", "1"), (">=", "b"), ("in", ["a", "1"])])),
        )
    ),
)
_fixed_t(
    "make_select_column",
    lambda draw: Case(dp.t.make_select_column(draw(st.sampled_from(["a", "b"])), TOA=str)),
)


def _user_t(draw: Draw, dom: Any, met: Any) -> Case:
    k = draw(st.integers(0, 5))
    return attempt(
        lambda: dp.t.make_user_transformation(dom, met, dom, met, lambda x: k * x, lambda d: k * d),
        {"k": k},
    )


register(
    Entry(
        "make_user_transformation",
        "T",
        on(st.just((dp.atom_domain(T=int), dp.absolute_distance(T=int))), _user_t),
        formula=lambda c, d: c.p["k"] * Q(d),
    )
)

# ----------------------------------------------------------------------------------------------
# post-processing functions: (m >> f) keeps m's map, and releases f(m(x))


def _function(name: str, build: Callable[[Draw], tuple[Any, st.SearchStrategy[Any]]]) -> None:
    @st.composite
    def b(draw: Draw) -> Case:
        f, inputs = build(draw)
        return Case(f, {"inputs": inputs})

    register(Entry(name, "F", b()))


_counts = st.lists(st.floats(0, 100), min_size=1, max_size=6)
_function("make_cdf", lambda draw: (dp.t.make_cdf(), _counts))
_function(
    "make_consistent_b_ary_tree",
    lambda draw: (
        dp.t.make_consistent_b_ary_tree(draw(st.integers(2, 3))),
        st.sampled_from([1, 3, 4, 7, 13]).flatmap(
            lambda n: st.lists(st.integers(0, 50), min_size=n, max_size=n)
        ),
    ),
)
_function(
    "make_quantiles_from_counts",
    lambda draw: (
        dp.t.make_quantiles_from_counts([0.0, 1.0, 2.0, 3.0], [0.1, 0.5, 0.9]),
        st.lists(st.floats(0, 100), min_size=3, max_size=3),
    ),
)

# ----------------------------------------------------------------------------------------------
# measurements

K_MIN = {"f64": -1074, "f32": -149}


def _noise(fn: Callable[..., Any], allow_k: bool, **extra: Any) -> Then:
    def then(draw: Draw, dom: Any, met: Any) -> Case:
        scale = draw(scales())
        kw = dict(extra)
        elem = dom if isinstance(dom, AtomDomain) else getattr(dom, "element_domain", None)
        T = getattr(elem, "T", "")
        k = None
        if allow_k and T.startswith("f") and draw(st.booleans()):
            k = draw(st.integers(-60, 4))
            kw["k"] = k
        n = 1 if isinstance(dom, AtomDomain) else getattr(dom, "size", None)
        return attempt(lambda: fn(dom, met, scale, **kw), {"scale": scale, "k": k, "T": T, "n": n})

    return then


def _penalty(c: Case) -> Fraction:
    k, T = c.p["k"], c.p["T"]
    if k is None or not T.startswith("f"):
        return Q(0)
    return Q(2) ** k - Q(2) ** K_MIN[T]


def _size(c: Case) -> int:
    """n in the penalty (1 for a scalar; an unsized vector only builds with the default k)."""
    return 1 if c.p["n"] is None else int(c.p["n"])


def _laplace_formula(c: Case, d: Any) -> Any:
    n = _size(c)
    return (Q(d) + n * _penalty(c)) / Q(c.p["scale"])


def _sqrt_down(n: int | Fraction) -> Fraction:
    """A rational within 2^-200 below √n."""
    n = Q(n)
    return Q(math.isqrt(n.numerator * 4**200 // n.denominator), 2**200)


def _gaussian_formula(c: Case, d: Any) -> Any:
    n = _size(c)
    root_n = _sqrt_down(n)  # <= √n: a lower bound of the stated map
    return (Q(d) + root_n * _penalty(c)) ** 2 / (2 * Q(c.p["scale"]) ** 2)


_num_spaces_l1 = sens(("int", "float"), ("abs", "l1"))
_num_spaces_l2 = sens(("int", "float"), ("abs", "l2"))
_int_spaces_l1 = sens(("int",), ("abs", "l1"))
_int_spaces_l2 = sens(("int",), ("abs", "l2"))


def _meas(name: str, then: Then, spaces: Any, formula: Any, **kw: Any) -> None:
    register(Entry(name, "M", on(spaces, then), then=then, formula=formula, **kw))


_meas("make_laplace", _noise(dp.m.make_laplace, True), _num_spaces_l1, _laplace_formula)
_meas(
    "make_base_laplace",
    _noise(dp.m.make_base_laplace, True, QO="f64"),
    _num_spaces_l1,
    _laplace_formula,
)
_meas("make_gaussian", _noise(dp.m.make_gaussian, True), _num_spaces_l2, _gaussian_formula)


def _generic_noise(draw: Draw, dom: Any, met: Any) -> Case:
    """make_noise: the measure picks the law (an l1 space is Laplace's, an l2 space Gaussian's)."""
    if isinstance(met, L1Distance):
        gauss = False
    elif isinstance(met, L2Distance):
        gauss = True
    else:
        gauss = draw(st.booleans())
    measure = dp.zero_concentrated_divergence() if gauss else dp.max_divergence()
    c = _noise(lambda d, m, s, **kw: dp.m.make_noise(d, m, measure, s, **kw), True)(draw, dom, met)
    c.p["gauss"] = gauss
    return c


_meas(
    "make_noise",
    _generic_noise,
    sens(("int", "float"), ("abs", "l1", "l2")),
    lambda c, d: (_gaussian_formula if c.p.get("gauss") else _laplace_formula)(c, d),
)
_meas(
    "make_base_gaussian",
    _noise(dp.m.make_base_gaussian, True, QO="f64"),
    _num_spaces_l2,
    _gaussian_formula,
)
_meas(
    "make_base_discrete_laplace",
    _noise(dp.m.make_base_discrete_laplace, False),
    _int_spaces_l1,
    _laplace_formula,
)
_meas(
    "make_base_discrete_gaussian",
    _noise(dp.m.make_base_discrete_gaussian, False),
    _int_spaces_l2,
    _gaussian_formula,
)


def _geometric(draw: Draw, dom: Any, met: Any) -> Case:
    scale = draw(scales())
    bounds = draw(st.none() | int_bounds())
    return attempt(lambda: dp.m.make_geometric(dom, met, scale, bounds), {"scale": scale, "n": 1})


_meas("make_geometric", _geometric, _int_spaces_l1, lambda c, d: Q(d) / Q(c.p["scale"]))


def _noisy_max(which: str) -> Then:
    def then(draw: Draw, dom: Any, met: Any) -> Case:
        scale = draw(scales())
        measure = draw(st.sampled_from([dp.max_divergence(), dp.zero_concentrated_divergence()]))
        neg = draw(st.booleans())
        p = {"scale": scale, "zcdp": measure == dp.zero_concentrated_divergence(), "k": 1}
        if which == "max":
            return attempt(lambda: dp.m.make_noisy_max(dom, met, measure, scale, neg), p)
        if which == "gumbel":
            p["zcdp"] = False
            opt = "min" if neg else "max"
            return attempt(lambda: dp.m.make_report_noisy_max_gumbel(dom, met, scale, opt), p)
        k = draw(st.integers(0, 3))
        p["k"] = k
        return attempt(lambda: dp.m.make_noisy_top_k(dom, met, measure, k, scale, neg), p)

    return then


def _noisy_max_formula(c: Case, d: Any) -> Any:
    mono = c.obj.input_metric.monotonic
    e1 = (1 if mono else 2) * Q(d) / Q(c.p["scale"])
    return c.p["k"] * (e1 * e1 / 8 if c.p["zcdp"] else e1)


_score_spaces = sens(("int", "float"), ("linf",))
for _name, _which in [
    ("make_noisy_max", "max"),
    ("make_noisy_top_k", "topk"),
    ("make_report_noisy_max_gumbel", "gumbel"),
]:
    _meas(_name, _noisy_max(_which), _score_spaces, _noisy_max_formula)


def _private_quantile(draw: Draw, dom: Any, met: Any) -> Case:
    T = inner(dom).T
    num = st.integers(-50, 50) if T.startswith("i") else st.floats(-50, 50)
    cands = sorted(set(draw(st.lists(num, min_size=1, max_size=4))))
    alpha = draw(st.floats(0, 1) | st.sampled_from([0.5, 0.9]))
    scale = draw(scales())
    measure = draw(st.sampled_from([dp.max_divergence(), dp.zero_concentrated_divergence()]))
    p = {"alpha": alpha, "scale": scale, "zcdp": measure == dp.zero_concentrated_divergence()}
    return attempt(lambda: dp.m.make_private_quantile(dom, met, measure, cands, alpha, scale), p)


def _private_quantile_formula(c: Case, d: Any) -> Any:
    a = Q(c.p["alpha"])
    sens_ = Q(d // 2) if c.obj.input_domain.size is not None else Q(d) * max(a, 1 - a)
    e = 2 * sens_ / Q(c.p["scale"])
    return e * e / 8 if c.p["zcdp"] else e


_meas(
    "make_private_quantile",
    _private_quantile,
    rows(("int", "float"), UNSIZED_OK),
    _private_quantile_formula,
)


def _exponential(draw: Draw, dom: Any, met: Any) -> Case:
    # the scoring function below counts records <= a candidate: numeric atoms only
    if not isinstance(dom, VectorDomain) or not isinstance(dom.element_domain, AtomDomain):
        reject()
    if not dom.element_domain.T.startswith(("i", "u", "f")):
        reject()
    mono = draw(st.booleans())
    c = 1 if mono else 2
    if draw(st.booleans()):
        scale = draw(scales())
        p = {"scale": Q(scale), "c": c}
        kw: dict[str, Any] = {"scale": scale}
    else:
        eps = draw(scales(1e-2, 10.0))
        from opendp_lite import _arith

        p = {"scale": Q(_arith.div_up(c, eps)), "c": c}  # "scale = c·Δu/ε rounded up"
        kw = {"epsilon": eps}

    def score(x: Any, cand: int) -> float:
        return float(sum(1 for v in x if v <= cand))

    return attempt(
        lambda: dp.m.make_exponential(dom, met, range(5), score, 1.0, monotonic=mono, **kw), p
    )


_meas(
    "make_exponential",
    _exponential,
    rows(("int",), UNSIZED_OK),
    lambda c, d: c.p["c"] * Q(d) / c.p["scale"],
)


def _rr_bool(draw: Draw) -> Case:
    p = draw(st.floats(0.5, 1.0, exclude_max=True))
    return attempt(lambda: dp.m.make_randomized_response_bool(p), {"p": p})


def _rr(draw: Draw) -> Case:
    cats = draw(st.lists(st.text(alphabet="abc", max_size=2), min_size=2, max_size=5, unique=True))
    p = draw(st.floats(1 / len(cats), 1.0, exclude_max=True))
    return attempt(lambda: dp.m.make_randomized_response(cats, p), {"p": p, "k": len(cats)})


def _rr_bitvec(draw: Draw) -> Case:
    from opendp_lite.measurements.randomized_response import bitvector_domain

    m = draw(st.integers(1, 8))
    f = draw(st.floats(0.0, 1.0, exclude_min=True))
    dom = bitvector_domain(max_weight=m)
    return attempt(
        lambda: dp.m.make_randomized_response_bitvec(dom, dp.discrete_distance(), f),
        {"m": m, "f": f},
    )


def _rr_coins(draw: Draw) -> Case:
    a = draw(st.floats(0.0, 1.0, exclude_min=True))
    b = draw(st.floats(0.0, 1.0, exclude_min=True, exclude_max=True))
    return attempt(lambda: dp.m.make_randomized_response_coins(a, b), {"a": a, "b": b})


def _zero_or(d: Any, v: Any) -> Any:
    return Q(0) if d == 0 else v


def _coins_formula(c: Case, d: Any) -> Any:
    a, b = Q(c.p["a"]), Q(c.p["b"])
    return _zero_or(d, Ln(max((1 - a + a * b) / (a * b), (1 - a * b) / (a * (1 - b)))))


register(
    Entry(
        "make_randomized_response_bool",
        "M",
        fixed(_rr_bool),
        formula=lambda c, d: _zero_or(d, Ln(Q(c.p["p"]) / (1 - Q(c.p["p"])))),
    )
)
register(
    Entry(
        "make_randomized_response",
        "M",
        fixed(_rr),
        formula=lambda c, d: _zero_or(d, Ln(Q(c.p["p"]) * (c.p["k"] - 1) / (1 - Q(c.p["p"])))),
    )
)
register(
    Entry(
        "make_randomized_response_bitvec",
        "M",
        fixed(_rr_bitvec),
        formula=lambda c, d: _zero_or(d, Ln((2 - Q(c.p["f"])) / Q(c.p["f"]), Q(2 * c.p["m"]))),
    )
)
register(Entry("make_randomized_response_coins", "M", fixed(_rr_coins), formula=_coins_formula))


def _up_to(key: str) -> Callable[[Case], st.SearchStrategy[Any]]:
    """Distances up to the ``d_in`` an interactive measurement was built for."""

    def dists(c: Case) -> st.SearchStrategy[Any]:
        top = c.p[key]
        if isinstance(top, int):
            return st.integers(0, top)
        return st.floats(0, top) | st.just(top)

    return dists


def _sparse_vector(draw: Draw, dom: Any, met: Any) -> Case:
    d_in = draw(st.integers(0, 4))
    qs = draw(st.integers(0, 10))
    ts, qsc = draw(scales()), draw(scales())
    c = draw(st.integers(1, 3))
    mono = draw(st.booleans())
    p = {"d_in": d_in, "qs": qs, "ts": ts, "qsc": qsc, "c": c, "mono": mono}
    return attempt(lambda: dp.m.make_sparse_vector(dom, met, d_in, qs, 0.0, ts, qsc, c, mono), p)


def _sparse_vector_formula(c: Case, d: Any) -> Any:
    p = c.p
    m = 1 if p["mono"] else 2
    return Q(p["qs"]) / Q(p["ts"]) + m * p["c"] * Q(p["qs"]) / Q(p["qsc"])


register(
    Entry(
        "make_sparse_vector",
        "M",
        on(rows(("int",), UNSIZED_OK), _sparse_vector),
        formula=_sparse_vector_formula,
        dists=_up_to("d_in"),
        limit=lambda c: c.p["d_in"],
    )
)


def _threshold(gauss: bool) -> Callable[[Draw], Case]:
    def build(draw: Draw) -> Case:
        from opendp_lite.measurements.threshold import l01inf_distance, l02inf_distance

        T = draw(st.sampled_from(["i32", "f64"]))
        D = draw(st.sampled_from(["i32", "f64"]))  # the distance type need not be T (OpenDP)
        dom = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=T, nan=False))
        metric = (l02inf_distance if gauss else l01inf_distance)(dp.absolute_distance(T=D))
        scale = draw(scales(0.5, 50.0))
        thr = draw(st.integers(0, 100))
        k = draw(st.none() | st.integers(-60, 2)) if T == "f64" else None
        fn = dp.m.make_gaussian_threshold if gauss else dp.m.make_laplace_threshold
        p = {"scale": scale, "gauss": gauss, "k": k, "T": T, "D": D}
        return attempt(lambda: fn(dom, metric, scale, thr, k=k), p)

    return build


def _threshold_formula(c: Case, d: Any) -> Any:
    """ε = min(l1 + l0·π, l0·(l∞′ + π))/s, ρ = min((l2 + √l0·π)², l0·(l∞′ + π)²)/(2s²), with
    π = 2^k − 2^k_min (√l0 bounded below within 2^-200); δ is not recomputed, only δ > 0 for l0 > 0
    ("δ > 0 even when l∞′ = 0")."""
    l0, lp, linf = (Q(v) for v in d)
    li = min(linf, lp)
    s = Q(c.p["scale"])
    pen = _penalty(c)
    delta = (lambda v: Q(v) > 0) if l0 > 0 else None
    if c.p["gauss"]:
        root = _sqrt_down(l0)
        return (min((lp + root * pen) ** 2, l0 * (li + pen) ** 2) / (2 * s * s), delta)
    return (min(lp + l0 * pen, l0 * (li + pen)) / s, delta)


@st.composite
def _l0pinf(draw: Draw, D: str = "i32") -> tuple[int, Any, Any]:
    if D == "f64":  # real bounds, also on integer values
        real = st.floats(0.0, 20.0, allow_nan=False)
        return draw(st.integers(0, 5)), draw(real), draw(real)
    return draw(st.integers(0, 5)), draw(st.integers(0, 20)), draw(st.integers(0, 20))


for _name, _g in [("make_laplace_threshold", False), ("make_gaussian_threshold", True)]:
    register(
        Entry(
            _name,
            "M",
            fixed(_threshold(_g)),
            formula=_threshold_formula,
            dists=lambda c: _l0pinf(c.p["D"]),
        )
    )


def _noise_threshold(draw: Draw) -> Case:
    """make_noise_threshold: the approximate measure picks Laplace (L0,1,∞) or Gaussian (L0,2,∞);
    thresholds of either sign (a negative one keeps the keys below it)."""
    gauss = draw(st.booleans())
    T = draw(st.sampled_from(["i32", "f64"]))
    D = draw(st.sampled_from(["i32", "f64"]))
    dom = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=T, nan=False))
    metric = (dp.l02inf_distance if gauss else dp.l01inf_distance)(dp.absolute_distance(T=D))
    inner = dp.zero_concentrated_divergence() if gauss else dp.max_divergence()
    scale = draw(scales(0.5, 50.0))
    thr = draw(st.integers(-100, 100))
    k = draw(st.none() | st.integers(-60, 2)) if T == "f64" else None
    p = {"scale": scale, "gauss": gauss, "k": k, "T": T, "D": D}
    return attempt(
        lambda: dp.m.make_noise_threshold(dom, metric, dp.approximate(inner), scale, thr, k), p
    )


register(
    Entry(
        "make_noise_threshold",
        "M",
        fixed(_noise_threshold),
        formula=_threshold_formula,
        dists=lambda c: _l0pinf(c.p["D"]),
    )
)


def _alp(draw: Draw) -> Case:
    from opendp_lite.measurements.threshold import l01inf_distance

    sparse = draw(st.booleans())
    metric = l01inf_distance(dp.absolute_distance(T=int)) if sparse else dp.l1_distance(T=int)
    dom = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int))
    scale = draw(scales(1e-2, 10.0))
    total, value = draw(st.integers(1, 100)), draw(st.integers(1, 20))
    alpha = draw(st.integers(1, 8))
    return attempt(
        lambda: dp.m.make_alp_queryable(dom, metric, scale, total, value, alpha=alpha),
        {"scale": scale, "sparse": sparse},
    )


def _alp_formula(c: Case, d: Any) -> Any:
    d1 = d[1] if isinstance(d, tuple) else d
    return Q(d1) * Q(c.p["scale"])


register(
    Entry(
        "make_alp_queryable",
        "M",
        fixed(_alp),
        formula=_alp_formula,
        dists=lambda c: _l0pinf() if c.p["sparse"] else st.integers(0, 40),
    )
)


def _canonical(draw: Draw, dom: Any, met: Any) -> Case:
    d_in = draw(st.floats(0, 10))
    eps = draw(st.floats(1e-3, 10))
    delta = draw(st.floats(0, 1) | st.just(0.0))
    return attempt(
        lambda: dp.m.make_canonical_noise(dom, met, d_in, (eps, delta)),
        {"d_in": d_in, "d_out": (eps, delta)},
    )


register(
    Entry(
        "make_canonical_noise",
        "M",
        on(
            st.just((dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float))), _canonical
        ),
        formula=lambda c, d: tuple(Q(v) for v in c.p["d_out"]),
        dists=_up_to("d_in"),
        limit=lambda c: c.p["d_in"],
    )
)


def _user_m(draw: Draw, dom: Any, met: Any) -> Case:
    k = draw(st.floats(0, 10))
    from opendp_lite import _arith

    return attempt(
        lambda: dp.m.make_user_measurement(
            dom, met, dp.max_divergence(), lambda x: x, lambda d: _arith.mul_up(k, d)
        ),
        {"k": k},
    )


register(
    Entry(
        "make_user_measurement",
        "M",
        on(st.just((dp.atom_domain(T=int), dp.absolute_distance(T=int))), _user_m),
        formula=lambda c, d: Q(c.p["k"]) * Q(d),
    )
)


def _random_dp(draw: Draw) -> Case:
    from opendp_lite.sensitivity import Normal, make_random_dp, sample_sensitivity

    n = draw(st.integers(1, 5))
    gamma = draw(st.sampled_from([0.1, 0.2]))
    s = sample_sensitivity(lambda v: v.mean(), "l1", Normal(0.0, 1.0), n, gamma=gamma)
    inner_m = dp.m.make_laplace(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), draw(scales())
    )
    dom = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=n)
    met = draw(st.sampled_from([dp.change_one_distance(), dp.hamming_distance()]))
    return attempt(
        lambda: make_random_dp(dom, met, lambda v: float(v.mean()), s, inner_m),
        {"inner": inner_m, "sens": s.sensitivity},
    )


register(
    Entry(
        "make_random_dp",
        "M",
        fixed(_random_dp),
        formula=lambda c, d: Q(0) if d == 0 else Q(c.p["inner"].map(c.p["sens"])),
        dists=lambda c: st.integers(0, 1),
        limit=lambda c: 1,
    )
)

# ----------------------------------------------------------------------------------------------
# combinators

FSPACE = (dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float))


@st.composite
def children(draw: Draw, measure: Any = None) -> Any:
    """A measurement on FSPACE under ``measure`` (drawn if None)."""
    from opendp_lite import _arith

    if measure is None:
        measure = draw(
            st.sampled_from(
                [
                    dp.max_divergence(),
                    dp.zero_concentrated_divergence(),
                    dp.approximate(dp.max_divergence()),
                    dp.approximate(dp.zero_concentrated_divergence()),
                ]
            )
        )
    scale = draw(scales())
    if measure == dp.max_divergence():
        return dp.m.make_laplace(*FSPACE, scale)
    if measure == dp.zero_concentrated_divergence():
        return dp.m.make_gaussian(*FSPACE, scale)
    delta = draw(st.floats(0, 1e-3))
    base = draw(children(measure.inner))
    return dp.m.make_user_measurement(
        *FSPACE, measure, base.function, lambda d: (base.map(d), _arith.mul_up(delta, d))
    )


def _loss_sum(losses: list[Any]) -> Any:
    if isinstance(losses[0], tuple):
        return (sum((Q(v[0]) for v in losses), Q(0)), min(sum((Q(v[1]) for v in losses), Q(0)), 1))
    return sum((Q(v) for v in losses), Q(0))


def _composition(fn: Callable[..., Any]) -> Callable[[Draw], Case]:
    def build(draw: Draw) -> Case:
        first = draw(children())
        rest = draw(st.lists(children(first.output_measure), max_size=3))
        ms = [first, *rest]
        return attempt(lambda: fn(ms), {"ms": ms})

    return build


for _name in ("make_composition", "make_basic_composition"):
    register(
        Entry(
            _name,
            "M",
            fixed(_composition(getattr(dp.c, _name))),
            formula=lambda c, d: _loss_sum([m.map(d) for m in c.p["ms"]]),
        )
    )


def _adaptive(fn: Callable[..., Any]) -> Callable[[Draw], Case]:
    def build(draw: Draw) -> Case:
        measure = draw(st.sampled_from([dp.max_divergence(), dp.zero_concentrated_divergence()]))
        d_in = draw(st.floats(0, 10))
        d_mids = draw(st.lists(st.floats(0, 10), min_size=1, max_size=4))
        return attempt(lambda: fn(*FSPACE, measure, d_in, d_mids), {"d_in": d_in, "d_mids": d_mids})

    return build


for _name in ("make_adaptive_composition", "make_sequential_composition"):
    register(
        Entry(
            _name,
            "M",
            fixed(_adaptive(getattr(dp.c, _name))),
            formula=lambda c, d: _loss_sum(c.p["d_mids"]),
            dists=_up_to("d_in"),
            limit=lambda c: c.p["d_in"],
        )
    )


def _filter(draw: Draw) -> Case:
    measure = draw(st.sampled_from([dp.max_divergence(), dp.zero_concentrated_divergence()]))
    odo = dp.c.make_fully_adaptive_composition(*FSPACE, measure)
    d_in, d_out = draw(st.floats(0, 10)), draw(st.floats(0, 10))
    return attempt(
        lambda: dp.c.make_privacy_filter(odo, d_in, d_out), {"d_in": d_in, "d_out": d_out}
    )


register(
    Entry(
        "make_privacy_filter",
        "M",
        fixed(_filter),
        formula=lambda c, d: Q(c.p["d_out"]),
        dists=_up_to("d_in"),
        limit=lambda c: c.p["d_in"],
    )
)


def _wrap(fn: Callable[[Any], Any], measure: Any) -> Callable[[Draw], Case]:
    def build(draw: Draw) -> Case:
        m = draw(children(measure))
        return attempt(lambda: fn(m), {"m": m})

    return build


register(
    Entry(
        "make_approximate",
        "M",
        st.one_of(
            fixed(_wrap(dp.c.make_approximate, dp.max_divergence())),
            fixed(_wrap(dp.c.make_approximate, dp.zero_concentrated_divergence())),
        ),
        formula=lambda c, d: (Q(c.p["m"].map(d)), Q(0)),
    )
)
register(
    Entry(
        "make_pureDP_to_zCDP",
        "M",
        fixed(_wrap(dp.c.make_pureDP_to_zCDP, dp.max_divergence())),
        formula=lambda c, d: Q(c.p["m"].map(d)) ** 2 / 2,
    )
)


def _profile_formula(c: Case, d: Any) -> Any:
    """The CKS conversion is a minimum over α with no closed form to recompute exactly: check
    instead that the loss is a valid profile (δ in [0, 1], non-increasing in ε)."""

    def ok(profile: Any) -> bool:
        eps = [0.0, 0.1, 0.5, 1.0, 2.0, 5.0, 20.0]
        ds = [profile.delta(e) for e in eps]
        return all(0 <= v <= 1 for v in ds) and all(a >= b for a, b in itertools.pairwise(ds))

    return ok


register(
    Entry(
        "make_zCDP_to_approxDP",
        "M",
        fixed(_wrap(dp.c.make_zCDP_to_approxDP, dp.zero_concentrated_divergence())),
        formula=_profile_formula,
    )
)


def _fix_delta(draw: Draw) -> Case:
    m = draw(children(dp.zero_concentrated_divergence()))
    delta = draw(st.floats(1e-9, 1.0))
    return attempt(
        lambda: dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(m), delta), {"m": m, "delta": delta}
    )


def _fix_delta_formula(c: Case, d: Any) -> Any:
    """(ε, δ) with ε the least float whose profile δ is <= δ: the profile at ε passes."""
    profile = dp.c.make_zCDP_to_approxDP(c.p["m"]).map(d)

    def ok(loss: Any) -> bool:
        eps, delta = loss
        return delta == c.p["delta"] and profile.delta(eps) <= delta

    return ok


register(Entry("make_fix_delta", "M", fixed(_fix_delta), formula=_fix_delta_formula))


def _fixed_approx(draw: Draw) -> Case:
    m = draw(children(dp.approximate(dp.max_divergence())))
    return attempt(lambda: dp.c.make_fixed_approxDP_to_approxDP(m), {"m": m})


def _fixed_approx_formula(c: Case, d: Any) -> Any:
    eps0, delta0 = c.p["m"].map(d)

    def ok(profile: Any) -> bool:
        below = math.nextafter(eps0, -math.inf)
        return profile.delta(eps0) >= delta0 and (eps0 == 0 or profile.delta(below) == 1.0)

    return ok


register(
    Entry(
        "make_fixed_approxDP_to_approxDP", "M", fixed(_fixed_approx), formula=_fixed_approx_formula
    )
)


def _select(draw: Draw) -> Case:
    from opendp_lite import _arith

    k = draw(st.floats(0, 10))
    m = dp.m.make_user_measurement(
        *FSPACE, dp.max_divergence(), lambda x: (x, "c"), lambda d: _arith.mul_up(k, d)
    )
    stop = draw(st.floats(0, 1, exclude_max=True))
    return attempt(
        lambda: dp.c.make_select_private_candidate(m, stop, draw(st.floats(-10, 10))), {"m": m}
    )


register(
    Entry(
        "make_select_private_candidate",
        "M",
        fixed(_select),
        formula=lambda c, d: 2 * Q(c.p["m"].map(d)),
    )
)


def _amplification(draw: Draw) -> Case:
    from opendp_lite import _arith

    n = draw(st.integers(1, 10))
    big_n = n + draw(st.integers(0, 100))
    k = draw(st.floats(0, 5))
    approx = draw(st.booleans())
    dom = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=n)
    met = dp.symmetric_distance()
    if approx:
        m = dp.m.make_user_measurement(
            dom,
            met,
            dp.approximate(dp.max_divergence()),
            lambda x: 0,
            lambda d: (_arith.mul_up(k, d), min(1.0, _arith.mul_up(1e-6, d))),
        )
    else:
        m = dp.m.make_user_measurement(
            dom, met, dp.max_divergence(), lambda x: 0, lambda d: _arith.mul_up(k, d)
        )
    return attempt(
        lambda: dp.c.make_population_amplification(m, big_n), {"m": m, "n": n, "N": big_n}
    )


def _amplification_formula(c: Case, d: Any) -> Any:
    """The documented map, checked at 256 bits against the claim: with k = ⌈d/2⌉ substituted
    records (symmetric distance on sized data), either the coupling bound
    expm1(ε') >= q_k·expm1(ε(2·min(k, n))), δ' >= q_k·δ, or the group-privacy bound
    ε'/k >= ln(1 + (n/N)·expm1(ε(2))), δ' >= (n/N)·δ(2)·Σ_{i<k} e^{i·ε'/k} holds."""
    import gmpy2

    n, big_n = c.p["n"], c.p["N"]
    k = -(-int(d) // 2)

    def split(loss: Any) -> tuple[Any, Any]:
        return (loss[0], loss[1]) if isinstance(loss, tuple) else (loss, 0.0)

    def hit(j: int) -> Any:
        return 1 - Q(math.comb(big_n - j, n), math.comb(big_n, n)) if j <= big_n else Q(1)

    def at_least_amplified(e2: Any, q: Any, eps: Any) -> bool:
        """e2 >= ln(1 + q·expm1(eps)), each side rounded against the claim."""
        if q in (0, 1):  # ε' = q·ε exactly: no logarithm to bound
            return bool(Q(e2) >= q * Q(eps))
        # expm1 keeps the precision of tiny ε, where 1 + ε would round to 1
        with gmpy2.context(gmpy2.get_context(), precision=256, round=gmpy2.RoundDown):
            lhs = gmpy2.expm1(gmpy2.mpfr(e2))
        with gmpy2.context(gmpy2.get_context(), precision=256, round=gmpy2.RoundUp):
            rhs = gmpy2.mpq(q.numerator, q.denominator) * gmpy2.expm1(gmpy2.mpfr(eps))
        return bool(lhs >= rhs)

    def ok(loss: Any) -> bool:
        e2, d2 = split(loss)
        if k == 0:
            return Q(e2) >= 0 and Q(d2) >= 0
        eps, delta = split(c.p["m"].map(2 * min(k, n)))
        q = hit(k)
        if at_least_amplified(e2, q, eps) and Q(d2) >= q * Q(delta):
            return True
        eps1, delta1 = split(c.p["m"].map(2))
        rate = Q(n, big_n)
        with gmpy2.context(gmpy2.get_context(), precision=256, round=gmpy2.RoundDown):
            step = gmpy2.mpfr(e2) / k  # ε'/k, down
        if not at_least_amplified(step, rate, eps1):
            return False
        # a lower bound on the documented δ_g (every factor rounded down)
        with gmpy2.context(gmpy2.get_context(), precision=256, round=gmpy2.RoundDown):
            ln1 = gmpy2.log1p(gmpy2.mpq(rate.numerator, rate.denominator) * gmpy2.expm1(eps1))
            geometric = sum(gmpy2.exp(i * ln1) for i in range(k))
            need = gmpy2.mpq(rate.numerator, rate.denominator) * gmpy2.mpfr(delta1) * geometric
        return bool(gmpy2.mpfr(d2) >= need)

    return ok


register(
    Entry(
        "make_population_amplification", "M", fixed(_amplification), formula=_amplification_formula
    )
)


def _local(draw: Draw) -> Case:
    p = draw(st.floats(0.5, 1.0, exclude_max=True))
    rr = dp.m.make_randomized_response_bool(p)
    n = draw(st.integers(1, 5))
    dom = dp.vector_domain(dp.atom_domain(T=bool), size=n)
    # Hamming only: a local release is positional, so change-one (unordered) is refused.
    return attempt(lambda: dp.c.make_local_release(dom, dp.hamming_distance(), rr), {"m": rr})


register(
    Entry(
        "make_local_release",
        "M",
        fixed(_local),
        formula=lambda c, d: Q(d) * Q(c.p["m"].map(1)),
    )
)


def _worst_case(draw: Draw) -> Case:
    from opendp_lite.sensitivity import make_random_dp_as_worst_case

    base = _random_dp(draw)
    dp.enable_features("random-dp")
    return attempt(lambda: make_random_dp_as_worst_case(base.obj), base.p)


register(
    Entry(
        "make_random_dp_as_worst_case",
        "M",
        fixed(_worst_case),
        formula=lambda c, d: Q(0) if d == 0 else Q(c.p["inner"].map(c.p["sens"])),
        dists=lambda c: st.integers(0, 1),
        limit=lambda c: 1,
    )
)


# chains: built by joining registry entries (see ``joined`` below)


def sources() -> list[Entry]:
    """Transformation entries with an input-space builder: where a joined chain starts."""
    return [e for e in REGISTRY.values() if e.kind == "T" and e.then is not None]


@st.composite
def extend(draw: Draw, first: Any, kinds: tuple[str, ...] = ("T",)) -> tuple[Entry, Case]:
    """An entry of ``kinds`` whose constructor builds on ``first``'s output space."""
    cands = [e for e in REGISTRY.values() if e.kind in kinds and e.then is not None]
    order = draw(st.permutations(cands))
    for e in order[:12]:
        try:
            return e, e.then(draw, first.output_domain, first.output_metric)  # type: ignore[misc]
        except (OpenDPLiteError, UnsatisfiedAssumption):
            continue
    reject()


@st.composite
def joined_entries(
    draw: Draw, length: int, last: tuple[str, ...] = ("T",)
) -> list[tuple[Entry, Any]]:
    """``length`` registry entries and instances, each built on the previous output space."""
    start = draw(st.sampled_from(sources()))
    chain = [(start, draw(start.build).obj)]
    for i in range(1, length):
        e, nxt = draw(extend(chain[-1][1], last if i == length - 1 else ("T",)))
        chain.append((e, nxt.obj))
    return chain


def joined(length: int, last: tuple[str, ...] = ("T",)) -> st.SearchStrategy[list[Any]]:
    """``length`` registry instances, each built on the previous one's output space."""
    return joined_entries(length, last).map(lambda chain: [obj for _, obj in chain])


def _chain_p(chain: list[tuple[Entry, Any]]) -> dict[str, Any]:
    return {
        "parts": tuple(obj for _, obj in chain),
        # a random part makes the chain's release random (law 1 then compares multisets);
        # a part whose own law 1 needs a mask or a restriction is not comparable in a chain
        "randomized": any(e.randomized for e, _ in chain),
        "uncoupled": any(e.mask is not None or e.restrict is not None for e, _ in chain),
    }


def _chain_tt(draw: Draw) -> Case:
    chain = draw(joined_entries(2))
    (_, t0), (_, t1) = chain
    return attempt(lambda: dp.c.make_chain_tt(t1, t0), _chain_p(chain))


def _chain_mt(draw: Draw) -> Case:
    chain = draw(joined_entries(2, ("M",)))
    (_, t0), (_, m1) = chain
    return attempt(lambda: dp.c.make_chain_mt(m1, t0), _chain_p(chain))


def _chain_pm(draw: Draw) -> Case:
    m = draw(children())
    f = dp.new_function(lambda x: x)
    return attempt(lambda: dp.c.make_chain_pm(f, m), {"m": m})


def _composed(c: Case, d: Any) -> Any:
    t0, second = c.p["parts"]
    v = second.map(t0.map(d))
    return tuple(Q(u) for u in v) if isinstance(v, tuple) else Q(v)


register(Entry("make_chain_tt", "T", fixed(_chain_tt), formula=_composed))
register(Entry("make_chain_mt", "M", fixed(_chain_mt), formula=_composed))
register(
    Entry(
        "make_chain_pm",
        "M",
        fixed(_chain_pm),
        formula=lambda c, d: (
            tuple(Q(u) for u in c.p["m"].map(d))
            if isinstance(c.p["m"].map(d), tuple)
            else Q(c.p["m"].map(d))
        ),
    )
)


def _odometer(draw: Draw) -> Case:
    # the odometer refuses approximate zCDP (no fully adaptive filter is proved for it)
    measure = draw(
        st.sampled_from(
            [
                dp.max_divergence(),
                dp.zero_concentrated_divergence(),
                dp.approximate(dp.max_divergence()),
            ]
        )
    )
    first = draw(children(measure))
    queries = [first, *draw(st.lists(children(measure), max_size=3))]
    odo = dp.c.make_fully_adaptive_composition(*FSPACE, measure)
    return Case(odo, {"queries": queries})


# an Odometer has no map: its laws (test_odometer_loss_is_the_sum_of_its_queries) are on the
# privacy_loss its queryable reports after the queries: monotone, the exact sum rounded up
register(Entry("make_fully_adaptive_composition", "O", fixed(_odometer)))

# -- grouped releases (issue 15): each entry is a chain from the frames of the laws' spaces
# (columns "a", "b" of short strings) through make_partition_by, so law 1 compares vectors


_GROUP_KEYS = st.lists(st.sampled_from(["", "a", "b", "1", "ab", "ba", "11"]), unique=True)


def _partition(draw: Draw) -> Any:
    keys = draw(_GROUP_KEYS)
    return dp.t.make_partition_by(dp.dataframe_domain(), dp.symmetric_distance(), "a", keys)


def _grouped_count(draw: Draw) -> Case:
    norm = draw(st.sampled_from([1, 2]))
    return Case(_partition(draw) >> dp.t.then_grouped_count(norm), {"norm": norm})


def _b_as_length() -> Any:
    """Row by row: column "b" replaced by its length as a float (a float column to sum)."""

    def function(x: Any) -> Any:
        return {"a": x["a"], "b": [float(len(v)) for v in x["b"]]}

    return dp.Transformation(
        dp.dataframe_domain(),
        dp.symmetric_distance(),
        dp.dataframe_domain(),
        dp.symmetric_distance(),
        function,
        lambda d: d,
    )


def _grouped_sum(draw: Draw) -> Case:
    lo, hi = draw(float_bounds())
    norm = draw(st.sampled_from([1, 2]))
    part = _b_as_length() >> _partition(draw)
    t = attempt(lambda: part >> dp.t.then_grouped_sum("b", (lo, hi), norm), {"bounds": (lo, hi)})
    return Case(t.obj, {"bounds": (lo, hi)})


def _grouped_sum_formula(c: Case, d: Any) -> Any:
    """d·M′ (the sensitivity term, a lower bound of the map; the rounding relaxation is not
    recomputed), M′ = max(|k(L)|, |k(U)|)·2^-p on the grid of make_sum."""
    lo, hi = c.p["bounds"]
    mag = max(abs(lo), abs(hi))
    if mag == 0:
        return Q(0)
    p = 46 - math.frexp(mag)[1]
    k = max(abs(math.trunc(Q(lo) * Q(2) ** p)), abs(math.trunc(Q(hi) * Q(2) ** p)))
    return Q(d) * Q(k) * Q(2) ** -p


def _grouped(draw: Draw) -> Case:
    scale = draw(st.floats(0.5, 100))
    inner = dp.t.make_select_column("b", TOA=str) >> dp.t.then_count() >> dp.m.then_laplace(scale)
    return Case(_partition(draw) >> dp.c.then_grouped(inner), {"scale": scale})


register(Entry("make_partition_by", "T", fixed(_grouped_count), formula=d_identity))
register(Entry("make_grouped_count", "T", fixed(_grouped_count), formula=d_identity))
register(Entry("make_grouped_sum", "T", fixed(_grouped_sum), formula=_grouped_sum_formula))
register(
    Entry(
        "make_grouped",
        "M",
        fixed(_grouped),
        formula=lambda c, d: Q(d) / Q(c.p["scale"]),
        randomized=True,
    )
)

# ----------------------------------------------------------------------------------------------
# the numpy and scikit-learn extras (opendp_lite.extras)


@st.composite
def _array2_domain(draw: Draw, bounded: bool, sized: bool | None = None) -> Any:
    d = draw(st.integers(1, 3))
    size = draw(st.none() | st.integers(1, 4)) if sized is None else (3 if sized else None)
    if not bounded:
        return dp.numpy.array2_domain(num_columns=d, size=size, nan=draw(st.booleans()), T=float)
    p = draw(st.sampled_from([1, 2]))
    norm = draw(st.sampled_from([1.0, 0.1, 3.5, 1e3]) | st.floats(1e-3, 1e3))
    origin = draw(
        st.none() | st.lists(st.sampled_from([0.0, 1.0, -2.5, 1e3]), min_size=d, max_size=d)
    )
    return dp.numpy.array2_domain(norm=norm, p=p, origin=origin, num_columns=d, size=size, T=float)


def _np_entry(name: str, make: Callable[[Draw, Any], Case], bounded: bool, **kw: Any) -> None:
    @st.composite
    def build(draw: Draw) -> Case:
        dom = draw(_array2_domain(bounded))
        return make(draw, dom)

    register(Entry(name, kw.pop("kind", "T"), build(), **kw))


def _np_clamp(draw: Draw, dom: Any) -> Case:
    p = draw(st.sampled_from([1, 2]))
    norm = draw(st.sampled_from([1.0, 0.5, 1e-3]) | st.floats(1e-3, 1e3))
    origin = draw(
        st.none() | st.lists(st.floats(-10, 10), min_size=dom.num_columns, max_size=dom.num_columns)
    )
    return attempt(lambda: dp.numpy.make_np_clamp(dom, dp.symmetric_distance(), norm, p, origin))


_np_entry("make_np_clamp", _np_clamp, False, formula=d_identity)
_np_entry(
    "make_np_count",
    lambda draw, dom: Case(dp.numpy.make_np_count(dom, dp.symmetric_distance())),
    False,
    formula=lambda c, d: Q(0) if c.obj.input_domain.size is not None else Q(d),
)


def _np_sum_formula(c: Case, d: Any) -> Any:
    """The sensitivity term of make_np_sum's docstring, bounded below (‖o‖_2 >= ‖o‖_∞)."""
    dom = c.obj.input_domain
    R = Q(dom.norm)
    o = [abs(Q(v)) for v in dom.origin]
    o_norm = sum(o, Q(0)) if dom.p == 1 else max(o, default=Q(0))
    if dom.size is not None:
        return Q(d // 2) * 2 * R
    return Q(d) * (R + o_norm)


_np_entry(
    "make_np_sum",
    lambda draw, dom: attempt(lambda: dp.numpy.make_np_sum(dom, dp.symmetric_distance())),
    True,
    formula=_np_sum_formula,
)
# the SSCP keeps the symmetric distance as a count of changed records, interpreted by the
# mechanism that follows (make_private_pca bounds the matrix's sensitivity from the domain's
# norm): its rows are not records, so law 1's multiset-of-rows distance does not apply
_np_entry(
    "make_np_sscp",
    lambda draw, dom: attempt(lambda: dp.numpy.make_np_sscp(dom, dp.symmetric_distance())),
    True,
    formula=d_identity,
    restrict=lambda c, x, x2: False,
)


def _np_private_sum(draw: Draw, dom: Any) -> Case:
    measure = dp.max_divergence() if dom.p == 1 else dp.zero_concentrated_divergence()
    scale = draw(scales())
    p = {"scale": scale, "zcdp": dom.p == 2, "sum": lambda d: _np_sum_formula(Case(t), d)}
    t = dp.numpy.make_np_sum(dom, dp.symmetric_distance())
    return attempt(
        lambda: dp.numpy.make_private_np_sum(dom, dp.symmetric_distance(), measure, scale), p
    )


def _noisy_formula(c: Case, d: Any) -> Any:
    """Laplace: ε >= Δ/scale; Gaussian: ρ >= Δ²/(2 scale²), at the sum's sensitivity Δ."""
    delta, s = c.p["sum"](d), Q(c.p["scale"])
    return delta * delta / (2 * s * s) if c.p["zcdp"] else delta / s


_np_entry("make_private_np_sum", _np_private_sum, True, kind="M", formula=_noisy_formula)


def _np_private_mean(draw: Draw, dom: Any) -> Case:
    p_norm = draw(st.sampled_from([1, 2]))
    norm = draw(st.sampled_from([1.0, 0.5]) | st.floats(1e-2, 1e2))
    scale = draw(scales())
    sized = dp.numpy.array2_domain(num_columns=dom.num_columns, size=3, T=float)
    clamp = dp.numpy.make_np_clamp(sized, dp.symmetric_distance(), norm, p_norm)
    t = dp.numpy.make_np_sum(*clamp.output_space)
    from opendp_lite import _arith

    s_sum = Fraction(_arith.up(_arith.q(scale) * 3))  # the sum's scale, as the mean rounds it
    p = {"scale": s_sum, "zcdp": p_norm == 2, "sum": lambda d: _np_sum_formula(Case(t), d)}
    return attempt(
        lambda: dp.numpy.make_private_np_mean(sized, dp.symmetric_distance(), scale, norm, p_norm),
        p,
    )


_np_entry("make_private_np_mean", _np_private_mean, False, kind="M", formula=_noisy_formula)


def _pca(draw: Draw) -> Case:
    from opendp_lite.extras.sklearn.decomposition import make_private_pca

    d, n = draw(st.integers(1, 3)), draw(st.integers(2, 50))
    unit = draw(st.sampled_from([1.0, 0.1, 4.0]) | st.floats(0.01, 10))
    norm = draw(st.sampled_from([1.0, 10.0]) | st.floats(0.1, 100))
    bounded = draw(st.booleans())
    dom = (
        dp.numpy.array2_domain(norm=norm, p=2, size=n, num_columns=d, T=float)
        if bounded
        else dp.numpy.array2_domain(size=n, num_columns=d, T=float)
    )
    pca = make_private_pca(dom, dp.symmetric_distance(), unit, norm=None if bounded else norm)
    return Case(pca, {"unit": unit})


register(
    Entry(
        "make_private_pca",
        "M",
        fixed(_pca),
        # calibrated: one changed record (d_in = 2) costs at most unit_epsilon, and more than 0
        formula=lambda c, d: lambda loss: 0 < loss and (d != 2 or loss <= c.p["unit"]),
    )
)


def _theil_sen(draw: Draw) -> Case:
    from opendp_lite.extras.sklearn.linear_model import make_private_theil_sen

    runs, scale = draw(st.integers(1, 3)), draw(scales())
    measure = draw(st.sampled_from([dp.max_divergence(), dp.zero_concentrated_divergence()]))
    meas = make_private_theil_sen(measure, (0.0, 10.0), (-5.0, 5.0), scale, runs, 20)
    return Case(meas, {"runs": runs, "scale": scale, "zcdp": measure != dp.max_divergence()})


def _theil_sen_formula(c: Case, d: Any) -> Any:
    e = 2 * c.p["runs"] * Q(d) / Q(c.p["scale"])  # each median, at 2·runs·d_in
    return 2 * e * e / 8 if c.p["zcdp"] else 2 * e


register(Entry("make_private_theil_sen", "M", fixed(_theil_sen), formula=_theil_sen_formula))


# ----------------------------------------------------------------------------------------------
# the table API's constructors (dp.m.make_private_lazyframe & co.: opendp_lite/table/)


def _table_space(draw: Draw, frame: bool = True) -> tuple[Any, Any, Any]:
    """A frame domain of two columns (A: f64, B: i32) with a row bound, a symmetric metric
    (bare, or as a frame distance if ``frame``), and an empty Polars plan of that schema."""
    import polars as pl

    from opendp_lite.table.dp_namespace import ensure_registered

    ensure_registered()
    dom = dp.lazyframe_domain(
        [
            dp.series_domain("A", dp.atom_domain(T=float)),
            dp.series_domain("B", dp.atom_domain(T=dp.i32)),
        ]
    )
    dom = dp.with_margin(dom, dp.polars.Margin(by=[], max_length=1000))
    metric = dp.symmetric_distance()
    if frame and draw(st.booleans()):
        metric = dp.frame_distance(metric)
    return dom, metric, pl.LazyFrame(schema={"A": pl.Float64, "B": pl.Int32})


def _table_aggs(draw: Draw) -> tuple[list[Any], list[tuple[Fraction, Fraction]], float]:
    """Aggregates (a count, an integer sum, or both), each with its scale or none, with
    ``(sensitivity at one row, scale)`` of each (scale ``g·Δ`` under the global scale ``g``)."""
    import polars as pl

    from opendp_lite import _arith
    from opendp_lite.table.dp_namespace import len as dp_len

    g = draw(scales(0.1, 100.0))
    kinds = draw(st.sampled_from([("len",), ("sum",), ("len", "sum")]))
    exprs, terms = [], []
    for k in kinds:
        s = draw(st.none() | scales(0.1, 100.0))
        if k == "len":
            exprs.append(dp_len(scale=s, signed=True))
            sens = Q(1)
        else:
            lo = draw(st.integers(-5, 4))
            hi = draw(st.integers(lo + 1, 5))
            exprs.append(pl.col("B").fill_null(0).dp.sum((lo, hi), scale=s))
            sens = Q(max(abs(lo), abs(hi)))
        # under the global scale, the noise scale is g·Δ rounded up (analysis.scales_of):
        # the map is that of the noise added
        terms.append((sens, Q(_arith.mul_up(g, _arith.up(sens))) if s is None else Q(s)))
    return exprs, terms, g


def _table_formula(c: Case, d: Any) -> Any:
    """The composed map: per aggregate, ``d·Δ/s`` (pure DP) or ``(d·Δ/s)²/2`` (zCDP), summed."""
    parts = [Q(d) * sens / s for sens, s in c.p["terms"]]
    return sum(x * x / 2 for x in parts) if c.p["zcdp"] else sum(parts)


def _private_lazyframe(draw: Draw) -> Case:
    dom, metric, seed = _table_space(draw)
    exprs, terms, g = _table_aggs(draw)
    zcdp = draw(st.booleans())
    measure = dp.zero_concentrated_divergence() if zcdp else dp.max_divergence()
    return attempt(
        lambda: dp.m.make_private_lazyframe(dom, metric, measure, seed.select(*exprs), g),
        {"terms": terms, "zcdp": zcdp},
    )


def _private_expr(draw: Draw) -> Case:
    dom, metric, _ = _table_space(draw)
    exprs, terms, g = _table_aggs(draw)
    zcdp = draw(st.booleans())
    measure = dp.zero_concentrated_divergence() if zcdp else dp.max_divergence()
    wild = dp.wild_expr_domain(dom.series_domains, dp.polars.Margin(by=[], max_length=1000))
    dp.enable_features("contrib")  # with honest-but-curious (the laws' fixture), as in OpenDP
    return attempt(
        lambda: dp.m.make_private_expr(wild, metric, measure, exprs[0], g),
        {"terms": terms[:1], "zcdp": zcdp},
    )


register(Entry("make_private_lazyframe", "M", fixed(_private_lazyframe), formula=_table_formula))
register(Entry("make_private_expr", "M", fixed(_private_expr), formula=_table_formula))


def _collected(x: Any, y: Any) -> Any:
    """A LazyFrame output as its columns (law 1 compares the multisets of rows)."""
    return y.collect().to_dict(as_series=False)


def _stable_lazyframe(draw: Draw) -> Case:
    import polars as pl

    # law 1 reads the output distance as rows: symmetric_distance (a frame distance's map is
    # the same identity, on bound lists)
    dom, metric, seed = _table_space(draw, frame=False)
    k = draw(st.integers(-6, 6))
    plan = draw(
        st.sampled_from(
            [
                seed.with_columns(C=pl.col("A") * 2),
                seed.filter(pl.col("B") > k),
                seed.select(pl.col("B") + k, pl.col("A").clip(-1.0, 1.0)),
                seed.with_columns(pl.col("B").fill_null(k)).filter(pl.col("A") < 0.0),
            ]
        )
    )
    return attempt(lambda: dp.t.make_stable_lazyframe(dom, metric, plan))


def _stable_expr(draw: Draw) -> Case:
    import polars as pl

    dom, metric, _ = _table_space(draw, frame=False)
    k = draw(st.integers(-6, 6))
    expr = draw(
        st.sampled_from([pl.col("A").clip(-1.0, 1.0), pl.col("B") * k, pl.col("B").fill_null(k)])
    )
    wild = dp.wild_expr_domain(dom.series_domains)
    return attempt(lambda: dp.t.make_stable_expr(wild, metric, expr))


register(
    Entry(
        "make_stable_lazyframe", "T", fixed(_stable_lazyframe), formula=d_identity, mask=_collected
    )
)
register(Entry("make_stable_expr", "T", fixed(_stable_expr), formula=d_identity, mask=_collected))


#: public constructors the laws do not reach, each with its reason (none at present)
_BY_PERSON = (
    "its input metric counts individuals (symmetric_id_distance / change_one_id_distance), "
    "whose neighbours the laws' spaces do not generate; its map is checked on whole "
    "individuals added or removed by tests/transformations/test_truncate_property.py"
)
EXEMPT: dict[str, str] = {
    "make_truncate_per_id": _BY_PERSON,
    "make_truncate_num_groups": _BY_PERSON,
    "make_count_per_id": _BY_PERSON,
}


#: constructors whose map is exactly the formula above rounded up once: ``map(d)`` is the
#: least float (or integer) ``>=`` the formula, so it is at most one ulp above the exact value
TIGHT: frozenset[str] = frozenset(
    {
        *(n for n, e in REGISTRY.items() if e.formula is d_identity),
        "make_metric_bounded",
        "make_metric_unbounded",
        "make_resize",
        "make_bounded_int_monotonic_sum",
        "make_bounded_int_ordered_sum",
        "make_bounded_int_split_sum",
        "make_sized_bounded_int_checked_sum",
        "make_sized_bounded_int_monotonic_sum",
        "make_sized_bounded_int_ordered_sum",
        "make_sized_bounded_int_split_sum",
        "make_quantile_score_candidates",
        "make_b_ary_tree",
        "make_lipschitz_float_mul",
        "make_user_transformation",
        "make_laplace",
        "make_base_laplace",
        "make_base_discrete_laplace",
        "make_base_discrete_gaussian",
        "make_geometric",
        "make_noisy_max",
        "make_noisy_top_k",
        "make_report_noisy_max_gumbel",
        "make_private_quantile",
        "make_exponential",
        "make_sparse_vector",
        "make_laplace_threshold",
        "make_canonical_noise",
        "make_alp_queryable",
        "make_user_measurement",
        "make_random_dp",
        "make_random_dp_as_worst_case",
        "make_composition",
        "make_basic_composition",
        "make_adaptive_composition",
        "make_sequential_composition",
        "make_privacy_filter",
        "make_approximate",
        "make_pureDP_to_zCDP",
        "make_select_private_candidate",
        "make_local_release",
        "make_chain_tt",
        "make_chain_mt",
        "make_chain_pm",
        "make_np_count",
        "make_private_theil_sen",
    }
)
