"""The accuracy helpers: their defining property, and agreement with OpenDP 0.16."""

from __future__ import annotations

import itertools
import math

import pytest

import opendp_lite.prelude as dp
from opendp_lite import accuracy as acc
from opendp_lite.errors import InvalidParameter

SCALES = [0.3, 0.5, 1.0, 2.0, 3.7, 10.0, 100.0, 1234.5]
ALPHAS = [0.001, 0.01, 0.05, 0.3, 0.5, 0.9, 1.0]
ACCURACIES = [0.5, 1.0, 2.0, 5.0, 20.0, 100.0]
OPEN_ALPHAS = [0.001, 0.05, 0.3, 0.5, 0.9]


def dg_tail(scale: float, a: int) -> float:
    """Pr[|Z| >= a] for the discrete Gaussian, by direct summation."""
    w = [math.exp(-(i * i) / (2 * scale * scale)) for i in range(0, int(60 * scale) + 60)]
    total = w[0] + 2 * math.fsum(w[1:])
    return 2 * math.fsum(w[a:]) / total if a >= 1 else 1.0


def test_exported_from_prelude() -> None:
    assert dp.laplacian_scale_to_accuracy is acc.laplacian_scale_to_accuracy
    assert "accuracy_to_discrete_gaussian_scale" in dp.__all__


@pytest.mark.parametrize(("scale", "alpha"), list(itertools.product([0.5, 2.0, 10.0], [0.05, 0.3])))
def test_continuous_tails(scale: float, alpha: float) -> None:
    a = acc.laplacian_scale_to_accuracy(scale, alpha)
    assert math.isclose(math.exp(-a / scale), alpha, rel_tol=1e-12)  # Pr[|L| > a]
    g = acc.gaussian_scale_to_accuracy(scale, alpha)
    assert math.isclose(math.erfc(g / (scale * math.sqrt(2))), alpha, rel_tol=1e-9)
    assert math.isclose(acc.accuracy_to_laplacian_scale(a, alpha), scale, rel_tol=1e-12)
    assert math.isclose(acc.accuracy_to_gaussian_scale(g, alpha), scale, rel_tol=1e-9)


@pytest.mark.parametrize(("scale", "alpha"), list(itertools.product([0.5, 2.0, 10.0], [0.05, 0.3])))
def test_discrete_laplace_tail(scale: float, alpha: float) -> None:
    a = acc.discrete_laplacian_scale_to_accuracy(scale, alpha)
    # at integers, Pr[|Z| >= a] = 2 e^{-a/s} / (1 + e^{-1/s}); the formula solves it for alpha
    tail = 2 * math.exp(-a / scale) / (1 + math.exp(-1 / scale))
    assert math.isclose(tail, alpha, rel_tol=1e-9)
    # coverage: at the integer ceil(a) the tail is at most alpha
    assert 2 * math.exp(-math.ceil(a) / scale) / (1 + math.exp(-1 / scale)) <= alpha


@pytest.mark.parametrize(("scale", "alpha"), list(itertools.product([0.5, 2.0, 10.0], [0.05, 0.3])))
def test_discrete_gaussian_accuracy_is_the_least_covering_integer(scale, alpha) -> None:
    a = acc.discrete_gaussian_scale_to_accuracy(scale, alpha)
    assert a == int(a) and a >= 1
    assert dg_tail(scale, int(a)) <= alpha
    assert a == 1 or dg_tail(scale, int(a) - 1) > alpha


@pytest.mark.parametrize(
    "call",
    [
        lambda: acc.laplacian_scale_to_accuracy(-1.0, 0.05),
        lambda: acc.laplacian_scale_to_accuracy(1.0, 0.0),
        lambda: acc.gaussian_scale_to_accuracy(1.0, 1.5),
        lambda: acc.accuracy_to_laplacian_scale(1.0, 1.0),
        lambda: acc.accuracy_to_gaussian_scale(math.inf, 0.5),
        lambda: acc.discrete_laplacian_scale_to_accuracy(math.nan, 0.5),
        lambda: acc.discrete_gaussian_scale_to_accuracy(1.0, -0.1),
        lambda: acc.accuracy_to_discrete_laplacian_scale(-2.0, 0.5),
        lambda: acc.accuracy_to_discrete_gaussian_scale(2.0, 1.0),
        lambda: acc.laplacian_scale_to_accuracy(1.0, 0.5, T="i32"),
    ],
)
def test_bad_arguments_refused(call) -> None:
    with pytest.raises(InvalidParameter):
        call()


def test_agrees_with_opendp() -> None:
    odp = pytest.importorskip("opendp.accuracy")
    names = [
        "laplacian_scale_to_accuracy",
        "gaussian_scale_to_accuracy",
        "discrete_laplacian_scale_to_accuracy",
        "discrete_gaussian_scale_to_accuracy",
    ]
    for name, scale, alpha in itertools.product(names, SCALES, ALPHAS):
        ours, theirs = getattr(acc, name)(scale, alpha), getattr(odp, name)(scale, alpha)
        assert math.isclose(ours, theirs, rel_tol=1e-9, abs_tol=1e-300), (name, scale, alpha)
    inverse = [
        "accuracy_to_laplacian_scale",
        "accuracy_to_gaussian_scale",
        "accuracy_to_discrete_laplacian_scale",
        "accuracy_to_discrete_gaussian_scale",
    ]
    for name, a, alpha in itertools.product(inverse, ACCURACIES, OPEN_ALPHAS):
        ours, theirs = getattr(acc, name)(a, alpha), getattr(odp, name)(a, alpha)
        assert math.isclose(ours, theirs, rel_tol=1e-9), (name, a, alpha, ours, theirs)


def test_f32_output() -> None:
    v = acc.laplacian_scale_to_accuracy(1.0, 0.05, T="f32")
    assert v != acc.laplacian_scale_to_accuracy(1.0, 0.05)
    assert math.isclose(v, 2.995732273553991, rel_tol=1e-7)
