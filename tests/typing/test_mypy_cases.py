"""Run mypy on the typing cases: good chains type-check, bad chains are rejected.

``cases.py`` holds chains of user-defined pieces and of the library's own constructors;
``then_cases.py`` a chain through every ``then_*`` partial and ill-typed chains through each
typing pattern of ``opendp_lite._spine``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

api = pytest.importorskip("mypy.api")

HERE = Path(__file__).parent
CASES = HERE / "cases.py"
THEN_CASES = HERE / "then_cases.py"

#: The least number of ill-typed (marked) lines each file must hold.
MIN_MARKED = {CASES: 43, THEN_CASES: 15}


@pytest.mark.parametrize("cases", [CASES, THEN_CASES], ids=lambda p: p.name)
def test_mypy_accepts_good_chains_and_rejects_bad_ones(cases: Path) -> None:
    stdout, stderr, status = api.run(
        ["--strict", "--warn-unused-ignores", "--no-incremental", str(cases)]
    )
    assert status == 0, f"mypy output:\n{stdout}\n{stderr}"


@pytest.mark.parametrize("cases", [CASES, THEN_CASES], ids=lambda p: p.name)
def test_the_invalid_block_really_is_rejected(cases: Path, tmp_path: Path) -> None:
    # Strip the ignores: mypy must then report an error on every line that carried one (each
    # an ill-typed chain), and on no other line.  cases.py holds 10 chains of user-defined
    # pieces, 10 kinds (15 lines) of ill-typed chains of the library's own make_* constructors
    # 7 kinds (13 lines) of ill-typed then_* chains, measurement >> measurement (4 lines), a
    # transformation post-processing a release of the wrong carrier (1 line) and an odometer
    # after a transformation (1 line); then_cases.py the ill-typed chains through each pattern.
    text = cases.read_text()
    lines = text.splitlines()
    marked = {i for i, line in enumerate(lines, start=1) if "  # type: ignore[" in line}
    stripped = "\n".join(line.split("  # type: ignore")[0] for line in lines)
    tmp = tmp_path / f"{cases.stem}_stripped.py"  # a private copy: concurrent runs cannot collide
    tmp.write_text(stripped)
    stdout, _, status = api.run(["--strict", "--no-incremental", str(tmp)])
    errors = [line for line in stdout.splitlines() if ": error:" in line]
    erroneous = {int(line.split(":")[1]) for line in errors if line.startswith(str(tmp))}
    assert all(line.startswith(str(tmp)) for line in errors), stdout  # none elsewhere
    assert status == 1
    assert len(marked) >= MIN_MARKED[cases], f"only {len(marked)} ill-typed lines in {cases.name}"
    assert erroneous == marked, stdout
