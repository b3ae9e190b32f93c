# (10) DP sum by group over a pandas DataFrame, PipelineDP (DPEngine on the local backend).
# Written from PipelineDP's public examples (examples/movie_view_ratings); not run here
# (PipelineDP is not installed).  The row index is the privacy id: one row per person.
import pipeline_dp

accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=1.0, total_delta=0.0)
engine = pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend())
params = pipeline_dp.AggregateParams(
    metrics=[pipeline_dp.Metrics.SUM],
    noise_kind=pipeline_dp.NoiseKind.LAPLACE,
    max_partitions_contributed=1,
    max_contributions_per_partition=1,
    min_value=0.0,
    max_value=100_000.0,
)
extractors = pipeline_dp.DataExtractors(
    privacy_id_extractor=lambda row: row[0],
    partition_extractor=lambda row: row[1],
    value_extractor=lambda row: row[2],
)
rows = list(df[["region", "income"]].itertuples())
result = engine.aggregate(rows, params, extractors, public_partitions=regions)
accountant.compute_budgets()
print(dict(result))
