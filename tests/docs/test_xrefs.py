"""The API reference's docstring rewriting (docs/_ext/xrefs.py): roles become links or code,
math becomes KaTeX markup, proof lines become links; code and doctests are left alone."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

griffe = pytest.importorskip("griffe")
ROOT = Path(__file__).resolve().parents[2]


def _extension() -> Any:
    spec = importlib.util.spec_from_file_location("xrefs", ROOT / "docs" / "_ext" / "xrefs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


XREFS = _extension()


@pytest.fixture(scope="module")
def package() -> Any:
    return griffe.load("opendp_lite", search_paths=[str(ROOT)], docstring_parser="google")


def _rewrite(package: Any, text: str, at: str = "transformations.sum") -> str:
    """``text`` as the extension rewrites it in the docstring of ``opendp_lite.<at>``."""
    captured: dict[str, Any] = {}

    class Capture(XREFS.CrossReferences):  # type: ignore[misc, name-defined]
        def rewrite(self, text: str, obj: Any, pkg: Any, names: Any) -> str:
            captured["names"] = names
            return str(text)

    Capture().on_package(pkg=package, loader=None)  # builds the index of documented names
    obj = package
    for part in at.split("."):
        obj = obj.members[part]
    return str(XREFS.CrossReferences().rewrite(text, obj, package, captured["names"]))


def test_roles_resolve_to_the_canonical_path_or_fall_back_to_code(package: Any) -> None:
    out = _rewrite(package, "See :func:`make_clamp` and :class:`~opendp_lite.context.Context`.")
    assert 'identifier="opendp_lite.transformations.clamp.make_clamp"' in out
    assert 'identifier="opendp_lite.context.core.Context" optional><code>Context</code>' in out
    assert _rewrite(package, ":func:`_private_helper`") == "`_private_helper`"
    spanning = _rewrite(package, "as :func:`make_sized_bounded_float_checked_sum\n`, then")
    assert "make_sized_bounded_float_checked_sum" in spanning and ":func:" not in spanning


def test_math_and_proofs(package: Any) -> None:
    assert _rewrite(package, "map :math:`d_{out} = d_{in}`.") == "map \\(d_{out} = d_{in}\\)."
    block = _rewrite(package, "    .. math:: a = b\n              + c\n\nnext")
    assert block.split("\n")[:4] == ["    \\[", "    a = b", "    + c", "    \\]"]
    proof = _rewrite(package, "Proof: docs/proofs/make_clamp.md")
    assert proof == "Proof: [docs/proofs/make_clamp.md][make_clamp]"


def test_code_and_doctests_are_untouched(package: Any) -> None:
    text = "```python\nx = ':func:`a`'\n```\n>>> f(':math:`x`')\n':math:`x`'\n\n:math:`y`"
    out = _rewrite(package, text).split("\n")
    assert out[:5] == text.split("\n")[:5]
    assert out[-1] == "\\(y\\)"
