"""Typing statistics of the constructor spine (issue 13), reproducible on any commit.

Run from a checkout's root (or pass it): ``python tools/spine_stats.py [ROOT] [--json]``.
It prints

(a) the number of ``@overload`` decorators in ``opendp_lite/`` (lines whose code is
    ``@overload`` or ``@typing.overload``);
(b) ``Any`` per 1,000 lines in ``opendp_lite/``: the number of ``Any`` name tokens (code only:
    comments and strings are not counted) over the number of physical lines of the ``.py``
    files, times 1,000;
(c) the public ``then_*`` of ``dp.t``/``dp.m``/``dp.c`` whose return type, as mypy reveals it
    (every overload item), contains ``Any``.  numpy's unparameterised array type
    (``ndarray[tuple[Any, ...], dtype[Any]]``, the array half of ``Vec[T]`` and ``NDArray[Any]``)
    is removed first: its ``Any`` is numpy's dtype, not a declaration the constructor lacks.

The names in (c) come from importing the checkout's own ``opendp_lite.prelude``; mypy runs on a
generated ``reveal_type`` module in the checkout's root, so its ``opendp_lite`` is the one
checked.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
import tokenize
from pathlib import Path

_NDARRAY = re.compile(r"numpy\.ndarray\[builtins\.tuple\[Any, \.\.\.\], numpy\.dtype\[Any\]\]")
_NDARRAY_SHORT = re.compile(r"numpy\.ndarray\[tuple\[Any, \.\.\.\], numpy\.dtype\[Any\]\]")


def overload_count(package: Path) -> int:
    """(a): ``@overload`` decorators in the package."""
    n = 0
    for path in sorted(package.rglob("*.py")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() in ("@overload", "@typing.overload"):
                n += 1
    return n


def any_density(package: Path) -> tuple[int, int, float]:
    """(b): ``Any`` name tokens, physical lines, and tokens per 1,000 lines."""
    tokens = lines = 0
    for path in sorted(package.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines += len(text.splitlines())
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NAME and tok.string == "Any":
                tokens += 1
    return tokens, lines, round(1000 * tokens / lines, 1)


def then_names(root: Path) -> list[str]:
    """``t.then_x`` for each public partial, from the checkout's own package."""
    sys.path.insert(0, str(root))
    import opendp_lite.prelude as dp

    if not Path(dp.__file__).resolve().is_relative_to(root):
        raise SystemExit(f"imported {dp.__file__}, not the package under {root}")
    return [
        f"{ns}.{name}"
        for ns in ("t", "m", "c")
        for name in sorted(dir(getattr(dp, ns)))
        if name.startswith("then_") and callable(getattr(getattr(dp, ns), name))
    ]


def _return_types(revealed: str) -> list[str]:
    """The return types of a revealed callable or overload (the text after each top ``->``)."""
    out: list[str] = []
    depth = 0
    i = 0
    start = -1
    while i < len(revealed):
        c = revealed[i]
        if c in "([":
            depth += 1
        elif c in ")]":
            if depth == 1 and revealed.startswith("Overload(") and start >= 0 and c == ")":
                out.append(revealed[start:i].strip())
                start = -1
            depth -= 1
        elif revealed.startswith("-> ", i) and depth <= 1:
            start = i + 3
        elif revealed.startswith(", def ", i) and depth == 1 and start >= 0:
            out.append(revealed[start:i].strip())
            start = -1
        i += 1
    if start >= 0:
        out.append(revealed[start:].strip())
    return out


def then_with_any(root: Path, names: list[str]) -> dict[str, list[str]]:
    """(c): each partial whose revealed return type contains ``Any`` (after numpy's arrays)."""
    from mypy import api

    module = root / "_spine_stats_reveal.py"
    body = ["import opendp_lite.prelude as dp", ""]
    body += [f"reveal_type(dp.{name})" for name in names]
    module.write_text("\n".join(body) + "\n", encoding="utf-8")
    cwd = Path.cwd()
    os.chdir(root)  # the checkout's own config and package
    try:
        stdout, _, _ = api.run(["--strict", "--no-incremental", module.name])
    finally:
        module.unlink()
        os.chdir(cwd)
    revealed: dict[int, str] = {}
    for line in stdout.splitlines():
        m = re.match(r".*?:(\d+): note: Revealed type is \"(.*)\"$", line)
        if m:
            revealed[int(m.group(1))] = m.group(2)
    out: dict[str, list[str]] = {}
    for i, name in enumerate(names, start=3):
        text = revealed.get(i, "")
        rets = [
            _NDARRAY_SHORT.sub("ndarray", _NDARRAY.sub("ndarray", r)) for r in _return_types(text)
        ]
        with_any = [r for r in rets if re.search(r"\bAny\b", r)]
        if with_any or not rets:
            out[name] = with_any or [f"(not revealed: {text!r})"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root", nargs="?", default=".", help="the checkout's root")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of text")
    args = parser.parse_args()
    root = Path(args.root).resolve()
    package = root / "opendp_lite"
    overloads = overload_count(package)
    tokens, lines, density = any_density(package)
    names = then_names(root)
    with_any = then_with_any(root, names)
    if args.json:
        print(
            json.dumps(
                {
                    "overloads": overloads,
                    "any_tokens": tokens,
                    "lines": lines,
                    "any_per_1000_lines": density,
                    "then_count": len(names),
                    "then_with_any": sorted(with_any),
                }
            )
        )
        return
    print(f"(a) @overload in opendp_lite/: {overloads}")
    print(f"(b) Any per 1,000 lines: {density} ({tokens} Any tokens / {lines} lines)")
    print(f"(c) then_* with Any in their return type: {len(with_any)} of {len(names)}")
    for name, rets in sorted(with_any.items()):
        print(f"    {name}: {' | '.join(sorted(set(rets)))}")


if __name__ == "__main__":
    main()
