# (3) median and quantiles, OpenDP 0.16.
import opendp.prelude as dp

dp.enable_features("contrib")
space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
candidates = [float(c) for c in range(18, 91)]
quantiles = [
    space >> dp.m.then_private_quantile(dp.max_divergence(), candidates, a, scale=3.0)
    for a in (0.25, 0.5, 0.75)
]
print(dp.c.make_composition(quantiles)(df["age"].tolist()))
