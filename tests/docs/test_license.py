"""The LICENSE file is the licence that pyproject.toml declares, and it ships with the package."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_license_file_matches_the_declared_licence() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")  # no tomllib on 3.10
    assert re.search(r'^license = "MIT"$', pyproject, re.MULTILINE)
    assert re.search(r'^license-files = \[.*"LICENSE".*\]$', pyproject, re.MULTILINE)
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.splitlines()[0].strip() == "MIT License"
    assert "Permission is hereby granted, free of charge" in text
