# ruff: noqa: S603  (runs pip and pytest with interpreters it is given or creates)
"""Run the Polars reader's golden tests under each tested Polars version.

The reader (``opendp_lite/table/polars_reader.py``) reads the JSON Polars writes, which differs
between versions.  Its golden tests check it against the installed Polars and against the
JSON every tested version wrote (``tests/table/golden/``).  This tool runs them under each
version, in a virtual environment per version, and with ``--write`` (re)writes that version's
golden files first::

    python -m tools.check_polars_versions                        # 1.36.1 and 2.1.0
    python -m tools.check_polars_versions --version 1.36.1 --write
    python -m tools.check_polars_versions --venv 1.36.1=/work/venv136

A version's environment is ``--venv VERSION=PATH`` if given, else
``~/.cache/opendp_lite/polars-VERSION`` (outside the repository),
created on first use (``python -m venv --system-site-packages``, then ``pip install
polars==VERSION``: the other dependencies come from the running interpreter's packages).
Exit status 0 if every version passes.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path.home() / ".cache" / "opendp_lite"
#: the oldest and newest Polars the table API is tested with
VERSIONS = ("1.36.1", "2.1.0")
TESTS = (
    "tests/table/test_polars_reader.py",
    "tests/table/test_polars_reader_refusals.py",
    "tests/table/test_polars_reader_plan.py",
    "tests/table/test_dp_namespace.py",
)


def _python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _installed(python: Path) -> str | None:
    out = subprocess.run(
        [str(python), "-c", "import polars; print(polars.__version__)"],
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout.strip() if out.returncode == 0 else None


def ensure_env(version: str, venv: Path) -> Path:
    """The interpreter of ``venv`` with ``polars==version`` (created or installed if not)."""
    python = _python(venv)
    if not python.exists():
        subprocess.run(
            [sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True
        )
    if _installed(python) != version:
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", f"polars=={version}"], check=True
        )
    return python


def run(version: str, python: Path, write: bool) -> int:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if write:
        subprocess.run(
            [str(python), "-m", "pytest", "-q", "-k", "installed or write", *TESTS],
            cwd=ROOT,
            env={**env, "OPENDP_LITE_WRITE_GOLDEN": "1"},
            check=True,
        )
    print(f"--- Polars {version} ({python})", flush=True)
    return subprocess.run(
        [str(python), "-m", "pytest", "-q", *TESTS], cwd=ROOT, env=env, check=False
    ).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1] if __doc__ else None)
    parser.add_argument("--version", action="append", help="a Polars version (repeatable)")
    parser.add_argument(
        "--venv", action="append", default=[], help="VERSION=PATH: an existing environment"
    )
    parser.add_argument("--write", action="store_true", help="rewrite the golden files first")
    args = parser.parse_args(argv)
    given = dict(item.split("=", 1) for item in args.venv)
    status = 0
    for version in args.version or VERSIONS:
        venv = Path(given[version]) if version in given else CACHE / f"polars-{version}"
        python = ensure_env(version, venv)
        status |= run(version, python, args.write)
    return status


if __name__ == "__main__":
    sys.exit(main())
