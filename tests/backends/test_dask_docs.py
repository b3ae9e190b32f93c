"""docs/scale-out.md runs: its ```python blocks are executed in order, in one namespace (the
page starts and closes its own small LocalCluster)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("distributed")

PAGE = Path(__file__).resolve().parents[2] / "docs" / "scale-out.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def test_scale_out_page_runs(capsys: pytest.CaptureFixture[str]) -> None:
    blocks = BLOCK.findall(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 2
    namespace: dict[str, object] = {"__name__": "docs_scale_out"}
    for i, code in enumerate(blocks):
        exec(compile(code, f"scale-out.md[block {i}]", "exec"), namespace)  # noqa: S102
    out = capsys.readouterr().out.split("\n")
    assert out[0].startswith("0.5 ")  # the DP mean of 10^6 uniform values, noise scale 1e-4
    assert out[1].startswith("4 ")  # four noisy bin counts
