"""OpenDP-style code for the extras runs with only the import changed.

The scenario is written from OpenDP 0.16's documented usage (``dp.numpy.array2_domain``,
``then_np_clamp``, the ``dp.sklearn`` estimators' docstrings and PCA tutorial).  It runs once
with ``import opendp.prelude as dp`` and once with ``opendp_lite``, and the deterministic
results must agree.  OpenDP's PCA needs ``randomgen`` to fit, so fitting it runs only for
opendp_lite (the fitted attributes are checked below)."""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np
import pytest

SCENARIO = textwrap.dedent(
    """
    import numpy as np
    import {lib}.prelude as dp
    dp.enable_features("contrib", "floating-point", "honest-but-curious")

    out = []
    input_space = dp.numpy.array2_domain(T=float, num_columns=3), dp.symmetric_distance()
    out.append(("domain member", input_space[0].member(np.zeros((4, 3)))))
    clamp = input_space >> dp.numpy.then_np_clamp(norm=1.0, p=2)
    data = np.array([[3.0, 4.0, 0.0], [0.1, 0.2, 0.2], [0.0, 0.0, -2.0]])
    out.append(("clamped", clamp(data).round(6).tolist()))
    out.append(("clamp map", clamp.map(1)))
    out.append(("clamped member", clamp.output_domain.member(np.array([[0.6, 0.0, 0.0]]))))
    out.append(("clamped nan", clamp.output_domain.descriptor.nan))
    out.append(("clamped norm", clamp.output_domain.descriptor.norm))
    out.append(("arrayd", dp.numpy.arrayd_domain(shape=(2, 3), T=float).member(np.zeros((2, 3)))))

    lin_reg = dp.sklearn.linear_model.LinearRegression(
        dp.max_divergence(),
        x_bounds=[(0, 10)],
        y_bounds=(0, 10),
        scale=1,
    ).fit(
        X=[[1], [2], [3], [4], [5]],
        y=[1, 2, 3, 4, 5],
    )
    out.append(("lr predict", lin_reg.predict([[10]]).shape))
    out.append(("lr coef", lin_reg.coef_.shape))

    model = dp.sklearn.decomposition.PCA(
        epsilon=1.0, row_norm=1.0, n_samples=100, n_features=4, n_components=2
    )
    out.append(("pca loss", round(model.measurement().map(2), 6)))
    out.append(("pca features", model.n_features))
    # no n_components: all n_features are estimated, and the parameter says so (PCA tutorial)
    default = dp.sklearn.decomposition.PCA(
        epsilon=1.0, row_norm=1.0, n_samples=100, n_features=4
    )
    out.append(("pca default n_components", default.n_components))
    out.append(("pca default repr", repr(default)))
    """
)


def _run(lib: str) -> tuple[list[tuple[str, Any]], dict[str, Any]]:
    namespace: dict[str, Any] = {"__name__": f"scenario_{lib}"}
    exec(compile(SCENARIO.format(lib=lib), f"<scenario {lib}>", "exec"), namespace)  # noqa: S102
    return namespace["out"], namespace


def test_extras_code_runs_with_only_the_import_changed() -> None:
    ours, ns = _run("opendp_lite")
    # the PCA tutorial's fit, on opendp_lite only
    model = ns["model"]
    data = np.random.default_rng(0).normal(size=(100, 4)) / 4  # data, not mechanism randomness
    model.fit(data)
    assert model.components_.shape == (2, 4) and model.singular_values_.shape == (2,)
    assert model.explained_variance_ratio_.shape == (2,)
    fitted = (
        ns["dp"]
        .sklearn.decomposition.PCA(epsilon=1.0, row_norm=1.0, n_samples=100, n_features=4)
        .measurement()(data)
    )
    assert fitted.components_.shape == (4, 4)

    pytest.importorskip("opendp")
    theirs, _ = _run("opendp")
    assert [k for k, _ in ours] == [k for k, _ in theirs]
    for (key, mine), (_, opendp) in zip(ours, theirs, strict=True):
        assert mine == opendp, f"{key}: opendp_lite {mine!r} != OpenDP {opendp!r}"
