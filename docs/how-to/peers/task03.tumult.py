# (3) median and quantiles, Tumult Analytics.
# Written from the public Tumult Analytics documentation (docs.tmlt.dev); not run here
# (Tumult Analytics needs Spark and is not installed).
from pyspark.sql import SparkSession
from tmlt.analytics import AddOneRow, PureDPBudget, QueryBuilder, Session

spark = SparkSession.builder.getOrCreate()
session = Session.from_dataframe(
    privacy_budget=PureDPBudget(1),
    source_id="people",
    dataframe=spark.createDataFrame(df),
    protected_change=AddOneRow(),
)
for q in (0.25, 0.5, 0.75):
    query = QueryBuilder("people").quantile("age", q, low=18, high=90)
    print(session.evaluate(query, PureDPBudget(1 / 3)).collect())
