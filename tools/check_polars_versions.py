# ruff: noqa: S603  (runs pip and pytest with this interpreter)
"""Run the Polars reader's golden tests under each tested Polars version.

The reader (``opendp_lite/table/polars_reader.py``) reads the JSON Polars writes, which differs
between versions.  Its golden tests check it against the installed Polars and against the
JSON every tested version wrote (``tests/table/golden/``).  This tool runs them under each
version with ``--write`` first (re)writing that version's golden files::

    python -m tools.check_polars_versions                      # 1.30.0, 1.36.1 and 2.1.0
    python -m tools.check_polars_versions --version 1.33.0 --write

Each version is installed once, on its own, into ``~/.cache/opendp_lite/polars-VERSION``
(``pip install --target``; nothing else is installed) and put first on ``PYTHONPATH`` for
this interpreter, which supplies pytest and the other dependencies.  Exit status 0 if every
version passes.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path.home() / ".cache" / "opendp_lite"
#: the Polars versions the table API is tested with: the oldest supported, the one OpenDP
#: 0.16 pins, and the newest
VERSIONS = ("1.30.0", "1.36.1", "2.1.0")
TESTS = (
    "tests/table/test_polars_reader.py",
    "tests/table/test_polars_reader_refusals.py",
    "tests/table/test_polars_plan.py",
    "tests/table/test_dp_namespace.py",
)


def ensure_polars(version: str, target: Path) -> Path:
    """``target`` holding ``polars==version`` (installed there if not yet)."""
    if not (target / f"polars-{version}.dist-info").exists():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--upgrade",
                "--target",
                str(target),
                f"polars=={version}",
            ],
            check=True,
        )
    return target


def run(version: str, target: Path, write: bool) -> int:
    path = os.pathsep.join([str(target), str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    pytest = [sys.executable, "-m", "pytest", "-q"]
    if write:
        subprocess.run(
            [*pytest, "-k", "installed or write", *TESTS],
            cwd=ROOT,
            env={**env, "OPENDP_LITE_WRITE_GOLDEN": "1"},
            check=True,
        )
    print(f"--- Polars {version}", flush=True)
    return subprocess.run([*pytest, *TESTS], cwd=ROOT, env=env, check=False).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the reader's tests per Polars version.")
    parser.add_argument("--version", action="append", help="a Polars version (repeatable)")
    parser.add_argument("--write", action="store_true", help="rewrite the golden files first")
    args = parser.parse_args(argv)
    status = 0
    for version in args.version or VERSIONS:
        target = ensure_polars(version, CACHE / f"polars-{version}")
        status |= run(version, target, args.write)
    return status


if __name__ == "__main__":
    sys.exit(main())
