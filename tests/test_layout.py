"""The test tree mirrors the package.

A module ``opendp_lite/x/y.py`` (or ``_y.py``) is tested in ``tests/x/test_y.py`` or in
``tests/x/test_y_<aspect>.py``.  The modules listed in ``UNMIRRORED`` have no such test module
yet; each entry says in one line where the module is tested instead, or why it needs no
module of its own.  The list may shrink (a module that gets its test module must leave it),
never grow: a new package module comes with its test module.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "opendp_lite"
TESTS = ROOT / "tests"

_SAMPLERS = "tests/samplers/test_scalar_samplers.py and tests/stat/test_scalar_samplers.py"
_EXTRAS_NUMPY = "tests/extras/test_extras_numpy.py and tests/extras/test_extras_stat.py"
_CONTEXT = (
    "the Context API: tests/context/test_core*.py, tests/context/test_query*.py, "
    "tests/frames/test_context_frames.py"
)
_SENSITIVITY = "re-exported by opendp_lite/sensitivity.py: tests/test_sensitivity.py"

#: Package modules without a mirrored test module, each with where it is tested (one line).
UNMIRRORED: dict[str, str] = {
    **{
        f"serialization/{m}.py": "the encoder, decoder and their shared tables are tested "
        "through the round trip: tests/test_serialization.py, tests/compat/test_serialize.py"
        for m in ("_decode", "_encode", "_tables")
    },
    **{
        f"samplers/fast/{m}.py": "the certified sampler is tested across its modules: "
        "tests/samplers/test_fast_differential.py, test_fast_certified.py, test_exact_fallback.py"
        for m in ("attempt", "plan", "release", "reservoir", "rounding", "scalar", "vector")
    },
    "__main__.py": "the command line runs the tour: tests/test_tour.py",
    "_math.py": "parameter-choosing special functions, used by sensitivity sampling: "
    "tests/test_sensitivity.py",
    "_progress.py": "the progress bar of sensitivity sampling: tests/test_sensitivity.py",
    "_spine.py": "every then_x partial it derives: tests/typing/test_then_*.py",
    "_types.py": "carrier names and dtypes, used by every domain: tests/test_domains.py, "
    "tests/typing",
    "backends/numpy.py": "the default backend, run by every vector test; tests/test_layers.py",
    "combinators/random_dp.py": "random-DP relabelling with sensitivity sampling: "
    "tests/test_sensitivity.py, tests/combinators/test_local.py",
    "context/compositor.py": _CONTEXT,
    "context/plugins.py": _CONTEXT,
    "context/summary.py": _CONTEXT,
    "extras/numpy/_checks.py": _EXTRAS_NUMPY,
    "extras/numpy/_inputs.py": _EXTRAS_NUMPY,
    "extras/numpy/clamp.py": _EXTRAS_NUMPY,
    "extras/numpy/count.py": _EXTRAS_NUMPY,
    "extras/numpy/domain.py": _EXTRAS_NUMPY,
    "extras/numpy/mean.py": _EXTRAS_NUMPY,
    "extras/numpy/sscp.py": _EXTRAS_NUMPY,
    "extras/numpy/sum.py": _EXTRAS_NUMPY,
    "extras/sklearn/decomposition.py": "tests/extras/test_extras_sklearn.py, "
    "tests/extras/test_extras_stat.py",
    "extras/sklearn/linear_model.py": "tests/extras/test_extras_sklearn.py",
    "measurements/sensitivity/distributions.py": _SENSITIVITY,
    "measurements/sensitivity/norms.py": _SENSITIVITY,
    "measurements/sensitivity_sampling.py": _SENSITIVITY,
    "measurements/user.py": "user measurements in chains: tests/laws, tests/test_search.py",
    "prelude.py": "the import every test uses; its names: tests/test_exports.py",
    "samplers/batch.py": _SAMPLERS + ", tests/measurements/test_noise.py",
    "samplers/bernoulli.py": _SAMPLERS,
    "samplers/discrete_gaussian.py": _SAMPLERS + ", tests/stat/test_reference_discrete_gaussian.py",
    "samplers/discrete_laplace.py": _SAMPLERS,
    "samplers/geometric.py": _SAMPLERS,
    "samplers/noise_ref.py": _SAMPLERS + ", tests/samplers/test_fast_certified.py",
    "samplers/selection.py": "tests/stat/test_selection.py, tests/measurements/test_noisy_max.py",
    "samplers/tulap.py": "tests/measurements/test_canonical_noise.py, "
    "tests/stat/test_canonical_noise.py",
    "samplers/uniform.py": "tests/stat/test_uniform.py, tests/samplers/test_lazy_scalar.py",
    "transformations/filter.py": "frame filters: tests/frames/, tests/typing/test_then_runtime.py",
    "transformations/user.py": "user transformations in chains: tests/laws, tests/test_core.py",
}


def _test_module_of(module: Path) -> bool:
    rel = module.relative_to(PACKAGE)
    where = TESTS / rel.parent
    stem = rel.stem.lstrip("_")
    return (where / f"test_{stem}.py").exists() or any(where.glob(f"test_{stem}_*.py"))


def unmirrored() -> list[str]:
    """The package modules (``__init__`` aside) without a mirrored test module."""
    modules = (p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
    return sorted(
        p.relative_to(PACKAGE).as_posix()
        for p in modules
        if p.stem != "__init__" and not _test_module_of(p)
    )


def test_every_package_module_has_a_test_module_or_a_stated_exception() -> None:
    new = [m for m in unmirrored() if m not in UNMIRRORED]
    assert not new, (
        "package modules without tests/<same path>/test_<name>.py (or test_<name>_*.py): "
        f"{new}; add the test module (or, with a one-line reason, an entry of UNMIRRORED)"
    )


def test_the_exceptions_are_modules_still_without_a_test_module() -> None:
    mirrored = sorted(set(UNMIRRORED) - set(unmirrored()))
    assert not mirrored, f"these modules exist with a test module, or not at all: {mirrored}"


def test_each_exception_gives_a_one_line_reason() -> None:
    for module, reason in UNMIRRORED.items():
        assert reason.strip() and "\n" not in reason, module
