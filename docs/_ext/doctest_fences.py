"""A griffe extension for the API reference: render doctest blocks as code.

Docstrings in opendp_lite carry runnable ``>>>`` examples (pytest runs them).  Markdown would
read ``>>>`` as nested block quotes and ``[a][b]`` in an output line as a reference link, so
each doctest block (a ``>>>`` line up to the next blank line) is fenced as ``pycon`` code.
"""

from __future__ import annotations

from typing import Any

import griffe


def fence_doctests(text: str) -> str:
    """Wrap every doctest block of ``text`` in a fenced ``pycon`` code block."""
    out: list[str] = []
    lines = text.splitlines()
    i, in_fence = 0, False
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
        if in_fence or not stripped.startswith(">>>"):
            out.append(line)
            i += 1
            continue
        indent = line[: len(line) - len(stripped)]
        out.append(f"{indent}```pycon")
        while i < len(lines) and lines[i].strip():
            out.append(lines[i])
            i += 1
        out.append(f"{indent}```")
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    """Fence doctest blocks in every docstring once the object tree is complete."""

    def on_object(self, *, obj: Any, loader: Any, **kwargs: Any) -> None:
        docstring = getattr(obj, "docstring", None)
        if docstring is not None and ">>>" in docstring.value:
            docstring.value = fence_doctests(docstring.value)
