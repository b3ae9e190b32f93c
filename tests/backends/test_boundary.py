"""Constructors never name a backend: they ask ``opendp_lite.backends`` (``of``, ``of_frame``).

Every module under ``transformations/``, ``measurements/`` and ``combinators/`` is parsed; an
import of a specific backend (``dask``, ``opendp_lite._dask``, ``opendp_lite.backends.<name>``,
the frame libraries, GPU libraries) or any name or attribute that spells one (``_dask``,
``is_dask_array``, ``backends.numpy``, ``DASK``) fails.  Only the generic API of the
``backends`` package may be used, so adding a backend touches no constructor.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "opendp_lite"
LAYERS = ("transformations", "measurements", "combinators")
#: libraries and modules that are backends (or frame libraries)
BACKEND_MODULES = {"dask", "pandas", "polars", "pyarrow", "cupy", "cudf", "ray", "pyspark"}
#: the generic API: anything else of ``opendp_lite.backends`` is a specific backend
GENERIC = {"of", "of_frame", "register", "registered", "ArrayBackend", "FrameBackend", "BLOCK"}
#: an identifier naming a specific backend
SPECIFIC = re.compile(r"dask|pyarrow|cupy|cudf|polars|pandas|chunked|^numpy$|^NUMPY$", re.I)


def _modules() -> list[Path]:
    return sorted(p for layer in LAYERS for p in (PACKAGE / layer).rglob("*.py"))


def violations(source: str) -> list[str]:
    """What in ``source`` (a constructor module) names a specific backend."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for a in node.names:
                top = a.name.split(".")[0]
                if top in BACKEND_MODULES or a.name.startswith(
                    ("opendp_lite._dask", "opendp_lite.backends.")
                ):
                    found.append(f"line {node.lineno}: import {a.name}")
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            names = [a.name for a in node.names]
            if node.level == 0 and mod.split(".")[0] in BACKEND_MODULES:
                found.append(f"line {node.lineno}: from {mod} import ...")
            elif mod.endswith("_dask") or "_dask" in names or "backends." in mod:
                found.append(f"line {node.lineno}: from {'.' * node.level}{mod} import {names}")
            elif mod.endswith("backends") and set(names) - GENERIC:
                found.append(f"line {node.lineno}: from backends import {names}")
        elif isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "backends":
                if node.attr not in GENERIC:
                    found.append(f"line {node.lineno}: backends.{node.attr}")
            elif SPECIFIC.search(node.attr) and node.attr not in ("numpy",):
                found.append(f"line {node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Name) and SPECIFIC.search(node.id) and node.id != "numpy":
            found.append(f"line {node.lineno}: {node.id}")
        elif isinstance(node, ast.FunctionDef) and SPECIFIC.search(node.name):
            found.append(f"line {node.lineno}: def {node.name}")
    return found


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_constructors_name_no_backend(path: Path) -> None:
    found = violations(path.read_text(encoding="utf-8"))
    assert not found, f"{path.relative_to(PACKAGE)} names a specific backend: {found}"


@pytest.mark.parametrize(
    "source",
    [
        "from .. import _dask\n",
        "from .._dask import reduce_blocks\n",
        "import dask.array as da\n",
        "from dask import delayed\n",
        "from ..backends import dask\n",
        "from ..backends.numpy import BLOCK\n",
        "from ..backends import NUMPY\n",
        "import opendp_lite.backends.chunked\n",
        "x = backends.dask.DASK\n",
        "y = backends.numpy.BLOCK\n",
        "if is_dask_array(x): pass\n",
        "def _reduce_dask(frame): pass\n",
        "import pyarrow as pa\n",
    ],
)
def test_the_checker_sees_a_named_backend(source: str) -> None:
    """Teeth: each way of naming a backend is flagged; the generic API is not."""
    assert violations(source)


def test_the_generic_api_passes() -> None:
    ok = (
        "from .. import backends\n"
        "import numpy as np\n"
        "n = backends.of(x).length(x)\n"
        "f = backends.of_frame(df)\n"
        "B = backends.BLOCK\n"
    )
    assert violations(ok) == []
