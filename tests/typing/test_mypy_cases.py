"""Run mypy on tests/typing/cases.py: good chains type-check, bad chains are rejected."""

from __future__ import annotations

from pathlib import Path

import pytest

api = pytest.importorskip("mypy.api")

CASES = Path(__file__).with_name("cases.py")


def test_mypy_accepts_good_chains_and_rejects_bad_ones() -> None:
    stdout, stderr, status = api.run(
        ["--strict", "--warn-unused-ignores", "--no-incremental", str(CASES)]
    )
    assert status == 0, f"mypy output:\n{stdout}\n{stderr}"


def test_the_invalid_block_really_is_rejected(tmp_path: Path) -> None:
    # Strip the ignores: mypy must then report an error on every line that carried one (each
    # an ill-typed chain), and on no other line.  The cases hold 10 chains of user-defined
    # pieces, 10 kinds (15 lines) of ill-typed chains of the library's own make_* constructors
    # 7 kinds (13 lines) of ill-typed then_* chains, measurement >> measurement (4 lines), a
    # transformation post-processing a release of the wrong carrier (1 line) and an odometer
    # after a transformation (1 line).
    text = CASES.read_text()
    lines = text.splitlines()
    marked = {i for i, line in enumerate(lines, start=1) if "  # type: ignore[" in line}
    stripped = "\n".join(line.split("  # type: ignore")[0] for line in lines)
    tmp = tmp_path / "cases_stripped.py"  # a private copy: concurrent runs cannot collide
    tmp.write_text(stripped)
    stdout, _, status = api.run(["--strict", "--no-incremental", str(tmp)])
    errors = [line for line in stdout.splitlines() if ": error:" in line]
    erroneous = {int(line.split(":")[1]) for line in errors if line.startswith(str(tmp))}
    assert all(line.startswith(str(tmp)) for line in errors), stdout  # none elsewhere
    assert status == 1
    assert len(marked) >= 43, f"only {len(marked)} ill-typed lines in {CASES.name}"
    assert erroneous == marked, stdout
