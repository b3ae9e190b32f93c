"""OpenDP's type descriptors: T="i32", T=dp.i32, T=int and numpy dtypes mean the same."""

from __future__ import annotations

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import NotImplementedForType
from opendp_lite.typing import RuntimeType, UnknownTypeException


@pytest.mark.parametrize("T", ["i32", dp.i32, int, np.int32, np.dtype("int32"), "int"])
def test_int_descriptors_build_the_same_domain(T: object) -> None:
    assert dp.atom_domain(T=T) == dp.atom_domain(T="i32")
    assert dp.absolute_distance(T=T) == dp.absolute_distance(T="i32")


@pytest.mark.parametrize("T", ["f64", dp.f64, float, np.float64, "float"])
def test_float_descriptors_build_the_same_domain(T: object) -> None:
    assert dp.atom_domain(T=T) == dp.atom_domain(T="f64")


def test_atoms_are_plain_strings_and_generics_are_runtime_types() -> None:
    assert dp.i32 == "i32" and dp.String == "String" and dp.usize == "usize"
    vec = dp.Vec[dp.i32]
    assert isinstance(vec, RuntimeType)
    assert (vec.origin, vec.args) == ("Vec", ["i32"])
    assert repr(vec) == "Vec<i32>" and vec == "Vec<i32>" and vec == "Vec<int>"
    assert vec != "Vec<i64>" and vec != dp.Vec[dp.f64]
    assert {vec: 1}["Vec<i32>"] == 1  # hashes as its name
    assert repr(dp.Option[float]) == "Option<f64>"
    assert repr(dp.HashMap[str, int]) == "HashMap<String, i32>"


def test_parse() -> None:
    parse = RuntimeType.parse
    assert parse(int) == "i32" and parse("i32") == "i32" and parse(np.float32) == "f32"
    assert repr(parse("Vec<int>")) == "Vec<i32>"
    assert repr(parse(list[float])) == "Vec<f64>"
    assert repr(parse(dict[str, bool])) == "HashMap<String, bool>"
    assert repr(parse("(i32, Vec<f64>)")) == "(i32, Vec<f64>)"
    assert repr(parse((int, "f32"))) == "(i32, f32)"
    assert parse(dp.L1Distance[int]) == "L1Distance<i32>"
    for bad in ("Vec<i32", "Vec<<i32>", "i32>", list, "no such type"):
        with pytest.raises(UnknownTypeException):
            parse(bad)


def test_infer() -> None:
    infer = RuntimeType.infer
    assert infer(23) == "i32" and infer(1.5) == "f64" and infer(True) == "bool"
    assert infer("a") == "String" and infer(np.int8(3)) == "i8"
    assert repr(infer(["A", "B"])) == "Vec<String>"
    assert repr(infer((1.0, True, "a"))) == "(f64, bool, String)"
    assert repr(infer(np.array([1, 2], dtype=np.int64))) == "Vec<i64>"
    assert repr(infer({"a": 1})) == "HashMap<String, i32>"
    with pytest.raises(UnknownTypeException):
        infer([])
    with pytest.raises(UnknownTypeException):
        infer(object())


def test_unknown_type_is_a_typed_error() -> None:
    assert issubclass(UnknownTypeException, NotImplementedForType)
    with pytest.raises(NotImplementedForType):
        dp.atom_domain(T=dp.i128)  # OpenDP knows i128; this library has no such carrier


def test_generic_metric_types_as_arguments() -> None:
    assert repr(dp.L1Distance[int]) == "L1Distance<i32>"
    assert repr(dp.L2Distance["f32"]) == "L2Distance<f32>"
    assert dp.metric_of(dp.L1Distance[float]) == dp.l1_distance(T=float)
    assert dp.metric_of(dp.AbsoluteDistance[int]) == dp.absolute_distance(T=int)
    space = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
    counts = dp.t.make_count_by_categories(*space, categories=["a", "b"], MO=dp.L2Distance[int])
    assert counts.output_metric == dp.l2_distance(T=int)
    # the class is still the class
    assert isinstance(dp.l1_distance(T=int), dp.L1Distance)


def test_default_int_and_float_types() -> None:
    try:
        dp.set_default_int_type(dp.i64)
        assert dp.atom_domain(T=int) == dp.atom_domain(T="i64")
        assert RuntimeType.infer(3) == "i64"
        dp.set_default_float_type("f32")
        assert dp.atom_domain(T=float) == dp.atom_domain(T="f32")
        with pytest.raises(UnknownTypeException):
            dp.set_default_int_type(dp.f64)
        with pytest.raises(UnknownTypeException):
            dp.set_default_float_type(dp.i32)
    finally:
        dp.set_default_int_type(dp.i32)
        dp.set_default_float_type(dp.f64)
    assert dp.atom_domain(T=int) == dp.atom_domain(T="i32")


def test_measurement_and_transformation_type_properties() -> None:
    count = dp.t.make_count(dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance())
    assert count.input_carrier_type == dp.Vec[dp.i32]
    assert count.input_distance_type == dp.u32
    assert count.output_distance_type == dp.i32
    noisy = count >> dp.m.then_laplace(1.0)
    assert noisy.input_carrier_type == "Vec<i32>"
    assert noisy.input_distance_type == "u32" and noisy.output_distance_type == "f64"


def test_approximate_measure_distance_type_is_a_pair() -> None:
    space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    approx = dp.c.make_approximate(dp.m.make_laplace(*space, 1.0))
    assert approx.output_distance_type == "(f64, f64)"  # as OpenDP 0.16
    assert approx.output_measure.distance_type == "(f64, f64)"
    assert approx.map(1.0) == (1.0, 0.0)  # the loss check is unchanged


def test_a_runtime_type_of_an_atom_is_that_atom() -> None:
    atom = RuntimeType("i32")
    assert atom == "i32" and "i32" == atom and atom == "int" and atom != "i64"
    assert dp.atom_domain(T=atom) == dp.atom_domain(T=int)
