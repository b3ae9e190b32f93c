# (6) zCDP Gaussian releases converted to (epsilon, delta), OpenDP 0.16.
# diffprivlib has no zCDP accounting (no version of this task there).
import opendp.prelude as dp

dp.enable_features("contrib")
space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
count = space >> dp.t.then_count() >> dp.m.then_gaussian(10.0)
total = space >> dp.t.then_clamp((18.0, 90.0)) >> dp.t.then_sum() >> dp.m.then_gaussian(900.0)
zcdp = dp.c.make_composition([count, total])
approx = dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(zcdp), delta=1e-6)
print(approx.map(1), approx(df["age"].tolist()))
