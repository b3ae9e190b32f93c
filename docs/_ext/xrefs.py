"""A griffe extension for the API reference: Sphinx-style roles become links and math.

opendp_lite's docstrings use Sphinx roles (``:func:`make_clamp```, ``:class:`~x.Context```,
``:math:`d_{out} = d_{in}```), which Markdown would show raw.  Once the package is loaded:

- ``:func:``, ``:class:``, ``:meth:``, ``:mod:``, ``:data:``, ``:attr:`` and ``:exc:`` become an
  optional autoref to the object's canonical path (where the reference documents it), resolved
  from the docstring's scope outwards and then by unique name; a name that resolves to nothing
  documented is shown as code, never as a raw marker.  ``~`` shows only the last component.
- ``:math:`x``` becomes ``\\(x\\)``, typeset by ``pymdownx.arithmatex`` (KaTeX, vendored).
- The line ``Proof: docs/proofs/make_x.md`` becomes a link to that proof's page.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

import griffe

ROLE = re.compile(r":(func|class|meth|mod|data|attr|exc|obj):`(~?)([^`]+)`")
MATH = re.compile(r":math:`([^`]+)`")
DIRECTIVE = re.compile(r"^(\s*)\.\. math::\s*(.*)$")
PROOF = re.compile(r"(Proof: )docs/proofs/((?:lemmas/)?[\w.-]+)\.md")


def _public(path: str) -> bool:
    return not any(part.startswith("_") for part in path.split("."))


def _canonical(obj: Any) -> str | None:
    try:
        target = obj.final_target if getattr(obj, "is_alias", False) else obj
    except Exception:  # an alias to something outside the package
        return None
    path: str = target.path
    return path if path.startswith("opendp_lite") and _public(path) else None


def _lookup(scope: Any, dotted: str) -> str | None:
    """``dotted`` as a member path of ``scope`` (following imports), canonicalised."""
    obj = scope
    for part in dotted.split("."):
        try:
            members = obj.final_target.members if getattr(obj, "is_alias", False) else obj.members
        except Exception:
            return None
        if part not in members:
            return None
        obj = members[part]
    return _canonical(obj)


class CrossReferences(griffe.Extension):
    """Rewrite the roles of every docstring of the package (see the module docstring)."""

    def on_package(self, *, pkg: Any, loader: Any, **kwargs: Any) -> None:
        objects: list[Any] = []
        by_name: dict[str, set[str]] = defaultdict(set)

        def walk(obj: Any) -> None:
            objects.append(obj)
            for member in obj.members.values():
                if getattr(member, "is_alias", False):
                    continue
                canonical = _canonical(member)
                if canonical is not None:
                    by_name[member.name].add(canonical)
                walk(member)

        walk(pkg)
        for obj in objects:
            docstring = getattr(obj, "docstring", None)
            if docstring is not None:
                docstring.value = self.rewrite(docstring.value, obj, pkg, by_name)

    @staticmethod
    def resolve(name: str, obj: Any, pkg: Any, by_name: dict[str, set[str]]) -> str | None:
        """The canonical path ``name`` refers to from ``obj``'s docstring, if documented."""
        name = name.strip().removesuffix("()")
        if name.startswith("."):  # relative to the docstring's package, as in an import
            module = obj if obj.is_module else obj.module
            package = module if module.is_package else module.parent
            return _lookup(package, name.lstrip(".")) if package is not None else None
        if name.startswith("opendp_lite."):
            return _lookup(pkg, name.removeprefix("opendp_lite."))
        scope = obj
        while scope is not None:
            found = _lookup(scope, name)
            if found is not None:
                return found
            scope = scope.parent
        candidates = by_name.get(name.rsplit(".", 1)[-1], set())
        if "." in name:
            candidates = {c for c in candidates if c.endswith("." + name)}
        return next(iter(candidates)) if len(candidates) == 1 else None

    def rewrite(self, text: str, obj: Any, pkg: Any, by_name: dict[str, set[str]]) -> str:
        """``text`` with its roles replaced; code fences and doctest blocks are left alone.

        Roles may span lines, so the substitutions run on each run of unprotected lines.
        """

        def role(m: re.Match[str]) -> str:
            short, name = m.group(2) == "~", " ".join(m.group(3).split())
            shown = name.removesuffix("()").rsplit(".", 1)[-1] if short else name
            target = self.resolve(name, obj, pkg, by_name)
            if target is None:
                return f"`{shown}`"
            return f'<autoref identifier="{target}" optional><code>{shown}</code></autoref>'

        def substitute(chunk: str) -> str:
            chunk = ROLE.sub(role, chunk)
            chunk = MATH.sub(lambda m: "\\(" + m.group(1) + "\\)", chunk)
            return PROOF.sub(
                lambda m: f"{m.group(1)}[docs/proofs/{m.group(2)}.md][{_slug(m.group(2))}]", chunk
            )

        out: list[str] = []
        run: list[str] = []
        in_fence = in_doctest = False
        for line in _display_math(text.split("\n")):
            stripped = line.lstrip()
            if stripped.startswith(("```", "~~~")):
                in_fence = not in_fence
                protected = True
            else:
                in_doctest = (in_doctest and bool(stripped)) or stripped.startswith(">>>")
                protected = in_fence or in_doctest
            if protected:
                if run:
                    out.append(substitute("\n".join(run)))
                    run = []
                out.append(line)
            else:
                run.append(line)
        if run:
            out.append(substitute("\n".join(run)))
        return "\n".join(out)


def _display_math(lines: list[str]) -> list[str]:
    """``.. math:: x`` (and its more-indented continuation lines) as a ``\\[ x \\]`` block."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = DIRECTIVE.match(lines[i])
        if m is None:
            out.append(lines[i])
            i += 1
            continue
        indent, body = m.group(1), [m.group(2)] if m.group(2).strip() else []
        i += 1
        while (
            i < len(lines)
            and lines[i].strip()
            and len(lines[i]) - len(lines[i].lstrip()) > len(indent)
        ):
            body.append(lines[i].strip())
            i += 1
        out += [f"{indent}\\[", *(f"{indent}{b.strip()}" for b in body), f"{indent}\\]"]
    return out


def _slug(name: str) -> str:
    """The anchor of a proof page's title (``# make_x``), as Markdown's toc writes it."""
    return name.rsplit("/", 1)[-1].lower()
