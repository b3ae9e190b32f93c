"""opendp_lite.extras.sklearn: scikit-learn conventions, refusals before randomness, the
optional-extra ImportError, and end-to-end accuracy at a large budget with computed tolerances."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from sklearn.base import clone

import opendp_lite.prelude as dp
from opendp_lite.errors import InvalidParameter, NotInDomain
from opendp_lite.extras.sklearn.decomposition import PCA, PCAEpsilons, make_private_pca
from opendp_lite.extras.sklearn.linear_model import LinearRegression, make_private_theil_sen
from opendp_lite.samplers import rng


def _no_randomness(n: int) -> bytes:
    raise AssertionError("randomness drawn before the input was checked")


def test_import_without_scikit_learn_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['sklearn'] = None\n"
        "try:\n    import opendp_lite.extras.sklearn\n"
        "except ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run(  # noqa: S603 - our own interpreter and code
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert 'pip install "opendp_lite[sklearn]"' in out.stdout
    # numpy extras and the prelude still import without scikit-learn
    code2 = "import sys; sys.modules['sklearn'] = None\nimport opendp_lite.prelude as dp; dp.numpy"
    subprocess.run([sys.executable, "-c", code2], check=True)  # noqa: S603 - as above


# ----------------------------------------------------------------------------------------------
# PCA


def _pca(**kw: object) -> PCA:
    params = {"epsilon": 1.0, "row_norm": 1.0, "n_samples": 50, "n_features": 3}
    params.update(kw)
    return PCA(**params)  # type: ignore[arg-type]


def test_pca_follows_scikit_learn_conventions() -> None:
    model = _pca(n_components=2)
    params = model.get_params()
    assert params == {
        "epsilon": 1.0,
        "row_norm": 1.0,
        "n_samples": 50,
        "n_features": 3,
        "n_components": 2,
        "n_changes": 1,
        "whiten": False,
    }
    twin = clone(model)
    assert twin.get_params() == params and twin is not model
    assert _pca().set_params(**params).get_params() == params
    assert not hasattr(model, "components_")  # the constructor only stores parameters
    X = np.zeros((50, 3))
    assert model.fit(X) is model
    assert model.components_.shape == (2, 3) and model.n_components_ == 2
    assert model.singular_values_.shape == (2,) and model.mean_.shape == (3,)
    assert model.transform(X).shape == (50, 2)
    assert model.inverse_transform(model.transform(X)).shape == (50, 3)
    assert not hasattr(clone(model), "components_")
    with pytest.raises(InvalidParameter, match="already been fitted"):
        model.fit(X)
    assert clone(model).fit_transform(X).shape == (50, 2)


def test_pca_measurement_reports_the_budget() -> None:
    for eps, changes in [(1.0, 1), (0.5, 2), (3.0, 1)]:
        m = _pca(epsilon=eps, n_changes=changes).measurement()
        loss = m.map(2)
        assert 0.99 * 2 * eps / changes <= loss <= 2 * eps / changes  # as OpenDP: ε per record
        assert m.map(4) <= 2 * loss * (1 + 1e-12)
    model = _pca()
    released = model.measurement()(np.zeros((50, 3)))
    assert released is model and model.components_.shape == (3, 3)


def test_pca_refuses_bad_data_before_randomness() -> None:
    model = _pca()
    with rng.scripted_randomness(_no_randomness):
        for bad in (
            np.zeros((49, 3)),
            np.zeros((50, 2)),
            np.full((50, 3), "x", dtype=object),
            np.ma.masked_array(np.zeros((50, 3))),
            [["a", "b", "c"]] * 50,
        ):
            with pytest.raises(NotInDomain):
                model.fit(bad)
    assert not hasattr(model, "components_")


def test_make_private_pca_parameters() -> None:
    space = dp.numpy.array2_domain(size=10, num_columns=2, T=float), dp.symmetric_distance()
    with pytest.raises(InvalidParameter):
        make_private_pca(*space, unit_epsilon=1.0)  # no norm
    with pytest.raises(InvalidParameter):
        make_private_pca(*space, unit_epsilon=0.0, norm=1.0)
    with pytest.raises(InvalidParameter):
        make_private_pca(*space, unit_epsilon=1.0, norm=1.0, num_components=3)
    eps = PCAEpsilons(eigvals=0.25, eigvecs=[0.25], mean=0.5)
    assert make_private_pca(*space, unit_epsilon=eps, norm=1.0).map(2) <= 1.0
    bounded = dp.numpy.array2_domain(norm=1.0, p=2, size=10, num_columns=2, T=float)
    known = make_private_pca(bounded, dp.symmetric_distance(), unit_epsilon=1.0)
    assert known.map(2) <= 1.0
    assert np.array_equal(known(np.zeros((10, 2))).mean, np.zeros(2))  # no mean released


def test_pca_accuracy_at_a_large_budget() -> None:
    """The first component is the data's main axis, within a tolerance computed from the
    noise: by Davis–Kahan, sin∠ <= 2‖E‖/gap, with ‖E‖ <= ‖E‖_F <= √m·b·ln(m/β) for the m
    Laplace(b) entries (probability >= 1 − β), plus the error of the released mean."""
    n, d, R, eps = 4000, 3, 1.0, 50.0
    axis = np.array([0.6, 0.0, 0.8])
    t = np.linspace(-0.9, 0.9, n)
    X = np.outer(t, axis) + np.outer(np.cos(np.arange(n)) * 0.05, [0.0, 1.0, 0.0])
    model = PCA(epsilon=eps, row_norm=R, n_samples=n, n_features=d).fit(X)
    Xc = X - X.mean(axis=0)
    lam = np.sort(np.linalg.eigvalsh(Xc.T @ Xc))[::-1]
    m = d * (d + 1) // 2
    unit = 2 * eps
    b = 2 * (d + 1) * R**2 / 2 / (unit * 2 / 3)  # the SSCP noise scale (sensitivity/ε at d_in = 2)
    b_mean = 2 * R / (n * unit / 3)  # Laplace scale of each coordinate of the mean
    beta = 1e-9
    mean_err = d * b_mean * math.log(d / beta)
    E = math.sqrt(m) * b * math.log(m / beta) + 2 * n * R * mean_err + n * mean_err**2
    sin = min(1.0, 2 * E / (lam[0] - lam[1]))
    cos = abs(float(model.components_[0] @ axis))
    assert cos >= math.sqrt(1 - sin**2) - 1e-12, (cos, sin)
    assert sin < 0.2  # the tolerance is meaningful at this budget
    assert np.allclose(model.mean_, X.mean(axis=0), atol=mean_err)


# ----------------------------------------------------------------------------------------------
# LinearRegression


def _lr(**kw: object) -> LinearRegression:
    params: dict[str, object] = {
        "output_measure": dp.max_divergence(),
        "x_bounds": [(0.0, 10.0)],
        "y_bounds": (0.0, 10.0),
        "scale": 1.0,
    }
    params.update(kw)
    return LinearRegression(**params)  # type: ignore[arg-type]


def test_linear_regression_follows_scikit_learn_conventions() -> None:
    model = _lr(runs=2)
    params = model.get_params()
    assert params["runs"] == 2 and params["candidates_count"] == 100
    assert clone(model).get_params() == params
    assert _lr().set_params(**params).get_params() == params
    X = [[1.0], [2.0], [3.0], [4.0], [5.0]]
    assert model.fit(X, [1.0, 2.0, 3.0, 4.0, 5.0]) is model
    assert model.coef_.shape == (1,) and isinstance(model.intercept_, float)
    pred = model.predict([[10.0], [0.0]])
    assert pred.shape == (2,)
    assert pred.tolist() == pytest.approx(
        [10 * model.coef_[0] + model.intercept_, model.intercept_]
    )
    assert model.measurement.map(1) == 8.0  # 2 medians · 2·runs·d_in / scale


def test_theil_sen_map_and_refusals() -> None:
    meas = make_private_theil_sen(dp.max_divergence(), (0, 100), (0, 100), scale=2.0, runs=3)
    assert meas.map(1) == 6.0 and meas.map(2) == 12.0
    z = make_private_theil_sen(dp.zero_concentrated_divergence(), (0, 1), (0, 1), scale=2.0)
    assert z.map(1) == 0.25  # 2 · (2·1·1/2)² / 8
    for bad in [
        {"x_bounds": (1.0, 1.0)},
        {"y_bounds": (0.0, math.inf)},
        {"runs": 0},
        {"candidates_count": 1},
        {"fraction_bounds": (0.5, 0.5)},
    ]:
        kw = {"x_bounds": (0.0, 1.0), "y_bounds": (0.0, 1.0), "scale": 1.0, **bad}
        with pytest.raises(InvalidParameter):
            make_private_theil_sen(dp.max_divergence(), **kw)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameter):
        _lr(x_bounds=[(0, 1), (0, 1)]).measurement  # noqa: B018 - one feature only


def test_linear_regression_refuses_bad_data_before_randomness() -> None:
    model = _lr()
    with rng.scripted_randomness(_no_randomness):
        with pytest.raises(NotInDomain):
            model.fit([[1.0], [2.0]], [1.0])
        with pytest.raises(NotInDomain):
            model.fit([[1.0, 2.0]], [1.0])
        with pytest.raises(NotInDomain):
            model.fit([["a"]], [1.0])
        with pytest.raises(NotInDomain):
            model.fit(np.ma.masked_array([[1.0]]), [1.0])


def test_pairing_uses_only_the_package_randomness() -> None:
    state = np.random.get_state()  # noqa: NPY002 - the legacy global state is what we check
    x = np.linspace(0, 10, 200)
    data = np.stack([x, 2 * x + 1], axis=1)
    meas = make_private_theil_sen(dp.max_divergence(), (0, 10), (0, 30), scale=1.0)
    with rng.scripted_randomness(seed=b"pairing"):
        first = meas(data)
    with rng.scripted_randomness(seed=b"pairing"):
        second = meas(data)
    assert first == second
    after = np.random.get_state()  # noqa: NPY002 - as above
    assert state[0] == after[0] and np.array_equal(state[1], after[1]) and state[2:] == after[2:]


def test_linear_regression_accuracy_at_a_small_scale() -> None:
    """Points on y = 0.5x + 2: every pair's line is the true line, so each median's score gap
    between the nearest candidate and any other is at least 1/2 · (pairs), and at scale 1e-3 the
    nearest candidate wins; the error is then set by the candidate spacing h."""
    x = np.linspace(0, 10, 2001)
    model = _lr(scale=1e-3, candidates_count=1001).fit(x[:, None], 0.5 * x + 2)
    h = 10 / 1000
    c0, c1 = 2.5, 7.5
    slope_tol = 2 * (h / 2) / (c1 - c0) + 1e-12
    intercept_tol = (h / 2) * (abs(c0) + abs(c1)) / (c1 - c0) + h / 2 + 1e-12
    assert abs(model.coef_[0] - 0.5) <= slope_tol
    assert abs(model.intercept_ - 2.0) <= intercept_tol
