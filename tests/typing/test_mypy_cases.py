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


def test_the_invalid_block_really_is_rejected() -> None:
    # Strip the ignores: mypy must then report one error per ill-typed chain (>= 5 kinds).
    text = CASES.read_text()
    stripped = "\n".join(line.split("  # type: ignore")[0] for line in text.splitlines())
    tmp = CASES.with_name("_cases_stripped.py")
    tmp.write_text(stripped)
    try:
        stdout, _, status = api.run(["--strict", "--no-incremental", str(tmp)])
    finally:
        tmp.unlink()
    errors = [line for line in stdout.splitlines() if ": error:" in line]
    assert status == 1
    assert len(errors) >= 10, stdout
