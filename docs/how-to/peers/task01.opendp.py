# (1) count and histogram of a categorical CSV column, OpenDP 0.16 (vector API).
import opendp.prelude as dp
import pandas as pd

dp.enable_features("contrib")
col = pd.read_csv(path)["marital"].tolist()
space = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
print((space >> dp.t.then_count() >> dp.m.then_laplace(2.0))(col))
hist = space >> dp.t.then_count_by_categories(categories) >> dp.m.then_laplace(2.0)
print(dict(zip(categories, hist(col))))
