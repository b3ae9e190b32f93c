"""Write ``docs/proofs/.nav.yml``: the proofs grouped by family in the site's navigation.

Each proof's header names its constructor's ``module:``; the families are the API reference's
(``FAMILIES``), so a constructor's reference page and its proof sit under the same heading.  A
proof whose module is in no family (a new one) is still listed, under "Other", by the closing
glob; rerun ``python -m tools.proof_nav`` to file it.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROOFS = ROOT / "docs" / "proofs"
OUT = PROOFS / ".nav.yml"

#: (section, subsection, module suffixes), in navigation order.
FAMILIES: list[tuple[str, str, tuple[str, ...]]] = [
    ("Core", "Chaining", ("core",)),
    ("Transformations", "Load and parse", ("transformations.dataset", "transformations.cast")),
    (
        "Transformations",
        "Clean and bound",
        (
            "transformations.nulls",
            "transformations.clamp",
            "transformations.resize",
            "transformations.order",
            "transformations.lookup",
        ),
    ),
    (
        "Transformations",
        "Count and aggregate",
        (
            "transformations.count",
            "transformations.sum",
            "transformations.moments",
            "transformations.quantile",
            "transformations.tree",
        ),
    ),
    ("Transformations", "Other", ("transformations.lipschitz", "transformations.user")),
    (
        "Measurements",
        "Additive noise",
        ("measurements.noise", "measurements.canonical_noise", "measurements.threshold"),
    ),
    (
        "Measurements",
        "Selection",
        (
            "measurements.noisy_max",
            "measurements.exponential",
            "measurements.quantile",
            "measurements.sparse_vector",
        ),
    ),
    ("Measurements", "Local DP", ("measurements.randomized_response", "measurements.two_coin")),
    (
        "Measurements",
        "Other",
        ("measurements.alp", "measurements.sensitivity_sampling", "measurements.user"),
    ),
    ("Combinators", "Composition", ("combinators.composition",)),
    ("Combinators", "Conversions", ("combinators.conversions",)),
    (
        "Combinators",
        "Other",
        (
            "combinators.amplification",
            "combinators.local",
            "combinators.select_private_candidate",
            "combinators.random_dp",
        ),
    ),
]


def module_of(proof: Path) -> str:
    """The ``module:`` of a proof's header ('' if none)."""
    from tools.proofs import read_header

    return read_header(proof).get("module", "")


def _table_nav() -> list[str]:
    """The table API's pages: the two overviews, then one page per node, stable and private
    (by the ``kind:`` of each page's header); any other page by the closing glob."""
    from tools.proofs import read_header

    table = PROOFS / "table"
    overviews = [
        n for n in ("stable-expressions.md", "private-aggregates.md") if (table / n).is_file()
    ]
    stable: list[str] = []
    private: list[str] = []
    for page in sorted(table.glob("*.md")):
        kind = read_header(page).get("kind", "")
        if kind.startswith("stable") or kind.startswith("length-changing"):
            stable.append(page.name)
        elif kind:
            private.append(page.name)
    out = [f"      - table/{n}" for n in overviews]
    if stable:
        out += ["      - Stable nodes:", *[f"          - table/{n}" for n in stable]]
    if private:
        out += ["      - Private nodes:", *[f"          - table/{n}" for n in private]]
    out += ['      - glob: "table/*.md"', "        ignore_no_matches: true"]
    return out


def render() -> str:
    """The ``.nav.yml`` text."""
    proofs = sorted(PROOFS.glob("*.md"))
    lines = [
        "# Written by `python -m tools.proof_nav` from each proof's `module:` header: do not edit.",
        "nav:",
        "  - Shared lemmas:",
        '      - "lemmas/*.md"',
    ]
    sampling = [n for n in ("samplers.md", "vectorized_sampling.md") if (PROOFS / n).is_file()]
    if (PROOFS / "sampling").is_dir():  # the fast samplers' lemmas, after their overview
        sampling.append('"sampling/*.md"')
    if sampling:
        lines += ["  - Sampling:", *[f"      - {n}" for n in sampling]]
    section = ""
    for name, sub, modules in FAMILIES:
        pages = [p.name for p in proofs if module_of(p).removeprefix("opendp_lite.") in modules]
        if not pages:
            continue
        if name != section:
            lines.append(f"  - {name}:")
            section = name
        lines.append(f"      - {sub}:")
        lines += [f"          - {page}" for page in pages]
    if (PROOFS / "table").is_dir():  # the table API's expression nodes (issue 24)
        lines += ["  - Table API:", *_table_nav()]
    if (PROOFS / "planner.md").is_file():  # the accuracy-first planner (issue 26)
        planner = sorted(p.name for p in PROOFS.glob("planner*.md"))
        lines += ["  - Planner:", *[f"      - {n}" for n in planner]]
    lines += [
        "  - Other:",
        '      - glob: "*.md"',
        "        ignore_no_matches: true",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    """Write the file."""
    OUT.write_text(render(), encoding="utf-8")


if __name__ == "__main__":
    main()
