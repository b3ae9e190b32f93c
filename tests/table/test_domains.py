"""The table API's domains: OpenDP 0.16's reprs and equality, margins, membership by schema."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import polars as pl
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import InvalidParameter, NotInDomain, SerializationError
from opendp_lite.table import nodes as n
from opendp_lite.table.domains import lazyframe_domain_from_schema


def margin(by: list[object], max_length=None, max_groups=None, invariant=None):  # type: ignore[no-untyped-def]
    """A stand-in for dp.polars.Margin (the query layer's class), with the same fields."""
    return SimpleNamespace(by=by, max_length=max_length, max_groups=max_groups, invariant=invariant)


def example() -> dp.LazyFrameDomain:
    return dp.lazyframe_domain(
        [
            dp.series_domain("A", dp.option_domain(dp.atom_domain(T=dp.f64))),
            dp.series_domain("B", dp.atom_domain(T=dp.i32)),
            dp.series_domain("C", dp.option_domain(dp.atom_domain(T=dp.String))),
        ]
    )


def test_reprs_are_opendp_016s() -> None:
    # the strings OpenDP 0.16 prints for the same calls (checked in /work/venv136)
    assert repr(dp.series_domain("A", dp.atom_domain(T=float))) == 'SeriesDomain("A", f64)'
    assert repr(example()) == "FrameDomain(A: f64, B: i32, C: str; margins=[])"
    assert repr(dp.with_margin(example(), margin(["B"]))) == (
        'FrameDomain(A: f64, B: i32, C: str; margins=[{col("B")}])'
    )
    assert repr(dp.series_domain("D", dp.datetime_domain())) == 'SeriesDomain("D", datetime[μs])'
    assert repr(dp.datetime_domain("ms", "UTC")) == (
        'DatetimeDomain { time_unit: Milliseconds, time_zone: Some("UTC") }'
    )
    assert repr(dp.wild_expr_domain([dp.series_domain("A", dp.atom_domain(T=float))])) == (
        'WildExprDomain { columns: [SeriesDomain("A", f64)], context: RowByRow }'
    )
    with_margin = dp.wild_expr_domain(example().series_domains[:1], margin(["A"], max_length=10))
    assert 'Aggregation { margin: Margin { by: {col("A")}, max_length: Some(10)' in repr(
        with_margin
    )
    assert repr(dp.frame_distance(dp.symmetric_distance())) == "FrameDistance(SymmetricDistance())"


def test_series_domain_fields_and_nullability() -> None:
    atom = dp.atom_domain(bounds=(1.0, 2.0))
    s = dp.series_domain("A", atom)
    assert (s.name, s.element_domain, s.nullable) == ("A", atom, False)
    assert dp.series_domain("A", dp.option_domain(atom)) == dp.series_domain("A", atom, True)
    assert dp.series_domain("A", atom) != dp.series_domain("A", atom, nullable=True)
    with pytest.raises(InvalidParameter, match="element domain"):
        dp.series_domain("A", dp.vector_domain(atom))
    with pytest.raises(InvalidParameter, match="name"):
        dp.series_domain(1, atom)  # type: ignore[arg-type]


def test_frame_domain_columns() -> None:
    frame = example()
    assert frame.columns == ["A", "B", "C"]
    assert frame.get_series_domain("B") == dp.series_domain("B", dp.atom_domain(T=dp.i32))
    with pytest.raises(InvalidParameter, match="unrecognized column 'Z'"):
        frame.get_series_domain("Z")
    with pytest.raises(InvalidParameter, match="distinct"):
        dp.lazyframe_domain([frame.series_domains[0]] * 2)
    assert frame == example() and frame != dp.with_margin(frame, margin(["B"]))


def test_margins_follow_opendps_rules() -> None:
    atom = dp.atom_domain(T=float)
    frame = dp.lazyframe_domain([dp.series_domain("A", atom), dp.series_domain("B", atom)])
    frame = dp.with_margin(frame, margin(["A"], 1000, 20, "keys"))
    # no columns: one group, and the keys of a grouping by A make the empty grouping's public
    empty = frame.margin_facts([])
    assert (empty.max_length, empty.max_groups, empty.invariant) == (None, 1, "keys")
    a = frame.margin_facts(["A"])
    assert (a.max_length, a.max_groups, a.invariant) == (1000, 20, "keys")
    # a finer grouping: lengths carry down, groups need a cover (B has none), invariants don't
    ab = frame.margin_facts(["A", "B"])
    assert (ab.max_length, ab.max_groups, ab.invariant) == (1000, None, None)
    frame = dp.with_margin(frame, margin(["B"], 500, 20, "keys"))
    ab = frame.margin_facts([pl.col("B"), "A"])
    assert (ab.max_length, ab.max_groups, ab.invariant) == (500, 400, None)
    assert ab.by == frozenset({n.Col("A"), n.Col("B")})
    with pytest.raises(InvalidParameter, match=r'by \(A\) must be .*Did you mean \["A"\]'):
        frame.margin_facts("A")
    with pytest.raises(InvalidParameter, match="must be a sequence type"):
        frame.margin_facts(2)


def test_with_margin_refusals() -> None:
    frame = example()
    with pytest.raises(InvalidParameter, match="unrecognized column 'Z'"):
        dp.with_margin(frame, margin(["Z"]))
    frame = dp.with_margin(frame, margin(["B"], max_length=3))
    with pytest.raises(InvalidParameter, match="already present"):
        dp.with_margin(frame, margin([pl.col("B")], max_groups=2))
    with pytest.raises(InvalidParameter, match="invariant"):
        dp.with_margin(example(), margin(["B"], invariant="everything"))
    with pytest.raises(InvalidParameter, match="max_length"):
        dp.with_margin(example(), margin(["B"], max_length=-1))


def test_lazyframe_membership_is_by_schema() -> None:
    frame = example()
    good = pl.LazyFrame(
        {"A": [1.0, None], "B": [1, 2], "C": ["x", None]},
        schema={"A": pl.Float64, "B": pl.Int32, "C": pl.String},
    )
    assert frame.member(good)
    assert not frame.member(good.with_columns(pl.col("B").cast(pl.Int64)))
    assert not frame.member(good.select("B", "A", "C"))  # column order is part of the schema
    assert not frame.member(good.drop("C"))
    assert not frame.member({"A": [1.0]})
    with pytest.raises(NotInDomain, match="expected Polars LazyFrame"):
        frame._normalize("not a frame")


def test_dataframe_and_series_membership_checks_values() -> None:
    frame = example()
    df = pl.DataFrame(
        {"A": [1.0], "B": [None], "C": ["x"]},
        schema={"A": pl.Float64, "B": pl.Int32, "C": pl.String},
    )
    assert not frame.member(df)  # B is not nullable
    assert frame.member(df.with_columns(pl.lit(3, pl.Int32).alias("B")))
    bounded = dp.series_domain("x", dp.atom_domain(bounds=(0, 10), T=dp.i64))
    assert bounded.member(pl.Series("x", [0, 10]))
    assert not bounded.member(pl.Series("x", [0, 11]))
    assert not bounded.member(pl.Series("y", [0]))
    no_nan = dp.series_domain("x", dp.atom_domain(T=float, nan=False))
    assert not no_nan.member(pl.Series("x", [float("nan")]))
    assert dp.series_domain("x", dp.atom_domain(T=float)).member(pl.Series("x", [float("nan")]))
    with pytest.raises(NotInDomain) as info:
        bounded._normalize(pl.Series("x", [12345]))
    assert "12345" not in str(info.value)  # the message carries no value of the data


def test_enum_categorical_datetime() -> None:
    e = dp.enum_domain(pl.Series(["a", "b"]))
    assert e == dp.enum_domain(["a", "b"]) and e != dp.enum_domain(["b", "a"])
    assert e.member("a") and not e.member("c")
    with pytest.raises(InvalidParameter, match="distinct"):
        dp.enum_domain(["a", "a"])
    cats = dp.series_domain("c", dp.categorical_domain(["x", "y"]))
    assert repr(cats) == 'SeriesDomain("c", cat)'
    assert cats.member(pl.Series("c", ["x"], dtype=pl.Categorical))
    assert not cats.member(pl.Series("c", ["z"], dtype=pl.Categorical))
    assert dp.datetime_domain().member(dt.datetime(2000, 1, 1))
    with pytest.raises(InvalidParameter, match="time_unit"):
        dp.datetime_domain("s")


def test_domain_from_schema_is_the_widest() -> None:
    lf = pl.LazyFrame(
        {
            "f": [1.0],
            "i": [1],
            "s": ["a"],
            "e": pl.Series(["a"], dtype=pl.Enum(["a", "b"])),
            "t": [dt.datetime(2000, 1, 1)],
        }
    )
    domain = lazyframe_domain_from_schema(dict(lf.collect_schema()))
    assert domain == dp.lazyframe_domain(
        [
            dp.series_domain("f", dp.option_domain(dp.atom_domain(T=float))),
            dp.series_domain("i", dp.option_domain(dp.atom_domain(T=dp.i64))),
            dp.series_domain("s", dp.option_domain(dp.atom_domain(T=dp.String))),
            dp.series_domain("e", dp.option_domain(dp.enum_domain(["a", "b"]))),
            dp.series_domain("t", dp.option_domain(dp.datetime_domain("us"))),
        ]
    )
    assert domain.member(lf)


def test_wild_expr_domain() -> None:
    cols = example().series_domains
    row = dp.wild_expr_domain(cols)
    assert row.margin is None and row.frame_domain == example()
    grouped = dp.wild_expr_domain(cols, margin(["B"], max_groups=10))
    assert grouped.margin is not None and grouped.margin.max_groups == 10
    assert grouped != row
    with pytest.raises(InvalidParameter, match="unrecognized column"):
        dp.wild_expr_domain(cols, margin(["Z"]))
    assert row.member(pl.col("A")) and not row.member(pl.LazyFrame({}))


def test_runtime_type_infers_polars_objects() -> None:
    s = pl.Series("A", [1, 2])
    assert dp.RuntimeType.infer(s) == dp.Series == "Series"
    assert dp.RuntimeType.infer(pl.DataFrame(s)) == dp.DataFrame
    assert dp.RuntimeType.infer(pl.LazyFrame(s)) == dp.LazyFrame
    assert dp.RuntimeType.infer(pl.col("A")) == dp.Expr
    assert dp.RuntimeType.infer([1, 2]) == "Vec<i32>"  # unchanged for other values


def test_serialization_round_trip() -> None:
    frame = dp.with_margin(example(), margin(["B"], max_length=5, invariant="keys"))
    for obj in (
        frame,
        dp.series_domain("e", dp.option_domain(dp.enum_domain(["a"]))),
        dp.series_domain("t", dp.datetime_domain("ms", "UTC")),
        dp.wild_expr_domain(example().series_domains, margin(["B"], max_groups=3)),
        dp.wild_expr_domain([]),
    ):
        text = dp.serialize(obj)
        assert dp.deserialize(text, trust_claims=True) == obj  # (an invariant is a claim)
        assert dp.serialize(dp.deserialize(text, trust_claims=True)) == text


def test_deserialization_reruns_the_checks() -> None:
    text = dp.serialize(dp.with_margin(example(), margin(["B"], max_length=5)))
    assert text.count("5") == 1
    bad = text.replace("5", "-5")  # a document lowering a margin to a negative length
    with pytest.raises(InvalidParameter, match="max_length"):
        dp.deserialize(bad)


def test_an_invariant_margin_in_a_document_is_a_claim_the_reader_vouches_for() -> None:
    # invariant keys are released without a threshold: a document must not grant that
    frame = dp.with_margin(example(), margin(["B"], max_length=5, invariant="keys"))
    text = dp.serialize(frame)
    with pytest.raises(SerializationError, match="trust_claims=True"):
        dp.deserialize(text)
    assert dp.deserialize(text, trust_claims=True) == frame
    expr_text = dp.serialize(
        dp.wild_expr_domain(example().series_domains, margin(["B"], invariant="lengths"))
    )
    with pytest.raises(SerializationError, match="trust_claims=True"):
        dp.deserialize(expr_text)
    # a margin that claims no invariant needs no vouching
    plain = dp.with_margin(example(), margin(["B"], max_length=5))
    assert dp.deserialize(dp.serialize(plain)) == plain


def test_date_and_time_columns_are_naive_date_and_time_atoms() -> None:
    """A context over Date and Time columns has the series domains of NaiveDate and NaiveTime
    atoms (OpenDP's), which a user can also write by hand; their members are Polars series."""
    lf = pl.LazyFrame(
        [
            pl.Series("d", [dt.date(2000, 1, 1), None]),
            pl.Series("t", [dt.time(7, 8, 9), None]),
        ]
    )
    context = dp.Context.compositor(
        data=lf,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=1.0),
        split_evenly_over=1,
    )
    by_hand = dp.lazyframe_domain(
        [
            dp.series_domain("d", dp.option_domain(dp.atom_domain(T="NaiveDate"))),
            dp.series_domain("t", dp.option_domain(dp.atom_domain(T="NaiveTime"))),
        ]
    )
    assert context.accountant.input_domain == by_hand
    date_col = dp.series_domain("d", dp.atom_domain(T="NaiveDate"))
    assert repr(date_col) == 'SeriesDomain("d", date)'
    assert date_col.member(pl.Series("d", [dt.date(2000, 1, 1)]))
    assert not date_col.member(pl.Series("d", [dt.datetime(2000, 1, 1)]))
