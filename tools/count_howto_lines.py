"""Count the code lines of each how-to task, ours against the peers', and write the table.

Our version of task N is the ```python block that follows the line ``<!-- task NN -->`` in a
page of ``docs/how-to/``; a peer's version is ``docs/how-to/peers/taskNN.<peer>.py``.  Every
snippet is first formatted by ``ruff format`` at the project's line length (100), so that no
version is shortened by packing statements into long lines, and then its non-blank lines that
are not comments are counted.  The shared sample data (``peers/_setup.py``, the first block of
each page) is not counted for anyone.

Usage::

    python -m tools.count_howto_lines           # write docs/how-to/line-counts.md
    python -m tools.count_howto_lines --check   # exit 1 if the table is stale or ours is longer
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOWTO = ROOT / "docs" / "how-to"
PEERS_DIR = HOWTO / "peers"
TABLE = HOWTO / "line-counts.md"

#: The ten tasks of the acceptance (issue 15), by number.
TASKS: dict[int, str] = {
    1: "count and histogram of a categorical CSV column read with pandas",
    2: "mean of a bounded column with unknown size",
    3: "median and quantiles",
    4: "several queries under one budget, showing what remains",
    5: "choose a noise scale for a target ε, report accuracy and a confidence interval",
    6: "zCDP Gaussian releases converted to (ε, δ)",
    7: "pick a category with the exponential mechanism / noisy max",
    8: "a local-DP randomized-response survey with debiasing",
    9: "a DP linear regression in scikit-learn style",
    10: "DP sum by group over a pandas DataFrame",
}
#: What a reader of the table should know about a task's versions.
NOTES: dict[int, str] = {
    6: "diffprivlib has no zCDP accounting; no Tumult Analytics or PipelineDP version was written.",
    9: (
        "Ours uses `dp.sklearn.linear_model.LinearRegression` (Theil–Sen, as OpenDP's) from "
        "the scikit-learn extra; its page's test is skipped where `dp.sklearn` is missing."
    ),
    10: (
        "Ours (`grouped_sum`), Tumult Analytics and PipelineDP partition the rows and charge "
        "parallel composition in the library; diffprivlib's takes the total ε from parallel "
        "composition over public regions with one row per person, an argument its user makes."
    ),
}
#: Peers in the table's column order, with how their snippets were obtained.
PEERS: dict[str, str] = {
    "diffprivlib": "diffprivlib 0.6.6 (installed; the snippets run in tests/docs)",
    "opendp": "OpenDP 0.16 (installed; the snippets run in tests/docs)",
    "tumult": "Tumult Analytics (not installed; written from its public docs)",
    "pipelinedp": "PipelineDP (not installed; written from its public docs)",
}
MARKER = re.compile(r"^<!-- task (\d+) -->\n```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


@dataclass(frozen=True)
class Row:
    """One task: our line count (None if not written) and each peer's (None if absent)."""

    task: int
    ours: int | None
    ours_page: str | None
    peers: dict[str, int | None]

    @property
    def shortest_peer(self) -> tuple[str, int] | None:
        """The peer with the fewest lines, or None if no peer version exists."""
        have = [(n, p) for p, n in self.peers.items() if n is not None]
        if not have:
            return None
        n, p = min(have)
        return p, n

    @property
    def ok(self) -> bool | None:
        """Ours <= the shortest peer (None when either side is missing)."""
        best = self.shortest_peer
        if self.ours is None or best is None:
            return None
        return self.ours <= best[1]


def _format(code: str) -> str:
    """``code`` as ``ruff format`` writes it at line length 100 (unchanged without ruff)."""
    ruff = shutil.which("ruff")
    if ruff is None:  # pragma: no cover - ruff is a dev dependency
        return code
    proc = subprocess.run(  # noqa: S603 - a fixed command on our own snippets
        [ruff, "format", "--line-length", "100", "--stdin-filename", "snippet.py", "-"],
        input=code,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise ValueError(f"ruff format failed on a snippet:\n{code}\n{proc.stderr}")
    return proc.stdout


def count_lines(code: str) -> int:
    """Non-blank, non-comment lines of ``code`` after formatting."""
    return sum(
        1
        for line in _format(code).splitlines()
        if line.strip() and not line.strip().startswith("#")
    )


def ours() -> dict[int, tuple[int, str]]:
    """Task number -> (line count, page name) for our versions in docs/how-to/*.md."""
    found: dict[int, tuple[int, str]] = {}
    for page in sorted(HOWTO.glob("*.md")):
        for number, code in MARKER.findall(page.read_text(encoding="utf-8")):
            task = int(number)
            if task in found:
                raise ValueError(f"task {task} is marked twice ({found[task][1]}, {page.name})")
            found[task] = (count_lines(code), page.name)
    return found


def rows() -> list[Row]:
    """The table's rows, one per task."""
    mine = ours()
    out = []
    for task in TASKS:
        peers: dict[str, int | None] = {}
        for peer in PEERS:
            path = PEERS_DIR / f"task{task:02d}.{peer}.py"
            peers[peer] = count_lines(path.read_text(encoding="utf-8")) if path.is_file() else None
        got = mine.get(task)
        out.append(Row(task, got[0] if got else None, got[1] if got else None, peers))
    return out


def render(table: list[Row]) -> str:
    """The Markdown page."""
    dash = "–"
    head = ["task", "opendp_lite", *PEERS, "shortest peer", "ours ≤ shortest"]
    lines = [
        "# Lines of code per task: opendp_lite and its peers",
        "",
        "Written by `python -m tools.count_howto_lines` (do not edit by hand; "
        "`tests/docs/test_howto.py` checks it is current). Each count is the non-blank, "
        "non-comment lines of a snippet after `ruff format` at line length 100, imports "
        "included, the shared sample data (`peers/_setup.py`) excluded. None of our "
        "snippets enables `honest-but-curious`. The peers' snippets are in the repository's "
        "`docs/how-to/peers/`:",
        "",
        *[f"- {name}: {how}" for name, how in PEERS.items()],
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for r in table:
        best = r.shortest_peer
        mine = dash if r.ours is None else f"[{r.ours}]({r.ours_page})"
        cells = [
            f"{r.task}. {TASKS[r.task]}",
            mine,
            *[dash if r.peers[p] is None else str(r.peers[p]) for p in PEERS],
            dash if best is None else f"{best[1]} ({best[0]})",
            {True: "yes", False: "**no**", None: dash}[r.ok],
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "A dash for opendp_lite: the task is not written yet (see the how-to index). A dash for",
        "a peer: it has no version of the task (no zCDP conversion, say) or none was written.",
        "",
        *[f"- Task {task}: {note}" for task, note in NOTES.items()],
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Write the table (or, with ``--check``, verify it); 1 if stale or ours is longer."""
    args = sys.argv[1:] if argv is None else argv
    table = rows()
    text = render(table)
    longer = [r.task for r in table if r.ok is False]
    if "--check" in args:
        stale = not TABLE.is_file() or TABLE.read_text(encoding="utf-8") != text
        if stale:
            print(f"{TABLE} is stale: run python -m tools.count_howto_lines")
        if longer:
            print(f"ours is longer than the shortest peer for tasks {longer}")
        return int(stale or bool(longer))
    TABLE.write_text(text, encoding="utf-8")
    print(text)
    return int(bool(longer))


if __name__ == "__main__":
    raise SystemExit(main())
