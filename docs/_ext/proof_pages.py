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
import logging
import posixpath
import re
import sys
from collections.abc import Iterable
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
            out[key.strip()] = value.strip()
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
    first = [d for d in deps if d.kind == "code" and _short(d.qualname) == name]
    return first[:1] + [d for d in deps if d not in first[:1]]


def text_digest(dep: Dep) -> str:
    """``tools.proofs.source_hash`` of the function at ``dep`` (first 12 hex digits of the
    SHA-256 of its source lines, trailing spaces ignored), computed without importing it."""
    lines = _source(dep).splitlines()
    text = "\n".join(line.rstrip() for line in lines)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def pin_state(header: dict[str, str], deps: list[Dep]) -> str:
    """Whether the recorded digest is the code's current one."""
    recorded = header.get(SOURCE_KEY, "")
    tool = _proofs_module()
    name = header.get("constructor", "")
    for attr in ("pin_state", "check_pin"):
        check = getattr(tool, attr, None)
        if check is not None:
            try:
                return str(check(name))
            except Exception:  # fall through to the digests
                break
    if not recorded:
        return "not pinned"
    current: str | None = None
    for attr in ("combined_digest", "pin_digest"):
        digest = getattr(tool, attr, None)
        if digest is not None:
            try:
                current = str(digest(name))
            except Exception:  # not checked at build time
                current = None
            break
    pinned_to_many = getattr(tool, "dependencies", None) is not None
    if current is None and not pinned_to_many and deps and _short(deps[0].qualname) == name:
        current = text_digest(deps[0])  # the single-function pin of today's tool
    if current is None:
        return f"{recorded} (not checked at build time)"
    if current == recorded:
        return f"{recorded}: current (the code is the code this proof was reviewed against)"
    return (
        f"{recorded}: STALE (the code changed since this proof was reviewed; "
        f"current digest {current})"
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
    candidates = [m for m in pages if module == m or module.startswith(m + ".")]
    if not candidates:
        return None
    page = pages[max(candidates, key=len)]
    tail = dep.qualname.removeprefix(module + ".")
    public = all(not part.startswith("_") for part in [*module.split("."), *tail.split(".")])
    anchor = f"{module}.{tail}" if public and dep.qualname != module else ""
    return page, anchor


def _source(dep: Dep) -> str:
    lines = (ROOT / dep.path).read_text(encoding="utf-8").splitlines()
    return "\n".join(lines[dep.lineno - 1 : dep.end_lineno])


def _fence(code: str, start: int) -> str:
    ticks = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", code)), default=0))
    return f'{ticks}python linenums="{start}"\n{code}\n{ticks}'


def _indent(text: str) -> str:
    return "\n".join(("    " + line) if line else "" for line in text.splitlines())


def _where(dep: Dep, here: str, pages: dict[str, str]) -> str:
    lines = f"`{dep.path}`, lines {dep.lineno}–{dep.end_lineno}"
    link = api_link(dep, pages)
    if link is None:
        return lines
    page, anchor = link
    rel = posixpath.relpath(page, posixpath.dirname(here))
    target = f"{rel}#{anchor}" if anchor else rel
    what = "API reference" if anchor else f"module `{_module_of(dep.path)}` in the API reference"
    return f"{lines} · [{what}]({target})"


def _code_block(dep: Dep, here: str, pages: dict[str, str], *, open_: bool) -> str:
    marker = "???+" if open_ else "???"
    try:
        code = _source(dep)
    except (OSError, IndexError):
        return f"- `{dep.qualname}`: {_where(dep, here, pages)} (source not found)"
    title = f"{dep.qualname}  ({dep.path}:{dep.lineno})".replace('"', "'")
    body = f"{_where(dep, here, pages)}\n\n{_fence(code, dep.lineno)}"
    return f'{marker} pinned "{title}"\n\n{_indent(body)}'


def _doc_link(dep: Dep, here: str) -> str:
    path = dep.path.removeprefix("docs/")
    if dep.path.startswith("docs/"):
        rel = posixpath.relpath(path, posixpath.dirname(here))
        return f"- [{dep.qualname or path}]({rel}) (`{dep.path}`)"
    return f"- `{dep.qualname or dep.path}` (`{dep.path}`)"


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
) -> str:
    """The page: title, header table, the function, the body, the code the proof covers."""
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
        out += ["## The function", "", _code_block(first, here, pages, open_=True), ""]
    out += ["## The proof", "", rest.strip("\n"), ""]
    out += ["## Code this proof covers", ""]
    if not deps:
        out += ["The constructor's source was not found at build time.", ""]
    else:
        listed = [d for d in code]
        out += [
            f"This proof is pinned to {len(code)} piece{'s' if len(code) != 1 else ''} of code"
            + (f" and {len(docs)} document{'s' if len(docs) != 1 else ''}" if docs else "")
            + " (its `source:` digest covers all of them; a change to any flags the proof for "
            "review):",
            "",
        ]
        out += [f"- `{d.qualname}` — {_where(d, here, pages)}" for d in listed]
        out += [_doc_link(d, here) for d in docs]
        out.append("")
        for dep in helpers:
            out += [_code_block(dep, here, pages, open_=False), ""]
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
    return render(markdown, header, deps, pin_state(header, deps), src, pages, api_url)


_PAGES: dict[int, dict[str, str]] = {}


def _pages(files: Any) -> dict[str, str]:
    key = id(files)
    if key not in _PAGES:
        _PAGES.clear()
        _PAGES[key] = api_pages(files.documentation_pages())
    return _PAGES[key]
