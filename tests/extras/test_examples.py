"""``dp.examples``: the paths of the public data sets OpenDP 0.16's tutorials read.

As in OpenDP, ``get_california_pums_path()`` returns the path of a local CSV file, fetched once
if absent; opendp_lite keeps it in ``$OPENDP_LITE_DATA`` (so it also works offline when the
file is put there).  No test touches the network: the download is replaced.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import FailedFunction
from opendp_lite.extras import examples

ROWS = "59,1,9,1,0,1\n31,0,1,3,17000,0\n"


def _no_network(url: str) -> bytes:
    raise AssertionError(f"unexpected download of {url}")


def test_a_file_in_the_data_directory_is_used_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENDP_LITE_DATA", str(tmp_path))
    monkeypatch.setattr(examples, "_download", _no_network)
    (tmp_path / "california_pums.csv").write_text(ROWS)
    path = dp.examples.get_california_pums_path()
    assert path == tmp_path / "california_pums.csv" and path.read_text() == ROWS


def test_a_missing_file_is_downloaded_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "sub"
    monkeypatch.setenv("OPENDP_LITE_DATA", str(target))
    calls: list[str] = []

    def fake(url: str) -> bytes:
        calls.append(url)
        return ROWS.encode()

    monkeypatch.setattr(examples, "_download", fake)
    first = dp.examples.get_california_pums_path()
    second = dp.examples.get_california_pums_path()
    assert first == second == target / "california_pums.csv"
    assert first.read_text() == ROWS and len(calls) == 1 and calls[0].startswith("https://")


def test_the_france_lfs_file_is_extracted_from_its_zip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENDP_LITE_DATA", str(tmp_path))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("V2_FR_LFS.csv", "YEAR,SEX\n2004,1\n")
    monkeypatch.setattr(examples, "_download", lambda url: buffer.getvalue())
    path = dp.examples.get_france_lfs_path()
    assert path.read_text().splitlines()[0] == "YEAR,SEX"


def test_offline_without_the_file_names_where_to_put_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENDP_LITE_DATA", str(tmp_path))

    def offline(url: str) -> bytes:
        raise OSError("Name or service not known")

    monkeypatch.setattr(examples, "_download", offline)
    with pytest.raises(FailedFunction, match=r"california_pums\.csv") as info:
        dp.examples.get_california_pums_path()
    assert str(tmp_path) in str(info.value) and "OPENDP_LITE_DATA" in str(info.value)
    assert not (tmp_path / "california_pums.csv").exists()
