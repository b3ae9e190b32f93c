"""The documentation's code runs: every ```python block of the guide and the seed pages is
executed, page by page in one namespace, in order (so a page reads like a notebook)."""

from __future__ import annotations

import gzip
import importlib
import importlib.util
import re
import shutil
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
#: the tabular-data chapter (the DP table API), in reading order
TABULAR = [
    "tabular/index.md",
    "tabular/essential-statistics.md",
    "tabular/preparing-microdata.md",
    "tabular/grouping.md",
    "tabular/identifier-truncation.md",
    "tabular/other-frames.md",
]
HOWTO = sorted(DOCS.glob("how-to/*.md"))  # every how-to page is an executed page
PAGES = (
    [DOCS / name for name in GUIDE]
    + [DOCS / name for name in TABULAR]
    + sorted(DOCS.glob("seeds/*.md"))
    + HOWTO
    + [DOCS.parent / "README.md"]
)
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
#: ``<!-- requires: module:attribute -->`` in a page: its code needs ``module.attribute``
#: (e.g. ``opendp_lite.prelude:sklearn``, an optional extra); the page is skipped without it.
REQUIRES = re.compile(r"<!-- requires: ([\w.]+):(\w+) -->")
#: ``<!-- requires-data: NAME -->``: the page reads the example file ``NAME`` through
#: ``dp.examples`` (e.g. ``v2_france_lfs.csv``, the France LFS file of OpenDP's tutorials).
REQUIRES_DATA = re.compile(r"<!-- requires-data: ([\w.]+) -->")
#: offline stand-ins for the example files, looked for in a ``shared/data`` folder above the
#: checkout (see that folder's README); a test never downloads
STANDINS = {"v2_france_lfs.csv": "v2_france_lfs.standin.csv.gz"}


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


def provide_example_data(text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the example files a page reads available to ``dp.examples``, or skip the page.

    A file already in ``dp.examples.data_dir()`` is used as it is.  Otherwise its stand-in
    (``STANDINS``), found in a ``shared/data`` folder above the checkout, is decompressed into
    ``tmp_path``, which ``$OPENDP_LITE_DATA`` then names for this test only.  Without either the
    page is skipped: the test never downloads.
    """
    names = REQUIRES_DATA.findall(text)
    if not names:
        return
    from opendp_lite.extras.examples import data_dir

    missing = [name for name in names if not (data_dir() / name).is_file()]
    if not missing:
        return
    for name in missing:
        standin = next(
            (
                folder / "shared" / "data" / STANDINS[name]
                for folder in DOCS.parents
                if name in STANDINS and (folder / "shared" / "data" / STANDINS[name]).is_file()
            ),
            None,
        )
        if standin is None:
            pytest.skip(f"the page reads {name}, which is not in {data_dir()} (no stand-in found)")
        with gzip.open(standin, "rb") as source, (tmp_path / name).open("wb") as target:
            shutil.copyfileobj(source, target)
    for name in set(names) - set(missing):  # the rest, from the data directory as it was
        shutil.copyfile(data_dir() / name, tmp_path / name)
    monkeypatch.setenv("OPENDP_LITE_DATA", str(tmp_path))


def test_there_are_pages_with_examples() -> None:
    assert len(PAGES) >= 7
    assert sum(len(BLOCK.findall(p.read_text(encoding="utf-8"))) for p in PAGES) >= 20


def test_every_seed_has_a_page() -> None:
    names = {p.name[:3] for p in DOCS.glob("seeds/*.md")}
    assert names >= {"000", "001", "002", "003", "004"}


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS.parent)) for p in PAGES])
def test_page_examples_run(
    page: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = page.read_text(encoding="utf-8")
    skip_unless_installed(text)  # an optional extra the page needs
    provide_example_data(text, tmp_path, monkeypatch)  # an example file the page reads
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


def test_tabular_figures_are_written(tmp_path: Path) -> None:
    """``docs/make_figures.py`` draws the tabular chapter's figures from any file with the
    France LFS columns (here a small synthetic one), and each page's figure is among them."""
    pytest.importorskip("matplotlib")
    pl = pytest.importorskip("polars")
    spec = importlib.util.spec_from_file_location("make_figures", DOCS / "make_figures.py")
    assert spec is not None and spec.loader is not None
    figures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(figures)
    rows = 9 * 4 * 30
    csv = tmp_path / "lfs.csv"
    pl.DataFrame(
        {
            "PIDENT": [i % 200 for i in range(rows)],
            "YEAR": [2005 + i % 9 for i in range(rows)],
            "QUARTER": [1 + i % 4 for i in range(rows)],
            "SEX": [1 + i % 2 for i in range(rows)],
            "AGE": [float(20 + i % 50) for i in range(rows)],
            "HWUSUAL": [float(i % 60) for i in range(rows)],
            "HWACTUAL": [float(i % 60) for i in range(rows)],
            "ILOSTAT": [1 + i % 3 for i in range(rows)],
        }
    ).write_csv(csv)
    paths = figures.write_tabular_figures(tmp_path / "out", csv, quick=True)
    assert sorted(p.name for p in paths) == sorted(figures.TABULAR_FIGURES)
    for p in paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    drawn = set(figures.TABULAR_FIGURES)
    for name in TABULAR:
        for target in re.findall(r"\]\(\.\./figures/([^)]+\.png)\)", (DOCS / name).read_text()):
            assert target in drawn, f"{name}: {target} is not drawn by write_tabular_figures"
