"""The plugin registry: constructors a query finds by name (``register``)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from .. import combinators as _c  # noqa: F401 - loads (declares) dp.c's constructors
from .. import measurements as _m  # noqa: F401 - loads (declares) dp.m's constructors
from .. import transformations as _t  # noqa: F401 - loads (declares) dp.t's constructors
from .._registry import CONSTRUCTORS, family
from ..errors import InvalidParameter

# constructors registered by plugins: name -> (constructor, takes input_domain/input_metric)
_REGISTERED: dict[str, tuple[Callable[..., Any], bool]] = {}


def _lookup(name: str) -> tuple[Callable[..., Any], str]:
    """The constructor for ``query.name(...)`` and how it takes the chain.

    Kinds: ``"then"`` (returns a partial taking domain and metric), ``"space"`` (``make_x``
    whose first two parameters are the input domain and metric), ``"measurement"`` /
    ``"transformation"`` (a combinator of the chain itself), ``"plain"`` (anything else).
    """
    if name in _REGISTERED:
        f, partial = _REGISTERED[name]
        return f, "space" if partial else "plain"
    then = _family_constructor(f"then_{name}")
    if then is not None:
        return then, "then"
    make = _family_constructor(f"make_{name}")
    if make is not None:
        return make, _kind(make)
    raise AttributeError(
        f"unrecognized constructor: {name!r} (no then_{name} or make_{name} in dp.t, dp.m, dp.c"
        " or the plugins); did you mean to .release() first?"
    )


def _family_constructor(name: str) -> Callable[..., Any] | None:
    """The constructor declared (``@constructor``) as ``name`` in ``dp.t``, ``dp.m`` or ``dp.c``."""
    fn = CONSTRUCTORS.get(name)
    return fn if fn is not None and family(fn) in ("t", "m", "c") else None


def _kind(f: Callable[..., Any]) -> str:
    names = list(inspect.signature(f).parameters)
    if names[:2] == ["input_domain", "input_metric"]:
        return "space"
    if names[:1] in (["measurement"], ["transformation"]):
        return names[0]
    return "plain"


def _constructor_names() -> list[str]:
    names = set(_REGISTERED)
    for attr in list(CONSTRUCTORS):
        for prefix in ("then_", "make_"):
            if attr.startswith(prefix) and _family_constructor(attr) is not None:
                names.add(attr[len(prefix) :])
    return sorted(names)


def register(constructor: Callable[..., Any], name: str | None = None) -> None:
    """Make ``query.<name>(...)`` call ``constructor`` (a plugin's transformation/measurement).

    If its first two parameters are ``input_domain`` and ``input_metric``, the query supplies
    them.  ``name`` defaults to the constructor's name without its ``make_`` prefix.

    Raises:
        InvalidParameter: if the name is taken, or missing and not derivable.
    """
    if name is None:
        fname = getattr(constructor, "__name__", "")
        if not fname.startswith("make_"):
            raise InvalidParameter(
                f"constructor.__name__ must start with 'make_' (or pass name=), got {fname!r}"
            )
        name = fname[len("make_") :]
    if name in _REGISTERED or name in _constructor_names():
        raise InvalidParameter(f"{name!r} is already a constructor of the Context API")
    _REGISTERED[name] = (constructor, _kind(constructor) == "space")
