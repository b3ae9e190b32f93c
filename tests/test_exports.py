"""The family packages (``dp.t``, ``dp.m``, ``dp.c``) re-export their modules' public names.

A module re-exported whole (``from .x import *`` in the family ``__init__``) contributes
exactly its ``__all__``; no two modules of a family claim the same name (a star import would
silently shadow one); and every public ``make_*``/``then_*`` of a family module is reachable
from the family package.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import opendp_lite

FAMILIES = ("transformations", "measurements", "combinators")
ROOT = Path(opendp_lite.__file__).parent


def _star_modules(family: str) -> list[str]:
    tree = ast.parse((ROOT / family / "__init__.py").read_text(encoding="utf-8"))
    return [
        node.module
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        and node.level == 1
        and node.module
        and [a.name for a in node.names] == ["*"]
    ]


@pytest.mark.parametrize("family", FAMILIES)
def test_star_modules_export_their_all(family: str) -> None:
    package = importlib.import_module(f"opendp_lite.{family}")
    modules = _star_modules(family)
    assert modules, f"{family}/__init__.py re-exports no module whole"
    owner: dict[str, str] = {}
    for name in modules:
        module = importlib.import_module(f"opendp_lite.{family}.{name}")
        for public in module.__all__:
            assert public not in owner, (
                f"{public} is in the __all__ of {owner.get(public)} and {name}"
            )
            owner[public] = name
            assert getattr(package, public) is getattr(module, public)


@pytest.mark.parametrize("family", FAMILIES)
def test_every_constructor_is_reachable(family: str) -> None:
    package = importlib.import_module(f"opendp_lite.{family}")
    for path in sorted((ROOT / family).glob("*.py")):
        if path.stem.startswith("_"):
            continue
        module = importlib.import_module(f"opendp_lite.{family}.{path.stem}")
        for public in getattr(module, "__all__", []):
            if public.startswith(("make_", "then_")):
                assert getattr(package, public, None) is getattr(module, public), (
                    f"{family}.{path.stem}.{public} is not exported from opendp_lite.{family}"
                )
