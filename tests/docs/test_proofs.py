"""Every public constructor has a proof whose header matches its actual signature, and whose
pins (``tools.proofs``: the code its maps, function and domain checks run, and the lemmas and
sampler proofs it rests on) are unchanged since the proof was last reviewed.

A changed signature, helper, sampler or cited proof fails this test until the proof is reviewed
and restamped by name (``python -m tools.proofs stamp make_x``).
"""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tools import mutations, pins, proofs
from tools.proofs import PROOFS, REQUIRED_KEYS, Dep, dependencies, describe, read_header, status

CONSTRUCTORS = list(proofs.public_constructors())
ROOT = pins.ROOT


def test_there_are_constructors() -> None:
    assert len(CONSTRUCTORS) >= 3


@pytest.mark.parametrize(("name", "fn"), CONSTRUCTORS, ids=[n for n, _ in CONSTRUCTORS])
def test_proof_exists_and_matches_signature(name: str, fn: object) -> None:
    path = PROOFS / f"{name}.md"
    assert path.is_file(), f"missing proof {path}"
    header = read_header(path)
    missing = [k for k in REQUIRED_KEYS if not header.get(k) or header.get(k) == "TODO"]
    assert not missing, f"{path}: header lacks {missing}"
    assert header["constructor"] == name
    st = status(name)
    assert st.ok, (
        describe(st) + f"\nReview the proof against `python -m tools.proofs diff {name}`, then "
        f"run `python -m tools.proofs stamp {name}`"
    )
    body = path.read_text(encoding="utf-8").split("---", 2)[2]
    assert len(body.split()) >= 40, f"{path}: the proof body is too short to be a proof"


@pytest.mark.parametrize(("name", "fn"), CONSTRUCTORS, ids=[n for n, _ in CONSTRUCTORS])
def test_docstring_states_map_and_names_proof(name: str, fn: object) -> None:
    doc = inspect.getdoc(fn) or ""
    assert f"docs/proofs/{name}.md" in doc, f"{name}'s docstring must name docs/proofs/{name}.md"
    assert ">>>" in doc, f"{name}'s docstring must carry a runnable example"


def _front_matters() -> list[Path]:
    return sorted(p for p in PROOFS.rglob("*.md") if p.read_text("utf-8").startswith("---\n"))


@pytest.mark.parametrize("path", _front_matters(), ids=lambda p: p.name)
def test_front_matter_is_valid_yaml(path: Path) -> None:
    """The site renders a header as a table only if it is YAML (a run-on paragraph if not)."""
    block, _ = proofs.split_front_matter(path.read_text("utf-8"))
    assert block is not None
    data = yaml.safe_load(block)
    assert isinstance(data, dict), f"{path}: the front matter is not a YAML mapping"
    bad = {k: v for k, v in data.items() if not isinstance(v, str)}
    assert not bad, f"{path}: header values must be quoted strings, got {bad}"
    assert read_header(path) == data


def test_every_constructor_proof_has_front_matter() -> None:
    have = {p.name for p in _front_matters()}
    assert {f"{n}.md" for n, _ in CONSTRUCTORS} <= have


EXPECTED_PINS = {
    "make_sum": {
        "opendp_lite.transformations.sum._float_sum",
        "opendp_lite.transformations.sum._int_sum",
        "opendp_lite.transformations.sum.FloatSumPlan.__init__",
        "opendp_lite.transformations._aggregate.rounding_error",
        "opendp_lite._arith.up",
    },
    "make_laplace": {
        "opendp_lite.measurements.noise._laplace",
        "opendp_lite.measurements.noise._rounding_penalty",
        "opendp_lite.samplers.discrete_laplace.sample_discrete_laplace",
    },
    "make_variance": {"opendp_lite.transformations._aggregate.rounding_error"},
    "make_count": {"opendp_lite.transformations.count._saturating"},
}


@pytest.mark.parametrize("name", sorted(EXPECTED_PINS))
def test_pins_cover_helpers_transitively(name: str) -> None:
    """One-line wrappers are pinned to the helpers that compute their maps and draw noise."""
    deps = dependencies(name)
    assert all(isinstance(d, Dep) for d in deps)
    code = {d.qualname for d in deps if d.kind == "code"}
    fn = inspect.unwrap(dict(CONSTRUCTORS)[name])
    assert f"{fn.__module__}.{name}" in code
    assert EXPECTED_PINS[name] <= code, f"{name} misses pins {EXPECTED_PINS[name] - code}"
    for d in deps:
        assert d.lineno <= d.end_lineno, d
        assert (ROOT / d.path).is_file(), d
        assert len(d.digest) == 16, d


def test_pins_are_not_the_whole_package() -> None:
    """Code that no path from make_count reaches does not pin its proof."""
    code = {d.qualname for d in dependencies("make_count")}
    assert "opendp_lite.measurements.noise._laplace" not in code
    assert "opendp_lite.transformations.sum._float_sum" not in code


def _flagged(edits: dict[str, str]) -> set[str]:
    with proofs.overridden(edits):
        return {s.name for s in proofs.stale()}


@pytest.mark.parametrize(
    ("edit", "proof"),
    [
        ("audit-float-sum-relax", "make_sum"),
        ("audit-int-sum-quarter", "make_sum"),
        ("audit-rounding-penalty-0", "make_laplace"),
        ("audit-rounding-penalty-0", "make_gaussian"),
        ("dlap-zero-twice", "make_laplace"),
        ("lemma-row-by-row", "make_clamp"),
    ],
)
def test_map_breaking_edits_flag_the_proofs_that_depend_on_them(edit: str, proof: str) -> None:
    """The issue's three audit edits (which left the old top-function hash green), a sampler
    edit and a lemma edit each flag the proof resting on them, and not every proof."""
    m = next(m for m in mutations.MUTATIONS if m.id == edit)
    flagged = _flagged({m.path: mutations.apply(m)})
    assert proof in flagged
    assert len(flagged) < len(CONSTRUCTORS) // 2


def test_formatting_only_changes_flag_nothing() -> None:
    """Comments, line breaks, quotes, parentheses and re-wrapped docstrings are not code."""
    path = "opendp_lite/transformations/sum.py"
    text = (ROOT / path).read_text("utf-8")
    edits = [
        (
            "            return ar.up(d_in * sens + plan.relax)\n",
            "            # the float rounding term is part of the map\n"
            "            return ar.up(\n"
            "                (d_in * sens) + plan.relax\n"
            "            )\n",
        ),
        (
            "shift ``p``, grid bounds, saturation, relaxation.",
            "shift ``p``,\n    grid bounds,   saturation, relaxation.\n    ",
        ),
    ]
    edited = text
    for old, new in edits:
        assert edited.count(old) == 1, old
        edited = edited.replace(old, new)
    assert 'mode == "checked"' in edited
    edited = edited.replace('mode == "checked"', "mode == 'checked'")
    assert _flagged({path: edited}) == set()


def test_a_changed_docstring_formula_flags_its_proofs() -> None:
    path = "opendp_lite/transformations/_aggregate.py"
    text = (ROOT / path).read_text("utf-8")
    old = "relative error < 2^-53"
    assert text.count(old) == 1
    assert "make_sum" in _flagged({path: text.replace(old, "relative error < 2^-54")})


def test_a_unit_digest_does_not_depend_on_its_module() -> None:
    src = 'def helper(x):\n    """Twice x."""\n    return 2 * x\n'
    _, a = pins._parse_module("a.py", src)
    _, b = pins._parse_module("pkg/b.py", "import os\n\n\n" + src.replace("2 * x", "(2*x)"))
    _, c = pins._parse_module("a.py", src.replace("2 * x", "3 * x"))
    assert a[0].digest == b[-1].digest
    assert c[0].digest != a[0].digest


def test_every_mutation_anchor_applies() -> None:
    """An edit whose anchor is gone is an error, not a silent skip (tools/mutations.py)."""
    assert len(mutations.MUTATIONS) >= 40
    assert sum(m.in_helper for m in mutations.MUTATIONS) > len(mutations.MUTATIONS) // 2
    for m in mutations.MUTATIONS:
        assert mutations.apply(m) != (ROOT / m.path).read_text("utf-8"), m.id


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own interpreter and tool
        [sys.executable, "-m", "tools.proofs", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def test_cli_help_documents_every_command() -> None:
    r = _cli("--help")
    assert r.returncode == 0
    for cmd in proofs.COMMANDS:
        assert f"tools.proofs {cmd}" in r.stdout, cmd


@pytest.mark.parametrize(
    "args",
    [
        ("stamp",),
        ("--stamp",),
        ("stamp", "make_nonexistent"),
        ("stamp", "make_sum", "make_nonexistent"),
        ("--bogus",),
    ],
)
def test_cli_refuses_bulk_and_unknown_stamps(
    args: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    """Stamping is explicit: no names, or any unknown name, is an error and writes nothing."""
    before = (PROOFS / "make_sum.md").read_text("utf-8")
    lock = proofs.lock_path("make_sum").read_text("utf-8")
    assert proofs.main(list(args)) == 2
    assert capsys.readouterr().err
    assert (PROOFS / "make_sum.md").read_text("utf-8") == before
    assert proofs.lock_path("make_sum").read_text("utf-8") == lock


LEMMAS = PROOFS / "lemmas"
# A phrase from each lemma's argument: a constructor's proof cites the lemma instead of
# restating it, so none of these may appear outside the lemma itself (and each must appear in
# its lemma, so that the fingerprint follows the lemma's text).
LEMMA_FINGERPRINTS = {
    "row-by-row.md": "turns each added (removed) record",
    "post-processing.md": "Pr[f(M(x)) ∈ S] = E[Pr[M(x) ∈ f⁻¹(S)",
    "exact-integer-sum.md": "64-bit carriers are split into high and low 32-bit halves",
    "exact-grid-sum.md": "scaling by a power of two is exact unless",
    "distributed-evaluation.md": "pickled exactly and added in a tree of tasks",
    "saturating-counts.md": "f32 rounds 2^24 + 1 down",
    "parallel-composition.md": "joined by a path x = y_0, …, y_d = x′ of members",
    "nan-inputs.md": "any law is at divergence 0 from itself",
}


def _normalised(path: Path) -> str:
    """The text with line breaks folded, so a phrase wrapped over two lines still matches."""
    return " ".join(path.read_text(encoding="utf-8").split())


def test_every_lemma_link_resolves() -> None:

    for path in sorted(PROOFS.glob("*.md")):
        for target in re.findall(r"\]\((lemmas/[^)#]+)", path.read_text(encoding="utf-8")):
            assert (PROOFS / target).is_file(), f"{path.name} cites a missing lemma {target}"


@pytest.mark.parametrize("lemma", sorted(LEMMA_FINGERPRINTS))
def test_proofs_cite_lemmas_rather_than_restate_them(lemma: str) -> None:
    assert (LEMMAS / lemma).is_file()
    phrase = LEMMA_FINGERPRINTS[lemma]
    assert phrase in _normalised(LEMMAS / lemma), f"the fingerprint of {lemma} is not in it"
    restating = [p.name for p in sorted(PROOFS.glob("*.md")) if phrase in _normalised(p)]
    assert not restating, f"{restating} restate {lemma}; cite it as [..](lemmas/{lemma})"


def test_every_lemma_has_a_fingerprint_and_is_cited() -> None:
    lemmas = {p.name for p in LEMMAS.glob("*.md")}
    assert lemmas == set(LEMMA_FINGERPRINTS), "give each lemma a fingerprint phrase"
    cited = {
        t
        for p in PROOFS.glob("*.md")
        for t in re.findall(r"\]\(lemmas/([^)#]+)", p.read_text("utf-8"))
    }
    assert lemmas <= cited, f"lemmas no proof cites: {sorted(lemmas - cited)}"
