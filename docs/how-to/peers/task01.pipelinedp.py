# (1) count and histogram of a categorical CSV column, PipelineDP (DPEngine, local backend).
# Written from PipelineDP's public examples (examples/movie_view_ratings); not run here
# (PipelineDP is not installed).  The row index is the privacy id: one row per person; the
# total is the sum of the per-category counts (post-processing).
import pandas as pd
import pipeline_dp

col = pd.read_csv(path)["marital"]
accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=1.0, total_delta=0.0)
engine = pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend())
params = pipeline_dp.AggregateParams(
    metrics=[pipeline_dp.Metrics.COUNT],
    noise_kind=pipeline_dp.NoiseKind.LAPLACE,
    max_partitions_contributed=1,
    max_contributions_per_partition=1,
)
extractors = pipeline_dp.DataExtractors(
    privacy_id_extractor=lambda row: row[0],
    partition_extractor=lambda row: row[1],
    value_extractor=lambda row: 0,
)
result = engine.aggregate(list(col.items()), params, extractors, public_partitions=categories)
accountant.compute_budgets()
counts = dict(result)
print(sum(c.count for c in counts.values()), counts)
