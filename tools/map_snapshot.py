"""A snapshot of ``.map()`` grids and seeded releases of the measurements that compute in exact
rationals, one JSON line per case, for checking that a refactor changes no value::

    PYTHONPATH=. python -m tools.map_snapshot > before.jsonl   # on the old code
    PYTHONPATH=. python -m tools.map_snapshot > after.jsonl    # on the new code
    diff before.jsonl after.jsonl

Releases use scripted randomness (not private: testing only).
"""

import json
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

import opendp_lite.prelude as dp
from opendp_lite.measurements import two_coin
from opendp_lite.measurements.randomized_response import bitvector_domain
from opendp_lite.measurements.threshold import l01inf_distance
from opendp_lite.samplers import rng
from opendp_lite.transformations.user import make_user_transformation

warnings.simplefilter("ignore")
dp.enable_features("honest-but-curious", "contrib", "floating-point")
out: list[Any] = []


def rec(name: str, m: Any, ds: Sequence[Any], inputs: Sequence[Any]) -> None:
    maps = []
    for d in ds:
        try:
            maps.append(repr(m.map(d)))
        except Exception as e:
            maps.append(type(e).__name__)
    runs = []
    for i, x in enumerate(inputs):
        for s in range(3):
            with rng.scripted_randomness(seed=f"{name}{i}{s}".encode()):
                try:
                    r = m(x)
                    r = r if not callable(r) else "queryable"
                    runs.append(repr(r))
                except Exception as e:
                    runs.append(type(e).__name__ + str(e))
    print(json.dumps([name, maps, runs]))


ints = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
floats = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
T: Any  # a carrier: int/float types here, names ("i32", "f64") further down
sp: tuple[Any, Any]
xs: list[Any]
for scale in (0.0, 0.3, 1.0, 7.5):
    for meas in (dp.max_divergence(), dp.zero_concentrated_divergence()):
        for T in (int, float):
            sp = dp.vector_domain(dp.atom_domain(T=T, nan=False)), dp.linf_distance(T=T)
            xs = [
                np.array([1, 5, 3, 5], dtype=np.int32 if T is int else float),
                [1, 5, 3, 5],
                [T(2)],
            ]
            rec(
                f"noisy_max{scale}{meas}{T}",
                dp.m.make_noisy_max(*sp, meas, scale=scale),
                [0, 1, 2, 3.5] if T is float else [0, 1, 2, 3],
                xs,
            )
            rec(
                f"noisy_top_k{scale}{meas}{T}",
                dp.m.make_noisy_top_k(*sp, meas, k=2, scale=scale, negate=True),
                [0, 1, 2],
                xs[:2],
            )
        sp = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float)
    if scale > 0:
        rec(
            f"gumbel{scale}",
            dp.m.make_report_noisy_max_gumbel(*sp, scale=scale),
            [0, 1, 2.5],
            [[1.0, 2.0, 0.5], np.array([3.0, 3.0])],
        )
    for alpha in (0.0, 0.1, 0.5, 0.9, 1.0):
        for meas in (dp.max_divergence(), dp.zero_concentrated_divergence()):
            qcases: tuple[tuple[tuple[Any, Any], list[Any], list[Any]], ...] = (
                (ints, [0, 25, 50, 75, 100], [list(range(101)), [3, 3, 3]]),
                (floats, [0.0, 0.5, 2.5], [[0.1, 0.2, 3.0], []]),
            )
            for sp, cands, xs in qcases:
                rec(
                    f"quantile{scale}{alpha}{meas}",
                    dp.m.make_private_quantile(*sp, meas, cands, alpha=alpha, scale=scale),
                    [0, 1, 2, 5],
                    xs,
                )
    if scale > 0:
        kws: tuple[dict[str, Any], ...] = ({"scale": scale}, {"epsilon": scale})
        for kw in kws:
            rec(
                f"exp{scale}{kw}",
                dp.m.make_exponential(
                    *ints, list(range(5)), lambda x, c: float(-abs(sum(x) - c)), sensitivity=1, **kw
                ),
                [0, 1, 2],
                [[1, 2], [4], []],
            )
        rec(
            f"alp{scale}",
            dp.m.make_alp_queryable(
                dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int)),
                dp.l1_distance(T=int),
                scale=scale,
                total_limit=20,
                value_limit=10,
            ),
            [0, 1, 3],
            [{"a": 3, "b": 9}],
        )
        mapsp = (
            dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int)),
            l01inf_distance(dp.absolute_distance(T=int)),
        )
        fmapsp = (
            dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=float, nan=False)),
            l01inf_distance(dp.absolute_distance(T=float)),
        )
        fmapsp2 = (
            dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=float, nan=False)),
            dp.l02inf_distance(dp.absolute_distance(T=float))
            if hasattr(dp, "l02inf_distance")
            else None,
        )
        for thr in (3, 10, 25.5):
            if isinstance(thr, int):
                rec(
                    f"lthr{scale}{thr}",
                    dp.m.make_laplace_threshold(*mapsp, scale=scale, threshold=thr),
                    [(1, 1, 1), (2, 3, 3), (1, 5, 5)],
                    [{"a": 100, "b": 4, "c": 12}],
                )
            for k in (None, -10, 2):
                rec(
                    f"lthrf{scale}{thr}{k}",
                    dp.m.make_laplace_threshold(*fmapsp, scale=scale, threshold=float(thr), k=k),
                    [(1, 1.0, 1.0), (2, 2.5, 3.0)],
                    [{"a": 100.0, "b": 4.2, "c": 12.5}],
                )
        from opendp_lite.measurements.threshold import L0PInfDistance
        from opendp_lite.metrics import AbsoluteDistance

        for T in ("i32", "f64"):
            sp2 = (
                dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=T, nan=False)),
                L0PInfDistance(AbsoluteDistance(T), 2),
            )
            for thr in (3, 12):
                rec(
                    f"gthr{scale}{thr}{T}",
                    dp.m.make_gaussian_threshold(
                        *sp2, scale=scale, threshold=thr if T == "i32" else float(thr)
                    ),
                    [
                        (1, 1, 1) if T == "i32" else (1, 1.0, 1.0),
                        (2, 3, 3) if T == "i32" else (2, 3.0, 3.0),
                    ],
                    [{"a": 100, "b": 4, "c": 12} if T == "i32" else {"a": 100.0, "b": 4.0}],
                )

        def count_above(c: int) -> Any:
            def above(x: Any) -> int:
                return int((x > c).sum())

            return make_user_transformation(
                *ints,
                dp.atom_domain(T=int),
                dp.absolute_distance(T=int),
                above,
                lambda dist: dist,
            )

        for thr in (5, 50):
            svt = dp.m.make_sparse_vector(
                *ints,
                d_in=1,
                query_sensitivity=1,
                threshold=thr,
                threshold_scale=scale,
                query_scale=2 * scale,
                max_positives=2,
            )
            maps = []
            for d in (0, 1, 2):
                try:
                    maps.append(repr(svt.map(d)))
                except Exception as e:
                    maps.append(type(e).__name__)
            runs = []
            for s in range(4):
                with rng.scripted_randomness(seed=f"svt{scale}{thr}{s}".encode()):
                    qbl = svt(list(range(100)))
                    res: list[Any] = []
                    for c in (90, 60, 20, 1, 0):
                        try:
                            res.append(qbl(count_above(c)))
                        except Exception as e:
                            res.append(type(e).__name__)
                    runs.append(repr(res))
            print(json.dumps([f"svt{scale}{thr}", maps, runs]))
for prob in (0.5, 0.51, 0.75, 0.9, 1.0):
    for ct in (False, True):
        try:
            rec(
                f"rrbool{prob}{ct}",
                dp.m.make_randomized_response_bool(prob, constant_time=ct),
                [0, 1, 2],
                [True, False],
            )
        except Exception as e:
            print(json.dumps(["rrbool", prob, type(e).__name__, str(e)]))
    for cats in (["a", "b", "c"], [1, 2]):
        try:
            rec(
                f"rr{prob}{cats}",
                dp.m.make_randomized_response(cats, prob),
                [0, 1],
                [cats[0], cats[-1]],
            )
        except Exception as e:
            print(json.dumps(["rr", prob, type(e).__name__]))
for f in (0.01, 0.5, 1.0, 1.5):
    try:
        rec(
            f"rrbv{f}",
            dp.m.make_randomized_response_bitvec(
                bitvector_domain(max_weight=4), dp.discrete_distance(), f=f
            ),
            [0, 1],
            [bytes([0, 8, 12])],
        )
    except Exception as e:
        print(json.dumps(["rrbv", f, type(e).__name__, str(e)]))
for a in (0.0, 0.3, 0.5, 0.9, 1.0):
    for b in (0.0, 0.25, 0.5, 1.0):
        try:
            rec(f"coins{a}{b}", dp.m.make_randomized_response_coins(a, b), [0, 1, 2], [True, False])
        except Exception as e:
            print(json.dumps(["coins", a, b, type(e).__name__, str(e)]))
for eps in (0.0, 0.1, 1.0, 3.0):
    print(json.dumps(["coins_from_eps", eps, repr(two_coin.coins_from_epsilon(eps))]))
    for a, b in ((0.5, 0.5), (0.3, 0.9), (0.99, 0.01)):
        print(
            json.dumps(
                [
                    "eps_two_coin",
                    a,
                    b,
                    repr(two_coin.epsilon_two_coin(a, b)),
                    repr(two_coin.debias_two_coin(0.4, a, b)),
                ]
            )
        )
for _name in dir(two_coin):
    pass
sp = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
for d_in, d_out in ((1.0, (1.0, 1e-6)), (2.0, (0.5, 0.0)), (0.5, (2.0, 0.1))):
    rec(
        f"cnd{d_in}{d_out}",
        dp.m.make_canonical_noise(*sp, d_in=d_in, d_out=d_out),
        [0.0, 0.5, d_in],
        [0.0, 3.25, -1e10],
    )
