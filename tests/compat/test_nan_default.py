"""``atom_domain(T=float)`` admits NaN by default, as in OpenDP 0.16, and every constructor whose
guarantee needs numbers refuses such a domain when it is built, naming the domain and the fix
(``atom_domain(T=float, nan=False)``, or imputing first).  The additive noise mechanisms
(``make_laplace``, ``make_gaussian``, ``make_noise``) accept it and release NaN as NaN, where
OpenDP 0.16 refuses it (docs/differences.md).  Where OpenDP is installed, each statement is
checked against it too."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import NotInDomain, OpenDPLiteError
from tests.conftest import counting_source

NAN = math.nan
FLOATS = [float, "f64", "f32"]


def _opendp() -> Any:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib", "honest-but-curious")
    return odp


# -- the domain ----------------------------------------------------------------------------


@pytest.mark.parametrize("T", FLOATS, ids=str)
def test_float_atom_domain_admits_nan_by_default(T: Any) -> None:
    domain = dp.atom_domain(T=T)
    assert domain.nan is True
    assert domain.member(NAN) and domain.member(1.5)
    assert dp.vector_domain(domain).member([1.0, NAN])
    narrowed = dp.atom_domain(T=T, nan=False)
    assert narrowed.nan is False
    assert not narrowed.member(NAN) and narrowed.member(1.5)
    assert not dp.vector_domain(narrowed).member([1.0, NAN])
    assert domain == dp.atom_domain(T=T, nan=True) != narrowed


@pytest.mark.parametrize("T", FLOATS, ids=str)
def test_float_atom_domain_default_is_opendps(T: Any) -> None:
    odp = _opendp()
    for kwargs in ({}, {"nan": False}, {"nan": True}):
        ours, theirs = dp.atom_domain(T=T, **kwargs), odp.atom_domain(T=T, **kwargs)
        assert repr(ours) == repr(theirs)
        assert ours.nan == theirs.nan
        for x in (NAN, 1.5):
            assert ours.member(x) == theirs.member(x)
        vec_ours, vec_theirs = dp.vector_domain(ours), odp.vector_domain(theirs)
        assert repr(vec_ours) == repr(vec_theirs)
        assert vec_ours.member([1.0, NAN]) == vec_theirs.member([1.0, NAN])


def test_bounded_float_domain_holds_no_nan_like_opendp() -> None:
    # OpenDP flags it nan=true, yet NaN is not a member; ours says nan=False (docs/differences.md)
    odp = _opendp()
    ours, theirs = dp.atom_domain(bounds=(0.0, 1.0)), odp.atom_domain(bounds=(0.0, 1.0))
    assert ours.nan is False
    assert ours.member(NAN) is False
    with pytest.warns(UserWarning):  # OpenDP warns that NaN cannot be clamped
        assert theirs.member(NAN) is False
    assert ours.member(0.5) == theirs.member(0.5)


def test_integer_domains_hold_no_nan() -> None:
    assert dp.atom_domain(T=int).nan is False
    assert dp.atom_domain(T=int, nan=False) == dp.atom_domain(T=int)
    with pytest.raises(OpenDPLiteError, match="only meaningful for float"):
        dp.atom_domain(T=int, nan=True)


def test_call_time_membership_follows_the_default() -> None:
    ident = dp.t.make_identity(dp.vector_domain(dp.atom_domain(T=float)), dp.symmetric_distance())
    out = ident([1.0, NAN])
    assert math.isnan(float(out[1]))


# -- the constructors that need numbers ----------------------------------------------------

SD = "symmetric_distance"


def _l(m: Any, name: str, T: str = "f64") -> Any:
    return getattr(m, name)(T=float if T == "f64" else T)


#: (name, build(library, float atom domain, T)): every constructor whose guarantee needs
#: NaN-free numbers; each takes the same arguments in OpenDP 0.16.
BUILDERS: list[tuple[str, Callable[[Any, Any, str], Any]]] = [
    (
        "make_clamp",
        lambda m, a, T: m.t.make_clamp(m.vector_domain(a), m.symmetric_distance(), (0.0, 1.0)),
    ),
    (
        "make_lipschitz_float_mul",
        lambda m, a, T: m.t.make_lipschitz_float_mul(
            a, _l(m, "absolute_distance", T), 2.0, (0.0, 1.0)
        ),
    ),
    (
        "make_quantile_score_candidates",
        lambda m, a, T: m.t.make_quantile_score_candidates(
            m.vector_domain(a), m.symmetric_distance(), [0.0, 0.5, 1.0], 0.5
        ),
    ),
    (
        "make_private_quantile",
        lambda m, a, T: m.m.make_private_quantile(
            m.vector_domain(a), m.symmetric_distance(), m.max_divergence(), [0.0, 1.0], 0.5, 1.0
        ),
    ),
    (
        "make_noisy_max",
        lambda m, a, T: m.m.make_noisy_max(
            m.vector_domain(a), _l(m, "linf_distance", T), m.max_divergence(), 1.0
        ),
    ),
    (
        "make_noisy_top_k",
        lambda m, a, T: m.m.make_noisy_top_k(
            m.vector_domain(a), _l(m, "linf_distance", T), m.max_divergence(), 1, 1.0
        ),
    ),
    (
        "make_report_noisy_max_gumbel",
        lambda m, a, T: m.m.make_report_noisy_max_gumbel(
            m.vector_domain(a), _l(m, "linf_distance", T), 1.0
        ),
    ),
    (
        "make_laplace_threshold",
        lambda m, a, T: m.m.make_laplace_threshold(
            m.map_domain(m.atom_domain(T=str), a),
            m.l01inf_distance(_l(m, "absolute_distance", T)),
            1.0,
            threshold=10.0,
        ),
    ),
]
F64_ONLY = {"make_canonical_noise", "make_lipschitz_float_mul"}
CASES = [
    (n, b, T) for n, b in BUILDERS for T in ("f64", "f32") if not (n in F64_ONLY and T != "f64")
]
IDS = [f"{n}-{T}" for n, _, T in CASES]


#: The additive noise mechanisms (and canonical noise): NaN is at infinite distance from every
#: value under their metrics, so they accept a NaN-admitting domain (NaN in, NaN out); OpenDP
#: 0.16 refuses it.
NOISE: list[tuple[str, Callable[[Any, Any, str], Any]]] = [
    ("make_laplace", lambda m, a, T: m.m.make_laplace(a, _l(m, "absolute_distance", T), 1.0)),
    (
        "make_laplace vector",
        lambda m, a, T: m.m.make_laplace(m.vector_domain(a), _l(m, "l1_distance", T), 1.0),
    ),
    ("make_gaussian", lambda m, a, T: m.m.make_gaussian(a, _l(m, "absolute_distance", T), 1.0)),
    (
        "make_gaussian vector",
        lambda m, a, T: m.m.make_gaussian(m.vector_domain(a), _l(m, "l2_distance", T), 1.0),
    ),
    (
        "make_noise",
        lambda m, a, T: m.m.make_noise(a, _l(m, "absolute_distance", T), m.max_divergence(), 1.0),
    ),
]
NOISE.append(
    (
        "make_canonical_noise",
        lambda m, a, T: m.m.make_canonical_noise(
            a, _l(m, "absolute_distance", T), d_in=1.0, d_out=(1.0, 1e-6)
        ),
    )
)
NOISE_CASES = [
    (n, b, T) for n, b in NOISE for T in ("f64", "f32") if not (n in F64_ONLY and T != "f64")
]
NOISE_IDS = [f"{n}-{T}" for n, _, T in NOISE_CASES]


@pytest.mark.parametrize(("name", "build", "T"), NOISE_CASES, ids=NOISE_IDS)
def test_noise_mechanisms_accept_nan_where_opendp_refuses(name: str, build: Any, T: str) -> None:
    domain = dp.atom_domain(T=float if T == "f64" else T)
    meas = build(dp, domain, T)
    vector = "vector" in name
    assert (meas.input_domain.element_domain if vector else meas.input_domain) == domain
    release = meas([1.0, NAN]) if vector else meas(NAN)
    assert math.isnan(release[1] if vector else release)
    odp = _opendp()
    with pytest.raises(odp.OpenDPException):
        build(odp, odp.atom_domain(T=float if T == "f64" else T), T)


@pytest.mark.parametrize(("name", "build", "T"), CASES, ids=IDS)
def test_nan_admitting_domain_refused_at_build_with_the_fix(name: str, build: Any, T: str) -> None:
    domain = dp.atom_domain(T=float if T == "f64" else T)
    with pytest.raises(OpenDPLiteError) as info:
        build(dp, domain, T)
    message = str(info.value)
    assert "NaN" in message
    declared = (
        "atom_domain(T=float, nan=False)" if T == "f64" else f"atom_domain(T='{T}', nan=False)"
    )
    assert "Fix:" in message and (
        declared in message or "atom_domain(T=float, nan=False)" in message
    )
    if name != "make_laplace_threshold":  # its domain is a map: the message names the values
        assert repr(domain) in message


@pytest.mark.parametrize(("name", "build", "T"), CASES, ids=IDS)
def test_nan_false_domain_builds(name: str, build: Any, T: str) -> None:
    build(dp, dp.atom_domain(T=float if T == "f64" else T, nan=False), T)


@pytest.mark.parametrize(("name", "build", "T"), CASES, ids=IDS)
def test_opendp_refuses_the_same_domains(name: str, build: Any, T: str) -> None:
    odp = _opendp()
    with pytest.raises(odp.OpenDPException):
        build(odp, odp.atom_domain(T=float if T == "f64" else T), T)
    build(odp, odp.atom_domain(T=float if T == "f64" else T, nan=False), T)


def test_vector_refusal_names_the_imputation_route() -> None:
    space = dp.vector_domain(dp.atom_domain(T=float)), dp.symmetric_distance()
    with pytest.raises(OpenDPLiteError, match="then_impute_constant"):
        dp.t.make_clamp(*space, (0.0, 1.0))


def test_imputing_first_builds_the_chain_as_in_opendp() -> None:
    odp = _opendp()

    def chain(m: Any) -> Any:
        space = m.vector_domain(m.atom_domain(T=float)), m.symmetric_distance()
        return (
            space
            >> m.t.then_impute_constant(0.0)
            >> m.t.then_clamp((0.0, 10.0))
            >> m.t.then_sum()
            >> m.m.then_laplace(10.0)
        )

    ours, theirs = chain(dp), chain(odp)
    assert ours.map(1) == pytest.approx(theirs.map(1), rel=1e-3)  # rounding terms differ
    assert repr(ours.input_domain) == repr(theirs.input_domain)
    release = ours([1.0, NAN, 3.0])
    assert math.isfinite(release)


# -- call time ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "arg"),
    [
        (
            lambda: dp.m.make_laplace(
                dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), 1.0
            ),
            NAN,
        ),
        (
            lambda: dp.m.make_gaussian(
                dp.vector_domain(dp.atom_domain(T="f32", nan=False)), dp.l2_distance(T="f32"), 1.0
            ),
            [1.0, NAN],
        ),
    ],
    ids=["laplace", "gaussian_f32_vector"],
)
def test_nan_refused_at_call_time_before_randomness(build: Callable[[], Any], arg: Any) -> None:
    meas = build()
    with counting_source() as calls, pytest.raises(NotInDomain):
        meas(arg)
    assert calls == []


# -- the older names narrow ----------------------------------------------------------------


@pytest.mark.parametrize("vector", [False, True], ids=["atom", "vector"])
@pytest.mark.parametrize("name", ["make_base_laplace", "make_base_gaussian"])
def test_older_names_narrow_the_domain(name: str, vector: bool) -> None:
    atom = dp.atom_domain(T=float)
    if vector:
        domain: Any = dp.vector_domain(atom, size=3)
        metric: Any = (dp.l1_distance if name == "make_base_laplace" else dp.l2_distance)(T=float)
        narrowed: Any = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=3)
        data: Any = np.array([1.0, NAN, 2.0])
    else:
        domain, metric = atom, dp.absolute_distance(T=float)
        narrowed, data = dp.atom_domain(T=float, nan=False), NAN
    meas = getattr(dp.m, name)(domain, metric, 2.0)
    assert meas.input_domain == narrowed
    current = getattr(dp.m, name.replace("base_", ""))(narrowed, metric, 2.0)
    assert meas.map(1.0) == current.map(1.0)
    with counting_source() as calls, pytest.raises(NotInDomain):
        meas(data)
    assert calls == []


def test_count_by_counts_nan_as_one_key_and_its_output_domain_says_so() -> None:
    space = dp.vector_domain(dp.atom_domain(T=float)), dp.symmetric_distance()
    count_by = dp.t.make_count_by(*space)
    minus_nan = -np.array([NAN])[0]
    counts = count_by(np.array([NAN, minus_nan, 1.0]))
    assert sorted(counts.values()) == [1, 2]  # every NaN is one key
    assert count_by.output_domain.key_domain == dp.atom_domain(T=float)
    assert count_by.output_domain.member(counts)
    narrowed = dp.t.make_count_by(dp.vector_domain(dp.atom_domain(T=float, nan=False)), space[1])
    assert narrowed.output_domain.key_domain == dp.atom_domain(T=float, nan=False)
