"""The proof pages' rendering (docs/_ext/proof_pages.py): the header becomes a table, the page
shows the constructor's source before the argument and each pinned helper after it, with links;
a header MkDocs could parse as YAML (stripped into ``page.meta``) gives the same page."""

from __future__ import annotations

import html
import importlib.util
import inspect
import re
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from opendp_lite.transformations.sum import make_sum

ROOT = Path(__file__).resolve().parents[2]


def _hook() -> Any:
    spec = importlib.util.spec_from_file_location(
        "proof_pages", ROOT / "docs" / "_ext" / "proof_pages.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


HOOK = _hook()


class _Files:
    """The part of MkDocs' ``Files`` the hook uses, over the real docs tree."""

    def __init__(self) -> None:
        self.pages = [
            SimpleNamespace(src_uri=p.relative_to(ROOT / "docs").as_posix(), abs_src_path=str(p))
            for p in sorted((ROOT / "docs" / "api").rglob("*.md"))
        ]

    def documentation_pages(self) -> list[Any]:
        return self.pages

    def get_file_from_path(self, src_uri: str) -> Any:
        for page in self.pages:
            if page.src_uri == src_uri:
                return SimpleNamespace(url_relative_to=lambda other, s=src_uri: "../../" + s)
        return None


def _page(path: Path, meta: dict[str, Any] | None = None) -> Any:
    file = SimpleNamespace(src_uri=f"proofs/{path.name}", abs_src_path=str(path))
    return SimpleNamespace(file=file, meta=meta or {})


def _text_of(block: str) -> str:
    """The text of highlighted HTML code (tags and line-number cells removed)."""
    block = re.sub(r'<td class="linenos">.*?</td>', "", block, flags=re.DOTALL)
    return html.unescape(re.sub(r"<[^>]+>", "", block))


def _render(path: Path, markdown: str, meta: dict[str, Any] | None = None) -> str:
    """The page's Markdown as the hook writes it, its code blocks put in (as after rendering)."""
    page = _page(path, meta)
    out = str(HOOK.on_page_markdown(markdown, page, None, _Files()))
    assert "<details" not in out  # code reaches the page only after Markdown and search
    return str(HOOK.on_post_page(out, page, None))


PROOF = ROOT / "docs" / "proofs" / "make_sum.md"


def test_header_becomes_a_table_and_the_front_matter_is_gone() -> None:
    out = _render(PROOF, PROOF.read_text(encoding="utf-8"))
    assert not out.startswith("---")
    assert out.startswith("# make_sum\n")
    table = out[out.index('<table class="proof-header">') : out.index("</table>")]
    for label in ("Constructor", "Signature", "Input domain", "Input metric", "Map", "Pin"):
        assert f"<th>{label}</th>" in table
    # Values are escaped, never read as Markdown or table syntax ('|' in the metric).
    assert "symmetric_distance() | insert_delete_distance()" in table
    assert "&#x27;Domain[Any]&#x27;" in table
    # The constructor links to its entry in the API reference.
    assert 'href="../../api/transformations/sum.md#opendp_lite.transformations.sum.make_sum"' in (
        table
    )


def test_function_comes_before_the_argument_and_is_the_real_source() -> None:
    out = _render(PROOF, PROOF.read_text(encoding="utf-8"))
    function, proof = out.index("## The function"), out.index("## The proof")
    covers = out.index("## Code this proof covers")
    assert function < proof < covers
    source = inspect.getsource(inspect.unwrap(make_sum)).rstrip("\n")
    block = out[function:proof]
    assert source in _text_of(block)
    start = inspect.getsourcelines(inspect.unwrap(make_sum))[1]
    assert f'<span class="normal">{start}</span>' in block  # numbered as in the file
    assert "**Floats.**" in out[proof:covers]  # the body itself, between the two


def test_yaml_front_matter_stripped_by_mkdocs_gives_the_same_page(tmp_path: Path) -> None:
    text = PROOF.read_text(encoding="utf-8")
    body = text.split("\n---\n", 1)[1]
    header = HOOK.read_header(PROOF)
    # MkDocs stripped a valid-YAML header: the Markdown has none, page.meta has it.
    stripped = tmp_path / "make_sum.md"
    stripped.write_text(body, encoding="utf-8")
    from_meta = _render(stripped, body, meta=header)
    assert from_meta == _render(PROOF, text)


def _dep(qualname: str, path: str, lineno: int, end: int, kind: str = "code") -> Any:
    return SimpleNamespace(
        qualname=qualname, path=path, lineno=lineno, end_lineno=end, kind=kind, digest="d"
    )


def _unit(module: Any, name: str) -> tuple[int, int]:
    lines, start = inspect.getsourcelines(getattr(module, name))
    return start, start + len(lines) - 1


def test_pinned_helpers_are_shown_by_module_and_plumbing_is_listed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import opendp_lite.core as core
    import opendp_lite.transformations.sum as sum_module
    import tools.proofs as proofs

    plan = _unit(sum_module, "FloatSumPlan")
    total = inspect.getsourcelines(sum_module.FloatSumPlan.total)
    total_span = (total[1], total[1] + len(total[0]) - 1)
    deps = [
        _dep("opendp_lite.transformations.sum.make_sum", "opendp_lite/transformations/sum.py",
             *_unit(sum_module, "make_sum")),
        _dep("opendp_lite.transformations.sum.FloatSumPlan", "opendp_lite/transformations/sum.py",
             *plan),
        _dep("opendp_lite.transformations.sum.FloatSumPlan.total",
             "opendp_lite/transformations/sum.py", *total_span),
        _dep("opendp_lite._arith.up", "opendp_lite/_arith.py", 1, 3),
        _dep("opendp_lite.core.Transformation", "opendp_lite/core.py",
             *_unit(core, "Transformation")),
        _dep("docs/proofs/lemmas/exact-grid-sum.md", "docs/proofs/lemmas/exact-grid-sum.md", 1,
             80, kind="doc"),
    ]  # fmt: skip
    monkeypatch.setattr(proofs, "dependencies", lambda name: deps, raising=False)
    out = _render(PROOF, PROOF.read_text(encoding="utf-8"))
    covers = out[out.index("## Code this proof covers") :]
    assert "covers 5 pieces of code and 1 document" in covers
    # helpers outside the shared plumbing: shown, grouped by module, with their source
    assert covers.index("**`opendp_lite/_arith.py`**") < covers.index(
        "**`opendp_lite/transformations/sum.py`**"
    )
    assert "<summary>opendp_lite._arith.up (opendp_lite/_arith.py:1)</summary>" in covers
    arith = (ROOT / "opendp_lite" / "_arith.py").read_text(encoding="utf-8").splitlines()
    assert "\n".join(arith[:3]) in _text_of(covers)
    assert "class FloatSumPlan:" in _text_of(covers)
    # a method inside a shown class is not shown a second time; the constructor not at all
    assert "FloatSumPlan.total (" not in covers
    assert "make_sum (" not in covers
    # the shared plumbing is listed (with its lines), not shown
    assert "Shared plumbing: 1 pin in 1 module" in covers
    assert f"`Transformation` ({_unit(core, 'Transformation')[0]}" in covers
    assert "class Transformation" not in covers
    assert "- [Lemma: exact grid sum](lemmas/exact-grid-sum.md)" in covers


def test_other_pages_pass_through() -> None:
    lemma = ROOT / "docs" / "proofs" / "lemmas" / "exact-grid-sum.md"
    text = lemma.read_text(encoding="utf-8")
    page = SimpleNamespace(
        file=SimpleNamespace(src_uri="proofs/lemmas/exact-grid-sum.md", abs_src_path=str(lemma)),
        meta={},
    )
    assert HOOK.on_page_markdown(text, page, None, _Files()) == text


def test_every_proof_header_parses_to_a_table_row_set() -> None:
    """Every proof page gets a table: its header is readable and names its constructor."""
    for path in sorted((ROOT / "docs" / "proofs").glob("make_*.md")):
        header = HOOK.read_header(path)
        assert header.get("constructor") == path.stem, path
        assert header.get("map"), path


def test_static_location_and_digest_match_the_proof_tool() -> None:
    """Without importing, the hook finds each constructor's source where inspect does, and its
    pin state uses the digest the proof tool computes."""
    import tools.proofs as proofs

    single_function_pins = not hasattr(proofs, "dependencies")  # else the pin tool's digest
    for name, fn in proofs.public_constructors():
        inner = inspect.unwrap(fn)
        dep = HOOK.locate(inner.__module__, name)
        assert dep is not None, name
        lines, start = inspect.getsourcelines(inner)
        assert (dep.lineno, dep.end_lineno) == (start, start + len(lines) - 1), name
        if single_function_pins:
            assert HOOK.text_digest(dep) == proofs.source_hash(fn), name


def test_a_stale_pin_is_shown_as_stale() -> None:
    header = HOOK.read_header(PROOF)
    deps = HOOK.dependencies("make_sum", header["module"])
    assert "current" in HOOK.pin_state(header, deps)
    stale = dict(header, source="000000000000")
    assert "STALE" in HOOK.pin_state(stale, deps)


def test_private_modules_are_not_linked_to_a_package_page() -> None:
    """``transformations/_aggregate.py`` is not on the ``opendp_lite.transformations`` page."""
    pages = HOOK.api_pages(_Files().documentation_pages())
    private = HOOK.Dep("opendp_lite.transformations._aggregate.grid_k",
                       "opendp_lite/transformations/_aggregate.py", 1, 2)  # fmt: skip
    assert HOOK.api_link(private, pages) is None
    import opendp_lite.transformations.sum as sum_module

    span = _unit(sum_module, "make_sum")
    public = HOOK.Dep(
        "opendp_lite.transformations.sum.make_sum", "opendp_lite/transformations/sum.py", *span
    )
    assert HOOK.api_link(public, pages) == (
        "api/transformations/sum.md",
        "opendp_lite.transformations.sum.make_sum",
    )


def test_the_pin_tool_is_found_when_mkdocs_does_not_put_the_repository_on_the_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The mkdocs CLI starts with the venv's bin directory, not the repository, on sys.path:
    the hook must still reach tools.proofs (else every page lost its pins and its code), and
    its own reader must decode the YAML-quoted header."""
    mod = HOOK
    root = str(ROOT)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in (root, "", ".")])
    for name in [m for m in sys.modules if m == "tools" or m.startswith("tools.")]:
        monkeypatch.delitem(sys.modules, name)
    tool = mod._proofs_module()
    assert tool is not None and hasattr(tool, "dependencies")
    header = mod._parse((ROOT / "docs" / "proofs" / "make_sum.md").read_text(encoding="utf-8"))
    assert header["module"] == "opendp_lite.transformations.sum"
