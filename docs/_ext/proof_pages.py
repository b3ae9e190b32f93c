"""A MkDocs hook: every constructor's proof page reads beside the code it proves.

A proof ``docs/proofs/make_x.md`` opens with a machine-checked header (``tools/proofs.py``).
On the site the header becomes a table (constructor, signature, input domain and metric, output
metric or measure, map, state of the pin); then comes the function, i.e. the constructor's own
source, before the argument; then the proof's body; then "Code this proof covers": every helper
the proof is pinned to, each with its source and a link to its module's API page and its file
and lines.  All of it is read from the source at build time, so the page cannot drift from the
code.

The header is read with the proof tool's reader (``tools.proofs.read_header``, or
``parse_header`` on older trees), never as YAML: today's headers are not valid YAML and stay in
the Markdown; valid YAML front matter is stripped by MkDocs into ``page.meta``.  Both cases give
the same page.  The pinned helpers are ``tools.proofs.dependencies(name)`` when the tool has
it; otherwise the constructor alone, located in its module's source with :mod:`ast` (nothing is
imported: importing every module, the optional extras included, would cost the build seconds).
"""

from __future__ import annotations

import ast
import hashlib
import html
import importlib
import json
import logging
import posixpath
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LOG = logging.getLogger("mkdocs.hooks.proof_pages")
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: Header rows of the table, in order: (key, label, shown as code).
ROWS: tuple[tuple[str, str, bool], ...] = (
    ("constructor", "Constructor", True),
    ("signature", "Signature", True),
    ("input_domain", "Input domain", True),
    ("input_metric", "Input metric", True),
    ("output", "Output measure / metric", True),
    ("map", "Map", False),
)
SOURCE_KEY = "source"
#: Modules every constructor leans on (the typed core, errors, validation, frames): their pins
#: are listed under "Shared plumbing", not shown, which keeps each page (and the build) small.
PLUMBING = frozenset(
    f"opendp_lite.{m}"
    for m in (
        "core",
        "domains",
        "metrics",
        "measures",
        "errors",
        "typing",
        "_types",
        "_validate",
        "_frames",
        "backends",
        "backends.dask",
        "backends.numpy",
        "_spine",
        "serialization",
    )
)
TARGET = re.compile(r"^:::\s*(opendp_lite(?:\.\w+)*)", re.MULTILINE)
FRONT = re.compile(r"\A---[ \t]*\n.*?\n---[ \t]*(?:\n|\Z)", re.DOTALL)


@dataclass(frozen=True)
class Dep:
    """One piece of code a proof is pinned to (the fields of ``tools.proofs.Dep`` used here)."""

    qualname: str
    path: str
    lineno: int
    end_lineno: int
    kind: str = "code"
    digest: str = ""


def _proofs_module() -> Any:
    """``tools.proofs``, importable however MkDocs was started (its CLI does not put the
    repository on ``sys.path``; without it every page would lose its pins and code)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    try:
        return importlib.import_module("tools.proofs")
    except ImportError:  # pragma: no cover - the tool is part of the repository
        return None


def _parse(text: str) -> dict[str, str]:
    """``key: value`` lines of a leading ``---`` block (the tool's own rule, as a fallback)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    out: dict[str, str] = {}
    for line in lines[1:]:
        if line.strip() == "---":
            return out
        key, sep, value = line.partition(":")
        if sep and not line[:1].isspace():
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] == '"':  # a YAML double-quoted string
                value = json.loads(value)
            out[key.strip()] = value
    return {}


def read_header(path: Path, meta: dict[str, Any] | None = None) -> dict[str, str]:
    """The proof's header: the tool's reader, else the plain reader, else MkDocs' ``meta``."""
    tool = _proofs_module()
    header: dict[str, Any] = {}
    reader = getattr(tool, "read_header", None)
    if reader is not None:
        try:
            header = dict(reader(path))
        except Exception as exc:  # a reader that refuses: fall back to the text
            LOG.info("proof_pages: read_header(%s) failed (%s); reading the text", path, exc)
            header = {}
    if not header:
        text = path.read_text(encoding="utf-8")
        parse = getattr(tool, "parse_header", None)
        header = dict(parse(text)) if parse is not None else _parse(text)
    if not header and meta:
        header = dict(meta)
    return {str(k): _text(v) for k, v in header.items()}


def _text(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_text(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(_text(v) for v in value)
    return "" if value is None else str(value).strip()


def strip_front_matter(markdown: str) -> str:
    """``markdown`` without a leading ``---`` block (MkDocs leaves one it cannot parse)."""
    return FRONT.sub("", markdown, count=1).lstrip("\n")


def locate(module: str, name: str) -> Dep | None:
    """Where ``module``'s top-level function ``name`` is defined (its last definition, after
    any ``@overload`` stubs; decorators included, as :func:`inspect.getsource` gives it), read
    from the source without importing anything (importing every module, the optional extras
    included, would cost the build seconds)."""
    rel = module.replace(".", "/")
    for candidate in (f"{rel}.py", f"{rel}/__init__.py"):
        if (ROOT / candidate).is_file():
            break
    else:
        return None
    tree = _tree(candidate)
    found = [
        node
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name
    ]
    if not found:
        return None
    node = found[-1]
    start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return Dep(f"{module}.{name}", candidate, start, node.end_lineno or node.lineno)


_TREES: dict[str, ast.Module] = {}


def _tree(path: str) -> ast.Module:
    if path not in _TREES:
        _TREES[path] = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return _TREES[path]


def dependencies(name: str, module: str) -> list[Dep]:
    """The code the proof of ``name`` is pinned to, the constructor first.

    ``tools.proofs.dependencies`` when the tool has it, else the constructor alone.
    """
    tool = _proofs_module()
    deps_of = getattr(tool, "dependencies", None)
    deps: list[Dep] = []
    if deps_of is not None:
        try:
            deps = [
                Dep(
                    qualname=str(d.qualname),
                    path=str(d.path),
                    lineno=int(d.lineno),
                    end_lineno=int(d.end_lineno),
                    kind=str(getattr(d, "kind", "code")),
                    digest=str(getattr(d, "digest", "")),
                )
                for d in deps_of(name)
            ]
        except Exception as exc:  # the page still shows the constructor
            LOG.info("proof_pages: dependencies(%s) failed (%s); constructor only", name, exc)
            deps = []
    if not deps:
        own = locate(module, name)
        deps = [own] if own is not None else []
    # The constructor first, then the helpers in the tool's order.
    first = [d for d in deps if d.kind == "code" and d.qualname == f"{module}.{name}"]
    first = first or [d for d in deps if d.kind == "code" and _short(d.qualname) == name]
    return first[:1] + [d for d in deps if d not in first[:1]]


def text_digest(dep: Dep) -> str:
    """``tools.proofs.source_hash`` of the function at ``dep`` (first 12 hex digits of the
    SHA-256 of its source lines, trailing spaces ignored), computed without importing it."""
    lines = _source(dep).splitlines()
    text = "\n".join(line.rstrip() for line in lines)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def pin_state(header: dict[str, str], deps: list[Dep]) -> str:
    """Whether the recorded ``source:`` digest is the one of the code as it is now.

    With the pin tool (``tools.proofs.combined``; its lock files, ``read_lock``, name the pins
    that changed) the digest covers every pin; with the single-function tool it is the
    constructor's source hash.  Computed statically: nothing is imported.
    """
    recorded = header.get(SOURCE_KEY, "")
    if not recorded:
        return "not pinned"
    tool = _proofs_module()
    name = header.get("constructor", "")
    combined = getattr(tool, "combined", None)
    current: str | None = None
    changed: list[str] = []
    if combined is not None and getattr(tool, "dependencies", None) is not None:
        try:
            current = str(combined(deps))
            lock = tool.read_lock(name) if hasattr(tool, "read_lock") else None
            before = dict(lock.get("deps", {})) if lock else {}
            now = {d.qualname: d.digest for d in deps}
            changed = sorted(q for q in set(now) | set(before) if now.get(q) != before.get(q))
        except Exception as exc:  # not checked at build time
            LOG.info("proof_pages: pin state of %s not computed (%s)", name, exc)
            current = None
    elif deps and _short(deps[0].qualname) == name:
        current = text_digest(deps[0])  # the single-function pin of the old tool
    if current is None:
        return f"{recorded} (not checked at build time)"
    pins = f"{len(deps)} pin{'s' if len(deps) != 1 else ''}"
    if current == recorded:
        return f"{recorded}: current ({pins}, unchanged since this proof was reviewed)"
    what = f"; changed pins: {', '.join(changed[:8])}" if changed else ""
    more = f" and {len(changed) - 8} more" if len(changed) > 8 else ""
    return (
        f"{recorded}: STALE (the code changed since this proof was reviewed; "
        f"now {current}{what}{more})"
    )


def _short(qualname: str) -> str:
    return qualname.rsplit(".", 1)[-1]


def _module_of(path: str) -> str:
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def api_pages(files: Iterable[Any]) -> dict[str, str]:
    """Module rendered by ``::: module`` -> the src_uri of the API page rendering it."""
    out: dict[str, str] = {}
    for file in files:
        src = getattr(file, "src_uri", "")
        if not (src.startswith("api/") and src.endswith(".md")):
            continue
        content = getattr(file, "content_string", None) if not file.abs_src_path else None
        if content is None and file.abs_src_path:
            content = Path(file.abs_src_path).read_text(encoding="utf-8")
        for target in TARGET.findall(content or ""):
            out.setdefault(target, src)
    return out


def api_link(dep: Dep, pages: dict[str, str]) -> tuple[str, str] | None:
    """(src_uri of the API page, anchor) for ``dep``'s module; the anchor only for a public
    name (private helpers are not rendered in the reference)."""
    module = _module_of(dep.path)
    if any(part.startswith("_") for part in module.split(".")):
        return None  # a private module: the reference does not render it
    candidates = [m for m in pages if module == m or module.startswith(m + ".")]
    if not candidates:
        return None
    page = pages[max(candidates, key=len)]
    tail = dep.qualname.removeprefix(module + ".")
    public = all(not part.startswith("_") for part in [*module.split("."), *tail.split(".")])
    anchor = f"{module}.{tail}" if public and dep.qualname != module and _is_def(dep) else ""
    return page, anchor


def _is_def(dep: Dep) -> bool:
    """Whether ``dep`` is a function or class (rendered with an anchor), not a constant."""
    try:
        first = _source(dep).lstrip()
    except (OSError, IndexError):
        return False
    return first.startswith(("def ", "class ", "async def ", "@"))


def _source(dep: Dep) -> str:
    lines = (ROOT / dep.path).read_text(encoding="utf-8").splitlines()
    return "\n".join(lines[dep.lineno - 1 : dep.end_lineno])


_HIGHLIGHTED: dict[tuple[str, int, str], str] = {}


def highlighted(code: str, start: int, path: str) -> str:
    """``code`` as Pygments HTML with line numbers from ``start`` (as the site's fences get
    it), cached: a helper pinned by many proofs (a sampler, the core) is highlighted once."""
    key = (path, start, code)
    if key not in _HIGHLIGHTED:
        from pygments import highlight  # type: ignore[import-untyped]
        from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]
        from pygments.lexers import PythonLexer  # type: ignore[import-untyped]

        formatter = HtmlFormatter(linenos="table", linenostart=start, cssclass="highlight")
        _HIGHLIGHTED[key] = highlight(code, PythonLexer(), formatter)
    return _HIGHLIGHTED[key]


def _indent(text: str) -> str:
    return "\n".join(("    " + line) if line else "" for line in text.splitlines())


def _module_link(path: str, here: str, pages: dict[str, str]) -> str:
    """A link to the API page rendering the module at ``path``, or 'not in the reference'."""
    module = _module_of(path)
    link = api_link(Dep(module, path, 1, 1), pages)
    if link is None:
        return "private module, not in the API reference"
    return f"[API reference]({posixpath.relpath(link[0], posixpath.dirname(here))})"


def _code_block(
    dep: Dep, pages: dict[str, str], url_for: Callable[[str], str | None], *, open_: bool
) -> str:
    """A ``<details>`` block (raw HTML, its links already URLs): where ``dep`` is, a link to
    its API entry, and its highlighted source."""
    try:
        code = _source(dep)
    except (OSError, IndexError):
        return f"- `{dep.qualname}`: `{dep.path}`, lines {dep.lineno}–{dep.end_lineno}"
    span = (
        f"line {dep.lineno}"
        if dep.lineno == dep.end_lineno
        else (f"lines {dep.lineno}–{dep.end_lineno}")
    )
    where = f"<code>{html.escape(dep.path)}</code>, {span}"
    link = api_link(dep, pages)
    url = url_for(link[0]) if link is not None else None
    if link is not None and url is not None:
        target = url + (f"#{link[1]}" if link[1] else "")
        what = "API reference" if link[1] else "module in the API reference"
        where += f' · <a href="{html.escape(target)}">{what}</a>'
    summary = f"{html.escape(dep.qualname)} ({html.escape(dep.path)}:{dep.lineno})"
    return (
        f'<details class="pinned"{" open" if open_ else ""}>\n'
        f"<summary>{summary}</summary>\n<p>{where}</p>\n"
        f"{highlighted(code, dep.lineno, dep.path)}</details>"
    )


#: Code blocks of each page (by src_uri), put in by :func:`expand` once the page is HTML: kept
#: out of Markdown's HTML parser and the search index (both would parse every token's span).
_BLOCKS: dict[str, list[str]] = {}
PLACEHOLDER = re.compile(r"<!-- proof-pages code (\d+) -->")


def _placeholder(here: str, block: str) -> str:
    blocks = _BLOCKS.setdefault(here, [])
    blocks.append(block)
    return f"<!-- proof-pages code {len(blocks) - 1} -->"


def expand(output: str, here: str) -> str:
    """``output`` with the code blocks of page ``here`` in place of their placeholders."""
    blocks = _BLOCKS.get(here, [])
    return PLACEHOLDER.sub(lambda m: blocks[int(m.group(1))], output)


def _doc_link(dep: Dep, here: str) -> str:
    """A pinned document as a link titled by its first heading."""
    title = dep.qualname
    try:
        heading = re.search(r"^# (.+)$", (ROOT / dep.path).read_text(encoding="utf-8"), re.M)
        title = heading.group(1).strip() if heading else title
    except OSError:
        pass
    if dep.path.startswith("docs/"):
        rel = posixpath.relpath(dep.path.removeprefix("docs/"), posixpath.dirname(here))
        return f"- [{title}]({rel}) (`{dep.path}`)"
    return f"- {title} (`{dep.path}`)"


def header_table(header: dict[str, str], state: str, api: str | None) -> str:
    """The header as an HTML table (raw HTML: no value is read as Markdown)."""
    rows = []
    for key, label, code in ROWS:
        value = header.get(key, "")
        if not value:
            continue
        cell = html.escape(value)
        if code:
            cell = f"<code>{cell}</code>"
        if key == "constructor" and api:
            cell = f'<a href="{html.escape(api)}">{cell}</a>'
        if key == "constructor" and header.get("module"):
            cell += f" <small>in <code>{html.escape(header['module'])}</code></small>"
        rows.append(f"<tr><th>{label}</th><td>{cell}</td></tr>")
    rows.append(f"<tr><th>Pin</th><td>{html.escape(state)}</td></tr>")
    return '<table class="proof-header">\n' + "\n".join(rows) + "\n</table>"


def render(
    markdown: str,
    header: dict[str, str],
    deps: list[Dep],
    state: str,
    here: str,
    pages: dict[str, str],
    api_url: str | None,
    url_for: Callable[[str], str | None] | None = None,
) -> str:
    """The page: title, header table, the function, the body, the code the proof covers.

    ``url_for(src_uri)`` is the URL of a documentation page relative to this one (raw HTML
    blocks need URLs, not Markdown paths); without it, the relative path of the built site
    (directory URLs) is assumed.
    """
    _BLOCKS[here] = []
    if url_for is None:
        depth = here.count("/") + 1

        def url_for(src: str) -> str | None:
            return "../" * depth + src.removesuffix(".md") + "/"

    body = strip_front_matter(markdown)
    title, rest = "", body
    m = re.match(r"(#[^#].*\n)", body)
    if m:
        title, rest = m.group(1), body[m.end() :]
    name = header.get("constructor", "")
    code = [d for d in deps if d.kind == "code"]
    docs = [d for d in deps if d.kind != "code"]
    first = code[0] if code and _short(code[0].qualname) == name else None
    helpers = [d for d in code if d is not first]
    out = [title.rstrip("\n") or f"# {name}", "", header_table(header, state, api_url), ""]
    if first is not None:
        block = _code_block(first, pages, url_for, open_=True)
        out += ["## The function", "", _placeholder(here, block), ""]
    out += ["## The proof", "", rest.strip("\n"), ""]
    out += ["## Code this proof covers", ""]
    if not deps:
        out += ["The constructor's source was not found at build time.", ""]
        return "\n".join(out)
    own = [d for d in helpers if _module_of(d.path) not in PLUMBING]
    shared = [d for d in helpers if _module_of(d.path) in PLUMBING]
    # a unit inside another shown unit (a method of a shown class) is not shown twice
    inside = {
        d
        for d in own
        for o in own
        if o is not d and o.path == d.path and o.lineno <= d.lineno <= d.end_lineno <= o.end_lineno
    }
    out += [
        f"The proof's `source:` digest covers {len(code)} piece{'s' if len(code) != 1 else ''} "
        "of code"
        + (f" and {len(docs)} document{'s' if len(docs) != 1 else ''}" if docs else "")
        + ": a change to any of them flags the proof for review. The constructor is shown "
        "above; its helpers follow, by module, then the shared plumbing (listed, not shown).",
        "",
    ]
    for path in sorted({d.path for d in own}):
        group = sorted((d for d in own if d.path == path), key=lambda d: d.lineno)
        out += [f"**`{path}`** ({_module_link(path, here, pages)})", ""]
        for dep in group:
            if dep in inside:
                continue
            out += [_placeholder(here, _code_block(dep, pages, url_for, open_=False)), ""]
    if docs:
        out += ["**Documents**", ""] + [_doc_link(d, here) for d in docs] + [""]
    if shared:
        modules = sorted({d.path for d in shared})
        lines = []
        for path in modules:
            names = ", ".join(
                f"`{d.qualname.removeprefix(_module_of(path) + '.')}` ({d.lineno}–{d.end_lineno})"
                for d in sorted((d for d in shared if d.path == path), key=lambda d: d.lineno)
            )
            lines.append(f"- `{path}` ({_module_link(path, here, pages)}): {names}")
        n_pins, n_mods = len(shared), len(modules)
        title = (
            f"Shared plumbing: {n_pins} pin{'s' if n_pins != 1 else ''} "
            f"in {n_mods} module{'s' if n_mods != 1 else ''}"
        )
        out += [f'??? pinned "{title}"', "", _indent("\n".join(lines)), ""]
    return "\n".join(out)


def is_proof(src_uri: str) -> bool:
    """A constructor's proof page: ``proofs/make_*.md`` (not the lemmas or sampler pages)."""
    return bool(re.fullmatch(r"proofs/make_\w+\.md", src_uri))


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any, **kwargs: Any) -> str:
    """Rewrite a proof page (see the module docstring); other pages pass through."""
    src = page.file.src_uri
    if not is_proof(src) or not page.file.abs_src_path:
        return markdown
    header = read_header(Path(page.file.abs_src_path), getattr(page, "meta", None))
    if not header.get("constructor"):
        return markdown
    deps = dependencies(header["constructor"], header.get("module", ""))
    pages = _pages(files)
    api_url = None
    if deps and (link := api_link(deps[0], pages)) is not None:
        target = files.get_file_from_path(link[0])
        if target is not None:
            api_url = target.url_relative_to(page.file) + (f"#{link[1]}" if link[1] else "")

    def url_for(src_uri: str) -> str | None:
        target = files.get_file_from_path(src_uri)
        return None if target is None else str(target.url_relative_to(page.file))

    state = pin_state(header, deps)
    return render(markdown, header, deps, state, src, pages, api_url, url_for)


def on_post_page(output: str, page: Any, config: Any, **kwargs: Any) -> str:
    """Put the code blocks of a proof page in (after search indexing: code is not indexed)."""
    if not is_proof(page.file.src_uri):
        return output
    return expand(output, page.file.src_uri)


_PAGES: dict[int, dict[str, str]] = {}


def _pages(files: Any) -> dict[str, str]:
    key = id(files)
    if key not in _PAGES:
        _PAGES.clear()
        _PAGES[key] = api_pages(files.documentation_pages())
    return _PAGES[key]
