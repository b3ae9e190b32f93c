"""mypy --strict infers the release type of a Context query (tests/typing/context_cases.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

api = pytest.importorskip("mypy.api")

CASES = Path(__file__).parents[1] / "typing" / "context_cases.py"


def test_mypy_infers_the_release_type_of_query_chains() -> None:
    stdout, stderr, status = api.run(
        ["--strict", "--warn-unused-ignores", "--no-incremental", str(CASES)]
    )
    assert status == 0, f"mypy output:\n{stdout}\n{stderr}"


def test_a_wrong_release_type_is_rejected(tmp_path: Path) -> None:
    stripped = "\n".join(
        line.split("  # type: ignore")[0] for line in CASES.read_text().splitlines()
    )
    tmp = tmp_path / "context_cases_stripped.py"
    tmp.write_text(stripped)
    stdout, _, status = api.run(["--strict", "--no-incremental", str(tmp)])
    assert status == 1
    assert "Incompatible types in assignment" in stdout and stdout.count(": error:") == 1, stdout
