"""Public example data sets used by OpenDP's tutorials, as ``dp.examples`` (OpenDP 0.16).

``get_california_pums_path()`` and ``get_france_lfs_path()`` return the path of a local CSV
file.  The files are public data, not part of this package: each is looked up in the data
directory (``$OPENDP_LITE_DATA``, else ``~/.cache/opendp_lite``) and, if absent, downloaded
once from its public address into that directory.  Offline, put the file there yourself
(``california_pums.csv``: OpenDP's ``docs/source/data/PUMS_california_demographics_1000/data.csv``;
``v2_france_lfs.csv``: ``V2_FR_LFS.csv`` from OpenDP's ``dp-test-datasets``).

Nothing here is private: these are the public samples the tutorials compute on.
"""

from __future__ import annotations

import io
import os
import urllib.request
import zipfile
from pathlib import Path

from ..errors import FailedFunction

__all__ = ["data_dir", "get_california_pums_path", "get_france_lfs_path"]

_PUMS_URL = (
    "https://raw.githubusercontent.com/opendp/opendp/main/docs/source/data/"
    "PUMS_california_demographics_1000/data.csv"
)
_LFS_URL = (
    "https://raw.githubusercontent.com/opendp/dp-test-datasets/refs/heads/main/data/eurostat/"
    "V2_FR_LFS.csv.zip"
)
_TIMEOUT = 60


def data_dir() -> Path:
    """Where the example files are kept: ``$OPENDP_LITE_DATA``, else ``~/.cache/opendp_lite``."""
    env = os.environ.get("OPENDP_LITE_DATA")
    return Path(env) if env else Path.home() / ".cache" / "opendp_lite"


def _download(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=_TIMEOUT) as response:  # noqa: S310 - a fixed https URL
        body: bytes = response.read()
    return body


def _fetch(name: str, url: str, extract: str | None = None) -> Path:
    path = data_dir() / name
    if path.is_file():
        return path
    try:
        body = _download(url)
    except OSError as e:
        raise FailedFunction(
            f"{name} is not in {path.parent} and could not be downloaded from {url} ({e}). "
            f"Fix: download it on a connected machine and put it at {path} (or set "
            "OPENDP_LITE_DATA to the directory that holds it)"
        ) from e
    if extract is not None:
        with zipfile.ZipFile(io.BytesIO(body)) as archive:
            body = archive.read(extract)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".part")
    partial.write_bytes(body)
    partial.replace(path)  # whole file or nothing
    return path


def get_california_pums_path() -> Path:
    """The path of a 1000-row CSV from the US Census's California PUMS, without a header row.

    Its columns are age, sex, educ, race, income, married (as OpenDP's tutorials name them).

    Raises:
        FailedFunction: if the file is not in :func:`data_dir` and cannot be downloaded (the
            message names the path to put it at).

    Used as in OpenDP's tutorials (needs the file or the network)::

        data = dp.examples.get_california_pums_path().read_text()
    """
    return _fetch("california_pums.csv", _PUMS_URL)


def get_france_lfs_path() -> Path:
    """The path of a CSV sample of the EU Labour Force Survey (France), with a header row.

    Its columns are OpenDP's V2 file's (PIDENT, YEAR, QUARTER, SEX, AGE, HWUSUAL, HWACTUAL,
    ILOSTAT, ...), which OpenDP's tabular-data tutorials read with ``pl.scan_csv``.  Offline,
    a stand-in with V2's schema (made from the survey's public sample) serves: decompress it
    to ``v2_france_lfs.csv`` in :func:`data_dir` (see ``../shared/data/README.md`` on the
    development machines); values then differ from OpenDP's pages, the schema does not.

    Raises:
        FailedFunction: if the file is not in :func:`data_dir` and cannot be downloaded.
    """
    return _fetch("v2_france_lfs.csv", _LFS_URL, extract="V2_FR_LFS.csv")
