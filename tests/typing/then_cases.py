"""Static typing of a chain through every ``then_*`` partial (checked by ``test_mypy_cases``).

Each partial is derived from its ``make_x`` (``opendp_lite._spine``): ``then(make_x)`` is typed
by ``make_x``'s declaration; a partial whose output depends on the space it follows is typed by
one of the shared patterns (``keep``, ``same``, ``non_null``, ``into``, ``fold``, ``noise``,
``int_noise``, ``release``, ``release_vec``) or a compositor pattern.  ``assert_type`` pins what
mypy infers; a line marked ``# type: ignore[<code>]`` is an ill-typed chain that mypy must reject
(``warn_unused_ignores`` fails the check if it stops rejecting it).  ``Any`` in an expected type
marks a position that the constructor's declaration leaves open (see docs/architecture.md).

``tests/typing/test_then_coverage.py`` fails if a public ``then_*`` has no ``assert_type`` here
or in ``cases.py``.  Nothing here runs: the bodies are functions that are never called.
"""

from __future__ import annotations

import sys
from collections.abc import Hashable, Mapping
from typing import Any

import numpy.typing as npt

import opendp_lite.prelude as dp
from opendp_lite._types import Vec
from opendp_lite.combinators.composition import Odometer
from opendp_lite.core import Measurement, Queryable, Transformation
from opendp_lite.measurements.randomized_response import bitvector_domain
from opendp_lite.measurements.threshold import l01inf_distance, l02inf_distance
from opendp_lite.measurements.two_coin import make_randomized_response_coins
from opendp_lite.metrics import Triple
from opendp_lite.transformations.partition import Partitioned

if sys.version_info >= (3, 11):
    from typing import assert_type
else:  # the declared minimum, 3.10: typing_extensions (a dependency of mypy) has it
    from typing_extensions import assert_type

_T = Transformation
_M = Measurement


def transformations() -> None:
    ivec = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    fvec = dp.vector_domain(dp.atom_domain(bounds=(0.0, 1.0)), size=10), dp.symmetric_distance()
    svec = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
    nanvec = dp.vector_domain(dp.atom_domain(T=float, nan=True)), dp.symmetric_distance()
    optvec = dp.vector_domain(dp.option_domain(dp.atom_domain(T=int))), dp.symmetric_distance()
    il1 = dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int)
    fscalar = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    iscalar = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    ints = ivec >> dp.t.then_resize(4, 0)

    # keep: a vector of the same element type, same distance type (space form and chained)
    assert_type(ivec >> dp.t.then_resize(4, 0), _T[Vec[int], Vec[int], int, int])
    assert_type(ivec >> dp.t.then_unordered(), _T[Vec[int], Vec[int], int, int])
    assert_type(ints >> dp.t.then_ordered_random(), _T[Vec[int], Vec[int], int, int])
    assert_type(ivec >> dp.t.then_metric_bounded(), _T[Vec[int], Vec[int], int, int])
    assert_type(ints >> dp.t.then_metric_unbounded(), _T[Vec[int], Vec[int], int, int])
    assert_type(il1 >> dp.t.then_b_ary_tree(5, 2), _T[Vec[int], Vec[int], int, int])
    assert_type(
        nanvec >> dp.t.then_impute_uniform_float((0.0, 1.0)),
        _T[Vec[float], Vec[float], int, int],
    )
    # same: the identity on any space
    assert_type(iscalar >> dp.t.then_identity(), _T[int, int, int, int])
    assert_type(ints >> dp.t.then_identity(), _T[Vec[int], Vec[int], int, int])
    # non_null: Option<E> -> E; a float vector with NaN stays float
    assert_type(optvec >> dp.t.then_drop_null(), _T[Vec[int | None], Vec[int], int, int])
    assert_type(nanvec >> dp.t.then_drop_null(), _T[Vec[float], Vec[float], int, int])
    assert_type(optvec >> dp.t.then_impute_constant(0), _T[Vec[int | None], Vec[int], int, int])
    assert_type(nanvec >> dp.t.then_impute_constant(0.0), _T[Vec[float], Vec[float], int, int])
    # into: the output type is make_x's declared one (Any where make_x declares none)
    assert_type(svec >> dp.t.then_cast(int), _T[Vec[str], Vec[int | None], int, int])
    assert_type(
        svec >> dp.t.then_cast("f64") >> dp.t.then_drop_null(),
        _T[Vec[str], Vec[float], int, int],
    )
    assert_type(svec >> dp.t.then_cast_inherent(float), _T[Vec[str], Vec[float], int, int])
    assert_type(
        svec >> dp.t.then_cast_default(float) >> dp.t.then_sum_of_squared_deviations(),
        _T[Vec[str], float, int, float],
    )
    assert_type(ivec >> dp.t.then_count_distinct(), _T[Vec[int], int, int, int])
    assert_type(ivec >> dp.t.then_count_distinct(float), _T[Vec[int], float, int, float])
    assert_type(svec >> dp.t.then_count_by(), _T[Vec[str], Any, int, Any])
    assert_type(svec >> dp.t.then_count_by_categories(["a"]), _T[Vec[str], Vec[int], int, int])
    assert_type(
        svec >> dp.t.then_count_by_categories(["a"], TOA=float), _T[Vec[str], Vec[float], int, Any]
    )
    assert_type(svec >> dp.t.then_find(["a"]), _T[Vec[str], Vec[int | None], int, int])
    assert_type(ints >> dp.t.then_find_bin([0, 10]), _T[Vec[int], Vec[int], int, int])
    assert_type(ivec >> dp.t.then_index(["a", "b"], "c"), _T[Vec[int], Vec[str], int, int])
    assert_type(ivec >> dp.t.then_index([1.5], 0.0, TOA=float), _T[Vec[int], Vec[float], int, int])
    assert_type(svec >> dp.t.then_is_equal("a"), _T[Vec[str], Vec[bool], int, int])
    assert_type(nanvec >> dp.t.then_is_null(), _T[Vec[float], Vec[bool], int, int])
    assert_type(
        fvec >> dp.t.then_quantile_score_candidates([0.0, 1.0], 0.5),
        _T[Vec[float], Vec[int], int, int],
    )
    assert_type(fvec >> dp.t.then_sum_of_squared_deviations(), _T[Vec[float], float, int, float])
    assert_type(fvec >> dp.t.then_variance(), _T[Vec[float], float, int, float])
    assert_type(
        fvec >> dp.t.then_clamp((0.0, 1.0)) >> dp.t.then_variance(),
        _T[Vec[float], float, int, float],
    )
    # then: fixed by make_x's declaration
    assert_type(
        fscalar >> dp.t.then_lipschitz_float_mul(2.0, (0.0, 1.0)), _T[float, float, float, float]
    )
    # then: a dataframe in (filtered, partitioned), per-group vectors out
    frame = dp.dataframe_domain(), dp.symmetric_distance()
    adults = frame >> dp.t.then_filter_rows("age", ">=", 18)
    assert_type(
        frame >> dp.t.then_filter_rows("age", ">=", 18),
        _T[Mapping[Any, Any], Mapping[Any, Any], int, int],
    )
    part = adults >> dp.t.then_partition_by("g", keys=["a", "b"])
    assert_type(part, _T[Mapping[Any, Any], Partitioned, int, Triple])
    assert_type(
        part >> dp.t.then_grouped_count(), _T[Mapping[Any, Any], Vec[int], int, int | float]
    )
    assert_type(
        frame >> dp.t.then_partition_by("g", keys=["a"]) >> dp.t.then_grouped_sum("x", (0.0, 1.0)),
        _T[Mapping[Any, Any], Vec[float], int, float],
    )
    # then: individuals (all rows of an identifier) in, rows or counts per individual out
    people = dp.dataframe_domain(), dp.symmetric_id_distance("pid")
    assert_type(
        people >> dp.t.then_truncate_per_id(5), _T[Mapping[Any, Any], Mapping[Any, Any], int, int]
    )
    assert_type(
        people >> dp.t.then_truncate_num_groups("g", 2),
        _T[Mapping[Any, Any], Mapping[Any, Any], int, int],
    )
    assert_type(people >> dp.t.then_count_per_id(), _T[Mapping[Any, Any], Vec[int], int, int])


def measurements() -> None:
    ivec = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    fvec = dp.vector_domain(dp.atom_domain(bounds=(0.0, 1.0)), size=10), dp.symmetric_distance()
    ilinf = dp.vector_domain(dp.atom_domain(T=int)), dp.linf_distance(T=int)
    flinf = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float)
    fscalar = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    iscalar = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    keys = dp.atom_domain(T=str)
    counts = dp.map_domain(keys, dp.atom_domain(T=int))
    m01 = counts, l01inf_distance(dp.absolute_distance(T=int))
    m02 = counts, l02inf_distance(dp.absolute_distance(T=int))
    ml1 = counts, dp.l1_distance(T=int)
    bits = bitvector_domain(max_weight=4), dp.discrete_distance()

    # noise / int_noise: the carrier is kept; the integer-only mechanisms refuse floats
    assert_type(fscalar >> dp.m.then_base_laplace(1.0), _M[float, float, float, float])
    assert_type(iscalar >> dp.m.then_base_laplace(1.0), _M[int, int, int, float])
    assert_type(iscalar >> dp.m.then_base_discrete_gaussian(1.0), _M[int, int, int, float])
    assert_type(
        ivec >> dp.t.then_count() >> dp.m.then_base_discrete_gaussian(1.0),
        _M[Vec[int], int, int, float],
    )
    # then: fixed by make_x's declaration
    assert_type(
        fscalar >> dp.m.then_canonical_noise(1.0, (1.0, 0.0)),
        _M[float, float, float, tuple[float, float]],
    )
    assert_type(
        fvec >> dp.t.then_mean() >> dp.m.then_canonical_noise(1.0, (1.0, 0.0)),
        _M[Vec[float], float, int, tuple[float, float]],
    )
    assert_type(bits >> dp.m.then_randomized_response_bitvec(0.9), _M[bytes, bytes, int, float])
    fcounts = dp.map_domain(keys, dp.atom_domain(T=float, nan=False))
    assert_type(
        (fcounts, l01inf_distance(dp.absolute_distance(T=float)))
        >> dp.m.then_laplace_threshold(1.0, 5.0),
        _M[Mapping[str, float], dict[str, float], tuple[int, Any, Any], tuple[float, float]],
    )
    # release / release_vec: the input from the space, the release and loss from make_x
    assert_type(
        ivec >> dp.m.then_exponential(range(10), lambda d, c: 0.0, 1, 1.0),
        _M[Vec[int], int, int, float],
    )
    assert_type(
        ilinf >> dp.m.then_noisy_max(dp.max_divergence(), 1.0), _M[Vec[int], int, int, float]
    )
    assert_type(
        ilinf >> dp.m.then_noisy_top_k(dp.max_divergence(), 2, 1.0),
        _M[Vec[int], list[int], int, float],
    )
    assert_type(flinf >> dp.m.then_report_noisy_max_gumbel(1.0), _M[Vec[float], int, float, float])
    assert_type(
        fvec >> dp.m.then_private_quantile(dp.max_divergence(), [0.0, 1.0], 0.5, 1.0),
        _M[Vec[float], float, int, float],
    )
    assert_type(
        fvec
        >> dp.t.then_quantile_score_candidates([0.0, 1.0], 0.5)
        >> dp.m.then_noisy_max(dp.max_divergence(), 1.0),
        _M[Vec[float], int, int, float],
    )
    assert_type(
        ml1 >> dp.m.then_alp_queryable(0.5, 50, 10),
        _M[Mapping[str, int], Queryable[str, float], int, float],
    )
    assert_type(
        m01 >> dp.m.then_laplace_threshold(3.0, 12),
        _M[Mapping[str, int], dict[str, int], tuple[int, Any, Any], tuple[float, float]],
    )
    assert_type(
        m02 >> dp.m.then_gaussian_threshold(3.0, 12),
        _M[Mapping[str, int], dict[str, int], tuple[int, Any, Any], tuple[float, float]],
    )
    # noise: the distribution chosen by the measure, the carrier kept as by laplace/gaussian
    assert_type(iscalar >> dp.m.then_noise(dp.max_divergence(), 1.0), _M[int, int, int, float])
    assert_type(
        fscalar >> dp.m.then_noise(dp.zero_concentrated_divergence(), 1.0),
        _M[float, float, float, float],
    )
    # keyed: the values' type flows through (int and float maps)
    assert_type(
        m01 >> dp.m.then_noise_threshold(dp.approximate(dp.max_divergence()), 3.0, 12),
        _M[Mapping[str, int], dict[str, int], tuple[int, Any, Any], tuple[float, float]],
    )
    assert_type(
        (fcounts, l02inf_distance(dp.absolute_distance(T=float)))
        >> dp.m.then_noise_threshold(dp.approximate(dp.zero_concentrated_divergence()), 3.0, 12.0),
        _M[Mapping[str, float], dict[str, float], tuple[int, Any, Any], tuple[float, float]],
    )
    # the makes declare the value type too (a float map releases floats)
    assert_type(
        dp.m.make_laplace_threshold(
            fcounts, l01inf_distance(dp.absolute_distance(T=float)), 1.0, 5.0
        ),
        _M[Mapping[str, float], dict[str, float], tuple[int, Any, Any], tuple[float, float]],
    )
    assert_type(
        dp.m.make_gaussian_threshold(*m02, 3.0, 12),
        _M[Mapping[str, int], dict[str, int], tuple[int, Any, Any], tuple[float, float]],
    )

    # release: a user's measurement, its release and loss from its function and map
    def label(x: int) -> str:
        return str(x)

    def eps(d: int) -> float:
        return float(d)

    assert_type(
        iscalar >> dp.m.then_user_measurement(dp.max_divergence(), label, eps),
        _M[int, str, int, float],
    )
    assert_type(
        ivec >> dp.t.then_count() >> dp.m.then_user_measurement(dp.max_divergence(), label, eps),
        _M[Vec[int], str, int, float],
    )
    assert_type(
        ivec >> dp.m.then_sparse_vector(1, 10, 0.0, 1.0, 1.0),
        _M[Vec[int], Queryable[Transformation[Vec[int], int, int, int], bool], int, float],
    )


def combinators() -> None:
    fscalar = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    bvec = dp.vector_domain(dp.atom_domain(T=bool)), dp.hamming_distance()
    fvec = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    clamp = fvec >> dp.t.then_clamp((0.0, 1.0))

    assert_type(
        bvec >> dp.c.then_local_release(make_randomized_response_coins()),
        _M[Vec[bool], npt.NDArray[Any], int, float],
    )
    assert_type(
        dp.c.make_local_release(*bvec, make_randomized_response_coins()),
        _M[Vec[bool], npt.NDArray[Any], int, float],
    )
    dp.c.make_local_release(*fvec, make_randomized_response_coins())  # type: ignore[misc]
    assert_type(
        fscalar >> dp.c.then_sequential_composition(dp.max_divergence(), 1.0, [0.5]),
        _M[float, Queryable[_M[float, Any, float, float], Any], float, float],
    )
    assert_type(
        clamp >> dp.c.then_sequential_composition(dp.zero_concentrated_divergence(), 1, [0.5]),
        _M[Vec[float], Queryable[_M[Vec[float], Any, int, float], Any], int, float],
    )
    assert_type(
        fscalar >> dp.c.then_adaptive_composition(dp.max_divergence(), 1.0, [0.5]),
        _M[float, Queryable[_M[float, Any, float, float], Any], float, float],
    )
    assert_type(
        fscalar >> dp.c.then_fully_adaptive_composition(dp.max_divergence()),
        Odometer[float, float, float],
    )
    # grouped: the inner release per group; its loss (public keys) or (ε, δ) (private keys)
    frame = dp.dataframe_domain(), dp.symmetric_distance()
    count = dp.t.make_select_column("x", TOA=float) >> dp.t.then_count()
    inner = count >> dp.m.then_laplace(1.0)
    assert_type(
        frame >> dp.t.then_partition_by("g", keys=["a"]) >> dp.c.then_grouped(inner),
        _M[Mapping[Any, Any], dict[Hashable, int], int, float],
    )
    assert_type(
        frame >> dp.t.then_partition_by("g") >> dp.c.then_grouped(inner, 10, 1.0),
        _M[Mapping[Any, Any], dict[Hashable, int], int, tuple[float, float]],
    )


def invalid_chains() -> None:
    """Each line is an ill-typed chain through a pattern; mypy must reject it."""
    ivec = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    fscalar = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    iscalar = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    ilinf = dp.vector_domain(dp.atom_domain(T=int)), dp.linf_distance(T=int)
    fsum = ivec >> dp.t.then_cast_default(float) >> dp.t.then_clamp((0.0, 1.0)) >> dp.t.then_sum()
    bits = bitvector_domain(max_weight=4), dp.discrete_distance()

    # keep / into / non_null / release_vec need a vector: a scalar space or a scalar aggregate
    fscalar >> dp.t.then_resize(4, 0.0)  # type: ignore[operator]
    fsum >> dp.t.then_unordered()  # type: ignore[operator]
    fscalar >> dp.t.then_is_null()  # type: ignore[operator]
    fsum >> dp.t.then_count_distinct()  # type: ignore[operator]
    fscalar >> dp.m.then_noisy_max(dp.max_divergence(), 1.0)  # type: ignore[operator]
    fsum >> dp.m.then_private_quantile(dp.max_divergence(), [0.0], 0.5, 1.0)  # type: ignore[operator]

    # pick: the release is one element (an int here), not a vector, nor a float
    def first(v: list[int]) -> int:
        return v[0]

    def halve(x: float) -> float:
        return x / 2

    q = ivec >> dp.m.then_private_quantile(dp.max_divergence(), [0, 1], 0.5, 1.0)
    q >> first  # type: ignore[operator]
    qf = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    (qf >> dp.m.then_private_quantile(dp.max_divergence(), [0.0], 0.5, 1.0)) >> halve
    (qf >> dp.m.then_private_quantile(dp.max_divergence(), [0.0], 0.5, 1.0)) >> first  # type: ignore[operator]
    # keyed / key_queries need a map; the sparse vector's queries are on the space it follows
    ivec >> dp.m.then_laplace_threshold(1.0, 5)  # type: ignore[operator]
    ivec >> dp.m.then_alp_queryable(0.5, 50, 10)  # type: ignore[operator]
    fl1 = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int)), dp.l1_distance(T=int)
    (fl1 >> dp.m.then_alp_queryable(0.5, 50, 10))({"a": 1})(3)  # type: ignore[arg-type]
    svt = ivec >> dp.m.then_sparse_vector(1, 10, 0.0, 1.0, 1.0)
    fv = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    svt([1])(dp.t.make_count(*ivec))
    svt([1])(dp.t.make_count(*fv))  # type: ignore[arg-type]
    # a filter and a partition need a dataframe; the per-group aggregates a partition
    frame = dp.dataframe_domain(), dp.symmetric_distance()
    ivec >> dp.t.then_filter_rows("a", "==", 1)  # type: ignore[operator]
    ivec >> dp.t.then_partition_by("g", keys=["a"])  # type: ignore[operator]
    frame >> dp.t.then_grouped_count()  # type: ignore[operator]
    # grouped: the inner measurement works on one group's rows (an integer distance)
    flap = dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), 1.0)
    dp.c.then_grouped(flap)  # type: ignore[arg-type]
    # noise: no noise on strings; the threshold mechanisms need a map
    svec = dp.vector_domain(dp.atom_domain(T=str)), dp.l1_distance(T=int)
    svec >> dp.m.then_noise(dp.max_divergence(), 1.0)  # type: ignore[operator]
    ivec >> dp.m.then_noise_threshold(dp.approximate(dp.max_divergence()), 1.0, 5)  # type: ignore[operator]
    # a declared cast flows on: optional ints are not clamped as floats, strings not counted
    (svec >> dp.t.then_cast(int)) >> dp.t.then_clamp((0.0, 1.0))  # type: ignore[operator]
    cats = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
    (cats >> dp.t.then_index(["a"], "b")) >> dp.t.then_sum()  # type: ignore[operator]
    # non_null: nothing to drop from a vector of plain ints
    ivec >> dp.t.then_drop_null()  # type: ignore[operator]
    # then: the carrier fixed by make_x (float-only Lipschitz map, float canonical noise, bytes)
    iscalar >> dp.t.then_lipschitz_float_mul(2.0, (0.0, 1.0))  # type: ignore[operator]
    iscalar >> dp.m.then_canonical_noise(1.0, (1.0, 0.0))  # type: ignore[operator]
    ivec >> dp.m.then_randomized_response_bitvec(0.9)  # type: ignore[operator]
    # the partial's type keeps flowing: a float after lipschitz cannot feed the integer noise
    lip = fscalar >> dp.t.then_lipschitz_float_mul(2.0, (0.0, 1.0))
    lip >> dp.m.then_base_discrete_gaussian(1.0)  # type: ignore[operator]
    # a measurement after a measurement, then_* form
    (ilinf >> dp.m.then_noisy_max(dp.max_divergence(), 1.0)) >> dp.m.then_laplace(1.0)  # type: ignore[operator]
    rr = bits >> dp.m.then_randomized_response_bitvec(0.9)
    rr >> dp.m.then_noisy_max(dp.max_divergence(), 1.0)  # type: ignore[operator]
    # a declared output flows on: a vector of bools (is_null) is not summed as floats
    null = ivec >> dp.t.then_cast(float) >> dp.t.then_is_null()
    null >> dp.t.then_clamp((0.0, 1.0))  # type: ignore[operator]
    # a partial after a partial: only a built transformation or a space can come first
    dp.t.then_clamp((0, 1)) >> dp.t.then_identity()  # type: ignore[operator]
    # an odometer after a transformation (as in OpenDP, run time: TypeError)
    fsum >> dp.c.then_fully_adaptive_composition(dp.max_divergence())  # type: ignore[operator]
