# (7) pick a category with report noisy max, OpenDP 0.16.
import opendp.prelude as dp

dp.enable_features("contrib")
space = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
counts = space >> dp.t.then_count_by_categories(categories, null_category=False)
scores = dp.vector_domain(dp.atom_domain(T=int)), dp.linf_distance(T=int, monotonic=True)
select = dp.m.make_noisy_max(*scores, dp.max_divergence(), scale=2.0)
print(categories[select(counts(df["marital"].tolist()))])
