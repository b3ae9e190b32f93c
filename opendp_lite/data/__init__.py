"""Small data sets shipped with opendp_lite for the seed examples.

``adult_marital.csv`` has one column, ``Marital Status``, with one row per person of the
public UCI Adult training set (32,561 rows); its counts equal that set's marital-status counts
(:data:`ADULT_MARITAL_COUNTS`).  The rows are synthetic: the file is generated
deterministically by :func:`generate_adult_marital` (a fixed SHA-256-keyed order), so no
record corresponds to a real person.

>>> data = load_adult_marital()
>>> len(data), int((data == "Never-married").sum())
(32561, 10683)
"""

from __future__ import annotations

import csv
import hashlib
import io
from importlib import resources
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "ADULT_MARITAL_COUNTS",
    "generate_adult_marital",
    "load_adult_marital",
    "write_adult_marital",
]

#: Marital-status counts of the public Adult training set (adult.data).
ADULT_MARITAL_COUNTS: dict[str, int] = {
    "Married-civ-spouse": 14976,
    "Never-married": 10683,
    "Divorced": 4443,
    "Separated": 1025,
    "Widowed": 993,
    "Married-spouse-absent": 418,
    "Married-AF-spouse": 23,
}

COLUMN = "Marital Status"
FILENAME = "adult_marital.csv"


def generate_adult_marital() -> str:
    """The CSV text of ``adult_marital.csv``: rows ordered by SHA-256 of (status, index)."""
    rows = [(s, i) for s, c in ADULT_MARITAL_COUNTS.items() for i in range(c)]
    rows.sort(key=lambda r: hashlib.sha256(f"{r[0]}/{r[1]}".encode()).digest())
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([COLUMN])
    writer.writerows([s] for s, _ in rows)
    return out.getvalue()


def load_adult_marital() -> npt.NDArray[Any]:
    """The ``Marital Status`` column as a 1-d numpy array of ``str`` (object dtype)."""
    text = resources.files(__package__).joinpath(FILENAME).read_text(encoding="utf-8")
    reader = csv.reader(io.StringIO(text))
    header = next(reader)
    if header != [COLUMN]:
        raise ValueError(f"unexpected header in {FILENAME}: {header!r}")
    return np.array([row[0] for row in reader], dtype=object)


def write_adult_marital() -> None:
    """Regenerate the shipped ``adult_marital.csv`` next to this module."""
    from pathlib import Path

    Path(__file__).with_name(FILENAME).write_text(generate_adult_marital(), encoding="utf-8")
