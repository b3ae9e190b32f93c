"""Proof headers: each public constructor's proof in ``docs/proofs/<name>.md`` opens with a
machine-readable header that must match the constructor's actual typed signature.

Header format (YAML-like front matter; one ``key: value`` per line)::

    ---
    constructor: make_laplace
    module: opendp_lite.measurements.noise
    signature: (input_domain: 'Domain[Any]', ...) -> 'Measurement[...]'
    input_domain: atom_domain(T) | vector_domain(atom_domain(T))
    input_metric: absolute_distance(T) | l1_distance(T)
    output: max_divergence()
    map: ε(d_in) = (d_in + penalty_k) / scale, rounded up
    source: 3f1c0a9b27de
    ---

``source`` is :func:`source_hash` of the constructor: the first 12 hex digits of the SHA-256 of
its source text.  A changed body therefore flags its proof for review, as a changed signature
does; after reviewing the proof, ``python -m tools.proofs --stamp make_x`` records the new hash.

``signature`` is ``str(inspect.signature(fn))`` exactly (annotations are strings, since every
module uses ``from __future__ import annotations``).  ``output`` names the output metric or
measure.  ``python -m tools.proofs make_laplace`` prints a fresh header to start from.
"""

from __future__ import annotations

import hashlib
import inspect
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

PROOFS = Path(__file__).resolve().parent.parent / "docs" / "proofs"
SOURCE_KEY = "source"
REQUIRED_KEYS = (
    "constructor",
    "module",
    "signature",
    "input_domain",
    "input_metric",
    "output",
    "map",
    SOURCE_KEY,
)


def public_constructors() -> Iterator[tuple[str, Callable[..., Any]]]:
    """Every public ``make_*`` constructor reachable from ``dp.t``, ``dp.m``, ``dp.c`` and the
    extras (``dp.numpy``; ``dp.sklearn``'s modules when scikit-learn is installed)."""
    import opendp_lite.prelude as dp

    mods: list[Any] = [dp.t, dp.m, dp.c, dp.numpy]
    try:
        from opendp_lite.extras.sklearn import decomposition, linear_model

        mods += [decomposition, linear_model]
    except ImportError:  # pragma: no cover - the optional extra is not installed
        pass
    seen: set[str] = set()
    for mod in mods:
        for name in sorted(getattr(mod, "__all__", dir(mod))):
            fn = getattr(mod, name, None)
            if name.startswith("make_") and callable(fn) and name not in seen:
                seen.add(name)
                yield name, fn


def signature_of(fn: Callable[..., Any]) -> str:
    """The signature string a proof header must quote."""
    return str(inspect.signature(fn))


def source_hash(fn: Callable[..., Any]) -> str:
    """The first 12 hex digits of the SHA-256 of ``fn``'s source, trailing spaces ignored."""
    text = "\n".join(line.rstrip() for line in inspect.getsource(fn).splitlines())
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def parse_header(text: str) -> dict[str, str]:
    """The ``key: value`` pairs of a proof's front matter (empty if there is none)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    out: dict[str, str] = {}
    for line in lines[1:]:
        if line.strip() == "---":
            return out
        key, sep, value = line.partition(":")
        if sep:
            out[key.strip()] = value.strip()
    return {}


def header_for(name: str, fn: Callable[..., Any]) -> str:
    """A header skeleton for ``fn``, to be completed by hand."""
    return "\n".join(
        [
            "---",
            f"constructor: {name}",
            f"module: {fn.__module__}",
            f"signature: {signature_of(fn)}",
            "input_domain: TODO",
            "input_metric: TODO",
            "output: TODO",
            "map: TODO",
            f"{SOURCE_KEY}: {source_hash(fn)}",
            "---",
        ]
    )


def stamp(name: str, fn: Callable[..., Any]) -> bool:
    """Record ``fn``'s current source hash in its proof header; True if the header changed.

    Run it only after reviewing the proof against the changed body.
    """
    path = PROOFS / f"{name}.md"
    text = path.read_text(encoding="utf-8")
    head, sep, body = text.partition("\n---\n")
    lines = [line for line in head.splitlines() if not line.startswith(f"{SOURCE_KEY}:")]
    lines.append(f"{SOURCE_KEY}: {source_hash(fn)}")
    new = "\n".join(lines) + sep + body
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def main(argv: list[str]) -> int:
    """Print header skeletons for the named constructors (or all of them).

    With ``--stamp``, record the current source hashes in the named proofs instead.
    """
    do_stamp = "--stamp" in argv
    wanted = {a for a in argv if a != "--stamp"}
    for name, fn in public_constructors():
        if wanted and name not in wanted:
            continue
        if do_stamp:
            if stamp(name, fn):
                print(f"stamped {name}: {source_hash(fn)}")
        else:
            print(header_for(name, fn), end="\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
