"""Truncation steps on every table engine: the same rows kept by Polars, pandas, pyarrow and
Dask, the rows a row-by-row reference keeps (``first``/``last``/a sort key), and a kept set
that depends on each person's own rows only."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opendp_lite import _truncation as K
from opendp_lite._order import group_key, tie_key
from opendp_lite.backends.tables import of_table
from opendp_lite.table import nodes as N
from tests.stat._reference import check_cells

pl = pytest.importorskip("polars")
pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

ID, G, X = N.Col("id"), N.Col("g"), N.Col("x")


def _frames(data: dict[str, list[Any]]) -> dict[str, Any]:
    """The frame on each engine (``x`` is a unique row label, so the kept rows are the keys
    of a group-by on it)."""
    schema = {"id": pl.Int64, "g": pl.String, "v": pl.Float64, "x": pl.Int64}
    df = pl.DataFrame(data, schema=schema)
    out = {"polars": df.lazy(), "pyarrow": df.to_arrow()}
    out["pandas"] = pd.DataFrame(
        {
            "id": pd.array(data["id"], dtype="Int64"),
            "g": pd.array(data["g"], dtype="string"),
            "v": pd.array(data["v"], dtype="Float64"),
            "x": pd.array(data["x"], dtype="Int64"),
        }
    )
    dd = pytest.importorskip("dask.dataframe")
    out["dask"] = dd.from_pandas(out["pandas"], npartitions=3)
    return out


def _kept(frame: Any, step: N.Step) -> list[int]:
    plan = N.FramePlan((step,), (("n", N.Length()),), by=(X,))
    engine = of_table(frame)
    assert engine is not None
    return sorted(engine.run(frame, plan).keys["x"])


def _row_key(row: dict[str, Any]) -> tuple[Any, ...]:
    cells = [row[c] for c in ("id", "g", "v", "x")]
    return tuple(key for v in cells for key in (group_key(v), tie_key(v)))  # column by column


def _reference(data: dict[str, list[Any]], by: bool, k: int, keep: str) -> list[int]:
    """Row by row: each (person, group) run's rows in the total order, the first k kept."""
    rows = [dict(zip(data, vals, strict=True)) for vals in zip(*data.values(), strict=True)]
    runs: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in rows:
        runs.setdefault((group_key(r["id"]), group_key(r["g"]) if by else ()), []).append(r)
    out: list[int] = []
    for run in runs.values():
        if keep == "sort":  # v descending, nulls last, then the whole row ascending
            run.sort(key=_row_key)
            run.sort(key=lambda r: (r["v"] is None or r["v"] != r["v"], -(r["v"] or 0.0)))
        else:
            run.sort(key=_row_key, reverse=keep == "last")
        out += [r["x"] for r in run[:k]]
    return sorted(out)


# no NaN: pandas reads a NaN in a Float64 column as a null (a different frame)
_cells = st.lists(
    st.tuples(
        st.one_of(st.none(), st.integers(0, 4)),
        st.one_of(st.none(), st.sampled_from(["a", "b", "c"])),
        st.one_of(st.none(), st.sampled_from([-1.5, -0.0, 0.0, 2.0])),
    ),
    min_size=0,
    max_size=25,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cells, st.integers(1, 3), st.booleans(), st.sampled_from(["first", "last", "sort"]))
def test_every_engine_keeps_the_rows_the_reference_keeps(
    cells: list[tuple[Any, Any, Any]], k: int, by: bool, keep: str
) -> None:
    data = {
        "id": [c[0] for c in cells],
        "g": [c[1] for c in cells],
        "v": [c[2] for c in cells],
        "x": list(range(len(cells))),
    }
    how: N.Keep = N.SortKey((N.Col("v"),), (True,), (True,)) if keep == "sort" else keep  # type: ignore[assignment]
    step = N.TruncateRows((ID,), (G,) if by else (), k, how)
    want = _reference(data, by, k, keep)
    for name, frame in _frames(data).items():
        assert _kept(frame, step) == want, name


def test_num_groups_first_and_last_on_every_engine() -> None:
    data = {
        "id": [1, 1, 1, 1, 2, 2, None, None],
        "g": ["b", "a", "c", "a", "z", "z", "q", None],
        "v": [0.0] * 8,
        "x": list(range(8)),
    }
    for name, frame in _frames(data).items():
        first = _kept(frame, N.TruncateGroups((ID,), (G,), 2, "first"))
        assert first == [0, 1, 3, 4, 5, 6, 7], name  # 1: a, b; 2: z; None: q and None
        last = _kept(frame, N.TruncateGroups((ID,), (G,), 1, "last"))
        assert last == [2, 4, 5, 7], name  # 1: c; 2: z; None: the null group (last)


def test_a_persons_kept_rows_do_not_depend_on_other_people_or_positions() -> None:
    data = {
        "id": [1, 1, 1, 2, 2, 2],
        "g": ["a"] * 6,
        "v": [3.0, 1.0, 2.0, 9.0, 8.0, 7.0],
        "x": [10, 11, 12, 20, 21, 22],
    }
    step = N.TruncateRows((ID,), (), 2, "first")
    alone = [x for x in _kept(pl.DataFrame(data).lazy(), step) if x < 20]
    more = {
        k: [*v, *w]
        for (k, v), w in zip(data.items(), [[1, 3], ["a"] * 2, [0.5] * 2, [30, 31]], strict=True)
    }
    more["id"] = [*data["id"], 3, 3]
    perm = {k: v[::-1] for k, v in more.items()}
    for d in (more, perm):
        assert [x for x in _kept(pl.DataFrame(d).lazy(), step) if x < 20] == alone


def test_sample_keeps_min_k_rows_of_each_run_on_every_engine() -> None:
    sizes = [1, 2, 3, 5, 8]
    ids = [i for i, s in enumerate(sizes) for _ in range(s)]
    data = {"id": ids, "g": ["a"] * len(ids), "v": [0.0] * len(ids), "x": list(range(len(ids)))}
    for name, frame in _frames(data).items():
        kept = _kept(frame, N.TruncateRows((ID,), (), 3, "sample"))
        assert Counter(ids[x] for x in kept) == {i: min(3, s) for i, s in enumerate(sizes)}, name


# 12 000 people of 4 rows, k = 2 on the Polars engine: C(4, 2) = 6 equally likely subsets
# (~2000 each); one subset 1.3x or 0.7x as likely is rejected (power checked by check_cells).
N_PEOPLE = 12_000


def test_sample_on_an_engine_is_a_uniform_subset_and_a_biased_law_is_rejected() -> None:
    ids = np.repeat(np.arange(N_PEOPLE), 4)
    frame = pl.DataFrame({"id": ids, "x": np.arange(len(ids))}).lazy()
    kept = _kept(frame, N.TruncateRows((ID,), (), 2, "sample"))
    per: dict[int, list[int]] = {}
    for x in kept:
        per.setdefault(x // 4, []).append(x % 4)
    counts = Counter(tuple(sorted(v)) for v in per.values())
    subsets = list(itertools.combinations(range(4), 2))
    assert set(counts) <= set(subsets) and sum(counts.values()) == N_PEOPLE
    check_cells(
        [counts.get(s, 0) for s in subsets], [1.0] * 6, wrong=[[1.3] + [1.0] * 5, [0.7] + [1.0] * 5]
    )


def test_run_codes_follow_the_total_order_and_tell_equal_values_together() -> None:
    a = K.cells([1, 1.0, True, None, 2], nulls=True)
    b = K.cells(["x", "x", "x", "y", "x"], nulls=True)
    codes = K.run_codes([a, b], 5)
    assert codes[0] == codes[1] == codes[2] and len(set(codes.tolist())) == 3
    assert codes[4] > codes[0] and codes[3] == codes.max()  # the missing value is last


# --- the Polars engine's own keep="sample" path (rank of uniform keys over the run) ---------

PE = pytest.importorskip("opendp_lite.backends.tables.polars")


class _Draws:
    """A key source for the Polars sample path: ``first`` (colliding keys) on the first call,
    then the library's keys; counts its calls."""

    def __init__(self, first: Any = None) -> None:
        self.first, self.calls = first, 0

    def __call__(self, n: int) -> Any:
        self.calls += 1
        if self.calls == 1 and self.first is not None:
            return self.first(n)
        from opendp_lite.samplers.rng import fill_uint64

        return fill_uint64(n)


def test_polars_sample_path_is_taken_and_keeps_min_k_rows_of_each_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sizes = [1, 2, 3, 5, 8]
    ids = [i for i, s in enumerate(sizes) for _ in range(s)]
    frame = pl.DataFrame({"id": ids, "g": [i % 2 for i in range(len(ids))], "x": range(len(ids))})
    draws = _Draws()
    monkeypatch.setattr(PE, "fill_uint64", draws)
    for by in ((), (G,)):
        kept = _kept(frame.lazy(), N.TruncateRows((ID,), by, 2, "sample"))
        runs = Counter((ids[x], x % 2 if by else 0) for x in range(len(ids)))
        got = Counter((ids[x], x % 2 if by else 0) for x in kept)
        assert got == {r: min(2, s) for r, s in runs.items()}
    assert draws.calls == 2  # one draw per truncation: the engine's own path, not the kernel


@pytest.mark.parametrize("packed", [True, False])
@pytest.mark.parametrize("k", [1, 2])
def test_polars_sample_path_redraws_when_the_kept_keys_tie(k: int, packed: bool) -> None:
    # every key 0 on the first draw: every row ranks 1 (every row kept), or, packed, every
    # row of an id has one packed key (the order within an id would be the sort's, not random)
    draws = _Draws(first=lambda n: np.zeros(n, dtype=np.uint64))
    df = pl.DataFrame({"id": [1, 1, 1, 2, 2, 2, 2], "x": range(7)})
    kept = PE._sample_rows(df, ["id"], k, draw=draws, packed=packed)
    assert draws.calls == 2
    assert Counter(kept["id"].to_list()) == {1: k, 2: k}


def test_polars_sample_path_redraws_on_a_tie_at_the_kth_key_only() -> None:
    # run 1's keys 5, 7, 7: with k = 2 the two 7s both rank 2 (three kept); run 2 is clean
    first = lambda n: np.array([5, 7, 7, 1, 2], dtype=np.uint64)  # noqa: E731
    draws = _Draws(first=first)
    df = pl.DataFrame({"id": [1, 1, 1, 2, 2], "x": range(5)})
    kept = PE._sample_rows(df, ["id"], 2, draw=draws, packed=False)
    assert draws.calls == 2 and Counter(kept["id"].to_list()) == {1: 2, 2: 2}


@pytest.mark.parametrize(
    ("ids", "dtype", "packed"),
    [
        ([-128, -128, 127, 127, 127, 0], pl.Int8, True),
        ([2**64 - 1, 2**64 - 1, 2**64 - 3, 2**64 - 1, 2**64 - 3, 2**64 - 2], pl.UInt64, True),
        ([-(2**63), -(2**63), 2**63 - 1, 2**63 - 1, 2**63 - 1, 0], pl.Int64, False),
        ([5, 5, 5, 5, 5, 5], pl.UInt8, True),
    ],
)
def test_polars_packed_sample_keeps_min_k_rows_of_each_integer_id(
    ids: list[int], dtype: Any, packed: bool
) -> None:
    df = pl.DataFrame({"id": pl.Series(ids, dtype=dtype), "x": range(len(ids))})
    draws = _Draws()
    assert (PE._sample_packed(df, "id", 2, draws) is not None) == packed  # range < 2^32 only
    kept = PE._sample_rows(df, ["id"], 2)
    assert Counter(kept["id"].to_list()) == {i: min(2, c) for i, c in Counter(ids).items()}


_NAN = float("nan")
_ID_COLUMNS = {
    "float": pl.Series([0.0, -0.0, _NAN, None, -_NAN, 1.0, 1.0, None], dtype=pl.Float64),
    "float32": pl.Series([0.0, -0.0, _NAN, None, 2.5, 2.5, None, _NAN], dtype=pl.Float32),
    "int": pl.Series([1, None, 1, 2, None, 3, 3, 3], dtype=pl.Int64),
    "str": pl.Series(["a", None, "a", "", "b", "", None, "b"], dtype=pl.String),
    "categorical": pl.Series(["a", None, "b", "a", None, "b", "c", "a"], dtype=pl.Categorical),
    "enum": pl.Series(["a", None, "b", "a", None, "b", "b", "a"], dtype=pl.Enum(["b", "a"])),
    "bool": pl.Series([True, None, False, True, None, False, True, True]),
    "date": pl.Series([0, 1, None, 0, 1, None, 2, 2], dtype=pl.Int32).cast(pl.Date),
    "datetime_tz": pl.Series([0, 10**6, None, 0, 10**6, 10**6, None, 5], dtype=pl.Int64).cast(
        pl.Datetime("us", "Europe/Paris")
    ),
    "duration": pl.Series([0, 1, None, 0, 1, 1, None, 7], dtype=pl.Int64).cast(pl.Duration("ms")),
}


@pytest.mark.parametrize("name", sorted(_ID_COLUMNS))
def test_polars_sample_path_groups_ids_as_the_kernel_does(name: str) -> None:
    ids = _ID_COLUMNS[name]
    g = pl.Series([0, 0, 0, 0, 1, 1, 1, 1])
    df = pl.DataFrame({"id": ids, "g": g, "x": range(len(ids))})
    assert PE._native_run_dtype(df.schema["id"])
    for run in (["id"], ["id", "g"]):
        draws = _Draws()
        kept = PE._sample_rows(df, run, 1, draw=draws)
        cols = [PE._cells(df.get_column(c)) for c in run]
        codes = K.run_codes(cols, df.height)
        # k = 1: one row kept per class of the kernel, and no two kept from one class
        assert draws.calls == 1
        assert sorted(codes[kept["x"].to_numpy()].tolist()) == sorted(set(codes.tolist())), run


# 24 000 (person, group) runs of 5 rows with float ids, k = 2, on the Polars engine's own
# path: C(5, 2) = 10 equally likely subsets (~2400 each); one subset 1.3x or 0.7x as likely is
# rejected (power checked by check_cells).
N_RUNS = 24_000


def test_polars_sample_path_is_a_uniform_subset_and_a_biased_law_is_rejected(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    draws = _Draws()
    monkeypatch.setattr(PE, "fill_uint64", draws)
    run = np.repeat(np.arange(N_RUNS), 5)
    ids = (run // 2).astype(np.float64) - N_RUNS / 4  # includes -0.0 and 0.0 as one person
    ids[ids == 0.0] = np.where(np.arange(int((ids == 0.0).sum())) % 2 == 0, -0.0, 0.0)
    frame = pl.DataFrame({"id": ids, "g": run % 2, "x": np.arange(len(run))}).lazy()
    kept = _kept(frame, N.TruncateRows((ID,), (G,), 2, "sample"))
    assert draws.calls >= 1
    per: dict[int, list[int]] = {}
    for x in kept:
        per.setdefault(x // 5, []).append(x % 5)
    counts = Counter(tuple(sorted(v)) for v in per.values())
    subsets = list(itertools.combinations(range(5), 2))
    assert set(counts) <= set(subsets) and sum(counts.values()) == N_RUNS
    check_cells(
        [counts.get(s, 0) for s in subsets],
        [1.0] * 10,
        wrong=[[1.3] + [1.0] * 9, [0.7] + [1.0] * 9],
    )


_plain_cells = st.lists(
    st.tuples(
        st.one_of(st.none(), st.integers(0, 4)),
        st.one_of(st.none(), st.sampled_from(["a", "b", "", "é"])),
        st.one_of(st.none(), st.booleans()),
    ),
    min_size=0,
    max_size=25,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_plain_cells, st.integers(1, 3), st.booleans(), st.sampled_from(["first", "last"]))
def test_polars_first_last_path_keeps_the_rows_the_reference_keeps(
    cells: list[tuple[Any, Any, Any]], k: int, by: bool, keep: str
) -> None:
    data = {
        "id": [c[0] for c in cells],
        "g": [c[1] for c in cells],
        "v": [c[2] for c in cells],
        "x": list(range(len(cells))),
    }
    schema = {"id": pl.Int64, "g": pl.String, "v": pl.Boolean, "x": pl.Int64}
    frame = pl.DataFrame(data, schema=schema).lazy()
    calls: list[int] = []
    real = PE._ordered_rows

    def counted(*a: Any) -> Any:
        calls.append(1)
        return real(*a)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(PE, "_ordered_rows", counted)
        got = _kept(frame, N.TruncateRows((ID,), (G,) if by else (), k, keep))  # type: ignore[arg-type]
    assert calls == [1]  # the engine's own path, not the kernel
    assert got == _reference(data, by, k, keep)
