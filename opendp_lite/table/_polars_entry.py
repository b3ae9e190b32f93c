"""Where the table API meets Polars without importing it: ``pl.Expr.dp`` registered when Polars
is imported (before or after opendp_lite), and ``dp.len()`` in the form the caller can mix.

Importing opendp_lite never imports Polars (it costs about 0.3 s, and many users have no
Polars).  :func:`register_on_import` registers the ``.dp`` namespace at once if Polars is
already imported, and otherwise when it is first imported: a finder on ``sys.meta_path`` runs
Polars' own loader, then registers.  It finds nothing itself, so every other import is
untouched.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

__all__ = ["len", "register_on_import"]


def _register() -> None:
    from .dp_namespace import ensure_registered

    ensure_registered()


class _AfterLoad(importlib.abc.Loader):
    """Polars' own loader, then the registration."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        _register()


class _PolarsFinder(importlib.abc.MetaPathFinder):
    """Finds nothing: when ``polars`` is looked up, asks the other finders and wraps the
    loader they return."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "polars":
            return None
        sys.meta_path.remove(self)  # once: Polars is imported, or not importable at all
        for finder in sys.meta_path:
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _AfterLoad(spec.loader)
                return spec
        return None


def register_on_import() -> None:
    """Register ``pl.Expr.dp`` now if Polars is imported, else when it is (idempotent)."""
    if "polars" in sys.modules:
        _register()
    elif not any(isinstance(f, _PolarsFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _PolarsFinder())


def len(scale: float | None = None, signed: bool | None = None) -> Any:
    """The noisy number of rows (OpenDP's ``dp.len()``).

    A Polars expression if Polars is installed, so it mixes with ``pl.col(...)`` expressions
    (``pl.col("x").dp.sum((0, 9)) / dp.len()``); otherwise the Polars-free builder's
    expression (:func:`opendp_lite.table.builder.len`).  Both read into the same plan node.
    """
    try:
        import polars  # noqa: F401 - only whether it is installed
    except ImportError:
        from .builder import len as builder_len

        return builder_len(scale=scale, signed=signed)
    from .dp_namespace import len as polars_len

    return polars_len(scale=scale, signed=signed)
