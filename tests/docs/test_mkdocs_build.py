"""The documentation site builds with warnings as errors (as CI builds it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_mkdocs_strict_build(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    proc = subprocess.run(  # noqa: S603 - a fixed command on the project's own config
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "site" / "index.html").is_file()
