"""Deserialized documents are untrusted: nothing a document carries may lower a map.

A value a map reads as a fact that the library cannot recompute (a sampled sensitivity Δ̂ with
its γ, both estimated from draws of data) is refused in a document; it reaches a deserialized
object only as a piece the reader registered in their own process.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import opendp_lite.prelude as dp
from opendp_lite.errors import FeatureNotEnabled, SerializationError
from opendp_lite.sensitivity import (
    SampledSensitivity,
    Uniform,
    make_random_dp,
    sample_sensitivity,
)

N = 3


def _query(d: np.ndarray) -> float:
    return float(np.sum(d))


def _honest() -> tuple[Any, SampledSensitivity]:
    s = sample_sensitivity(_query, "l1", Uniform(0.0, 1.0), N, gamma=0.1)
    lap = dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), 0.2)
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=N), dp.change_one_distance()
    return make_random_dp(*space, _query, s, lap), s


def _replace(node: Any, old: Any, new: Any) -> Any:
    if node == old:
        return new
    if isinstance(node, dict):
        return {k: _replace(v, old, new) for k, v in node.items()}
    if isinstance(node, list):
        return [_replace(v, old, new) for v in node]
    return node


def _value_node(s: SampledSensitivity, **edits: Any) -> dict[str, Any]:
    """The node that today's format would write for ``s``, with ``edits`` applied."""
    fields: dict[str, Any] = {
        "sensitivity": s.sensitivity,
        "mean": s.mean,
        "gamma": s.gamma,
        "rho": s.rho,
        "m": s.m,
        "k": s.k,
        "n": s.n,
        "norm": s.norm,
        "samples": {"ndarray": {"list": s.samples.tolist()}, "dtype": "float64"},
    }
    fields.update(edits)
    return {"value": "SampledSensitivity", "fields": {"dict": [[k, v] for k, v in fields.items()]}}


def _document_with(meas: Any, s: SampledSensitivity, node: dict[str, Any]) -> str:
    dp.register_serializable("tamper-query", _query)
    dp.register_serializable("tamper-sensitivity", s)
    doc = json.loads(dp.serialize(meas))
    doc = _replace(doc, {"registered": "tamper-sensitivity"}, node)
    return json.dumps(doc)


def _refused_or_not_lower(text: str, honest: Any) -> None:
    try:
        copy = dp.deserialize(text)
    except SerializationError:
        return
    assert copy.output_measure == honest.output_measure
    assert copy.map(1) >= honest.map(1)


@pytest.mark.parametrize(
    "edits",
    [
        # the document: Δ̂ and every sample shrunk, γ set to 0
        lambda s: {
            "sensitivity": 1e-10,
            "gamma": 0.0,
            "samples": {"ndarray": {"list": [1e-10] * s.m}, "dtype": "float64"},
        },
        lambda s: {"sensitivity": 1e-10},  # Δ̂ alone
        lambda s: {"gamma": 1e-9},  # γ alone, below what (m, k, ρ) certify
        lambda s: {"rho": 1e-300, "gamma": 1e-9},  # ρ moved with γ
        # a self-consistent but fabricated set of draws: no document can prove its samples
        lambda s: {
            "sensitivity": 1e-10,
            "samples": {"ndarray": {"list": [1e-10] * s.m}, "dtype": "float64"},
        },
    ],
    ids=["issue", "sensitivity", "gamma", "rho-and-gamma", "fabricated-samples"],
)
def test_a_tampered_sampled_sensitivity_cannot_lower_the_random_dp_map(edits: Any) -> None:
    honest, s = _honest()
    text = _document_with(honest, s, _value_node(s, **edits(s)))
    _refused_or_not_lower(text, honest)


def test_a_sampled_sensitivity_in_a_document_is_refused_even_when_untouched() -> None:
    honest, s = _honest()
    with pytest.raises(SerializationError, match="register_serializable"):
        dp.deserialize(_document_with(honest, s, _value_node(s)))


def test_a_sampled_sensitivity_is_written_only_by_a_registered_name() -> None:
    _, s = _honest()
    fresh = sample_sensitivity(_query, "l1", Uniform(0.0, 1.0), N, gamma=0.2)
    with pytest.raises(SerializationError, match="register_serializable"):
        dp.serialize(fresh)
    assert s is not fresh


def test_a_registered_sampled_sensitivity_round_trips_to_the_readers_own_object() -> None:
    honest, s = _honest()
    dp.register_serializable("rt-query", _query)
    dp.register_serializable("rt-sensitivity", s)
    text = dp.serialize(honest)
    assert '"registered": "rt-sensitivity"' in text
    copy = dp.deserialize(text)
    assert copy.map(1) == honest.map(1)
    assert copy.output_measure == honest.output_measure


# ----------------------------------------------------------------------------------------------
# Claims taken on trust (honest-but-curious) come from the reader, never from a document


def _closeness(data: Any, c: int) -> float:
    return -abs(sum(1 for v in data if v <= c) - len(data) // 2)


def _trusted_claims() -> list[tuple[str, Any, Any]]:
    """(name, honest object, the same object with its trusted claim lowered)."""
    dp.enable_features("honest-but-curious", "contrib")
    dp.register_serializable("test-serialization-closeness", _closeness)
    ints = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    exp = [
        dp.m.make_exponential(*ints, [0, 1, 2], _closeness, sensitivity=s, scale=2.0)
        for s in (1.0, 1e-6)
    ]
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=10), dp.symmetric_distance()
    inner = space >> dp.t.then_clamp((0.0, 1.0)) >> dp.t.then_sum() >> dp.m.then_laplace(1.0)
    amp = [dp.c.make_population_amplification(inner, population_size=p) for p in (20, 10**9)]
    return [("make_exponential", *exp), ("make_population_amplification", *amp)]


@pytest.mark.parametrize("case", [0, 1])
def test_a_document_cannot_lower_a_map_by_a_claim_taken_on_trust(case: int) -> None:
    """With honest-but-curious enabled, a document that states a smaller sensitivity or a larger
    population would otherwise lower the map: it is refused unless the reader vouches for it."""
    name, honest, lowered = _trusted_claims()[case]
    assert lowered.map(1) < honest.map(1)  # the lowered claim would lower the map
    text = dp.serialize(lowered)
    with pytest.raises(FeatureNotEnabled, match="trust_claims=True"):
        dp.deserialize(text)
    copy = dp.deserialize(text, trust_claims=True)  # the reader's own document: as written
    assert copy.map(1) == lowered.map(1), name
    # the feature is still required: vouching for a document does not enable it
    dp.disable_features("honest-but-curious")
    with pytest.raises(FeatureNotEnabled):
        dp.deserialize(text, trust_claims=True)


def test_documents_without_trusted_claims_need_no_vouching() -> None:
    meas = dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), 1.0)
    assert dp.deserialize(dp.serialize(meas)).map(1) == meas.map(1)
