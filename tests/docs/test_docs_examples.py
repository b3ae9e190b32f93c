"""The documentation's code runs: every ```python block of the guide and the seed pages is
executed, page by page in one namespace, in order (so a page reads like a notebook)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
GUIDE = [
    "index.md",
    "getting-started.md",
    "context.md",
    "frames.md",
    "grouped.md",
    "extras.md",
    "serialization.md",
]
HOWTO = sorted(DOCS.glob("how-to/*.md"))  # every how-to page is an executed page
PAGES = (
    [DOCS / name for name in GUIDE]
    + sorted(DOCS.glob("seeds/*.md"))
    + HOWTO
    + [DOCS.parent / "README.md"]
)
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
#: ``<!-- requires: module:attribute -->`` in a page: its code needs ``module.attribute``
#: (e.g. ``opendp_lite.prelude:sklearn``, an optional extra); the page is skipped without it.
REQUIRES = re.compile(r"<!-- requires: ([\w.]+):(\w+) -->")


def skip_unless_installed(text: str) -> None:
    """Skip a page whose ``requires`` marker names an attribute this checkout lacks.

    The attribute is looked up on the module (not the module imported on its own), so that a
    module found elsewhere on the path (another checkout's editable install) does not count.
    """
    for module, attribute in REQUIRES.findall(text):
        try:
            getattr(importlib.import_module(module), attribute)
        except (ImportError, AttributeError) as e:
            pytest.skip(f"the page needs {module}.{attribute}: {e}")


def test_there_are_pages_with_examples() -> None:
    assert len(PAGES) >= 7
    assert sum(len(BLOCK.findall(p.read_text(encoding="utf-8"))) for p in PAGES) >= 20


def test_every_seed_has_a_page() -> None:
    names = {p.name[:3] for p in DOCS.glob("seeds/*.md")}
    assert names >= {"000", "001", "002", "003", "004"}


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS.parent)) for p in PAGES])
def test_page_examples_run(page: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = page.read_text(encoding="utf-8")
    skip_unless_installed(text)  # an optional extra the page needs
    namespace: dict[str, object] = {"__name__": f"docs_{page.stem}"}
    for i, code in enumerate(BLOCK.findall(text)):
        try:
            exec(compile(code, f"{page.name}[block {i}]", "exec"), namespace)  # noqa: S102
        except Exception as e:  # pragma: no cover - the failure message is the point
            raise AssertionError(f"{page.name}, block {i} failed:\n{code}") from e
    capsys.readouterr()


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS.parent)) for p in PAGES])
def test_page_figures_exist(page: Path) -> None:
    for target in re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", page.read_text(encoding="utf-8")):
        assert (page.parent / target).resolve().is_file(), f"{page.name}: missing {target}"
