"""mypy --strict infers the release type of a Context query (tests/typing/context_cases.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

api = pytest.importorskip("mypy.api")

CASES = Path(__file__).parents[1] / "typing" / "context_cases.py"


@pytest.fixture(scope="module")
def mypy_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """One mypy run (the package's analysis is most of its time) over the cases and over a copy
    with their ``# type: ignore`` comments stripped: the stripped copy and mypy's output lines."""
    stripped = "\n".join(
        line.split("  # type: ignore")[0] for line in CASES.read_text().splitlines()
    )
    tmp = tmp_path_factory.mktemp("typing") / "context_cases_stripped.py"
    tmp.write_text(stripped)
    stdout, stderr, status = api.run(
        ["--strict", "--warn-unused-ignores", "--no-incremental", str(CASES), str(tmp)]
    )
    assert status in (0, 1), f"mypy did not run:\n{stdout}\n{stderr}"
    return tmp, stdout.splitlines()


def test_mypy_infers_the_release_type_of_query_chains(mypy_run: tuple[Path, list[str]]) -> None:
    tmp, lines = mypy_run
    others = [line for line in lines if ": error:" in line and not line.startswith(str(tmp))]
    assert not others, "mypy output:\n" + "\n".join(lines)


def test_a_wrong_release_type_is_rejected(mypy_run: tuple[Path, list[str]]) -> None:
    tmp, lines = mypy_run
    errors = [line for line in lines if line.startswith(str(tmp)) and ": error:" in line]
    assert len(errors) == 1 and "Incompatible types in assignment" in errors[0], lines
