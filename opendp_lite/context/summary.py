"""The summary of a context: per released query, its loss, noise scale and accuracy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import accuracy as _accuracy

#: noise mechanisms whose accuracy the summary reports: name -> (continuous, discrete) helper
_ACCURACY: dict[str, tuple[Callable[..., float], Callable[..., float]]] = {
    "laplace": (
        _accuracy.laplacian_scale_to_accuracy,
        _accuracy.discrete_laplacian_scale_to_accuracy,
    ),
    "geometric": (
        _accuracy.discrete_laplacian_scale_to_accuracy,
        _accuracy.discrete_laplacian_scale_to_accuracy,
    ),
    "gaussian": (
        _accuracy.gaussian_scale_to_accuracy,
        _accuracy.discrete_gaussian_scale_to_accuracy,
    ),
}


def _accuracy_of(entry: dict[str, Any], alpha: float) -> float | None:
    helpers = _ACCURACY.get(str(entry.get("mechanism")))
    scale = entry.get("scale")
    if helpers is None or not isinstance(scale, (int, float)):
        return None
    helper = helpers[1] if entry.get("discrete") else helpers[0]
    return helper(float(scale), alpha)


class Summary:
    """A printable account of a context: per query, its loss, noise scale and accuracy."""

    def __init__(self, rows: list[dict[str, Any]], spent: Any, remaining: Any, alpha: float):
        self.rows = rows
        """One dict per released query: ``query``, ``loss``, ``mechanism``, ``scale``,
        ``accuracy`` (at ``alpha``, per released number), ``alpha``."""
        self.spent = spent
        self.remaining = remaining
        self.alpha = alpha

    def __repr__(self) -> str:
        return str(self)

    def __str__(self) -> str:
        head = ("#", "query", "privacy loss", "mechanism", "scale", f"accuracy (α={self.alpha})")
        table = [head]
        for i, r in enumerate(self.rows, 1):
            acc = r.get("accuracy")
            table.append(
                (
                    str(i),
                    str(r.get("query")),
                    _short(r.get("loss")),
                    str(r.get("mechanism") or "-"),
                    _short(r.get("scale")),
                    "-" if acc is None else f"±{_short(acc)}",
                )
            )
        widths = [max(len(row[j]) for row in table) for j in range(len(head))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in table]
        lines.insert(1, "  ".join("-" * w for w in widths))
        lines.append(f"spent: {_short(self.spent)}; remaining: {_short(self.remaining)}")
        return "\n".join(line.rstrip() for line in lines)


def _nested(x: Any) -> str:
    """``repr(x)`` indented to sit inside another repr, as OpenDP prints a context."""
    return repr(x).replace("\n", "\n    ")


def _short(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.6g}"
    if isinstance(x, (list, tuple)):
        inner = ", ".join(_short(v) for v in x)
        return f"[{inner}]" if isinstance(x, list) else f"({inner})"
    return "-" if x is None else str(x)
