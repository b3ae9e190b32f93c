"""The sampler lemmas (docs/proofs/sampling/) stay checkable one at a time and in step with the
code: each states its claim, names the functions it covers (which exist), and names tests of its
exact fallback (which exist); every function of ``samplers/fast/`` and ``samplers/selection.py``'s
race is covered by some lemma; every noise proof cites the lemmas of the path that runs."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROOFS = ROOT / "docs" / "proofs"
LEMMAS = sorted((PROOFS / "sampling").glob("*.md"))
QUALNAME = re.compile(r"`(opendp_lite(?:\.\w+)+)`")
TEST_ID = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")


def _covers(text: str) -> list[str]:
    match = re.search(r"\*\*Covers\.\*\*(.*?)\n\n", text, re.DOTALL)
    assert match, "no **Covers.** paragraph"
    return QUALNAME.findall(match.group(1))


def _resolve(qualname: str) -> object:
    parts = qualname.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(qualname)


def test_there_are_lemmas() -> None:
    assert len(LEMMAS) >= 8


@pytest.mark.parametrize("lemma", LEMMAS, ids=[p.stem for p in LEMMAS])
def test_lemma_states_covers_proves_and_names_its_tests(lemma: Path) -> None:
    text = lemma.read_text(encoding="utf-8")
    for part in ("**Statement.**", "**Covers.**", "**Proof", "∎"):
        assert part in text, f"{lemma.name} lacks {part}"
    covered = _covers(text)
    assert covered, f"{lemma.name} names no function"
    for name in covered:
        try:
            _resolve(name)
        except (ImportError, AttributeError):
            pytest.fail(f"{lemma.name} covers {name}, which does not exist")
    tested = re.search(r"\*\*(?:Exact fallback tested|Tested) by\.\*\*(.*)", text, re.DOTALL)
    assert tested, f"{lemma.name} names no test"
    ids = TEST_ID.findall(tested.group(1))
    assert ids, f"{lemma.name} names no test node"
    for path, name in ids:
        source = (ROOT / path).read_text(encoding="utf-8")
        assert re.search(rf"^def {name}\(", source, re.MULTILINE), f"{lemma.name}: {path}::{name}?"


def _top_level(module: str) -> set[str]:
    """Qualified names of the functions and classes defined at top level in ``module``, or in
    every module of the package ``module`` (as ``package.submodule.name``)."""
    base = ROOT / module.replace(".", "/")
    if base.is_dir():
        paths = {f"{module}.{f.stem}": f for f in sorted(base.glob("*.py")) if f.stem != "__init__"}
        paths[module] = base / "__init__.py"
    else:
        paths = {module: base.with_suffix(".py")}
    kinds = (ast.FunctionDef, ast.ClassDef)
    return {
        f"{name}.{node.name}"
        for name, path in paths.items()
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, kinds)
    }


def test_the_fast_sampler_is_a_package_of_modules() -> None:
    """The walk below sees the package's modules (a split that moved them would empty it)."""
    names = _top_level("opendp_lite.samplers.fast")
    assert "opendp_lite.samplers.fast.attempt._attempt" in names
    assert len({n.rsplit(".", 1)[0] for n in names}) >= 5


def test_every_fast_sampler_function_is_covered_by_a_lemma() -> None:
    """A helper added to samplers/fast/ needs a lemma that says why it keeps the law."""
    covered = {name for lemma in LEMMAS for name in _covers(lemma.read_text(encoding="utf-8"))}
    missing = _top_level("opendp_lite.samplers.fast") - covered
    assert not missing, f"functions of samplers/fast/ no lemma covers: {sorted(missing)}"


NOISE_PROOFS = [
    "make_laplace.md",
    "make_gaussian.md",
    "make_geometric.md",
    "make_base_laplace.md",
    "make_base_gaussian.md",
    "make_base_discrete_laplace.md",
    "make_base_discrete_gaussian.md",
    "make_noise.md",
]


@pytest.mark.parametrize("proof", NOISE_PROOFS)
def test_noise_proofs_cite_the_fast_samplers(proof: str) -> None:
    """The noise mechanisms release through samplers/batch.py -> samplers/fast/: their proofs
    cite the lemmas of that path (directly or through make_laplace/make_gaussian), and none
    says the noise is drawn by the reference samplers."""
    text = (PROOFS / proof).read_text(encoding="utf-8")
    cites = re.findall(r"\]\((sampling/[\w-]+\.md|vectorized_sampling\.md|make_\w+\.md)\)", text)
    assert cites, f"{proof} cites no sampling lemma"
    assert "sampled exactly (CKS20" not in text and "sampled exactly by CKS20" not in text


def test_the_direct_noise_proofs_cite_every_path_that_runs() -> None:
    for proof in ("make_laplace.md", "make_gaussian.md"):
        text = (PROOFS / proof).read_text(encoding="utf-8")
        for lemma in ("fast-attempt", "fast-streams", "fast-exact-path", "fast-lazy-tail"):
            assert f"(sampling/{lemma}.md)" in text, f"{proof} does not cite {lemma}"
        for lemma in ("fast-reservoir", "fast-attempt-bounds", "fast-output-rounding"):
            assert f"(sampling/{lemma}.md)" in text, f"{proof} does not cite {lemma}"
