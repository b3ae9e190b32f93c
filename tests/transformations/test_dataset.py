"""make_split_lines, make_split_records, make_create_dataframe, make_split_dataframe,
make_select_column."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite.errors import FailedFunction, InvalidParameter, NotInDomain, OpenDPLiteWarning
from opendp_lite.samplers import rng
from tests.transformations.test_rowwise import neighbours, symmetric

cell = st.text(alphabet="ab 1", max_size=3)
line = st.lists(cell, min_size=1, max_size=4).map(",".join)


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_text_to_column_chain_is_stable(data: st.DataObject) -> None:
    lines_x, lines_y = data.draw(neighbours(line, "SymmetricDistance"))
    x, y = "".join(s + "\n" for s in lines_x), "".join(s + "\n" for s in lines_y)
    split = dp.t.make_split_dataframe(",", ["p", "q"])
    d_in = symmetric(lines_x, lines_y)
    fx, fy = split(x), split(y)
    assert symmetric(fx, fy) <= split.map(d_in)
    assert split.output_domain.member(fx)
    chain = split >> dp.t.make_select_column("q", TOA=str)
    assert symmetric(chain(x), chain(y)) <= chain.map(d_in)
    # the fused constructor equals the chain of its three steps
    steps = (
        dp.t.make_split_lines()
        >> dp.t.make_split_records(",")
        >> dp.t.make_create_dataframe(["p", "q"])
    )
    assert {k: v.tolist() for k, v in steps(x).items()} == {k: v.tolist() for k, v in fx.items()}


def test_split_lines_follows_rust_lines() -> None:
    t = dp.t.make_split_lines()
    assert t("a\nb\r\n\nc") == ["a", "b", "", "c"]
    assert t("a\n") == ["a"]
    assert t("") == []
    assert t("a\x0bb\u2028c") == ["a\x0bb\u2028c"]  # no other separators


def test_records_and_dataframe() -> None:
    recs = dp.t.make_split_records(";")([" a ; b", "c", ""])
    assert [r.tolist() for r in recs] == [["a", "b"], ["c"], [""]]
    df = dp.t.make_create_dataframe(["x", "y"])(recs)
    assert {k: v.tolist() for k, v in df.items()} == {"x": ["a", "c", ""], "y": ["b", "", ""]}
    df_int = dp.t.make_create_dataframe([0, 1], K=int)([["a", "b", "c"]])
    assert {k: v.tolist() for k, v in df_int.items()} == {0: ["a"], 1: ["b"]}


def test_select_column_casts_into_the_output_domain() -> None:
    df = {"age": [30, 41], "name": ["a", "b"]}
    assert dp.t.make_select_column("age", TOA=int)(df) == [30, 41]
    with pytest.raises(FailedFunction):
        dp.t.make_select_column("age", TOA=str)(df)
    with pytest.raises(FailedFunction):
        dp.t.make_select_column("missing", TOA=str)(df)
    with pytest.raises(NotInDomain):
        dp.t.make_select_column("age", TOA=int)({"age": [1, 2], "name": ["a"]})
    with pytest.raises(NotInDomain):
        dp.t.make_select_column("age", TOA=int)([1, 2])
    with pytest.raises(InvalidParameter):
        dp.t.make_select_column("age", TOA=int, K=int)
    # a float column may hold NaN; a mixed column is not silently turned into strings
    assert dp.t.make_select_column("w", TOA=float)({"w": [1.5, float("nan")]})[0] == 1.5
    with pytest.raises(FailedFunction):
        dp.t.make_select_column("m", TOA=str)({"m": [1, "a"]})


def test_typed_errors() -> None:
    for sep in ("", 1, None):
        with pytest.raises(InvalidParameter):
            dp.t.make_split_records(sep)  # type: ignore[arg-type]
    for names in ([], ["a", "a"], ["a", 1], "ab"):
        with pytest.raises(InvalidParameter):
            dp.t.make_create_dataframe(names)
    with pytest.raises(NotInDomain):
        dp.t.make_split_lines()(["a"])


def test_matches_opendp() -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    text = "a,1\r\nb , 2\n\nc\n"
    assert dp.t.make_split_lines()(text) == odp.t.make_split_lines()(text)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        pairs = [
            (dp.t.make_split_lines(), odp.t.make_split_lines()),
            (dp.t.make_split_records(","), odp.t.make_split_records(",")),
            (dp.t.make_create_dataframe(["a", "b"]), odp.t.make_create_dataframe(["a", "b"])),
            (
                dp.t.make_split_dataframe(",", ["a", "b"]),
                odp.t.make_split_dataframe(",", ["a", "b"]),
            ),
            (dp.t.make_select_column("a", TOA=str), odp.t.make_select_column("a", TOA=str)),
        ]
    for ours, theirs in pairs:
        assert [ours.map(d) for d in range(15)] == [theirs.map(d) for d in range(15)]
        assert repr(ours.output_domain) == repr(theirs.output_domain)
        assert repr(ours.input_domain) == repr(theirs.input_domain)


def test_csv_pipeline_map_matches_opendp() -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    import warnings

    ours = (
        dp.t.make_split_dataframe(",", ["name", "age"])
        >> dp.t.make_select_column("age", TOA=str)
        >> dp.t.then_cast_default(TOA=int)
        >> dp.t.then_clamp((0, 100))
        >> dp.t.then_resize(10, 0)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        theirs = (
            odp.t.make_split_dataframe(",", ["name", "age"])
            >> odp.t.make_select_column("age", TOA=str)
            >> odp.t.then_cast_default(TOA=int)
            >> odp.t.then_clamp((0, 100))
            >> odp.t.then_resize(10, 0)
        )
    assert [ours.map(d) for d in range(12)] == [theirs.map(d) for d in range(12)]
    assert repr(ours.output_domain) == repr(theirs.output_domain)
    out = ours("a,30\nb,x\nc,250\n")
    assert sorted(out) == [0] * 8 + [30, 100]


@settings(max_examples=100, deadline=None)
@given(text=st.text(alphabet="ab,\r\n \x1c\u2003", max_size=30))
def test_split_lines_matches_opendp(text: str) -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    assert dp.t.make_split_lines()(text) == odp.t.make_split_lines()(text)


def test_fields_are_trimmed_of_unicode_white_space_only() -> None:
    recs = dp.t.make_split_records(",")(["\u2003a\t, \x1cb"])
    assert recs[0].tolist() == ["a", "\x1cb"]  # \x1c is not White_Space (Rust keeps it)


# -- a bad cell is outside select_column's input domain, refused before any randomness ------


def _recording_source(drawn: list[int]) -> Any:
    def source(n: int) -> bytes:
        drawn.append(n)
        return rng._os_source(n)

    return source


def _release(meas: Any, frame: Any) -> list[int]:
    """Invoke ``meas`` on ``frame``, returning the sizes of the randomness requests."""
    drawn: list[int] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OpenDPLiteWarning)
        with rng.scripted_randomness(_recording_source(drawn)):
            meas(frame)
    return drawn


BAD_FLOAT_CELLS = [
    pytest.param(None, id="None"),
    pytest.param("x", id="str"),
    pytest.param(True, id="bool"),  # not read as 1.0
    pytest.param(2**1100, id="huge-int"),  # refused, not an OverflowError
    pytest.param([0.5], id="nested"),
]


@pytest.mark.parametrize("bad", BAD_FLOAT_CELLS)
@pytest.mark.parametrize("container", ["list", "object-array"])
def test_bad_cell_refused_before_any_randomness(bad: Any, container: str) -> None:
    meas = dp.t.make_select_column("w", TOA=float) >> dp.t.then_count() >> dp.m.then_laplace(1.0)
    good = [0.5, 1.5, 2.5]
    cells = [*good[:1], bad, *good[1:]]
    col: Any = cells
    if container == "object-array":
        col = np.empty(len(cells), dtype=object)
        col[:] = cells
    frame = {"w": col, "name": ["a", "b", "c", "d"]}
    assert _release(meas, {"w": good, "name": ["a", "b", "c"]})  # the control draws noise
    drawn: list[int] = []
    with pytest.raises(NotInDomain, match=r"column 'w'.*position 1"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OpenDPLiteWarning)
            with rng.scripted_randomness(_recording_source(drawn)):
                meas(frame)
    assert drawn == []
    assert not meas.input_domain.member(frame)
    if container == "object-array":  # the untyped frame domain admits any 1-d column
        assert dp.dataframe_domain().member(frame)


@pytest.mark.parametrize(
    ("TOA", "col"),
    [
        (float, np.array([True, False])),  # a bool column is not a float column
        (int, [1, 2.5]),
        (int, [1, 2**70]),  # beyond i64 on the integer side
        (str, ["a", 1]),
        (bool, [True, 1]),
    ],
)
def test_column_of_the_wrong_type_is_not_in_the_domain(TOA: Any, col: Any) -> None:
    select = dp.t.make_select_column("c", TOA=TOA)
    assert not select.input_domain.member({"c": col})
    with pytest.raises(NotInDomain, match="column 'c'"):
        select({"c": col})


def test_masked_dataframe_column_refused_before_any_randomness() -> None:
    meas = dp.t.make_select_column("w", TOA=float) >> dp.t.then_count() >> dp.m.then_laplace(1.0)
    for mask in ([False, True], [False, False]):  # refused whatever is masked
        frame = {"w": np.ma.masked_array([0.5, 1.5], mask=mask)}
        assert not dp.dataframe_domain().member(frame)
        drawn: list[int] = []
        with pytest.raises(NotInDomain, match="masked"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", OpenDPLiteWarning)
                with rng.scripted_randomness(_recording_source(drawn)):
                    meas(frame)
        assert drawn == []


def test_missing_column_is_not_in_the_domain() -> None:
    select = dp.t.make_select_column("w", TOA=float)
    assert not select.input_domain.member({"v": [1.0]})
    assert select.input_domain.member({"w": [], "v": []})
    assert select.input_domain == dp.dataframe_domain()  # as OpenDP: no column types


def test_select_after_a_string_frame_fails_whatever_the_length() -> None:
    # the column's type decides, never its values or length: "" fails like "1,2\n" (OpenDP
    # fails both with FailedCast); the string selection releases both
    bad = dp.t.make_split_dataframe(",", ["a", "b"]) >> dp.t.make_select_column("a", TOA=int)
    for text in ("", "1,2\n"):
        with pytest.raises(FailedFunction, match="dtype"):
            bad(text)
    ok = dp.t.make_split_dataframe(",", ["a", "b"]) >> dp.t.make_select_column("a", TOA=str)
    assert ok("") == [] and ok("1,2\n") == ["1"]


def test_typed_column_is_normalised_to_the_carrier() -> None:
    select = dp.t.make_select_column("w", TOA=float)
    out = select({"w": np.array([1, 2], dtype=np.int64), "n": ["a", "b"]})
    assert out.dtype == np.float64 and out.tolist() == [1.0, 2.0]
    assert select({"w": [1.5, float("nan"), 2**64]})[2] == 2.0**64
