"""Seed 004, OpenDP's "Additive Noise Mechanisms" guide, run against opendp_lite.

Each snippet is the guide's code with only the imports changed (``opendp`` -> ``opendp_lite``),
and every privacy number the guide prints is checked.  The guide was written for OpenDP
versions in which ``atom_domain(T=float)`` held no NaN; now that it admits NaN (as in OpenDP
0.16), the older names (``make_base_*``) narrow it to ``nan=False``, and ``make_gaussian``
takes it as it is (NaN in, NaN out: NaN is at no finite distance from anything; OpenDP 0.16
refuses it, see docs/differences.md).  Noisy outputs are random, so for them only the type and
shape are checked.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

IMPORTS = """
from opendp_lite.prelude import enable_features
from opendp_lite.measurements import (
    make_base_laplace, make_base_discrete_laplace, make_base_discrete_gaussian, make_gaussian,
)
from opendp_lite.domains import atom_domain, vector_domain
from opendp_lite.metrics import absolute_distance, l1_distance, l2_distance
"""


def run(code: str) -> dict:
    env: dict = {}
    exec(IMPORTS + code, env)  # noqa: S102 - the guide's snippets, verbatim apart from imports
    return env


def test_snippet_1_enable_contrib() -> None:
    run('enable_features("contrib")')


def test_snippet_2_laplace(capsys) -> None:
    env = run(
        """
input_space = atom_domain(T=float), absolute_distance(T=float)
base_lap = make_base_laplace(*input_space, scale=2.)
aggregated = 0.
print("noisy aggregate:", base_lap(aggregated))
sensitivity = 1.
print("epsilon:", base_lap.map(d_in=sensitivity))
"""
    )
    out = capsys.readouterr().out
    assert "epsilon: 0.5\n" in out
    assert isinstance(env["base_lap"](0.0), float)


def test_snippet_3_gaussian(capsys) -> None:
    env = run(
        """
input_space = atom_domain(T=float), absolute_distance(T=float)
gauss = make_gaussian(*input_space, scale=2.)
aggregated = 0.
print("noisy aggregate:", gauss(aggregated))
sensitivity = 1.
print("rho:", gauss.map(d_in=sensitivity))
"""
    )
    assert "rho: 0.125\n" in capsys.readouterr().out
    gauss = env["gauss"]
    assert gauss.input_domain == env["atom_domain"](T=float)  # the guide's domain, not narrowed
    assert isinstance(gauss(0.0), float) and math.isfinite(gauss(0.0))
    assert math.isnan(gauss(math.nan))  # NaN in, NaN out


def test_snippet_4_discrete_laplace(capsys) -> None:
    env = run(
        """
input_space = atom_domain(T=int), absolute_distance(T=int)
base_discrete_lap = make_base_discrete_laplace(*input_space, scale=1.)
aggregated = 0
print("noisy aggregate:", base_discrete_lap(aggregated))
sensitivity = 1
print("epsilon:", base_discrete_lap.map(d_in=sensitivity))
"""
    )
    assert "epsilon: 1.0\n" in capsys.readouterr().out
    assert type(env["base_discrete_lap"](0)) is int


def test_snippet_5_discrete_gaussian(capsys) -> None:
    env = run(
        """
input_space = atom_domain(T=int), absolute_distance(T=int)
base_discrete_gauss = make_base_discrete_gaussian(*input_space, scale=1.)
aggregated = 0
print("noisy aggregate:", base_discrete_gauss(aggregated))
sensitivity = 1
print("rho:", base_discrete_gauss.map(d_in=sensitivity))
"""
    )
    assert "rho: 0.5\n" in capsys.readouterr().out
    assert type(env["base_discrete_gauss"](0)) is int


def test_snippets_6_to_8_vector_laplace(capsys) -> None:
    env = run(
        """
input_space = vector_domain(atom_domain(T=float)), l1_distance(T=float)
base_lap_vec = make_base_laplace(*input_space, scale=1.)
aggregated = 1.
try:
    print("noisy aggregate:", base_lap_vec(aggregated))
except TypeError as e:
    print(e)
aggregated = [0., 2., 2.]
print("noisy aggregate:", base_lap_vec(aggregated))
sensitivity = 1.
print("epsilon:", base_lap_vec.map(d_in=sensitivity))
"""
    )
    out = capsys.readouterr().out
    assert "expected Vec<f64>" in out  # the TypeError's message, printed
    assert "epsilon: 1.0\n" in out
    noisy = env["base_lap_vec"](np.array([0.0, 2.0, 2.0]))
    assert isinstance(noisy, np.ndarray) and noisy.dtype == np.float64 and noisy.shape == (3,)
    listed = env["base_lap_vec"]([0.0, 2.0, 2.0])  # a list in gives a list, as in OpenDP
    assert isinstance(listed, list) and len(listed) == 3
    assert all(type(v) is float for v in listed)


def test_snippet_9_help_documents_the_spaces() -> None:
    env = run("doc = make_base_laplace.__doc__")
    assert "MaxDivergence" in env["doc"] and "k_min" in env["doc"]


def test_snippet_10_l2_discrete_gaussian() -> None:
    env = run(
        """
input_space = vector_domain(atom_domain(T=int)), l2_distance(T=float)
base_gauss_vec = make_base_discrete_gaussian(*input_space, scale=1.)
result = base_gauss_vec.map(d_in=1.414)
"""
    )
    assert env["result"] == 0.999698


def test_snippet_11_bit_depth() -> None:
    env = run(
        """
base_discrete_lap_i32 = make_base_discrete_laplace(
    atom_domain(T="i32"), absolute_distance(T="i32"),
    scale=1., QO="f64"
)
"""
    )
    meas = env["base_discrete_lap_i32"]
    assert meas.map(1) == 1.0
    assert type(meas(2**31 - 1)) is int and meas(2**31 - 1) <= 2**31 - 1


def test_snippet_12_granularity_plot_needs_a_sized_vector() -> None:
    # The guide builds these on vector_domain(atom_domain(T=float)) of unknown size; OpenDP
    # 0.16 refuses that for k != -1074 ("domain size must be known"), and so do we.  With the
    # size given, the histogram data it plots come out on the grid 2^k.
    from opendp_lite.errors import InvalidParameter

    with pytest.raises(InvalidParameter, match="size"):
        run(
            """
input_domain, input_metric = vector_domain(atom_domain(T=float)), l1_distance(T=float)
make_base_laplace(input_domain, input_metric, scale=1., k=1)
"""
        )
    env = run(
        """
num_samples = 10_000
input_domain = vector_domain(atom_domain(T=float), size=num_samples)
input_metric = l1_distance(T=float)
supports = {}
for k in [1, 0, -1]:
    base_lap_vec = make_base_laplace(input_domain, input_metric, scale=1., k=k)
    support, counts = np.unique(base_lap_vec([0.] * num_samples), return_counts=True)
    supports[k] = support
""".replace("num_samples = 10_000", "import numpy as np\nnum_samples = 10_000")
    )
    for k, support in env["supports"].items():
        assert np.all(support / 2.0**k == np.round(support / 2.0**k))
    assert len(env["supports"][-1]) > len(env["supports"][1])


def test_snippet_13_k_penalty_table() -> None:
    env = run(
        """
k = [-1074, -1073, -100, -1, 0, 1]
input_domain, input_metric = atom_domain(T=float), absolute_distance(T=float)
ε_penalty = [make_base_laplace(input_domain, input_metric, scale=1., k=k_i).map(d_in=0.)
             for k_i in k]
"""
    )
    # the guide prints these with pandas' 6 significant digits
    shown = ["0.000000e+00", "4.940656e-324", "7.888609e-31", "5.000000e-01", "1.000000e+00"]
    shown.append("2.000000e+00")
    got = env["ε_penalty"]
    assert [f"{v:.6e}" for v in got] == shown
    assert got[1] == math.ulp(0.0)  # 2^-1073 − 2^-1074 = the least subnormal, exactly
    assert got[2] == 2.0**-100  # 2^-100 − 2^-1074 rounded up to the next float
