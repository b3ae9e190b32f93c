"""make_laplace / make_gaussian / make_geometric: maps, outputs, refusals.

Maps are checked against exact rational arithmetic (never below, at most one float above)
and against OpenDP 0.16 on a grid of scales, k, d_in and sizes.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import gmpy2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite.errors import (
    FailedMap,
    InvalidParameter,
    NotImplementedForType,
    NotInDomain,
)
from opendp_lite.samplers import rng

KMIN = {"f64": -1074, "f32": -149}


# ------------------------------------------------------------------------------------------
# helpers


def space(T: str, dist: str, size: int | str | None = "atom"):
    atom = dp.atom_domain(T=T, nan=False)
    if size == "atom":
        return atom, dp.absolute_distance(T="f64" if T.startswith("f") else T)
    metric = dp.l1_distance if dist == "laplace" else dp.l2_distance
    return dp.vector_domain(atom, size=size), metric(T="f64")


def make(dist: str, *args, **kwargs):
    return (dp.m.make_laplace if dist == "laplace" else dp.m.make_gaussian)(*args, **kwargs)


def exact_laplace(d_in: float, scale: float, k: int, kmin: int, n: int) -> Fraction:
    pen = n * (Fraction(2) ** k - Fraction(2) ** kmin)
    return (Fraction(d_in) + pen) / Fraction(scale)


def gaussian_upper(d_in: float, scale: float, k: int, kmin: int, n: int) -> Fraction:
    """An upper bound within 2^-500 relative of the exact ρ (√n at 600 bits, rounded up)."""
    ctx = gmpy2.context(precision=600, round=gmpy2.RoundUp)
    with gmpy2.context(ctx):
        per = gmpy2.mpq(2) ** k - gmpy2.mpq(2) ** kmin
        root = gmpy2.mpq(gmpy2.sqrt(gmpy2.mpfr(n)))
    d = gmpy2.mpq(d_in) + root * per
    rho = d * d / (2 * gmpy2.mpq(scale) ** 2)
    return Fraction(int(rho.numerator), int(rho.denominator))


def assert_tight_upper(ours: float, exact: Fraction) -> None:
    """ours >= exact, and the float just below ours is < exact (ours = exact rounded up)."""
    assert Fraction(ours) >= exact, (ours, float(exact))
    if ours > 0:
        assert Fraction(math.nextafter(ours, -math.inf)) < exact, (ours, float(exact))


# ------------------------------------------------------------------------------------------
# seed numbers and OpenDP's k-penalty table


def test_k_penalty_table_matches_the_seed() -> None:
    sp = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    table = {
        -1074: 0.0,
        -1073: 4.940656458412465e-324,
        -100: 7.888609052210118e-31,
        -1: 0.5,
        0: 1.0,
        1: 2.0,
    }
    for k, want in table.items():
        got = dp.m.make_laplace(*sp, scale=1.0, k=k).map(0.0)
        assert got == want, (k, got)
        assert_tight_upper(got, exact_laplace(0.0, 1.0, k, -1074, 1))


@pytest.mark.parametrize("dist", ["laplace", "gaussian"])
@pytest.mark.parametrize("T", ["f64", "f32"])
@pytest.mark.parametrize("size", ["atom", 1, 3, 10])
@pytest.mark.parametrize("k", [None, "kmin+1", -100, -10, -1, 0, 3])
def test_float_maps_are_exact_rounded_up(dist, T, size, k) -> None:
    kmin = KMIN[T]
    k_val = kmin + 1 if k == "kmin+1" else k
    n = 1 if size == "atom" else size
    for scale in (0.5, 1.0, 3.7, 100.0):
        meas = make(dist, *space(T, dist, size), scale=scale, k=k_val)
        for d_in in (0.0, 0.5, 1.0, 2.3, 1e6):
            got = meas.map(d_in)
            kk = kmin if k_val is None else k_val
            if dist == "laplace":
                assert_tight_upper(got, exact_laplace(d_in, scale, kk, kmin, n))
            else:
                upper = gaussian_upper(d_in, scale, kk, kmin, n)
                assert Fraction(got) >= upper * (1 - Fraction(1, 2**400))
                assert got <= float(upper) * (1 + 4e-16) + 5e-324


@pytest.mark.parametrize("dist", ["laplace", "gaussian"])
def test_int_maps_are_exact_rounded_up(dist) -> None:
    for T in ("i8", "i32", "i64", "u32"):
        for size in ("atom", None, 5):
            meas = make(dist, *space(T, dist, size), scale=0.7)
            for d_in in (0, 1, 2, 17):
                got = meas.map(d_in)
                d = Fraction(d_in)
                exact = d / Fraction(0.7) if dist == "laplace" else d * d / (2 * Fraction(0.7) ** 2)
                assert_tight_upper(got, exact)


def test_seed_rho_for_l2_discrete_gaussian() -> None:
    sp = dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=float)
    got = dp.m.make_base_discrete_gaussian(*sp, scale=1.0).map(d_in=1.414)
    assert got == 0.999698
    assert_tight_upper(got, Fraction(1.414) ** 2 / 2)


# ------------------------------------------------------------------------------------------
# against OpenDP 0.16


def _opendp_space(odp, T: str, dist: str, size):
    if T.startswith("f"):
        atom = odp.atom_domain(T=T, nan=False)
    else:
        atom = odp.atom_domain(T=T)
    if size == "atom":
        return atom, odp.absolute_distance(T="f64" if T.startswith("f") else T)
    metric = odp.l1_distance if dist == "laplace" else odp.l2_distance
    return odp.vector_domain(atom, size=size), metric(T="f64")


def test_maps_agree_with_opendp_on_a_grid() -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    checked = 0
    for dist in ("laplace", "gaussian"):
        for T in ("f64", "f32", "i32", "i64"):
            ks = [None] if T.startswith("i") else [None, KMIN[T] + 1, -100, -10, -1, 0, 2]
            for size in ("atom", 1, 4, 7):
                for k in ks:
                    for scale in (0.5, 1.0, 3.7, 250.0):
                        ours = make(dist, *space(T, dist, size), scale=scale, k=k)
                        o_make = odp.m.make_laplace if dist == "laplace" else odp.m.make_gaussian
                        theirs = o_make(*_opendp_space(odp, T, dist, size), scale=scale, k=k)
                        for d_in in (0.0, 1.0, 2.0, 1.5, 123.25):
                            if T.startswith("i") and size == "atom" and not d_in.is_integer():
                                continue
                            d = int(d_in) if T.startswith("i") and size == "atom" else d_in
                            a, b = ours.map(d), theirs.map(d)
                            assert math.isclose(a, b, rel_tol=1e-9, abs_tol=0), (
                                dist, T, size, k, scale, d_in, a, b)  # fmt: skip
                            checked += 1
    assert checked > 1000


def test_geometric_agrees_with_opendp() -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    for bounds in (None, (0, 10)):
        ours = dp.m.make_geometric(dp.atom_domain(T=int), dp.absolute_distance(T=int), 2.0, bounds)
        theirs = odp.m.make_geometric(
            odp.atom_domain(T=int), odp.absolute_distance(T=int), 2.0, bounds
        )
        for d_in in (0, 1, 3, 10):
            assert ours.map(d_in) == theirs.map(d_in)


# ------------------------------------------------------------------------------------------
# outputs


def test_output_types() -> None:
    lap = dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), 1.0)
    assert type(lap(1.0)) is float
    ilap = dp.m.make_laplace(dp.atom_domain(T=int), dp.absolute_distance(T=int), 1.0)
    assert type(ilap(3)) is int
    vec = dp.m.make_gaussian(*space("f32", "gaussian", None), scale=1.0)
    out = vec(np.array([1.0, 2.0, 3.0], dtype=np.float32))
    assert isinstance(out, np.ndarray) and out.dtype == np.float32 and out.shape == (3,)
    listed = vec([1.0, 2.0, 3.0])  # as in OpenDP, a list in gives a list of Python floats
    assert isinstance(listed, list) and len(listed) == 3
    assert all(type(v) is float for v in listed)
    ivec = dp.m.make_laplace(*space("i16", "laplace", None), scale=1.0)
    out = ivec(np.array([1, 2], dtype=np.int16))
    assert out.dtype == np.int16 and out.shape == (2,)
    assert len(ivec([])) == 0


def test_scale_zero_is_the_identity_and_refuses_positive_d_in() -> None:
    sp = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    meas = dp.m.make_laplace(*sp, scale=0.0)
    assert meas(1.25) == 1.25
    assert meas.map(0.0) == 0.0
    with pytest.raises(FailedMap):
        meas.map(1.0)


def test_coarse_k_puts_outputs_on_the_grid() -> None:
    meas = dp.m.make_laplace(*space("f64", "laplace", 200), scale=1.0, k=-2)
    out = meas(np.full(200, 0.3))
    assert np.all(out * 4 == np.round(out * 4))


def test_integer_outputs_saturate() -> None:
    meas = dp.m.make_laplace(dp.atom_domain(T="i8"), dp.absolute_distance(T="i8"), 1e6)
    outs = {meas(127) for _ in range(30)}
    assert outs <= set(range(-128, 128))
    assert 127 in outs or -128 in outs  # with scale 1e6 nearly every draw is clamped
    u = dp.m.make_laplace(*space("u8", "laplace", None), scale=1e6)(np.zeros(30, dtype=np.uint8))
    assert u.dtype == np.uint8 and set(u.tolist()) <= {0, 255}


def test_float_outputs_saturate_instead_of_inf() -> None:
    meas = dp.m.make_laplace(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), 1e308
    )
    outs = [meas(1.7e308) for _ in range(40)]
    assert all(math.isfinite(o) for o in outs)
    assert max(outs) == 1.7976931348623157e308
    f32 = dp.m.make_gaussian(
        dp.atom_domain(T="f32", nan=False), dp.absolute_distance(T="f32"), 1e40
    )
    assert all(abs(f32(0.0)) <= 3.4028234663852886e38 for _ in range(20))


def _no_randomness(n: int) -> bytes:
    raise AssertionError("randomness drawn before the input was checked")


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_data_raise_before_noise(bad: float) -> None:
    scalar = dp.m.make_laplace(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), 1.0
    )
    vector = dp.m.make_gaussian(*space("f64", "gaussian", None), scale=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with rng.scripted_randomness(_no_randomness):
            with pytest.raises(NotInDomain):
                scalar(bad)
            with pytest.raises(NotInDomain):
                vector([1.0, bad])


def test_scalar_to_vector_measurement_is_a_type_error() -> None:
    meas = dp.m.make_base_laplace(*space("f64", "laplace", None), scale=1.0)
    with pytest.raises(TypeError, match="Vec<f64>"):
        meas(1.0)


# ------------------------------------------------------------------------------------------
# refusals at construction


@pytest.mark.parametrize("scale", [-1.0, math.nan, math.inf, "1"])
def test_bad_scale_refused(scale) -> None:
    with pytest.raises(InvalidParameter, match="scale"):
        dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale)


def test_bad_k_refused() -> None:
    sp = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    for k in (-1075, 1024, 1.5, True):
        with pytest.raises(InvalidParameter, match="k"):
            dp.m.make_laplace(*sp, 1.0, k=k)
    with pytest.raises(InvalidParameter, match="k"):
        dp.m.make_laplace(
            dp.atom_domain(T="f32", nan=False), dp.absolute_distance(T="f32"), 1.0, k=-150
        )
    with pytest.raises(InvalidParameter, match="k is only valid"):
        dp.m.make_laplace(dp.atom_domain(T=int), dp.absolute_distance(T=int), 1.0, k=-3)
    with pytest.raises(InvalidParameter, match="size must be known"):
        dp.m.make_gaussian(*space("f64", "gaussian", None), 1.0, k=-10)
    # the default k needs no size
    dp.m.make_gaussian(*space("f64", "gaussian", None), 1.0, k=-1074)


def test_unsupported_spaces_refused() -> None:
    with pytest.raises(NotImplementedForType):
        dp.m.make_laplace(*space("f64", "gaussian", None), 1.0)  # L2 for Laplace
    with pytest.raises(NotImplementedForType):
        dp.m.make_gaussian(*space("f64", "laplace", None), 1.0)  # L1 for Gaussian
    with pytest.raises(NotImplementedForType):
        dp.m.make_laplace(dp.atom_domain(T=str), dp.absolute_distance(T=float), 1.0)
    with pytest.raises(NotImplementedForType):
        dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.symmetric_distance(), 1.0)
    with pytest.raises(NotImplementedForType, match="MO"):
        dp.m.make_laplace(
            dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), 1.0,
            MO="ZeroConcentratedDivergence",
        )  # fmt: skip
    with pytest.raises(NotImplementedForType, match="MO"):
        dp.m.make_gaussian(
            dp.atom_domain(T=float, nan=False),
            dp.absolute_distance(T=float),
            1.0,
            MO="MaxDivergence",
        )
    with pytest.raises(NotImplementedForType):
        dp.m.make_geometric(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), 1.0)
    with pytest.raises(NotImplementedForType):
        dp.m.make_base_discrete_laplace(
            dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), 1.0
        )
    with pytest.raises(NotImplementedForType, match="QO"):
        dp.m.make_base_discrete_laplace(
            dp.atom_domain(T=int), dp.absolute_distance(T=int), 1.0, QO="i32"
        )
    for bounds in ((10, 0), (0.5, 2), (0, 2**40)):
        with pytest.raises(InvalidParameter, match="bounds"):
            dp.m.make_geometric(dp.atom_domain(T=int), dp.absolute_distance(T=int), 1.0, bounds)


def test_mo_accepts_names_and_instances() -> None:
    sp = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    for mo in ("MaxDivergence", "MaxDivergence<f64>", dp.max_divergence()):
        assert dp.m.make_laplace(*sp, 2.0, MO=mo).output_measure == dp.max_divergence()
    zcdp = dp.zero_concentrated_divergence()
    assert dp.m.make_gaussian(*sp, 2.0, MO=zcdp).output_measure == zcdp


def test_qo_f32_rounds_up_to_f32() -> None:
    sp = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    got = dp.m.make_base_discrete_laplace(*sp, scale=3.0, QO="f32").map(1)
    assert got == float(np.float32(got)) and Fraction(got) >= Fraction(1, 3)
    assert Fraction(float(np.nextafter(np.float32(got), np.float32(0)))) < Fraction(1, 3)


def test_geometric_bounds_censor_the_output() -> None:
    meas = dp.m.make_geometric(dp.atom_domain(T=int), dp.absolute_distance(T=int), 50.0, (0, 10))
    outs = [meas(x) for x in (-5, 0, 5, 10, 20) for _ in range(20)]
    assert set(outs) <= set(range(11)) and {0, 10} <= set(outs)
    vec = dp.m.make_geometric(*space("i32", "laplace", None), scale=1.0, bounds=(0, 3))
    assert set(vec([0, 1, 2, 3] * 10)) <= {0, 1, 2, 3}


def test_partials_chain() -> None:
    sp = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    assert (sp >> dp.m.then_laplace(2.0)).map(1.0) == 0.5
    assert (sp >> dp.m.then_gaussian(2.0)).map(1.0) == 0.125
    isp = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    assert (isp >> dp.m.then_geometric(2.0)).map(1) == 0.5
    assert (isp >> dp.m.then_base_discrete_laplace(1.0)).map(1) == 1.0
    assert (isp >> dp.m.then_base_discrete_gaussian(1.0)).map(1) == 0.5
    assert (sp >> dp.m.then_base_laplace(1.0, k=-1)).map(0.0) == 0.5
    assert (sp >> dp.m.then_base_gaussian(1.0, k=0)).map(0.0) == 0.5


# ------------------------------------------------------------------------------------------
# laws


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["laplace", "gaussian"]),
    st.sampled_from([None, -1073, -60, -1, 0, 4]),
    st.sampled_from(["atom", 1, 3, 50]),
    st.floats(0.01, 1e4),
    st.floats(0, 1e6),
    st.floats(0, 1e6),
)
def test_maps_are_monotone_and_check_consistent(dist, k, size, scale, d1, d2) -> None:
    meas = make(dist, *space("f64", dist, size), scale=scale, k=k)
    lo, hi = sorted((d1, d2))
    assert meas.map(lo) <= meas.map(hi)
    assert meas.check(hi, meas.map(hi))
    below = math.nextafter(meas.map(hi), 0.0)
    assert meas.map(hi) == 0.0 or not meas.check(hi, below)


@pytest.mark.parametrize("T", [float, "f32", int])
@pytest.mark.parametrize("dist", ["laplace", "gaussian"])
def test_scalar_release_is_the_scalar_sampler_on_the_same_bits(T: object, dist: str) -> None:
    """The scalar measurement looks its sampling plan up once, at construction; each
    release is still exactly ``batch.*_noise_scalar`` (the certified exact sampler) on the same
    bits, for several scales, grids and inputs (including saturation at the type's edge)."""
    from opendp_lite.samplers import batch

    is_int = T is int
    carrier = "i32" if is_int else ("f32" if T == "f32" else "f64")
    make = dp.m.make_laplace if dist == "laplace" else dp.m.make_gaussian
    metric = dp.absolute_distance(T=T)
    inputs = [0, 7, -(2**31), 2**31 - 1] if is_int else [0.0, 2.5, -1e30, 3.4e38, 1e-300]
    for scale in (0.0, 0.5, 1.0, 1e3):
        for k in (None,) if is_int else (None, -3, 2):
            kw = {} if k is None else {"k": k}
            m = make(dp.atom_domain(T="i32" if is_int else T, nan=False), metric, scale, **kw)
            kk = None if is_int else (k if k is not None else (-149 if T == "f32" else -1074))
            for j, x in enumerate(inputs):
                seed = f"{scale}/{k}/{j}".encode()
                with rng.scripted_randomness(seed=seed):
                    got = m(x)
                with rng.scripted_randomness(seed=seed):
                    if is_int:
                        ref = batch.int_noise_scalar(x, scale, dist, carrier)
                    else:
                        x32 = float(np.float32(x)) if carrier == "f32" else x
                        ref = batch.float_noise_scalar(x32, scale, kk, dist, carrier)
                assert got == ref, (scale, k, x)


@pytest.mark.parametrize("band", [0.0, 0.9])
@pytest.mark.parametrize("T", ["f64", "f32", "i32"])
@pytest.mark.parametrize("dist", ["laplace", "gaussian"])
def test_small_vector_release_is_the_vector_sampler_on_the_same_bits(
    T: str, dist: str, band: float
) -> None:
    """A vector of n <= SMALL_LIMIT[T] takes the precomputed small path (plan looked up once,
    no numpy checks), a longer one the vector path; each release is still
    ``batch.float_noise`` / ``batch.int_noise`` on the same bits, also with every float
    decision band widened (most decisions then exact)."""
    from opendp_lite.samplers import batch, fast

    is_int = T == "i32"
    make = dp.m.make_laplace if dist == "laplace" else dp.m.make_gaussian
    metric = (dp.l1_distance if dist == "laplace" else dp.l2_distance)(T=T)
    dtype = np.int32 if is_int else np.float32 if T == "f32" else np.float64
    vals = [0, 7, -(2**31), 2**31 - 1, 3] if is_int else [0.0, 2.5, -1e30, 3.4e38, 1e-300, 0.1]
    for scale in (0.0, 0.5, 1.0, 1e3):
        for k in (None,) if is_int else (None, -3):
            kw = {} if k is None else {"k": k}
            kk = -149 if T == "f32" else -1074
            limit = fast.SMALL_LIMIT["int" if is_int else T]
            for n in (1, 2, len(vals), limit, limit + 1):
                size = None if k is None else n  # a non-default k needs the size
                m = make(
                    dp.vector_domain(dp.atom_domain(T=T, nan=False), size=size), metric, scale, **kw
                )
                x = np.resize(np.array(vals, dtype=dtype), n)
                seed = f"{scale}/{k}/{n}".encode()
                with fast.certification_margin(band):
                    with rng.scripted_randomness(seed=seed):
                        got = m(x)
                    with rng.scripted_randomness(seed=seed):
                        if is_int:
                            ref = batch.int_noise(x, scale, dist, T)
                        else:
                            ref = batch.float_noise(x, scale, kk if k is None else k, dist, T)  # type: ignore[arg-type]
                assert got.dtype == ref.dtype and got.tolist() == ref.tolist(), (scale, k, n)
            with rng.scripted_randomness(seed=b"list"):
                as_list = m([vals[0]] * (limit + 1))
            assert isinstance(as_list, list) and len(as_list) == limit + 1


@pytest.mark.parametrize("T", ["f64", "f32"])
def test_small_vector_refuses_non_finite_before_any_randomness(T: str) -> None:
    def boom(n: int) -> bytes:
        raise AssertionError("randomness drawn before the domain check")

    m = dp.m.make_laplace(
        dp.vector_domain(dp.atom_domain(T=T, nan=False)), dp.l1_distance(T=T), 1.0
    )
    dtype = np.float32 if T == "f32" else np.float64
    with rng.scripted_randomness(source=boom):
        for bad in ([1.0, np.inf], [-np.inf], [0.0] * 23 + [np.inf]):
            with pytest.raises(NotInDomain):
                m(np.array(bad, dtype=dtype))
            with pytest.raises(NotInDomain):
                m(bad)
