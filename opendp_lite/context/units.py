"""Spaces, privacy units and privacy losses: ``domain_of``, ``metric_of``, ``space_of``,
``unit_of`` and ``loss_of``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Any, cast

from .._validate import check_finite_nonneg, is_int_value, is_real_value
from ..core import (
    Domain,
    Measure,
    Metric,
)
from ..domains import (
    atom_domain,
    map_domain,
    option_domain,
    vector_domain,
)
from ..errors import InvalidParameter, NotImplementedForType
from ..measures import (
    approximate,
    max_divergence,
    zero_concentrated_divergence,
)
from ..metrics import (
    absolute_distance,
    change_one_distance,
    change_one_id_distance,
    discrete_distance,
    hamming_distance,
    insert_delete_distance,
    l1_distance,
    l2_distance,
    symmetric_distance,
    symmetric_id_distance,
)
from ..typing import _SENSITIVITY_METRICS, RuntimeType

#: the Context API logs here (as OpenDP logs to ``opendp.context``)
logger = logging.getLogger("opendp_lite.context")


def domain_of(T: object, infer: bool = False) -> Domain[Any]:
    """The domain whose carrier type is ``T`` (``list[int]``, ``"Vec<int>"``, ``dp.i32`` ...).

    With ``infer=True``, ``T`` is a *public example* of the data and its type is inferred;
    never pass the sensitive data itself unless its structure is public.  As in OpenDP, a
    float domain admits NaN (``nan=True``): impute or pass ``domain=`` to exclude it.

    Raises:
        NotImplementedForType: if ``T`` names no supported carrier.

    >>> domain_of(list[int]), domain_of("Option<int>")
    (VectorDomain(AtomDomain(T=i32)), OptionDomain(AtomDomain(T=i32)))
    >>> domain_of([1.5], infer=True)
    VectorDomain(AtomDomain(nan=true, T=f64))
    """
    descriptor = RuntimeType.infer(T) if infer else RuntimeType.parse(T)
    return _domain_from(descriptor)


def _domain_from(descriptor: str) -> Domain[Any]:
    if isinstance(descriptor, RuntimeType):
        args = descriptor.args
        if descriptor.origin == "Vec" and len(args) == 1:
            return vector_domain(_domain_from(args[0]))
        if descriptor.origin == "Option" and len(args) == 1:
            return option_domain(_domain_from(args[0]))
        if descriptor.origin == "HashMap" and len(args) == 2:
            return map_domain(_domain_from(args[0]), _domain_from(args[1]))
        raise NotImplementedForType(f"no domain for carrier type {descriptor}")
    if descriptor in ("f32", "f64"):
        # as OpenDP's domain_of: a float domain built from a type admits NaN (impute first)
        return atom_domain(T=descriptor, nan=True)
    return atom_domain(T=descriptor)


def metric_of(M: object) -> Metric[Any]:
    """The metric of type ``M`` (``dp.L1Distance[float]``, ``"SymmetricDistance"`` ...).

    Raises:
        NotImplementedForType: if ``M`` names no supported metric.

    >>> metric_of("SymmetricDistance"), metric_of("L2Distance<f64>")
    (SymmetricDistance(), L2Distance(f64))
    """
    if isinstance(M, Metric):
        return M
    descriptor = RuntimeType.parse(M)
    if isinstance(descriptor, RuntimeType) and len(descriptor.args) == 1:
        sensitivity: dict[str, Callable[[object], Metric[Any]]] = {
            "AbsoluteDistance": absolute_distance,
            "L1Distance": l1_distance,
            "L2Distance": l2_distance,
        }
        if descriptor.origin in sensitivity:
            return sensitivity[descriptor.origin](descriptor.args[0])
    plain: dict[str, Callable[[], Metric[Any]]] = {
        "SymmetricDistance": symmetric_distance,
        "InsertDeleteDistance": insert_delete_distance,
        "ChangeOneDistance": change_one_distance,
        "HammingDistance": hamming_distance,
        "DiscreteDistance": discrete_distance,
    }
    if descriptor in plain:
        return plain[descriptor]()
    raise NotImplementedForType(f"unrecognized metric type M={M!r}")


def space_of(T: object, M: object = None, infer: bool = False) -> tuple[Domain[Any], Metric[Any]]:
    """A metric space: ``(domain_of(T), metric_of(M))``.

    ``M`` defaults to the symmetric distance for vectors and the absolute distance (of the
    carrier type) for numbers.

    Raises:
        NotImplementedForType: if ``T``/``M`` are unsupported, or no default metric exists.

    >>> space_of(list[int])
    (VectorDomain(AtomDomain(T=i32)), SymmetricDistance())
    >>> space_of(float)
    (AtomDomain(nan=true, T=f64), AbsoluteDistance(f64))
    """
    domain = domain_of(T, infer=infer)
    carrier = RuntimeType.parse(domain.carrier_type)
    if M is None:
        if isinstance(carrier, RuntimeType) and carrier.origin == "Vec":
            M = "SymmetricDistance"
        elif not isinstance(carrier, RuntimeType) and carrier not in ("bool", "String"):
            M = RuntimeType("AbsoluteDistance", [carrier])
        else:
            raise NotImplementedForType(f"no default metric for domain {domain!r}; pass M")
    descriptor = M if isinstance(M, Metric) else RuntimeType.parse(M)
    if isinstance(M, Metric):
        return domain, M
    origin = descriptor.origin if isinstance(descriptor, RuntimeType) else descriptor
    if origin in _SENSITIVITY_METRICS and not getattr(descriptor, "args", None):
        # a distance type left open is the domain's atom type, as in OpenDP:
        # space_of(list[int], L2Distance) is (vector_domain(atom_domain(T=i32)), l2_distance(T=i32))
        atom = carrier
        while isinstance(atom, RuntimeType) and atom.origin in ("Vec", "HashMap", "Option"):
            atom = atom.args[-1]
        descriptor = RuntimeType(origin, [str(atom)])
    return domain, metric_of(descriptor)


def _range_note(name: str, value: float, usual: float, warn: float) -> None:
    if value > warn:
        logger.warning("%s = %r is larger than %r; the guarantee is weak", name, value, warn)
    elif value > usual:
        logger.info("%s = %r is larger than the usual %r", name, value, usual)


def _budget(name: str, value: object) -> float:
    """A budget: a number >= 0, not NaN; infinity means unbounded (an odometer)."""
    if is_real_value(value) and value == math.inf:
        return math.inf
    return check_finite_nonneg(name, value)


def loss_of(
    epsilon: float | None = None, delta: float | None = None, rho: float | None = None
) -> tuple[Measure[Any], Any]:
    """A privacy loss: the measure and the budget in it.

    ``epsilon`` gives ε-DP, ``rho`` ρ-zCDP; adding ``delta`` makes either approximate.
    An infinite ``epsilon``/``rho`` (without a split) gives a context that only tracks its
    spending.

    Raises:
        InvalidParameter: unless exactly one of ``epsilon``/``rho`` is given, or if a value is
            negative or NaN (an infinite ε or ρ asks for an unbounded odometer; δ must be
            finite and at most 1).

    >>> loss_of(epsilon=1.0), loss_of(rho=0.5, delta=1e-7)
    ((MaxDivergence, 1.0), (Approximate(ZeroConcentratedDivergence), (0.5, 1e-07)))
    """
    if (epsilon is None) == (rho is None):
        raise InvalidParameter(
            f"pass exactly one of epsilon or rho, got epsilon={epsilon!r}, rho={rho!r}"
        )
    measure: Measure[Any]
    if epsilon is not None:
        loss: Any = _budget("epsilon", epsilon)
        _range_note("epsilon", loss, 1.0, 5.0)
        measure = max_divergence()
    else:
        loss = _budget("rho", rho)
        _range_note("rho", loss, 0.25, 0.5)
        measure = zero_concentrated_divergence()
    if delta is None:
        return measure, loss
    d = check_finite_nonneg("delta", delta)
    if d > 1:
        raise InvalidParameter(f"delta must be at most 1, got {delta!r}")
    _range_note("delta", d, 1e-6, 1e-6)
    return approximate(measure), (loss, d)


def unit_of(
    *,
    contributions: int | list[Any] | tuple[Any, ...] | None = None,
    changes: int | None = None,
    absolute: float | None = None,
    l1: float | None = None,
    l2: float | None = None,
    local: bool | None = None,
    identifier: object = None,
    ordered: bool = False,
    U: object = None,
) -> tuple[Metric[Any], Any]:
    """A privacy unit: the metric and the distance one individual can move the data.

    Exactly one of ``contributions`` (records added or removed), ``changes`` (records
    changed), ``absolute``/``l1``/``l2`` (distance of an aggregate, of type ``U``) or
    ``local=True`` (one individual's data) is given.  ``ordered=True`` selects the
    insert-delete / Hamming distance for ordered data.

    With ``identifier`` (a column name or a Polars expression) an individual is every row
    sharing one value of it, as in OpenDP: ``contributions=d`` is
    ``(symmetric_id_distance(identifier), d)``, ``d`` identifiers added or removed, and
    ``changes=d`` is ``(change_one_id_distance(identifier), d)``, ``d`` identifiers whose rows
    change.  The number of rows one identifier holds is not bounded by the unit: a table query
    bounds it by truncation (``.truncate_per_group(k)``, ``.truncate_num_groups(k, by=...)``;
    ``dp.t.make_truncate_per_id``), which is *enforced*; ``contributions=k`` without an
    identifier is a *claim* (each individual holds at most ``k`` records), taken on trust.

    ``contributions=[dp.polars.Bound(by=[...], per_group=p, num_groups=g), ...]`` bounds one
    individual per group of ``by`` (at most ``p`` rows, or identifiers with ``identifier=``, in
    any one group, in at most ``g`` groups; ``by=[]`` bounds the total): the metric is
    ``frame_distance(...)`` of the row (or identifier) distance, and the distance the list.

    Raises:
        InvalidParameter: unless exactly one distance is given, or for ``ordered`` with a
            distance it does not apply to (or with an identifier), an identifier with a
            distance other than ``contributions``/``changes``, or a list of bounds holding
            something other than ``dp.polars.Bound``.
        NotImplementedForType: for an identifier that is neither a column name nor a Polars
            expression.

    >>> from opendp_lite.table.margins import Bound
    >>> unit_of(contributions=[Bound(by=["g"], per_group=2)], identifier="person")
    (FrameDistance(SymmetricIdDistance('person')), [Bound(by=['g'], per_group=2, num_groups=None)])
    >>> unit_of(contributions=3), unit_of(l1=2.0), unit_of(changes=1, ordered=True)
    ((SymmetricDistance(), 3), (L1Distance(f64), 2.0), (HammingDistance(), 1))
    >>> unit_of(contributions=1, identifier="person"), unit_of(changes=1, identifier="person")
    ((SymmetricIdDistance('person'), 1), (ChangeOneIdDistance('person'), 1))
    """
    given = {
        "contributions": contributions,
        "changes": changes,
        "absolute": absolute,
        "l1": l1,
        "l2": l2,
        "local": local,
    }
    named = [k for k, v in given.items() if v is not None]
    if len(named) != 1:
        raise InvalidParameter(
            f"Must specify exactly one distance. Fix: pass exactly one of {sorted(given)}, "
            f"got {named}"
        )
    if identifier is not None:
        return _unit_by_identifier(identifier, contributions, changes, local, ordered, U)
    if local is not None and (ordered or U is not None):
        raise InvalidParameter(
            '"local" must be the only parameter: unit_of(local=True) is (discrete_distance(), '
            "1). Fix: drop ordered= and U="
        )
    if ordered and contributions is None and changes is None:
        raise InvalidParameter("ordered=True is only valid with contributions or changes")
    if local is not None:
        return discrete_distance(), int(local)
    if contributions is not None:
        if isinstance(contributions, list | tuple):
            from ..table.metrics import frame_distance

            inner = insert_delete_distance() if ordered else symmetric_distance()
            return frame_distance(inner), _bounds(contributions)
        if not is_int_value(contributions):
            raise InvalidParameter(
                "contributions is an int (rows per individual) or a list of "
                f"dp.polars.Bound(...), got {type(contributions).__name__}"
            )
        return (insert_delete_distance() if ordered else symmetric_distance()), int(contributions)
    if changes is not None:
        return (hamming_distance() if ordered else change_one_distance()), changes
    value: Any = absolute if absolute is not None else l1 if l1 is not None else l2
    T = RuntimeType.parse_or_infer(U, value)
    make = (
        absolute_distance
        if absolute is not None
        else l1_distance
        if l1 is not None
        else l2_distance
    )
    return cast(Metric[Any], make(T)), value


def _unit_by_identifier(
    identifier: object,
    contributions: object,
    changes: object,
    local: object,
    ordered: bool,
    U: object,
) -> tuple[Metric[Any], Any]:
    """OpenDP's identifier units: individuals, not records, added/removed or changed."""
    if local is not None:
        raise InvalidParameter(
            '"local" must be the only parameter: unit_of(local=True) is (discrete_distance(), '
            "1). Fix: drop identifier="
        )
    if ordered:
        raise InvalidParameter(
            '"ordered" must be False when "identifier" is set (individuals are unordered)'
        )
    if contributions is None and changes is None:
        raise InvalidParameter(
            "identifier= names who the individual is; it goes with contributions= (individuals "
            "added or removed) or changes= (individuals changed), not with a distance of an "
            "aggregate"
        )
    if U is not None:
        raise InvalidParameter("U= does not apply to an identifier unit (distances are counts)")
    ident = _identifier(identifier)
    if isinstance(contributions, list | tuple):
        from ..table.metrics import frame_distance

        return frame_distance(symmetric_id_distance(ident)), _bounds(contributions)
    d = contributions if contributions is not None else changes
    if not is_int_value(d) or isinstance(d, bool) or int(cast(Any, d)) < 0:
        if isinstance(d, list | tuple):
            raise InvalidParameter(
                "changes counts individuals changed: an int (per-group bounds go with "
                "contributions=[dp.polars.Bound(...)])"
            )
        raise InvalidParameter(f"the number of individuals must be an int >= 0, got {d!r}")
    n = int(cast(Any, d))
    if contributions is not None:
        return symmetric_id_distance(ident), n
    return change_one_id_distance(ident), n


def _identifier(identifier: object) -> Any:
    """The identifier as the metrics hold it: a column name, or an expression's node
    (``pl.col("pid")`` is the name ``"pid"``; another Polars expression is its node, a value
    that compares and hashes).

    Raises:
        NotImplementedForType: for anything else.
    """
    if isinstance(identifier, str | int) and not isinstance(identifier, bool):
        return identifier
    if type(identifier).__module__.partition(".")[0] == "polars":
        from ..table import nodes as n
        from ..table.builder import to_node

        node = to_node(identifier)
        return node.name if isinstance(node, n.Col) else node
    from ..table import nodes as n

    if isinstance(identifier, n.Expr.__args__):  # type: ignore[attr-defined]
        return identifier
    raise NotImplementedForType(
        "identifier must be a column name (a str or int) or a Polars expression, got "
        f"{type(identifier).__name__}"
    )


def _bounds(contributions: Any) -> list[Any]:
    """A unit's per-group bounds: each a ``dp.polars.Bound``.

    Raises:
        InvalidParameter: for an item that is not a Bound, or an empty list.
    """
    from ..table.margins import Bound

    out = list(contributions)
    if not out:
        raise InvalidParameter(
            "contributions=[] bounds nothing. Fix: pass dp.polars.Bound(per_group=k) (at most "
            "k rows, or identifiers, in all) or bounds per group"
        )
    for b in out:
        if not isinstance(b, Bound):
            raise InvalidParameter(
                f"contributions as a list holds dp.polars.Bound(...), got {type(b).__name__}"
            )
    return out
