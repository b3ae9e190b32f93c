"""opendp_lite.extras.numpy: domain membership and refusals, exact values of the maps and
functions (recomputed here in rationals), and the clamp's guarantee under adversarial rows."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite.errors import InvalidParameter, NotImplementedForType, NotInDomain
from opendp_lite.extras import numpy as dnp
from opendp_lite.samplers import rng

SYM = dp.symmetric_distance()
Q = Fraction


def _no_randomness(n: int) -> bytes:
    raise AssertionError("randomness drawn before the input was checked")


# ----------------------------------------------------------------------------------------------
# domains


def test_array2_domain_defaults_follow_opendp() -> None:
    assert dnp.array2_domain(T=float).nan is True  # as OpenDP: float data may hold NaN
    assert dnp.array2_domain(T="i32").nan is False
    bounded = dnp.array2_domain(norm=1.0, p=2, T=float)
    assert bounded.nan is False and bounded.origin == 0.0
    assert dnp.array2_domain(norm=1.0, p=1, num_columns=2, T=float).origin == (0.0, 0.0)
    assert dnp.array2_domain(norm=1.0, p=1, origin=[1, 2], T=float).num_columns == 2
    assert dnp.array2_domain(norm=1.0, p=1, origin=np.array([1, 2])).T == "f64"
    assert dnp.array2_domain(T=float).descriptor.size is None


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"norm": 1.0, "T": float}, InvalidParameter),  # p missing
        ({"norm": -1.0, "p": 1, "T": float}, InvalidParameter),
        ({"norm": math.inf, "p": 1, "T": float}, InvalidParameter),
        ({"norm": 1.0, "p": 3, "T": float}, InvalidParameter),
        ({"origin": [0.0], "T": float}, InvalidParameter),  # origin without a norm
        ({"norm": 1.0, "p": 1, "origin": 1.0, "T": float}, InvalidParameter),
        ({"norm": 1.0, "p": 1, "origin": [0.0, math.nan], "T": float}, InvalidParameter),
        ({"norm": 1.0, "p": 1, "origin": [0.0], "num_columns": 2, "T": float}, InvalidParameter),
        ({"norm": 1.0, "p": 1, "nan": True, "T": float}, InvalidParameter),
        ({"norm": 1.0, "p": 1, "T": "i32"}, NotImplementedForType),
        ({"size": -1, "T": float}, InvalidParameter),
        ({"num_columns": 1.5, "T": float}, InvalidParameter),
        ({}, InvalidParameter),  # no T
        ({"T": str}, NotImplementedForType),
        ({"norm": 1.0, "p": 1, "origin": [0.1], "T": "f32"}, InvalidParameter),  # not an f32
    ],
)
def test_array2_domain_refuses_bad_parameters(kwargs: dict, error: type) -> None:
    with pytest.raises(error):
        dnp.array2_domain(**kwargs)


@pytest.mark.parametrize(
    "x",
    [
        [[0.0, 1.0]],  # a list, not an ndarray
        np.ma.masked_array(np.zeros((2, 2)), mask=[[True, False], [False, False]]),
        np.zeros((2, 2), dtype=np.complex128),
        np.zeros((2, 2), dtype=bool),
        np.zeros(2),
        np.zeros((2, 2, 1)),
        np.zeros((2, 3)),  # wrong number of columns
        np.zeros((3, 2)),  # wrong size
        np.array([[0.0, math.nan], [0.0, 0.0]]),
        np.zeros((2, 2)).view(np.recarray),  # an ndarray subclass
    ],
)
def test_array2_members_are_refused_outside_the_domain(x: object) -> None:
    dom = dnp.array2_domain(num_columns=2, size=2, nan=False, T=float)
    assert not dom.member(x)
    with pytest.raises(NotInDomain):
        dom._normalize(x)


def test_array2_float_domain_converts_integers_and_narrower_floats() -> None:
    dom = dnp.array2_domain(num_columns=2, T=float)
    got = dom._normalize(np.array([[1, 2]], dtype=np.int64))
    assert got.dtype == np.float64 and got.tolist() == [[1.0, 2.0]]
    assert dom._normalize(np.array([[0.5, 1.5]], dtype=np.float32)).dtype == np.float64
    f32 = dnp.array2_domain(T="f32")
    assert not f32.member(np.zeros((1, 1)))  # f64 into f32 would round: refused
    assert not dnp.array2_domain(T="i32").member(np.zeros((1, 1), dtype=np.int64))


def test_array2_norm_membership_is_exact_at_the_boundary() -> None:
    dom = dnp.array2_domain(norm=1.0, p=1, num_columns=2, T=float)
    assert dom.member(np.array([[0.5, 0.5], [-0.25, 0.75], [1.0, 0.0]]))
    assert not dom.member(np.array([[0.5, math.nextafter(0.5, 1.0)]]))
    l2 = dnp.array2_domain(norm=5.0, p=2, origin=[1.0, 1.0], T=float)
    assert l2.member(np.array([[4.0, 5.0]]))  # (3, 4) from the origin: exactly 5
    assert not l2.member(np.array([[4.0, math.nextafter(5.0, 6.0)]]))
    # 0.6 and 0.8 are not exactly 3/5 and 4/5: the exact test sees their squares sum above 1
    exact = Q(0.6) ** 2 + Q(0.8) ** 2
    unit = dnp.array2_domain(norm=1.0, p=2, T=float)
    assert unit.member(np.array([[0.6, 0.8]])) == (exact <= 1)
    assert not unit.member(np.array([[math.inf, 0.0]]))
    # OpenDP 0.16 accepts both: its float norm of (1, 1e-9) rounds to 1, and NaN > 1 is False
    assert not unit.member(np.array([[1.0, 1e-9]]))
    assert not dnp.array2_domain(norm=1.0, p=2, nan=False, T=float).member(
        np.array([[math.nan, 0.0]])
    )
    # a finite row whose float squares overflow is still decided exactly
    huge = dnp.array2_domain(norm=1.5e200, p=2, T=float)
    assert huge.member(np.array([[1e200, 1e200]]))
    assert not huge.member(np.array([[1.1e200, 1.1e200]]))


def test_arrayd_domain() -> None:
    dom = dnp.arrayd_domain(shape=(2, 3), T="i64")
    assert dom.member(np.zeros((2, 3), dtype=np.int64))
    assert not dom.member(np.zeros((2, 3)))
    assert not dom.member(np.zeros((3, 2), dtype=np.int64))
    assert not dom.member([[0, 0, 0], [0, 0, 0]])
    with pytest.raises(InvalidParameter):
        dnp.arrayd_domain(shape=(0, 2), T=float)
    with pytest.raises(InvalidParameter):
        dnp.arrayd_domain(shape=[2, 2], T=float)  # type: ignore[arg-type]


def test_constructors_refuse_unusable_spaces() -> None:
    unbounded = dnp.array2_domain(num_columns=2, T=float)
    with pytest.raises(InvalidParameter):
        dnp.make_np_sum(unbounded, SYM)
    with pytest.raises(InvalidParameter):
        dnp.make_np_sscp(dnp.array2_domain(norm=1.0, p=2, T=float), SYM)  # unknown columns
    with pytest.raises(NotImplementedForType):
        dnp.make_np_count(unbounded, dp.insert_delete_distance())
    with pytest.raises(NotImplementedForType):
        dnp.make_np_clamp(dp.vector_domain(dp.atom_domain(T=float, nan=False)), SYM, 1.0, 2)
    with pytest.raises(NotImplementedForType):
        dnp.make_np_clamp(dnp.array2_domain(T="i32"), SYM, 1.0, 2)
    with pytest.raises(InvalidParameter):
        dnp.make_private_np_mean(unbounded, SYM, 1.0, norm=1.0)  # no size


# ----------------------------------------------------------------------------------------------
# clamp


def test_clamp_values() -> None:
    t = dnp.make_np_clamp(dnp.array2_domain(num_columns=2, T=float), SYM, 1.0, 1)
    y = t(np.array([[0.25, -0.5], [3.0, -1.0], [math.nan, 0.5], [-math.inf, 0.0]]))
    assert y[0].tolist() == [0.25, -0.5]  # in the ball: unchanged
    assert y[1].tolist() == pytest.approx([0.75, -0.25], rel=1e-11)
    assert y[2].tolist() == pytest.approx([0.0, 0.5], rel=1e-11)  # NaN -> 0, not scaled up
    assert y[3].tolist() == pytest.approx([-1.0, 0.0], rel=1e-11)
    assert t.output_domain.member(y)
    assert t.map(3) == 3


rows = st.lists(
    st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([5e-324, -5e-324, 1.7976931348623157e308, 1e-310]),
    min_size=3,
    max_size=3,
)


@settings(max_examples=150, deadline=None)
@given(
    x=st.lists(rows, min_size=1, max_size=6),
    norm=st.floats(2.0**-400, 1e300) | st.sampled_from([1.0, 1e-300, 0.1]),
    p=st.sampled_from([1, 2]),
    origin=st.none() | st.lists(st.floats(-1e300, 1e300), min_size=3, max_size=3),
    T=st.sampled_from(["f64", "f32"]),
)
def test_clamp_output_is_always_in_the_ball(
    x: list[list[float]], norm: float, p: int, origin: list[float] | None, T: str
) -> None:
    """Whatever the rows (NaN, ±inf, subnormal, huge) and origin, every output row passes the
    exact membership test, and rows already in the ball are returned unchanged."""
    dtype = np.float32 if T == "f32" else np.float64
    if T == "f32" and origin is not None:
        origin = [float(np.float32(v)) for v in origin if math.isfinite(np.float32(v))]
        if len(origin) != 3:
            return
    try:
        t = dnp.make_np_clamp(dnp.array2_domain(num_columns=3, T=T), SYM, norm, p, origin)
    except InvalidParameter:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = np.array(x).astype(dtype)
    y = t(data)
    assert y.dtype == dtype and y.shape == data.shape
    assert t.output_domain.member(y)
    o = np.zeros(3) if origin is None else np.array(origin)
    for row_in, row_out in zip(data, y, strict=True):
        if np.isfinite(row_in).all():
            dist = sum(abs(Q(float(a)) - Q(float(b))) ** p for a, b in zip(row_in, o, strict=True))
            if dist <= Q(norm) ** p:
                assert row_in.tolist() == row_out.tolist()


# ----------------------------------------------------------------------------------------------
# count, sum, SSCP: exact values


def test_count() -> None:
    unsized = dnp.make_np_count(dnp.array2_domain(T=float), SYM)
    assert unsized(np.zeros((7, 2))) == 7 and unsized.map(3) == 3
    sized = dnp.make_np_count(dnp.array2_domain(size=4, T=float), SYM)
    assert sized(np.zeros((4, 1))) == 4 and sized.map(3) == 0
    assert unsized.output_domain == dp.atom_domain(T="i32")


def _grid_sum(col: np.ndarray, g: int) -> Fraction:
    return sum((Q(math.trunc(Q(float(v)) * 2**g)) for v in col), Q(0)) / 2**g


def test_sum_is_the_exact_grid_sum_rounded_once() -> None:
    dom = dnp.array2_domain(norm=1.0, p=2, num_columns=2, size=5, T=float)
    t = dnp.make_np_sum(dom, SYM)
    x = np.array([[0.1, 0.2], [0.3, -0.9], [1 / 3, 2 / 3], [-0.6, 0.75], [0.0, 1e-20]])
    assert dom.member(x)
    g = 46 - math.frexp(1.0)[1]
    assert t(x).tolist() == [float(_grid_sum(x[:, j], g)) for j in range(2)]
    # sized, origin 0: ⌊d_in/2⌋·min(2R + √2·2^-g, 2R), the sums are exact for n·K <= 2^53
    assert t.map(2) == 2.0 and t.map(5) == 4.0
    assert t.output_metric == dp.l2_distance(T="f64")


def test_sum_maps_by_hand() -> None:
    # unsized, p = 1, origin (1, -2): d_in·(R + ‖o‖_1) + d·r with r = 2·e(2^40·M')
    dom = dnp.array2_domain(norm=0.5, p=1, origin=[1.0, -2.0], T=float)
    t = dnp.make_np_sum(dom, SYM)
    from opendp_lite.transformations.sum import FloatSumPlan

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plan = FloatSumPlan("x", "f64", -2.5, 2.5, 1 << 40)
    exact = 3 * (Q(0.5) + 3) + 2 * Q(plan.relax)
    m = t.map(3)
    assert Q(m) >= exact and Q(math.nextafter(m, 0)) < exact
    assert t.output_metric == dp.l1_distance(T="f64")


def test_sscp_is_exact_on_its_grid() -> None:
    dom = dnp.array2_domain(norm=2.0, p=2, num_columns=3, T=float)
    t = dnp.make_np_sscp(dom, SYM)
    rng_np = np.random.default_rng(7)  # data only, not randomness of a mechanism
    x = rng_np.uniform(-1, 1, size=(300, 3))
    x /= np.maximum(1.0, np.linalg.norm(x, axis=1, keepdims=True))
    assert dom.member(x)
    g = 40 - math.frexp(2.0)[1]
    K = [[math.trunc(Q(float(v)) * 2**g) for v in row] for row in x]
    want = [
        [float(Q(sum(r[a] * r[b] for r in K), 2 ** (2 * g))) for b in range(3)] for a in range(3)
    ]
    got = t(x)
    assert got.tolist() == want
    assert t.output_domain.member(got) and t.map(4) == 4
    assert t.output_domain.norm == 2.0 and t.output_domain.num_features == 3


def test_sscp_records_the_norm_around_zero() -> None:
    dom = dnp.array2_domain(norm=1.0, p=2, origin=[3.0, 4.0], T=float)
    t = dnp.make_np_sscp(dom, SYM)
    assert t.output_domain.norm == 6.0  # R + ‖o‖_2 = 1 + 5


def test_private_np_sum_and_mean_refuse_before_randomness() -> None:
    dom = dnp.array2_domain(norm=1.0, p=1, num_columns=2, size=3, T=float)
    m = dnp.make_private_np_sum(dom, SYM, dp.max_divergence(), 1.0)
    mean = dnp.make_private_np_mean(
        dnp.array2_domain(num_columns=2, size=3, T=float), SYM, 1.0, 1.0, 1
    )
    with rng.scripted_randomness(_no_randomness):
        for bad in (
            np.ones((3, 2)),
            np.zeros((2, 2)),
            [[0.0, 0.0]] * 3,
            np.zeros((3, 2), dtype="U1"),
        ):
            with pytest.raises(NotInDomain):
                m(bad)
        with pytest.raises(NotInDomain):
            mean(np.zeros((3, 2), dtype=np.complex64))
        with pytest.raises(NotInDomain):
            mean(np.ma.masked_array(np.zeros((3, 2))))


def test_private_sum_measure_must_match_p() -> None:
    dom = dnp.array2_domain(norm=1.0, p=1, num_columns=2, T=float)
    with pytest.raises(NotImplementedForType):
        dnp.make_private_np_sum(dom, SYM, dp.zero_concentrated_divergence(), 1.0)
    with pytest.raises(NotImplementedForType):
        dnp.make_private_np_sum(dom, SYM, dp.fixed_smoothed_max_divergence(), 1.0)


def test_law_1_catches_an_understated_np_sum() -> None:
    """The law suite's neighbouring 2-d arrays reach the sum's sensitivity: a sum claiming 0.9
    of its map is caught (so the passing law on the real map is not vacuous)."""
    from tests.laws.test_constructor_laws import _broken, _finds_counterexample, stability

    broken = _broken("make_np_sum", lambda t, d: t.stability_map(d) * 0.9)
    assert _finds_counterexample(stability, broken)
    broken_clamp = _broken("make_np_clamp", lambda t, d: d // 2)
    assert _finds_counterexample(stability, broken_clamp)


# ----------------------------------------------------------------------------------------------
# the vectorised paths against the exact, row-by-row rules


def _boundary_rows(
    gen: np.random.Generator, n: int, d: int, R: float, p: int, o: np.ndarray
) -> np.ndarray:
    """Rows at distance ≈ R from ``o`` (rounded to floats), each nudged by -3..3 ulps per value,
    plus rows well inside, well outside, NaN, ±inf and rows whose squares overflow."""
    v = gen.normal(size=(n, d))
    v /= np.linalg.norm(v, ord=p, axis=1, keepdims=True)
    x = o + v * R
    steps = gen.integers(-3, 4, size=x.shape)
    for _ in range(3):
        x = np.where(steps > 0, np.nextafter(x, np.inf), x)
        x = np.where(steps < 0, np.nextafter(x, -np.inf), x)
        steps = steps - np.sign(steps)
    x[0] = o
    x[1] = o + v[1] * R * 0.5
    x[2] = o + v[2] * R * 3.0
    x[3, 0] = math.nan
    x[4, 1] = math.inf
    x[5] = 1e200
    return x


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("origin", [None, (0.5, -3.0, 1e-3)])
@pytest.mark.parametrize("R", [1.0, 0.3, 2.0**-450, 1e150])
def test_row_norm_test_equals_the_exact_decision_at_the_boundary(
    p: int, origin: tuple[float, ...] | None, R: float
) -> None:
    """The float statistic (einsum, any order) plus the exact band decide every row as the
    exact rational test does, including rows within a few ulps of the sphere."""
    gen = np.random.default_rng(p * 7 + (origin is None))  # data only
    o = np.zeros(3) if origin is None else np.array(origin)
    x = _boundary_rows(gen, 3000, 3, R, p, o)
    oo: tuple[float, ...] | float = 0.0 if origin is None else origin
    got = dnp._rows_in_ball(x, oo, R, p)
    want = [bool(np.isfinite(row).all()) and dnp._exact_in_ball(row, oo, R, p) for row in x]
    assert got.tolist() == want
    assert 0 < sum(want) < len(want)  # both sides of the boundary are exercised
    dom = dnp.array2_domain(norm=R, p=p, origin=origin, num_columns=3, T=float)
    assert dom.member(x[np.array(want)]) and not dom.member(x[~np.array(want)][:1])


@pytest.mark.parametrize("p", [1, 2])
def test_row_norm_test_decides_repeated_rows_each_as_the_exact_test(p: int) -> None:
    """Rows in the band are decided once per distinct row: a shuffled array of repeated rows
    on both sides of the sphere (and -0.0 for 0.0) gets each row's own exact decision."""
    gen = np.random.default_rng(11 + p)  # data only
    base = _boundary_rows(gen, 40, 3, 1.0, p, np.zeros(3))
    base[6] = np.where(base[7] == 0.0, -0.0, base[7])
    x = base[gen.integers(0, len(base), size=400)]
    got = dnp._rows_in_ball(x, 0.0, 1.0, p)
    want = [bool(np.isfinite(row).all()) and dnp._exact_in_ball(row, 0.0, 1.0, p) for row in x]
    assert got.tolist() == want
    assert 0 < sum(want) < len(want)


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("origin", [None, (0.5, -3.0, 0.125)])
@pytest.mark.parametrize("T", ["f64", "f32"])
def test_clamp_of_many_rows_follows_the_row_rule(
    p: int, origin: tuple[float, ...] | None, T: str
) -> None:
    """Whole-array clamping (factor from the row statistic, every row scaled at once): rows in
    the ball come out bit for bit, every other finite row is moved towards ``o`` onto the
    sphere (norm in [R(1 − 2^-9), R], exactly), along its direction, and NaN/inf/overflowing
    rows take the row-by-row path; the output is a member."""
    R = 1.0
    dtype = np.float32 if T == "f32" else np.float64
    gen = np.random.default_rng(11 + p)  # data only
    o = np.zeros(3) if origin is None else np.array(origin)
    x = _boundary_rows(gen, 4000, 3, R, p, o)
    x[6:500] = o + gen.normal(size=(494, 3)) * 10.0 ** gen.uniform(-3, 3, size=(494, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 1e200 overflows f32 to inf: an infinite row
        x = x.astype(dtype)
    t = dnp.make_np_clamp(dnp.array2_domain(num_columns=3, T=T), SYM, R, p, origin)
    y = t(x)
    assert y.dtype == dtype and t.output_domain.member(y)
    oq = [Q(float(v)) for v in o]
    for row_in, row_out in zip(x, y, strict=True):
        if not np.isfinite(row_in).all():
            continue
        dev = [Q(float(a)) - c for a, c in zip(row_in, oq, strict=True)]
        dist = sum(abs(v) ** p for v in dev)
        if dist <= Q(R) ** p:
            assert row_in.tolist() == row_out.tolist()
            continue
        out = [Q(float(a)) - c for a, c in zip(row_out, oq, strict=True)]
        norm_out = sum(abs(v) ** p for v in out)
        assert Q(R * (1 - 2.0**-9)) ** p <= norm_out <= Q(R) ** p
        if T == "f64" and row_in.max() < 1e100:
            k = max(range(3), key=lambda j: abs(dev[j]))
            ratio = out[k] / dev[k]
            assert all(abs(a - ratio * b) <= Q(2) ** -40 for a, b in zip(out, dev, strict=True))


def test_normed_domain_names_nan() -> None:
    dom = dnp.array2_domain(norm=1.0, p=2, num_columns=2, T=float)
    with pytest.raises(NotInDomain, match="NaN is not a member"):
        dom._normalize(np.array([[0.0, 0.0], [math.nan, 0.0]]))
    with pytest.raises(NotInDomain, match="row 1 is not within L2"):
        dom._normalize(np.array([[0.0, 0.0], [1.0, 1.0]]))


@pytest.mark.parametrize("scale, g", [(1.0, 30), (2.0**-1040, 1070)])
def test_grid_column_sums_equal_the_column_grid_sums(scale: float, g: int) -> None:
    from opendp_lite.transformations._aggregate import grid_sums

    gen = np.random.default_rng(5)  # data only
    x = gen.uniform(-1, 1, size=(dnp._SUM_ROWS * 2 + 3, 3)) * scale
    x[0] = -0.5 * scale  # a negative grid value truncated toward zero
    want = [grid_sums(np.ascontiguousarray(x[:, j]), g) for j in range(3)]
    assert dnp.grid_column_sums(x, g) == want
    assert dnp.grid_column_sums(x.astype(np.float32), g) == [
        grid_sums(np.ascontiguousarray(x[:, j].astype(np.float32)), g) for j in range(3)
    ]


def test_sscp_is_exact_across_blocks() -> None:
    """More rows than one block of the product (2^13), values spanning the 40-bit grid."""
    gen = np.random.default_rng(9)  # data only
    x = gen.uniform(-1, 1, size=(dnp._SSCP_ROWS + 17, 2))
    x[::7] *= 2.0**-30
    g = 39
    K = [[math.trunc(Q(float(v)) * 2**g) for v in row] for row in x]
    want = [[sum(r[a] * r[b] for r in K) for b in range(2)] for a in range(2)]
    assert dnp.exact_sscp(x, g).tolist() == want
