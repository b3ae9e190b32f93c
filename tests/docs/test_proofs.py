"""Every public constructor has a proof whose header matches its actual signature.

A changed signature fails this test until its proof's header (and so its proof) is reviewed.
"""

from __future__ import annotations

import inspect

import pytest

from opendp_lite._proofs import (
    PROOFS,
    REQUIRED_KEYS,
    parse_header,
    public_constructors,
    signature_of,
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
    body = text.split("---", 2)[2]
    assert len(body.split()) >= 40, f"{path}: the proof body is too short to be a proof"


@pytest.mark.parametrize(("name", "fn"), CONSTRUCTORS, ids=[n for n, _ in CONSTRUCTORS])
def test_docstring_states_map_and_names_proof(name: str, fn: object) -> None:
    doc = inspect.getdoc(fn) or ""
    assert f"docs/proofs/{name}.md" in doc, f"{name}'s docstring must name docs/proofs/{name}.md"
    assert ">>>" in doc, f"{name}'s docstring must carry a runnable example"
