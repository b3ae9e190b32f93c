"""The documentation site builds with warnings as errors (as CI builds it), and renders offline:
no page loads a script, style sheet, font or image from the network; docstrings show no raw
Sphinx roles; math is marked for the vendored KaTeX; constructors link to their proofs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _prebuilt_site() -> Path | None:
    """The site ``.ci/run`` built with ``mkdocs build --strict`` before running pytest
    (``OPENDP_LITE_BUILT_SITE``), so that CI builds it once; it must be newer than every page,
    source file and the config it was built from."""
    env = os.environ.get("OPENDP_LITE_BUILT_SITE")
    if not env:
        return None
    site = Path(env)
    index = site / "index.html"
    assert index.is_file(), f"OPENDP_LITE_BUILT_SITE={env}: no index.html (not a built site)"
    sources = [
        ROOT / "mkdocs.yml",
        *(ROOT / "docs").rglob("*.md"),
        *(ROOT / "opendp_lite").rglob("*.py"),
    ]
    stale = [str(p.relative_to(ROOT)) for p in sources if p.stat().st_mtime > index.stat().st_mtime]
    assert not stale, f"OPENDP_LITE_BUILT_SITE={env} is older than {stale[:5]}: rebuild it"
    return site


def test_mkdocs_strict_build(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    prebuilt = _prebuilt_site()
    if prebuilt is not None:  # CI: built with --strict (set -e) just before pytest
        check_offline(prebuilt)
        return
    proc = subprocess.run(  # noqa: S603 - a fixed command on the project's own config
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    site = tmp_path / "site"
    assert (site / "index.html").is_file()
    check_offline(site)


REMOTE = re.compile(
    r"<(?:script|img|iframe)\b[^>]*\bsrc=[\"'](?:https?:)?//"
    r"|<link\b[^>]*\bhref=[\"'](?:https?:)?//"
    r"|url\(\s*[\"']?(?:https?:)?//"
    r"|@import\s+[\"']?(?:url\()?[\"']?(?:https?:)?//",
    re.IGNORECASE,
)
ROLES = re.compile(r":(?:func|class|meth|mod|data|attr|math):`|\.\. math::")


def check_offline(site: Path) -> None:
    """The built site's pages and style sheets need no network, and the API pages read well."""
    remote = [
        str(p.relative_to(site))
        for p in [*site.rglob("*.html"), *site.rglob("*.css")]
        if REMOTE.search(p.read_text(encoding="utf-8", errors="replace"))
    ]
    assert not remote, f"pages that load something from the network: {remote}"
    overloads = [
        str(p.relative_to(site))
        for p in site.rglob("api/**/*.html")
        if "doc-overloads" in p.read_text(encoding="utf-8")
    ]
    assert not overloads, f"overloaded signatures shown in {overloads}"
    raw = [
        str(p.relative_to(site)) for p in site.rglob("api/**/*.html") if ROLES.search(p.read_text())
    ]
    assert not raw, f"raw Sphinx roles in {raw}"
    assert (site / "vendor" / "katex" / "katex.min.js").is_file()
    clamp = (site / "api" / "transformations" / "clamp" / "index.html").read_text(encoding="utf-8")
    assert re.search(r'Proof: <a [^>]*href="[^"]*proofs/make_clamp/', clamp)
    linked: set[str] = set()
    for page in site.rglob("api/**/*.html"):
        linked |= set(
            re.findall(r'href="[^"]*proofs/(make_\w+)/', page.read_text(encoding="utf-8"))
        )
    proofs = {p.stem for p in (ROOT / "docs" / "proofs").glob("make_*.md")}
    assert proofs <= linked, (
        f"constructors whose API entry does not link its proof: {proofs - linked}"
    )
    for proof in sorted(proofs):
        page = (site / "proofs" / proof / "index.html").read_text(encoding="utf-8")
        assert '<table class="proof-header">' in page, f"{proof}: header not rendered as a table"
        assert re.search(rf'class="nf">{proof}</span>', page), f"{proof}: its source is not shown"
    count = (site / "api" / "transformations" / "count" / "index.html").read_text(encoding="utf-8")
    assert 'class="arithmatex"' in count
    assert 'class="highlight"' in (
        site / "how-to" / "02-mean-unknown-size" / "index.html"
    ).read_text(encoding="utf-8")


def test_the_offline_check_has_teeth(tmp_path: Path) -> None:
    """A CDN script, a remote style sheet or a raw role in an API page is caught."""
    for bad in (
        '<script src="https://cdn.example/katex.js"></script>',
        '<link rel="stylesheet" href="//fonts.example/css">',
        "<p>see :func:`make_x`</p>",
    ):
        (tmp_path / "api").mkdir(exist_ok=True)
        (tmp_path / "api" / "index.html").write_text(bad, encoding="utf-8")
        with pytest.raises(AssertionError):
            check_offline(tmp_path)
