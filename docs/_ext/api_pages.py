"""A MkDocs hook: every public module has a page in the API reference, even a new one.

The reference has one hand-written page per module (``docs/api/<family>/<module>.md``), placed
in the navigation by ``docs/.nav.yml``.  A module added later without a page would be missing
from the site (and its constructors' proofs unlinked), so at build time this hook generates
``api/<family>/<module>.md`` for each public module of ``transformations``, ``measurements``
and ``combinators`` that has none, and ``api/<module>.md`` for each public top-level module or
package that no page renders; a hand-written page of that name is never replaced.  The
navigation's globs list them under "Other"/"More".  To give one a title and a place, write its
page: the hook then leaves it alone.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "opendp_lite"
FAMILIES = ("transformations", "measurements", "combinators")
#: Top-level modules that are not reference pages of their own (re-exports, entry points).
SKIP = {"prelude", "typing", "mod", "__main__", "__init__"}
TARGET = re.compile(r"^:::\s*(opendp_lite(?:\.\w+)*)", re.MULTILINE)


def _public_modules(directory: Path) -> list[str]:
    names = []
    for path in sorted(directory.iterdir()):
        name = path.stem if path.suffix == ".py" else path.name
        is_module = path.suffix == ".py" or (path / "__init__.py").is_file()
        if is_module and not name.startswith("_") and name not in SKIP:
            names.append(name)
    return names


def _title(module: str) -> str:
    return module.rsplit(".", 1)[-1].replace("_", " ").capitalize()


def on_files(files: Files, config: Any, **kwargs: Any) -> Files:
    """Add a generated page for every public module that no page renders."""
    rendered: set[str] = set()
    for file in files.documentation_pages():
        if file.src_uri.startswith("api/") and file.abs_src_path:
            text = Path(file.abs_src_path).read_text(encoding="utf-8")
            rendered.update(TARGET.findall(text))

    def covered(module: str) -> bool:
        return any(r == module or r.startswith(module + ".") for r in rendered)

    def add(src_uri: str, module: str) -> None:
        if not covered(module) and files.get_file_from_path(src_uri) is None:
            files.append(_page(config, src_uri, module))

    for family in FAMILIES:
        for name in _public_modules(PACKAGE / family):
            add(f"api/{family}/{name}.md", f"opendp_lite.{family}.{name}")
    for name in _public_modules(PACKAGE):
        if name not in FAMILIES:
            add(f"api/{name}.md", f"opendp_lite.{name}")
    return files


def _page(config: Any, src_uri: str, module: str) -> File:
    content = f"# {_title(module)}\n\n::: {module}\n    options:\n      show_submodules: true\n"
    return File.generated(config, src_uri, content=content)
