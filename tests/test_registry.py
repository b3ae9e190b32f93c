"""One constructor declaration (``@constructor``, opendp_lite/_registry.py): the registry is
what the public namespaces hold, calls record without serialization loaded, a name is declared
once."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import opendp_lite.prelude as dp
from opendp_lite._registry import CONSTRUCTORS, constructor, family, publish
from opendp_lite.serialization import ALLOWED

ROOT = Path(__file__).resolve().parent.parent


def test_the_public_constructors_are_the_declared_ones() -> None:
    namespaces = {"t": dp.t, "m": dp.m, "c": dp.c, "numpy": dp.numpy}
    for fam, ns in namespaces.items():
        public = {a for a in dir(ns) if a.startswith(("make_", "then_"))}
        declared = {
            n for n, fn in CONSTRUCTORS.items() if family(fn) == fam and n[:5] in ("make_", "then_")
        }
        assert public == declared, fam
        for name in public:
            assert CONSTRUCTORS[name] is getattr(ns, name), name
            assert ALLOWED[name] is CONSTRUCTORS[name], name
    assert CONSTRUCTORS["new_function"] is dp.new_function


def test_a_declared_constructor_is_its_own_function_in_its_own_file() -> None:
    for name, fn in CONSTRUCTORS.items():
        if not name.startswith("make_"):
            continue
        declared = inspect.unwrap(fn)
        module = sys.modules[fn.__module__]
        assert declared.__globals__ is vars(module), name  # no copy rebuilt elsewhere
        assert inspect.getsourcefile(declared) == inspect.getsourcefile(module), name
        assert inspect.signature(fn) == inspect.signature(declared), name


def test_a_constructor_records_its_call_without_serialization_loaded() -> None:
    # the import order is not load-bearing: a constructor module imported alone records its
    # calls, and serialization loaded afterwards writes and rebuilds them
    code = """
import sys
import opendp_lite.transformations.clamp as clamp
import opendp_lite.domains as D, opendp_lite.metrics as M
assert "opendp_lite.serialization" not in sys.modules, "serialization was imported"
space = D.vector_domain(D.atom_domain(T=float, nan=False)), M.symmetric_distance()
t = clamp.make_clamp(*space, bounds=(0.0, 1.0))
from opendp_lite.serialization import deserialize, serialize
copy = deserialize(serialize(t))
assert copy.output_domain == t.output_domain and list(copy([2.0, 0.5])) == [1.0, 0.5]
print("ok")
"""
    out = subprocess.run(  # noqa: S603 - our own interpreter and code
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_a_name_is_declared_once() -> None:
    before = dict(CONSTRUCTORS)

    def make_clamp(*args: Any) -> Any:  # another module's make_clamp
        return args

    with pytest.raises(ValueError, match="declared twice"):
        constructor(make_clamp)
    assert CONSTRUCTORS == before


def test_publish_puts_a_higher_layers_constructor_on_its_family_namespace() -> None:
    # the table API's constructors are dp.m's / dp.t's, defined above those packages: importing
    # their module (without the prelude) publishes them there
    code = """
import opendp_lite.measurements as m, opendp_lite.transformations as t
assert not hasattr(m, "make_private_lazyframe")
import opendp_lite.table.private, opendp_lite.table.stable
from opendp_lite._registry import CONSTRUCTORS
assert m.make_private_lazyframe is CONSTRUCTORS["make_private_lazyframe"]
assert t.make_stable_expr is CONSTRUCTORS["make_stable_expr"]
print("ok")
"""
    out = subprocess.run(  # noqa: S603 - our own interpreter and code
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_publish_refuses_an_undeclared_function() -> None:
    def make_private_lazyframe(*args: Any) -> Any:  # not the declared one
        return args

    with pytest.raises(ValueError, match="not a declared constructor"):
        publish(make_private_lazyframe)
    assert dp.m.make_private_lazyframe is CONSTRUCTORS["make_private_lazyframe"]
