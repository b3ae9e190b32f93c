"""Every public constructor has a proof whose header matches its actual signature.

A changed signature fails this test until its proof's header (and so its proof) is reviewed.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from tools.proofs import (
    PROOFS,
    REQUIRED_KEYS,
    SOURCE_KEY,
    parse_header,
    public_constructors,
    signature_of,
    source_hash,
)

CONSTRUCTORS = list(public_constructors())


def test_there_are_constructors() -> None:
    assert len(CONSTRUCTORS) >= 3


@pytest.mark.parametrize(("name", "fn"), CONSTRUCTORS, ids=[n for n, _ in CONSTRUCTORS])
def test_proof_exists_and_matches_signature(name: str, fn: object) -> None:
    path = PROOFS / f"{name}.md"
    assert path.is_file(), f"missing proof {path}"
    text = path.read_text(encoding="utf-8")
    header = parse_header(text)
    missing = [k for k in REQUIRED_KEYS if not header.get(k) or header.get(k) == "TODO"]
    assert not missing, f"{path}: header lacks {missing}"
    assert header["constructor"] == name
    assert header["signature"] == signature_of(fn), (
        f"{path}: the signature changed; review the proof and update its header to\n"
        f"signature: {signature_of(fn)}"
    )
    assert header[SOURCE_KEY] == source_hash(fn), (
        f"{path}: {name}'s body changed since its proof was last reviewed; review the proof, "
        f"then run `python -m tools.proofs --stamp {name}` (new hash {source_hash(fn)})"
    )
    body = text.split("---", 2)[2]
    assert len(body.split()) >= 40, f"{path}: the proof body is too short to be a proof"


@pytest.mark.parametrize(("name", "fn"), CONSTRUCTORS, ids=[n for n, _ in CONSTRUCTORS])
def test_docstring_states_map_and_names_proof(name: str, fn: object) -> None:
    doc = inspect.getdoc(fn) or ""
    assert f"docs/proofs/{name}.md" in doc, f"{name}'s docstring must name docs/proofs/{name}.md"
    assert ">>>" in doc, f"{name}'s docstring must carry a runnable example"


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
    import re

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


def test_source_hash_sees_a_changed_body() -> None:
    """The hash that flags a proof for review changes with any line of the body."""

    def before(x: int) -> int:
        return x + 1

    def after(x: int) -> int:
        return x + 2

    assert source_hash(before) != source_hash(after)
    assert len(source_hash(before)) == 12
