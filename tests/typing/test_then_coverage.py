"""Every public ``then_*`` has a typed chain in tests/typing (so the coverage cannot regress).

A chain counts if an ``assert_type(<expr>, <type>)`` in ``cases.py`` or ``then_cases.py`` has a
call of the partial (``dp.t.then_x(...)``, ``dp.m.then_x(...)``, ``dp.c.then_x(...)``) in
``<expr>``: mypy then checks the type it infers for a chain through it
(``test_mypy_cases``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import opendp_lite.prelude as dp

HERE = Path(__file__).parent
FILES = (HERE / "cases.py", HERE / "then_cases.py")


def _public_partials() -> set[str]:
    return {
        f"{ns}.{name}"
        for ns in ("t", "m", "c")
        for name in dir(getattr(dp, ns))
        if name.startswith("then_") and callable(getattr(getattr(dp, ns), name))
    }


def _typed_chains() -> set[str]:
    """``ns.then_x`` for each partial called inside the first argument of an assert_type."""
    found: set[str] = set()
    for path in FILES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "assert_type"
            ):
                continue
            for sub in ast.walk(node.args[0]):
                if (
                    isinstance(sub, ast.Call)
                    and isinstance(sub.func, ast.Attribute)
                    and sub.func.attr.startswith("then_")
                    and isinstance(sub.func.value, ast.Attribute)
                    and isinstance(sub.func.value.value, ast.Name)
                    and sub.func.value.value.id == "dp"
                ):
                    found.add(f"{sub.func.value.attr}.{sub.func.attr}")
    return found


def test_there_are_partials_to_cover() -> None:
    assert len(_public_partials()) >= 51


def test_every_then_has_a_typed_chain() -> None:
    missing = sorted(_public_partials() - _typed_chains())
    assert not missing, f"then_* with no assert_type'd chain in tests/typing: {missing}"


def test_every_covered_name_is_public() -> None:
    stale = sorted(_typed_chains() - _public_partials())
    assert not stale, f"typed chains of names not exported by dp.t/dp.m/dp.c: {stale}"
