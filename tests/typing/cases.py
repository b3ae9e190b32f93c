"""Static typing of chains: mypy must infer good chains and reject bad ones.

This module is checked by ``mypy --strict`` with ``warn_unused_ignores``: every line marked
``# type: ignore[<code>]`` must really be an error, or mypy reports the ignore as unused and
the check fails.  So if the types stop catching one of these ill-typed chains, CI fails.

Two families: chains of user-defined pieces (``make_user_transformation`` and friends, typed by
the core's generics) and chains of the library's own constructors (typed by the ``@overload``s
on ``make_clamp``, ``make_sum``, ``make_count``, ``make_mean``, ``make_laplace``, ...).  Every
``then_*`` partial is derived from its ``make_*`` (``opendp_lite._spine``); one whose arguments
do not fix its carrier (``then_sum()``, ``then_laplace(scale)``, ``then_count()``) is typed by
what it is chained after: ``left >> partial`` is typed ``partial._after(left)`` (``core._Then``),
and ``(domain, metric) >> partial`` by the pattern's ``__rrshift__`` overloads.  A chain through
every ``then_*`` is in ``then_cases.py``.

Nothing here runs at import time (the bodies are in functions that are never called), because
the ill-typed chains would also fail at run time.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy.typing as npt

import opendp_lite.prelude as dp
from opendp_lite._types import Never, Vec
from opendp_lite.core import (
    Function,
    Measurement,
    PartialMeasurement,
    Queryable,
    Transformation,
)
from opendp_lite.domains import AtomDomain, VectorDomain
from opendp_lite.metrics import (
    AbsoluteDistance,
    L1Distance,
    L2Distance,
    LInfDistance,
    SymmetricDistance,
)

if sys.version_info >= (3, 11):
    from typing import assert_type
else:  # the declared minimum, 3.10: typing_extensions (a dependency of mypy) has it
    from typing_extensions import assert_type


def _pieces() -> tuple[
    Transformation[float, float, float, float],
    Transformation[int, int, int, int],
    Measurement[int, int, int, float],
    Measurement[float, float, float, float],
    Transformation[str, int, int, int],
]:
    fspace = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    ispace = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    assert_type(fspace[0], AtomDomain[float])
    assert_type(ispace[1], AbsoluteDistance[int])
    t_float = dp.t.make_user_transformation(*fspace, *fspace, lambda x: 2.0 * x, lambda d: 2.0 * d)
    t_int = dp.t.make_user_transformation(*ispace, *ispace, lambda x: x + 1, lambda d: d)
    m_int = dp.m.make_user_measurement(*ispace, dp.max_divergence(), lambda x: x, lambda d: 1.0 * d)
    m_float = dp.m.make_user_measurement(*fspace, dp.max_divergence(), lambda x: x, lambda d: d)
    t_len = dp.t.make_user_transformation(
        dp.atom_domain(T=str), dp.discrete_distance(), *ispace, len, lambda d: d
    )
    return t_float, t_int, m_int, m_float, t_len


def _spaces() -> tuple[
    tuple[VectorDomain[float], SymmetricDistance],
    tuple[VectorDomain[int], SymmetricDistance],
    tuple[VectorDomain[float], SymmetricDistance],
]:
    """Input spaces for the library's own constructors: float, int and sized float vectors."""
    fvec = dp.vector_domain(dp.atom_domain(bounds=(0.0, 10.0))), dp.symmetric_distance()
    ivec = dp.vector_domain(dp.atom_domain(bounds=(0, 10))), dp.symmetric_distance()
    sized = dp.vector_domain(dp.atom_domain(bounds=(0.0, 10.0)), size=100), dp.symmetric_distance()
    return fvec, ivec, sized


def valid_chains() -> None:
    """Chains mypy accepts, with the types it infers."""
    t_float, t_int, m_int, m_float, t_len = _pieces()

    assert_type(t_float >> t_float, Transformation[float, float, float, float])
    assert_type(t_int >> m_int, Measurement[int, int, int, float])
    assert_type(t_len >> t_int >> m_int, Measurement[str, int, int, float])
    assert_type(t_float >> t_float >> m_float, Measurement[float, float, float, float])

    # post-processing changes the output type, keeps the rest
    assert_type(m_int >> (lambda y: str(y)), Measurement[int, str, int, float])
    assert_type(m_float >> Function(round), Measurement[float, int, float, float])
    # as in OpenDP, a transformation after a measurement post-processes with its function
    assert_type(m_int >> t_int, Measurement[int, int, int, float])
    assert_type(m_int >> t_int >> str, Measurement[int, str, int, float])

    # the functional forms
    assert_type(dp.c.make_chain_tt(t_int, t_int), Transformation[int, int, int, int])
    assert_type(dp.c.make_chain_mt(m_int, t_int), Measurement[int, int, int, float])

    # calls and maps are typed by the carriers and distances
    assert_type(m_int(3), int)
    assert_type(m_float.map(1.0), float)

    # partial constructors: (domain, metric) >> partial
    partial: PartialMeasurement[int, int, int, float] = PartialMeasurement(
        lambda d, m: dp.m.make_user_measurement(d, m, dp.max_divergence(), lambda x: x, float)
    )
    ispace = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    assert_type(ispace >> partial, Measurement[int, int, int, float])
    assert_type(t_int >> partial, Measurement[int, int, int, float])

    # domains and metrics carry their types
    vd = dp.vector_domain(dp.atom_domain(bounds=(0.0, 1.0)))
    assert_type(vd, VectorDomain[float])
    assert_type(dp.symmetric_distance(), SymmetricDistance)

    # --- the library's own constructors (typed @overloads) -----------------------------------
    fvec, ivec, sized = _spaces()
    fscalar = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    iscalar = dp.atom_domain(T=int), dp.absolute_distance(T=int)

    # make_* forms: each stage built on the previous one's output space
    clamp = dp.t.make_clamp(*fvec, bounds=(0.0, 10.0))
    assert_type(clamp, Transformation[Vec[float], Vec[float], int, int])
    fsum = dp.t.make_sum(*clamp.output_space)
    assert_type(fsum, Transformation[Vec[float], float, int, float])
    lap = dp.m.make_laplace(*fsum.output_space, scale=1.0)
    assert_type(lap, Measurement[float, float, float, float])
    assert_type(clamp >> fsum >> lap, Measurement[Vec[float], float, int, float])
    assert_type((clamp >> fsum >> lap)([1.0, 2.0]), float)
    assert_type((clamp >> fsum >> lap).map(1), float)

    # integers stay integers: int clamp >> int sum >> integer (discrete) Laplace / geometric
    iclamp = dp.t.make_clamp(*ivec, bounds=(0, 10))
    isum = dp.t.make_sum(*iclamp.output_space)
    assert_type(isum, Transformation[Vec[int], int, int, int])
    ilap = dp.m.make_laplace(*iscalar, scale=1.0)
    assert_type(iclamp >> isum >> ilap, Measurement[Vec[int], int, int, float])
    geo = dp.m.make_geometric(*iscalar, scale=1.0, bounds=(0, 100))
    assert_type(isum >> geo, Measurement[Vec[int], int, int, float])
    assert_type(dp.m.make_base_discrete_laplace(*iscalar, 1.0), Measurement[int, int, int, float])

    # a count is an int (or a float with TO=float), whatever the input
    count = dp.t.make_count(*fvec)
    assert_type(count, Transformation[Vec[float], int, int, int])
    assert_type(dp.t.make_count(*fvec, TO=float), Transformation[Vec[float], float, int, float])
    assert_type(
        count >> dp.m.make_gaussian(*iscalar, 1.0), Measurement[Vec[float], int, int, float]
    )

    # the mean and the zCDP Gaussian on floats; the base alias types the same
    mean = dp.t.make_mean(*sized)
    assert_type(mean, Transformation[Vec[float], float, int, float])
    gauss = dp.m.make_base_gaussian(*fscalar, 1.0)
    assert_type(mean >> gauss, Measurement[Vec[float], float, int, float])

    # vector mechanisms release numpy arrays
    vlap = dp.m.make_laplace(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float), 1.0
    )
    assert_type(vlap, Measurement[Vec[float], npt.NDArray[Any], float, float])
    assert_type(vlap >> (lambda a: a.sum()), Measurement[Vec[float], Any, float, float])

    # cast, impute, resize keep track of the element type
    strs = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
    cast = dp.t.make_cast_default(*strs, TOA=float)
    assert_type(cast, Transformation[Vec[str], Vec[float], int, int])
    nan = dp.vector_domain(dp.atom_domain(T=float, nan=True)), dp.symmetric_distance()
    impute = dp.t.make_impute_constant(*nan, constant=0.0)
    assert_type(impute, Transformation[Vec[float], Vec[float], int, int])
    opt = dp.vector_domain(dp.option_domain(dp.atom_domain(T=int))), dp.symmetric_distance()
    assert_type(
        dp.t.make_impute_constant(*opt, constant=0),
        Transformation[Vec[int | None], Vec[int], int, int],
    )
    resize = dp.t.make_resize(*impute.output_space, size=10, constant=0.0)
    assert_type(resize, Transformation[Vec[float], Vec[float], int, int])
    assert_type(
        cast >> impute >> resize >> dp.t.make_clamp(*resize.output_space, bounds=(0.0, 1.0)),
        Transformation[Vec[str], Vec[float], int, int],
    )

    # then_* forms: a partial knows its carrier when its arguments fix it (clamp bounds, cast
    # TOA, the float-only mean), else from what it is chained after (sum, count, noise)
    assert_type(
        fvec >> dp.t.then_clamp((0.0, 10.0)), Transformation[Vec[float], Vec[float], int, int]
    )
    assert_type(ivec >> dp.t.then_clamp((0, 10)), Transformation[Vec[int], Vec[int], int, int])
    assert_type(
        sized >> dp.t.then_clamp((0.0, 10.0)) >> dp.t.then_mean(),
        Transformation[Vec[float], float, int, float],
    )
    assert_type(clamp >> dp.t.then_count(), Transformation[Vec[float], int, int, int])
    assert_type(
        strs >> dp.t.then_cast_default(float), Transformation[Vec[str], Vec[float], int, int]
    )
    assert_type(
        fvec >> dp.t.then_clamp((0.0, 10.0)) >> dp.t.then_sum() >> dp.m.then_laplace(1.0),
        Measurement[Vec[float], float, int, float],
    )
    assert_type(
        fvec >> dp.t.then_clamp((0.0, 10.0)) >> dp.t.then_sum() >> lap,
        Measurement[Vec[float], float, int, float],
    )
    assert_type(
        ivec >> dp.t.then_clamp((0, 10)) >> dp.t.then_sum() >> dp.m.then_laplace(1.0),
        Measurement[Vec[int], int, int, float],
    )
    assert_type(
        ivec >> dp.t.then_clamp((0, 10)) >> dp.t.then_sum() >> dp.m.then_geometric(1.0),
        Measurement[Vec[int], int, int, float],
    )
    assert_type(
        sized >> dp.t.then_clamp((0.0, 10.0)) >> dp.t.then_mean() >> dp.m.then_gaussian(1.0),
        Measurement[Vec[float], float, int, float],
    )
    assert_type(clamp >> dp.t.then_sum(), Transformation[Vec[float], float, int, float])
    assert_type(ivec >> dp.t.then_sum(), Transformation[Vec[int], int, int, int])
    assert_type(ivec >> dp.t.then_count(), Transformation[Vec[int], int, int, int])
    assert_type(strs >> dp.t.then_count(float), Transformation[Vec[str], float, int, float])
    assert_type(
        strs >> dp.t.then_count() >> dp.m.then_base_discrete_laplace(1.0),
        Measurement[Vec[str], int, int, float],
    )
    assert_type(
        cast >> dp.t.then_count(float) >> dp.m.then_base_gaussian(1.0),
        Measurement[Vec[str], float, int, float],
    )
    # the partial's own uses stay as before: a direct call, and partial >> next (associativity)
    assert_type(dp.t.then_sum()(*ivec), Transformation[Any, Any, Any, Any])
    assert_type(clamp >> (dp.t.then_sum() >> lap), Measurement[Vec[float], float, int, float])
    assert_type(dp.m.then_laplace(1.0)(*fscalar), Measurement[Any, Any, Any, Any])
    # (domain, metric) >> then_noise(...): scalar and vector, float and int
    assert_type(fscalar >> dp.m.then_laplace(1.0), Measurement[float, float, float, float])
    assert_type(iscalar >> dp.m.then_gaussian(1.0), Measurement[int, int, int, float])
    assert_type(iscalar >> dp.m.then_geometric(1.0), Measurement[int, int, int, float])
    l1f = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float)
    assert_type(
        l1f >> dp.m.then_laplace(1.0), Measurement[Vec[float], npt.NDArray[Any], float, float]
    )
    # a then_* partial after a transformation whose output carrier is Any stays Any (not a
    # guessed carrier): a TOA known only as a str leaves make_cast_default's carrier open
    toa: str = "f64"
    cast_any = strs >> dp.t.then_cast_default(toa)
    assert_type(cast_any >> dp.m.then_laplace(1.0), Measurement[Vec[str], Any, int, float])
    # an adaptive compositor after a transformation answers queries on its output space
    assert_type(
        clamp >> dp.c.then_adaptive_composition(dp.max_divergence(), 1, [1.0]),
        Measurement[
            Vec[float],
            Queryable[Measurement[Vec[float], Any, int, float], Any],
            int,
            float,
        ],
    )


def invalid_chains() -> None:
    """Each line is an ill-typed chain; mypy must reject it (else the ignore is unused)."""
    t_float, t_int, m_int, m_float, t_len = _pieces()

    # 1. a float-output transformation feeding an integer-input measurement
    t_float >> m_int  # type: ignore[operator]

    # 2. transformation >> transformation with mismatched carriers (int out, float in)
    t_int >> t_float  # type: ignore[operator]

    # 3. a str-input transformation after an int-output one
    t_int >> t_len  # type: ignore[operator]

    # 4. post-processing that expects a different type than the release
    def shout(s: str) -> str:
        return s.upper()

    m_int >> shout  # type: ignore[operator]

    # 5. the functional chain in the wrong order
    dp.c.make_chain_tt(t_float, t_int)  # type: ignore[misc]

    # 6. a measurement chained on a transformation of another carrier, functional form
    dp.c.make_chain_mt(m_float, t_int)  # type: ignore[misc]

    # 7. post-processing Function of the wrong input type
    dp.c.make_chain_pm(Function(shout), m_int)  # type: ignore[misc]

    # 8. a (domain, metric) pair of the wrong carrier on the left of a partial
    partial: PartialMeasurement[int, int, int, float] = PartialMeasurement(
        lambda d, m: dp.m.make_user_measurement(d, m, dp.max_divergence(), lambda x: x, float)
    )
    (dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)) >> partial  # type: ignore[operator]

    # 9. invoking with a value of the wrong carrier
    m_int("three")  # type: ignore[arg-type]

    # 10. asking a map for a distance of the wrong type
    m_float.map("1.0")  # type: ignore[arg-type]

    # --- ill-typed chains of the library's own constructors ----------------------------------
    fvec, ivec, _ = _spaces()
    fscalar = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    iscalar = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    fsum = dp.t.make_sum(*dp.t.make_clamp(*fvec, bounds=(0.0, 10.0)).output_space)
    count = dp.t.make_count(*ivec)
    ilap = dp.m.make_laplace(*iscalar, scale=1.0)
    fgauss = dp.m.make_gaussian(*fscalar, scale=1.0)
    vlap = dp.m.make_laplace(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l1_distance(T=float), 1.0
    )

    def halve(x: float) -> float:
        return x / 2

    # 11. a float sum feeding an integer Laplace
    fsum >> ilap  # type: ignore[operator]

    # 12. a count (int) feeding a float Gaussian, make_* and then_* forms
    count >> fgauss  # type: ignore[operator]
    ivec >> dp.t.then_count() >> fgauss  # type: ignore[operator]

    # 13. a vector release post-processed by a scalar-only function
    vlap >> halve  # type: ignore[operator]

    # 14. an integer-vector clamp with float bounds, make_* and then_* forms
    dp.t.make_clamp(*ivec, bounds=(0.0, 10.0))  # type: ignore[arg-type]
    ivec >> dp.t.then_clamp((0.5, 10.0))  # type: ignore[operator]

    # 15. the L1 vector Laplace fed by a scalar aggregate
    fsum >> vlap  # type: ignore[operator]

    # 16. the (float-only) mean of an integer vector, make_* and then_* forms
    dp.t.make_mean(*ivec)  # type: ignore[arg-type]
    dp.t.make_clamp(*ivec, bounds=(0, 10)) >> dp.t.then_mean()  # type: ignore[operator]

    # 17. the (integer-only) geometric mechanism on floats
    dp.m.make_geometric(*fscalar, scale=1.0)  # type: ignore[arg-type]

    # 18. a sum of strings; a cast to str feeding an integer sum
    strs = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
    dp.t.make_sum(*strs)  # type: ignore[type-var]
    dp.t.make_cast_default(*fvec, TOA=str) >> dp.t.make_sum(*ivec)  # type: ignore[operator]

    # 19. an imputed integer vector feeding a float sum
    opt = dp.vector_domain(dp.option_domain(dp.atom_domain(T=int))), dp.symmetric_distance()
    dp.t.make_impute_constant(*opt, constant=0) >> dp.t.make_sum(*fvec)  # type: ignore[arg-type]

    # 20. invoking a real chain on data of the wrong type, and mapping a float d_in on ints
    (fsum >> fgauss)(["1.0"])  # type: ignore[list-item]
    ilap.map(0.5)  # type: ignore[arg-type]

    # --- ill-typed then_* chains (typed by what the partial is chained after) ----------------
    fclamp = dp.t.make_clamp(*fvec, bounds=(0.0, 10.0))

    # 21. a float sum feeding the (integer-only) geometric / discrete Laplace, then_* form
    fvec >> dp.t.then_clamp((0.0, 10.0)) >> dp.t.then_sum() >> dp.m.then_geometric(1.0)  # type: ignore[operator]
    fclamp >> dp.t.then_sum() >> dp.m.then_base_discrete_laplace(1.0)  # type: ignore[operator]

    # 22. a sum of strings, then_* forms ((domain, metric) and chained after a cast)
    strs >> dp.t.then_sum()  # type: ignore[operator]
    dp.t.make_cast_default(*fvec, TOA=str) >> dp.t.then_sum()  # type: ignore[operator]

    # 23. a sum of a scalar (an aggregate summed again), and a count of a scalar
    fclamp >> dp.t.then_sum() >> dp.t.then_sum()  # type: ignore[operator]
    fsum >> dp.t.then_count()  # type: ignore[operator]

    # 24. noise on a non-numeric release: a str scalar space, a cast-to-str vector
    (dp.atom_domain(T=str), dp.discrete_distance()) >> dp.m.then_laplace(1.0)  # type: ignore[operator]
    dp.t.make_cast_default(*fvec, TOA=str) >> dp.m.then_gaussian(1.0)  # type: ignore[operator]

    # 25. the integer-only geometric on a float space, (domain, metric) form
    fscalar >> dp.m.then_geometric(1.0)  # type: ignore[operator]

    # 26. a then_* chain whose release is post-processed as the wrong type
    def shout_vec(v: npt.NDArray[Any]) -> npt.NDArray[Any]:
        return v

    fclamp >> dp.t.then_sum() >> dp.m.then_laplace(1.0) >> shout_vec  # type: ignore[operator]
    ivec >> dp.t.then_count() >> dp.m.then_laplace(1.0) >> shout  # type: ignore[operator]

    # 27. a then_* chain invoked on data of the wrong carrier, or mapped with a float d_in
    (fclamp >> dp.t.then_sum() >> dp.m.then_laplace(1.0))(["1.0"])  # type: ignore[list-item]
    (ivec >> dp.t.then_sum() >> dp.m.then_laplace(1.0)).map(0.5)  # type: ignore[arg-type]

    # 28. a measurement followed by a measurement: a Measurement is callable, but only
    # post-processing may follow one (run time: TypeError)
    m_int >> m_int  # type: ignore[deprecated]
    m_float >> m_float >> (lambda y: y)  # type: ignore[deprecated]
    ilap >> ilap  # type: ignore[deprecated]
    fclamp >> dp.t.then_sum() >> dp.m.then_laplace(1.0) >> fgauss  # type: ignore[deprecated]

    # 29. a transformation post-processing a release of another carrier (int out, str in)
    m_int >> t_len  # type: ignore[operator]

    # 30. an odometer after a transformation (as in OpenDP, run time: TypeError)
    fclamp >> dp.c.then_fully_adaptive_composition(dp.max_divergence())  # type: ignore[operator]


def carrier_tables() -> None:
    """Each carrier table, written once, types every function declared by it."""
    # the sensitivity metrics' distance-type table (metrics.ByDistanceType)
    assert_type(dp.absolute_distance(T=int), AbsoluteDistance[int])
    assert_type(dp.absolute_distance(T="f32"), AbsoluteDistance[float])
    assert_type(dp.l1_distance(T="u64"), L1Distance[int])
    assert_type(dp.l1_distance(T=float), L1Distance[float])
    assert_type(dp.l2_distance(T="i32"), L2Distance[int])
    assert_type(dp.l2_distance(T="f64"), L2Distance[float])
    assert_type(dp.linf_distance(T=int), LInfDistance[int])
    assert_type(dp.linf_distance(T=float, monotonic=True), LInfDistance[float])
    assert_type(dp.linf_distance(T=object()), LInfDistance[Any])
    dp.l1_distance(T=int, monotonic=True)  # type: ignore[call-overload]
    dp.linf_distance(T=float, monotonic="yes")  # type: ignore[call-overload]
    # atom_domain by its bounds alone: one row on the numeric carriers (domains._Num)
    assert_type(dp.atom_domain(bounds=(0, 10)), AtomDomain[int])
    assert_type(dp.atom_domain((0.0, 1.0), nan=False), AtomDomain[float])
    assert_type(dp.atom_domain((0, 1.0)), AtomDomain[float])
    # make_index: one row, the carrier of null (and of TOA when given as a type)
    usize = dp.vector_domain(dp.atom_domain(T="usize")), dp.symmetric_distance()
    assert_type(dp.t.make_index(*usize, ["a"], "x"), Transformation[Vec[int], Vec[str], int, int])
    assert_type(
        dp.t.make_index(*usize, [1.0], -1.0, TOA=float),
        Transformation[Vec[int], Vec[float], int, int],
    )
    # make_sum, make_mean: one signature on the numeric carriers (_spine.Numeric: int, float)
    ivec = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    fvec = dp.vector_domain(dp.atom_domain(T=float)), dp.symmetric_distance()
    bvec = dp.vector_domain(dp.atom_domain(T=bool)), dp.symmetric_distance()
    svec = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
    # make_resize: one signature, the constant of the vector's element type
    assert_type(dp.t.make_resize(*ivec, 3, 0), Transformation[Vec[int], Vec[int], int, int])
    dp.t.make_resize(*ivec, 3, "a")  # type: ignore[misc]
    dp.t.make_resize(dp.atom_domain(T=int), dp.absolute_distance(T=int), 3, 0)  # type: ignore[arg-type]
    assert_type(dp.t.make_sum(*ivec), Transformation[Vec[int], int, int, int])
    assert_type(dp.t.make_sum(*fvec), Transformation[Vec[float], float, int, float])
    dp.t.make_sum(*bvec)  # type: ignore[arg-type]
    assert_type(dp.t.make_mean(*fvec), Transformation[Vec[float], float, int, float])
    dp.t.make_mean(*svec)  # type: ignore[arg-type]
    # the noise table (_spine.NoiseCarriers, IntNoiseCarriers): carrier kept, vectors to arrays
    iscalar = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    fscalar = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    il1 = dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int)
    fl2 = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float)
    arr = npt.NDArray[Any]
    assert_type(dp.m.make_laplace(*iscalar, 1.0), Measurement[int, int, int, float])
    assert_type(dp.m.make_laplace(*fscalar, 1.0), Measurement[float, float, float, float])
    assert_type(dp.m.make_laplace(*il1, 1.0), Measurement[Vec[int], arr, int, float])
    assert_type(dp.m.make_gaussian(*fl2, 1.0), Measurement[Vec[float], arr, float, float])
    assert_type(dp.m.make_base_laplace(*fscalar, 1.0), Measurement[float, float, float, float])
    assert_type(dp.m.make_geometric(*iscalar, 1.0), Measurement[int, int, int, float])
    assert_type(dp.m.make_geometric(*il1, 1.0), Measurement[Vec[int], arr, int, float])
    dp.m.make_laplace(*svec, 1.0)  # type: ignore[type-var]
    dp.m.make_gaussian(dp.atom_domain(T=str), dp.discrete_distance(), 1.0)  # type: ignore[type-var]
    dp.m.make_geometric(*fl2, 1.0)  # type: ignore[arg-type]
    # the casts' carrier table (cast.ByTOA), for the make_* and the derived then_* alike
    assert_type(dp.t.make_cast(*svec, TOA=int), Transformation[Vec[str], Vec[int | None], int, int])
    assert_type(
        dp.t.make_cast(*ivec, TOA="f32"), Transformation[Vec[int], Vec[float | None], int, int]
    )
    assert_type(
        dp.t.make_cast(*fvec, TOA=str), Transformation[Vec[float], Vec[str | None], int, int]
    )
    assert_type(
        dp.t.make_cast_default(*svec, TOA="u8"), Transformation[Vec[str], Vec[int], int, int]
    )
    assert_type(
        dp.t.make_cast_default(*ivec, TOA=float), Transformation[Vec[int], Vec[float], int, int]
    )
    assert_type(
        dp.t.make_cast_default(*fvec, TOA="String"), Transformation[Vec[float], Vec[str], int, int]
    )
    assert_type(
        dp.t.make_cast_inherent(*svec, TOA="f64"), Transformation[Vec[str], Vec[float], int, int]
    )
    assert_type(dp.t.make_cast_inherent(*svec, TOA=int), Transformation[Vec[str], Never, int, int])
    assert_type(svec >> dp.t.then_cast("i64"), Transformation[Vec[str], Vec[int | None], int, int])
    assert_type(svec >> dp.t.then_cast(str), Transformation[Vec[str], Vec[str | None], int, int])
    assert_type(ivec >> dp.t.then_cast_default(str), Transformation[Vec[int], Vec[str], int, int])
    assert_type(
        svec >> dp.t.then_cast_inherent("f32"), Transformation[Vec[str], Vec[float], int, int]
    )
    dp.t.make_cast_default(*svec, TOA=int) >> dp.t.then_cast(float) >> dp.t.then_sum()  # type: ignore[operator]
    dp.t.make_cast(*fscalar, TOA=int)  # type: ignore[arg-type]

    # new_queryable: a transition of one or two parameters
    def one(query: int) -> str:
        return str(query)

    def two(query: int, is_internal: bool) -> float:
        return 1.0

    assert_type(dp.new_queryable(one), Queryable[int, str])
    assert_type(dp.new_queryable(two), Queryable[int, float])
