"""make_split_lines, make_split_records, make_create_dataframe, make_split_dataframe,
make_select_column."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendp_lite.prelude as dp
from opendp_lite.errors import FailedFunction, InvalidParameter, NotInDomain
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
    assert t("a\nb\r\n\nc").tolist() == ["a", "b", "", "c"]
    assert t("a\n").tolist() == ["a"]
    assert t("").tolist() == []
    assert t("a\x0bb\u2028c").tolist() == ["a\x0bb\u2028c"]  # no other separators


def test_records_and_dataframe() -> None:
    recs = dp.t.make_split_records(";")([" a ; b", "c", ""])
    assert [r.tolist() for r in recs] == [["a", "b"], ["c"], [""]]
    df = dp.t.make_create_dataframe(["x", "y"])(recs)
    assert {k: v.tolist() for k, v in df.items()} == {"x": ["a", "c", ""], "y": ["b", "", ""]}
    df_int = dp.t.make_create_dataframe([0, 1], K=int)([["a", "b", "c"]])
    assert {k: v.tolist() for k, v in df_int.items()} == {0: ["a"], 1: ["b"]}


def test_select_column_casts_into_the_output_domain() -> None:
    df = {"age": [30, 41], "name": ["a", "b"]}
    assert dp.t.make_select_column("age", TOA=int)(df).tolist() == [30, 41]
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
    assert dp.t.make_select_column("w", TOA=float)({"w": [1.5, float("nan")]}).tolist()[0] == 1.5
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
    assert dp.t.make_split_lines()(text).tolist() == odp.t.make_split_lines()(text)
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
    assert sorted(out.tolist()) == [0] * 8 + [30, 100]


@settings(max_examples=100, deadline=None)
@given(text=st.text(alphabet="ab,\r\n \x1c\u2003", max_size=30))
def test_split_lines_matches_opendp(text: str) -> None:
    odp = pytest.importorskip("opendp.prelude")
    odp.enable_features("contrib")
    assert dp.t.make_split_lines()(text).tolist() == odp.t.make_split_lines()(text)


def test_fields_are_trimmed_of_unicode_white_space_only() -> None:
    recs = dp.t.make_split_records(",")(["\u2003a\t, \x1cb"])
    assert recs[0].tolist() == ["a", "\x1cb"]  # \x1c is not White_Space (Rust keeps it)
