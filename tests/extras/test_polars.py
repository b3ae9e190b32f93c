"""``opendp_lite.extras.polars``: OpenDP's ``opendp.extras.polars`` names, the same objects as
``dp.polars``'s and the ``.dp`` namespace's, importable without Polars."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import opendp_lite.prelude as dp
from opendp_lite.extras import polars as ext
from opendp_lite.table import dp_namespace

ROOT = Path(__file__).resolve().parents[2]


def test_the_names_are_the_table_apis_own_objects() -> None:
    assert ext.Margin is dp.polars.Margin
    assert ext.Bound is dp.polars.Bound
    assert ext.OnceFrame is dp.polars.OnceFrame
    assert ext.LazyFrameQuery is dp.polars.LazyFrameQuery
    assert ext.LazyGroupByQuery is dp.polars.LazyGroupBy
    assert ext.DPExpr is dp_namespace.DPExpr
    assert ext.make_private_lazyframe is dp.m.make_private_lazyframe
    assert ext.make_stable_lazyframe is dp.t.make_stable_lazyframe
    assert set(ext.__all__) <= set(dir(ext))


def test_importing_it_does_not_import_polars() -> None:
    code = (
        "import sys\n"
        "from opendp_lite.extras.polars import Margin, Bound\n"
        "print('polars' in sys.modules)\n"
    )
    out = subprocess.run(  # noqa: S603 - our own interpreter and code
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_a_margin_from_it_states_a_frame_domains_facts() -> None:
    pytest.importorskip("polars")
    domain = dp.lazyframe_domain([dp.series_domain("A", dp.atom_domain(T=int))])
    domain = dp.with_margin(domain, ext.Margin(by=[], max_length=100))
    assert domain.get_margin([]).max_length == 100


def test_dp_len_is_the_polars_expression_form() -> None:
    pl = pytest.importorskip("polars")
    assert isinstance(ext.dp_len(signed=False), pl.Expr)
