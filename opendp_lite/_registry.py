"""One declaration per public constructor: the ``@constructor`` decorator and its registry.

Every public ``make_x`` is declared with ``@constructor`` (on its implementation, below any
``@overload`` stubs), every derived ``then_x`` is declared by the spine (``_spine.derive``), and
``new_function`` and the chaining constructors of the core are declared the same way.  The
decorator does two things, once, where the function is defined:

* it registers the name in :data:`CONSTRUCTORS`, which is what everything that needs "the
  public constructors" reads: deserialization's allow-list (``serialization``), the Context
  API's ``query.x(...)`` lookup (``context.plugins``), the proof tooling
  (``tools.proofs.public_constructors``) and the law-coverage test;
* it records each call on what the call returns: a Transformation, Measurement, Function or
  Odometer keeps ``(name, args, kwargs)`` in its ``_record`` slot, and a ``then_x`` partial
  keeps its call on its constructor (:class:`RecordedConstructor`), so that ``dp.serialize``
  can write the call and ``dp.deserialize`` can make it again.

The wrapper is made with :func:`functools.wraps`: ``inspect.signature``, ``inspect.getsource``,
``help()`` and doctest see the declared function, and a traceback shows the declared function's
own frame under one ``wrapper`` frame of this module.

>>> from opendp_lite._registry import CONSTRUCTORS
>>> import opendp_lite.prelude as dp
>>> CONSTRUCTORS["make_clamp"] is dp.t.make_clamp
True
>>> space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
>>> dp.t.make_clamp(*space, bounds=(0, 10))._record[0]
'make_clamp'
"""

from __future__ import annotations

import functools
import importlib
import types
from collections.abc import Callable
from typing import Any, TypeVar, cast

__all__ = [
    "CONSTRUCTORS",
    "RecordedConstructor",
    "constructor",
    "family",
    "publish",
    "record_call",
]

F = TypeVar("F", bound=Callable[..., Any])

#: A recorded call: the constructor's name, its positional and its keyword arguments.
Call = tuple[str, tuple[Any, ...], dict[str, Any]]

#: Constructor name -> the public constructor (the recording wrapper ``@constructor`` returned).
CONSTRUCTORS: dict[str, Callable[..., Any]] = {}

#: Module prefix -> the namespace that exports its constructors (the core's chaining
#: constructors are ``dp.c``'s; the table API's constructors, defined above the packages of
#: ``dp.t`` and ``dp.m``, are theirs: :func:`publish`).
_FAMILIES: tuple[tuple[str, str], ...] = (
    ("opendp_lite.transformations", "t"),
    ("opendp_lite.measurements", "m"),
    ("opendp_lite.table.stable", "t"),
    ("opendp_lite.table.private", "m"),
    ("opendp_lite.combinators", "c"),
    ("opendp_lite.core", "c"),
    ("opendp_lite.extras.numpy", "numpy"),
    ("opendp_lite.extras.sklearn", "sklearn"),
)


def family(fn: Callable[..., Any]) -> str:
    """The namespace of a registered constructor: ``"t"``, ``"m"``, ``"c"``, ``"numpy"``,
    ``"sklearn"`` (or ``""`` for a module outside them)."""
    module = getattr(fn, "__module__", "") or ""
    for prefix, name in _FAMILIES:
        if module == prefix or module.startswith(prefix + "."):
            return name
    return ""


def record_call(out: object, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Store the call on ``out`` if it has a ``_record`` slot (a Transformation, Measurement,
    Function or Odometer), unless ``out`` is one of its own arguments (no cycles)."""
    if not isinstance(getattr(type(out), "_record", None), types.MemberDescriptorType):
        return
    if any(out is a for a in args) or any(out is v for v in kwargs.values()):
        return
    out._record = (name, args, dict(kwargs))  # type: ignore[attr-defined]


class RecordedConstructor:
    """A partial's constructor that remembers the ``then_x`` call that made the partial.

    What the partial builds normally records the ``make_x`` call itself (``then_x`` calls the
    registered ``make_x``); if it does not, it records ``apply_partial(then_x(...), domain,
    metric)``, which rebuilds it the same way.
    """

    __slots__ = ("call", "inner", "partial")

    def __init__(self, inner: Callable[[Any, Any], Any], partial: Any, call: Call) -> None:
        self.inner = inner
        self.partial = partial
        self.call = call

    def __call__(self, input_domain: Any, input_metric: Any) -> Any:
        out = self.inner(input_domain, input_metric)
        if getattr(out, "_record", None) is None:
            record_call(out, "apply_partial", (self.partial, input_domain, input_metric), {})
        return out


def _recording(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``fn`` that records its calls on what it returns."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        out = fn(*args, **kwargs)
        record_call(out, name, args, kwargs)
        return out

    return wrapper


def _partial_recording(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``then_x`` whose partial remembers its call (to serialize the partial itself)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        partial = fn(*args, **kwargs)
        for slot in ("constructor", "_make"):
            inner = getattr(partial, slot, None)
            if callable(inner) and not isinstance(inner, RecordedConstructor):
                try:
                    setattr(
                        partial, slot, RecordedConstructor(inner, partial, (name, args, kwargs))
                    )
                except AttributeError:  # pragma: no cover - a partial of another shape
                    pass
                break
        return partial

    return wrapper


def constructor(fn: F) -> F:
    """Declare ``fn`` (a ``make_x``, ``then_x`` or ``new_function``) a public constructor.

    Returns the recording wrapper and registers it under ``fn.__name__``.  A name is declared
    once: declaring it again from the same module (a partial derived again, as in a doctest)
    returns a recording wrapper but keeps the first declaration; from another module, it is
    refused.

    Raises:
        ValueError: if another module already declared a constructor of that name.
    """
    name = fn.__name__
    wrapper = _partial_recording(fn, name) if name.startswith("then_") else _recording(fn, name)
    first = CONSTRUCTORS.setdefault(name, wrapper)
    if first.__module__ != wrapper.__module__:
        raise ValueError(
            f"{name} is declared twice, in {first.__module__} and in {wrapper.__module__}"
        )
    return cast(F, wrapper)


#: The package of a family's namespace (where :func:`publish` sets a constructor).
_NAMESPACES: dict[str, str] = {
    "t": "opendp_lite.transformations",
    "m": "opendp_lite.measurements",
    "c": "opendp_lite.combinators",
}


def publish(*fns: Callable[..., Any]) -> None:
    """Set each declared constructor on its family's namespace (``dp.t``, ``dp.m``, ``dp.c``).

    For a constructor defined above its family's package in the layers (the table API's
    ``make_private_lazyframe`` is ``dp.m``'s, and ``opendp_lite.measurements`` cannot import
    the table layer): its module calls this once, after declaring it, and whoever imports that
    module (the prelude does) finds it on the namespace.

    Raises:
        ValueError: if ``fn`` is not the declared constructor of its name, or its module is in
            no family with a namespace package.
    """
    for fn in fns:
        name = getattr(fn, "__name__", "")
        if CONSTRUCTORS.get(name) is not fn or family(fn) not in _NAMESPACES:
            raise ValueError(f"{name or fn!r} is not a declared constructor of dp.t, dp.m or dp.c")
        setattr(importlib.import_module(_NAMESPACES[family(fn)]), name, fn)
