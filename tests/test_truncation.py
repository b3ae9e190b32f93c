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


def _check_uniform_subsets(members: list[tuple[int, int]], runs: int, size: int, k: int) -> None:
    """``members``: (run, position) of each kept row, ``runs`` runs of ``size`` rows each.
    Every run keeps one k-subset of its positions; the subsets are equally likely (χ²), and a
    law making one subset 1.3x or 0.7x as likely is rejected (power checked by check_cells)."""
    per: dict[int, list[int]] = {}
    for run, pos in members:
        per.setdefault(run, []).append(pos)
    counts = Counter(tuple(sorted(v)) for v in per.values())
    subsets = list(itertools.combinations(range(size), k))
    assert set(counts) <= set(subsets) and sum(counts.values()) == runs
    m = len(subsets)
    check_cells(
        [counts.get(c, 0) for c in subsets],
        [1.0] * m,
        wrong=[[1.3] + [1.0] * (m - 1), [0.7] + [1.0] * (m - 1)],
    )


def test_sample_on_an_engine_is_a_uniform_subset_and_a_biased_law_is_rejected() -> None:
    ids = np.repeat(np.arange(N_PEOPLE), 4)
    frame = pl.DataFrame({"id": ids, "x": np.arange(len(ids))}).lazy()
    kept = _kept(frame, N.TruncateRows((ID,), (), 2, "sample"))
    _check_uniform_subsets([(x // 4, x % 4) for x in kept], N_PEOPLE, 4, 2)


def test_run_codes_follow_the_total_order_and_tell_equal_values_together() -> None:
    a = K.cells([1, 1.0, True, None, 2], nulls=True)
    b = K.cells(["x", "x", "x", "y", "x"], nulls=True)
    codes = K.run_codes([a, b], 5)
    assert codes[0] == codes[1] == codes[2] and len(set(codes.tolist())) == 3
    assert codes[4] > codes[0] and codes[3] == codes.max()  # the missing value is last


# --- Polars' own "sample" path (backends/tables/polars.py: _sample_rows) ----------------------

from opendp_lite.backends.tables import polars as polars_engine  # noqa: E402


def _classes(values: list[Any]) -> int:
    return len(set(K.run_codes([K.cells(values, nulls=True)], len(values)).tolist()))


@pytest.mark.parametrize(
    ("values", "dtype"),
    [
        ([None, float("nan"), -0.0, 0.0, 1.0, float("nan"), None, 2.5], pl.Float64),
        ([None, float("nan"), -0.0, 0.0, 1.0], pl.Float32),
        ([None, 1, 1, 2, None, 3], pl.Int64),
        ([None, 1, 1, 2, 250], pl.UInt8),
        ([None, "a", "a", "", "b", None], pl.String),
        ([None, True, False, True], pl.Boolean),
        ([None, "a", "a", "b"], pl.Categorical),
        ([None, "a", "a", "b"], pl.Enum(["b", "a"])),
        ([None, 0, 0, 86_400_000_000], pl.Datetime("us")),
        ([None, 0, 0, 3], pl.Duration("us")),
    ],
)
def test_polars_sample_runs_are_the_kernels_classes(values: list[Any], dtype: Any) -> None:
    """k = 1 keeps one row per class: the Polars grouping of each dtype the native path takes
    tells ids apart exactly as the kernel does (NaN with null, -0.0 with 0.0)."""
    if dtype in (pl.Datetime("us"), pl.Duration("us")):
        s = pl.Series("id", values, dtype=pl.Int64).cast(dtype)
        py = s.to_list()
    else:
        s = pl.Series("id", values, dtype=dtype)
        py = values
    lf = pl.DataFrame({"id": s, "x": list(range(len(values)))}).lazy()
    out = polars_engine._sample_rows(lf, [ID], 1)
    assert out is not None  # the native path, not the kernel's
    assert out.collect().height == _classes(py)


def test_polars_sample_runs_by_identifier_and_group() -> None:
    data = {"id": [1, 1, 1, 1, 2, 2], "g": ["a", "a", "b", "b", "a", None], "x": list(range(6))}
    out = polars_engine._sample_rows(pl.DataFrame(data).lazy(), [ID, G], 1)
    assert out is not None
    kept = out.collect()
    assert sorted(zip(kept["id"], kept["g"], strict=True), key=str) == sorted(
        [(1, "a"), (1, "b"), (2, "a"), (2, None)], key=str
    )


def test_polars_sample_redraws_when_the_collected_keys_tie() -> None:
    """The first draw ties every key (all zero): it must be redrawn, and the rows kept are
    those the second draw's keys choose (without the check, the first k rows of each run by
    position would be kept: rows 0 and 1 of person 0, row 4 of person 1)."""
    draws = [
        np.zeros(6, dtype=np.uint64),
        np.array([9, 8, 1, 2, 7, 3], dtype=np.uint64),
    ]
    calls: list[int] = []

    def draw(n: int) -> Any:
        calls.append(n)
        return draws[len(calls) - 1]

    data = {"id": [0, 0, 0, 0, 1, 1], "x": list(range(6))}
    out = polars_engine._sample_rows(pl.DataFrame(data).lazy(), [ID], 2, draw=draw)
    assert out is not None
    assert calls == [6, 6]
    assert sorted(out.collect()["x"].to_list()) == [2, 3, 4, 5]


def test_polars_sample_falls_back_to_the_kernel_for_other_dtypes() -> None:
    lf = pl.DataFrame({"id": [[1], [1], [2]], "x": [0, 1, 2]}).lazy()
    assert polars_engine._sample_rows(lf, [ID], 1) is None


# --- Dask: truncation in two stages (backends/tables/dask.py: _run_truncating) -----------------

from opendp_lite.backends.tables import dask as dask_engine  # noqa: E402
from opendp_lite.samplers.rng import scripted_randomness  # noqa: E402


def _dask(data: dict[str, list[Any]], parts: int) -> Any:
    dd = pytest.importorskip("dask.dataframe")
    return dd.from_pandas(_frames_pandas(data), npartitions=parts, sort=False)


def _frames_pandas(data: dict[str, list[Any]]) -> Any:
    return pd.DataFrame(
        {
            "id": pd.array(data["id"], dtype="Int64"),
            "g": pd.array(data["g"], dtype="string"),
            "v": pd.array(data["v"], dtype="Float64"),
            "x": pd.array(data["x"], dtype="Int64"),
        }
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _cells,
    st.integers(1, 3),
    st.booleans(),
    st.sampled_from(["first", "last", "sort"]),
    st.integers(1, 5),
)
def test_dask_in_two_stages_keeps_the_reference_rows_for_any_partitioning(
    cells: list[tuple[Any, Any, Any]], k: int, by: bool, keep: str, parts: int
) -> None:
    data = {
        "id": [c[0] for c in cells],
        "g": [c[1] for c in cells],
        "v": [c[2] for c in cells],
        "x": list(range(len(cells))),
    }
    how: N.Keep = N.SortKey((N.Col("v"),), (True,), (True,)) if keep == "sort" else keep  # type: ignore[assignment]
    step = N.TruncateRows((ID,), (G,) if by else (), k, how)
    assert _kept(_dask(data, parts), step) == _reference(data, by, k, keep)
    groups = N.TruncateGroups((ID,), (G,), k, "first" if keep != "last" else "last")
    one = _kept(_frames(data)["pandas"], groups)
    assert _kept(_dask(data, parts), groups) == one


def test_dask_truncation_never_gathers_the_frame_into_one_partition(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A person's rows in every partition; the frame is never repartitioned, and the
    truncation's second stage runs once per input partition (each on its own runs'
    candidates, one piece from every partition)."""
    dd = pytest.importorskip("dask.dataframe")
    ids = [i % 7 for i in range(70)]
    data = {"id": ids, "g": ["a"] * 70, "v": [0.0] * 70, "x": list(range(70))}
    frame = _dask(data, 5)

    def no_repartition(*_: Any, **__: Any) -> Any:
        raise AssertionError("the frame was repartitioned")

    monkeypatch.setattr(dd.DataFrame, "repartition", no_repartition)
    seen: list[int] = []
    stage2 = dask_engine._rows_stage2

    def spy(step: Any, *pieces: Any) -> Any:
        assert len(pieces) == 5
        seen.append(sum(n for _, n in pieces))
        return stage2(step, *pieces)

    monkeypatch.setattr(dask_engine, "_rows_stage2", spy)
    kept = _kept(frame, N.TruncateRows((ID,), (), 2, "sample"))
    assert Counter(ids[x] for x in kept) == dict.fromkeys(range(7), 2)
    assert len(seen) == 5 and sum(seen) <= 7 * 2 * 5  # at most k per person per partition


def test_dask_person_hash_puts_equal_ids_together_across_representations() -> None:
    pa_ = pytest.importorskip("pyarrow")
    ints = dask_engine._class_hash(pa_.array([1, 2, -3, 2**62], type=pa_.int64()))
    with_null = dask_engine._class_hash(pa_.array([1, None, -3, 2**62], type=pa_.int64()))
    floats = dask_engine._class_hash(pa_.array([1.0, float("nan"), -3.0, None]))
    bools = dask_engine._class_hash(pa_.array([True]))
    assert ints[0] == with_null[0] == floats[0] == bools[0]
    assert ints[2] == with_null[2] == floats[2] and ints[3] == with_null[3]
    assert with_null[1] == floats[1] == floats[3]  # null and NaN: one class
    s1 = dask_engine._class_hash(pa_.array(["é", "b"]))
    s2 = dask_engine._class_hash(pa_.array([None, "é"]))
    assert s1[0] == s2[1] and s2[0] == with_null[1]


def test_dask_sample_orders_the_rows_tied_at_the_boundary_by_fresh_keys() -> None:
    """The first n keys are all zero (every run ties at its k-th key, all its rows
    candidates): stage 2 orders each run's tied rows by fresh keys, so 2n keys are read;
    without the tie check n would be (and the rows kept would be the first by position)."""
    ids = [i % 5 for i in range(40)]
    data = {"id": ids, "g": ["a"] * 40, "v": [0.0] * 40, "x": list(range(40))}
    frame = _dask(data, 4)
    served = [0]
    stream = iter(range(1, 10**6))

    def source(n: int) -> bytes:
        out = bytearray()
        for _ in range(n):
            out.append(0 if served[0] < 8 * 40 else next(stream) % 251)
            served[0] += 1
        return bytes(out)

    with pytest.warns(Warning), scripted_randomness(source):
        kept = _kept(frame, N.TruncateRows((ID,), (), 3, "sample"))
    assert served[0] == 2 * 8 * 40
    assert Counter(ids[x] for x in kept) == dict.fromkeys(range(5), 3)


# 12 000 people of 4 rows spread over 4 partitions (row i of a person in partition i), k = 2:
# C(4, 2) = 6 equally likely subsets; one 1.3x or 0.7x as likely is rejected (check_cells).
def test_dask_sample_is_a_uniform_subset_across_partitions() -> None:
    dd = pytest.importorskip("dask.dataframe")
    people = N_PEOPLE
    ids = np.tile(np.arange(people), 4)  # row j*people + p: person p's j-th row, partition j
    pdf = pd.DataFrame({"id": ids, "x": np.arange(len(ids))})
    frame = dd.from_pandas(pdf, npartitions=4, sort=False)
    kept = _kept(frame, N.TruncateRows((ID,), (), 2, "sample"))
    _check_uniform_subsets([(x % people, x // people) for x in kept], people, 4, 2)


# ----------------------------------------------------------------------------------------------
# Dask: two stages (candidates per partition, the kernel on each run's candidates)


def _dask_spread(n_people: int, rows: int) -> Any:
    """``n_people`` people of ``rows`` rows each, row j of every person in partition j."""
    dd = pytest.importorskip("dask.dataframe")
    chunks = [
        pd.DataFrame({"id": np.arange(n_people), "x": np.arange(n_people) * rows + j})
        for j in range(rows)
    ]
    ddf = dd.concat([dd.from_pandas(c, npartitions=1, sort=False) for c in chunks])
    assert ddf.npartitions == rows
    return ddf


def test_dask_sample_with_2_bit_keys_is_still_a_uniform_subset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # as above, with 2-bit keys: most runs tie at the k-th key, and the second stage breaks
    # the tie by fresh keys; the law must not move (a tie broken by position fails this)
    dask = pytest.importorskip("dask")
    from opendp_lite.backends.tables import dask as engine

    monkeypatch.setattr(engine, "KEY_BITS", 2)
    with dask.config.set(scheduler="synchronous"):
        kept = _kept(_dask_spread(N_PEOPLE, 4), N.TruncateRows((ID,), (), 2, "sample"))
    _check_uniform_subsets([(x // 4, x % 4) for x in kept], N_PEOPLE, 4, 2)


def test_num_groups_sample_on_dask_partitions_is_a_uniform_subset() -> None:
    # 12 000 people with one row in each of 4 groups, group j in partition j, k = 2 groups
    dask = pytest.importorskip("dask")
    ddf = _dask_spread(N_PEOPLE, 4)
    ddf = ddf.assign(g=ddf["x"] % 4)
    with dask.config.set(scheduler="synchronous"):
        kept = _kept(ddf, N.TruncateGroups((ID,), (G,), 2, "sample"))
    _check_uniform_subsets([(x // 4, x % 4) for x in kept], N_PEOPLE, 4, 2)


def test_sample_candidates_hold_every_row_up_to_the_runs_kth_key() -> None:
    # three parts of one frame: every row whose key is at most its run's k-th smallest key in
    # the whole frame is a candidate of its part (2-bit keys: ties everywhere)
    rng_runs = [np.array([i % 7 for i in range(j, 60 + j)], dtype=np.int64) for j in range(3)]
    for k in (1, 2, 3):
        masks, keys = zip(*(K.sample_candidates(r, k, key_bits=2) for r in rng_runs), strict=True)
        run, key, cand = np.concatenate(rng_runs), np.concatenate(keys), np.concatenate(masks)
        for r in range(7):
            kth = np.sort(key[run == r])[k - 1]
            assert cand[(run == r) & (key <= kth)].all()
        kept = K.sample_settle(run[cand], key[cand], k)
        assert Counter(run[cand][kept].tolist()) == dict.fromkeys(range(7), k)


def test_cell_hash_is_a_function_of_the_group_key_class() -> None:
    from decimal import Decimal
    from fractions import Fraction

    ones = K.cell_hash(
        K.cells([1, 1.0, True, np.int64(1), Fraction(1), Decimal("1.0")], nulls=True)
    )
    assert len(set(ones.tolist())) == 1
    assert K.cell_hash(np.array([1, 2]))[0] == ones[0] == K.cell_hash(np.array([1.0]))[0]
    assert K.cell_hash(np.array([True]))[0] == ones[0]
    missing = K.cell_hash(
        K.cells([None, float("nan"), pd.NA, pd.NaT, np.datetime64("NaT")], nulls=True)
    )
    assert len(set(missing.tolist())) == 1
    assert K.cell_hash(np.array([np.nan]))[0] == missing[0]
    assert K.cell_hash(np.array([-0.0]))[0] == K.cell_hash(np.array([0]))[0]
    halves = K.cell_hash(K.cells([2.5, Fraction(5, 2), Decimal("2.5")], nulls=True))
    assert len(set(halves.tolist())) == 1 and K.cell_hash(np.array([2.5]))[0] == halves[0]
    assert (
        K.cell_hash(K.cells(["a", "b", 2**70], nulls=True)).tolist()
        == K.cell_hash(K.cells(["a", "b", float(2**70)], nulls=True)).tolist()
    )


def test_cell_hash_of_text_is_the_same_in_every_process() -> None:
    # blake2b of the UTF-8 bytes (no per-process salt, unlike hash() of a str): a fixed value
    import hashlib

    want = [
        int.from_bytes(hashlib.blake2b(b"s" + t.encode(), digest_size=8).digest(), "little")
        for t in ("ab", "é")
    ]
    assert K.cell_hash(K.cells(["ab", "é"], nulls=True)).tolist() == want
    assert K.cell_hash(K.cells(["ab", None], nulls=True))[0] == want[0]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(0, 2**40)), max_size=30))
def test_distinct_codes_tell_tuples_apart_as_run_codes_do(rows: list[tuple[int, int]]) -> None:
    cols = [np.array([r[i] for r in rows], dtype=np.int64) for i in range(2)]
    fast, slow = K.distinct_codes(cols, len(rows)), K.run_codes(cols, len(rows))
    assert len(set(zip(fast.tolist(), slow.tolist(), strict=True))) == len(set(slow.tolist()))
    assert len(set(fast.tolist())) == len(set(slow.tolist()))


PE = pytest.importorskip("opendp_lite.backends.tables.polars")


# --- v-polars-trunc: sample redraws through a draw seam, id classes, first/last on Polars -------


class _Draws:
    """A key source for the Polars sample path: ``first`` (colliding keys) on the first
    ``bad`` calls, then the library's keys; counts its calls."""

    def __init__(self, first: Any = None, bad: int = 1) -> None:
        self.first, self.bad, self.calls = first, bad, 0

    def __call__(self, n: int) -> Any:
        self.calls += 1
        if self.calls <= self.bad and self.first is not None:
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


@pytest.mark.parametrize("k", [1, 2])
def test_polars_sample_path_redraws_when_the_kept_keys_tie(k: int) -> None:
    # every key 0 on the first draw: every row ties with every other row of its run
    draws = _Draws(first=lambda n: np.zeros(n, dtype=np.uint64))
    df = pl.DataFrame({"id": [1, 1, 1, 2, 2, 2, 2], "x": range(7)})
    kept = PE._sample_rows(df.lazy(), [ID], k, draw=draws).collect()
    assert draws.calls == 2
    assert Counter(kept["id"].to_list()) == {1: k, 2: k}


def test_polars_sample_path_redraws_on_a_tie_at_the_kth_key_only() -> None:
    # run 1's keys 5, 7, 7: with k = 2 the two 7s both rank 2 (three kept); run 2 is clean
    first = lambda n: np.array([5, 7, 7, 1, 2], dtype=np.uint64)  # noqa: E731
    draws = _Draws(first=first)
    df = pl.DataFrame({"id": [1, 1, 1, 2, 2], "x": range(5)})
    kept = PE._sample_rows(df.lazy(), [ID], 2, draw=draws).collect()
    assert draws.calls == 2 and Counter(kept["id"].to_list()) == {1: 2, 2: 2}


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
    assert PE._runs_like_the_kernel(df.schema["id"])
    for run in (["id"], ["id", "g"]):
        draws = _Draws()
        kept = PE._sample_rows(df.lazy(), [N.Col(c) for c in run], 1, draw=draws).collect()
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
    _check_uniform_subsets([(x // 5, x % 5) for x in kept], N_RUNS, 5, 2)


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
def test_polars_first_last_on_int_bool_string_columns_keeps_the_reference_rows(
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
    got = _kept(frame, N.TruncateRows((ID,), (G,) if by else (), k, keep))  # type: ignore[arg-type]
    assert got == _reference(data, by, k, keep)
