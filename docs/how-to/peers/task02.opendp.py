# (2) mean of a bounded column whose size is private, OpenDP 0.16: a noisy sum and a noisy
# count composed (then_mean needs a known size).
import opendp.prelude as dp

dp.enable_features("contrib")
space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
total = space >> dp.t.then_clamp((18.0, 90.0)) >> dp.t.then_sum() >> dp.m.then_laplace(180.0)
count = space >> dp.t.then_count() >> dp.m.then_laplace(2.0)
s, n = dp.c.make_composition([total, count])(df["age"].tolist())
print(s / n)
