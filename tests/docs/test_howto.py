"""The how-to pages against the peers: line counts, feature use and sample data.

Each page's examples run in ``test_docs_examples.py``.  Here: every task we have written takes
no more lines than the shortest peer's version; the table in ``docs/how-to/line-counts.md`` is
current; our snippets enable no feature; the pages' sample data is the peers' sample data; and
the installed peers' snippets (diffprivlib, OpenDP 0.16) actually run on it.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from tests.docs.test_docs_examples import skip_unless_installed
from tools import count_howto_lines as counts

PEER_FILES = sorted(counts.PEERS_DIR.glob("task*.py"))
SETUP = (counts.PEERS_DIR / "_setup.py").read_text(encoding="utf-8")
TASK_PAGES = sorted(
    {p for p in counts.HOWTO.glob("*.md") if "<!-- task " in p.read_text(encoding="utf-8")}
)


def test_ours_is_never_longer_than_the_shortest_peer() -> None:
    table = counts.rows()
    assert sum(r.ours is not None for r in table) >= 7
    longer = {r.task: (r.ours, r.shortest_peer) for r in table if r.ok is False}
    assert not longer, f"ours is longer than the shortest peer: {longer}"


def test_the_table_is_current() -> None:
    assert counts.TABLE.read_text(encoding="utf-8") == counts.render(counts.rows()), (
        "run: python -m tools.count_howto_lines"
    )


def test_the_counter_counts_code_not_comments_or_packing() -> None:
    """Teeth: comments and blank lines are free; a long packed line is split before counting."""
    assert counts.count_lines("# note\n\nx = 1\n  \ny = 2  # why\n") == 2
    packed = "f(" + ", ".join(f"argument_{i}=value_{i}" for i in range(8)) + ")\n"
    assert counts.count_lines(packed) > 1


@pytest.mark.parametrize("page", TASK_PAGES, ids=[p.name for p in TASK_PAGES])
def test_task_pages_use_the_peers_sample_data_and_no_feature(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.DOTALL | re.MULTILINE)
    assert blocks[0] == SETUP, f"{page.name}: the first block must be peers/_setup.py"
    for _, code in counts.MARKER.findall(text):
        assert "enable_features" not in code and "honest-but-curious" not in code


@pytest.mark.parametrize("page", TASK_PAGES, ids=[p.name for p in TASK_PAGES])
def test_our_tasks_run_with_no_feature_enabled(
    page: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Other pages (the exponential-mechanism seed) enable ``honest-but-curious`` in this
    process; each task here runs with every feature withdrawn."""
    import opendp_lite.core as core

    skip_unless_installed(page.read_text(encoding="utf-8"))
    saved = set(core._FEATURES)
    core._FEATURES.clear()
    try:
        for _, code in counts.MARKER.findall(page.read_text(encoding="utf-8")):
            namespace: dict[str, object] = {"__name__": "task"}
            exec(compile(SETUP, "_setup.py", "exec"), namespace)  # noqa: S102
            exec(compile(code, page.name, "exec"), namespace)  # noqa: S102
    finally:
        core._FEATURES.update(saved)
    assert capsys.readouterr().out.strip()


@pytest.mark.parametrize("peer", PEER_FILES, ids=[p.name for p in PEER_FILES])
def test_installed_peers_snippets_run(peer: Path, capsys: pytest.CaptureFixture[str]) -> None:
    name = peer.name.split(".")[1]
    pytest.importorskip({"diffprivlib": "diffprivlib", "opendp": "opendp"}.get(name, name))
    namespace: dict[str, object] = {"__name__": "peer"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # diffprivlib warns about its own float mechanisms
        exec(compile(SETUP, "_setup.py", "exec"), namespace)  # noqa: S102
        exec(compile(peer.read_text(encoding="utf-8"), peer.name, "exec"), namespace)  # noqa: S102
    assert capsys.readouterr().out.strip()
