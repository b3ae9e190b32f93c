# (5) noise scale for a target epsilon, accuracy and a 95% interval, OpenDP 0.16.
import opendp.prelude as dp

dp.enable_features("contrib")
space = dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
scale = dp.binary_search_param(lambda s: space >> dp.t.then_count() >> dp.m.then_laplace(s), 1, 1.0)
accuracy = dp.discrete_laplacian_scale_to_accuracy(scale, alpha=0.05)
release = (space >> dp.t.then_count() >> dp.m.then_laplace(scale))(df["region"].tolist())
print(scale, accuracy, (release - accuracy, release + accuracy))
