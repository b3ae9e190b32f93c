# (4) several queries under one budget, showing what remains, Tumult Analytics.
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
mean = QueryBuilder("people").average("age", low=18, high=90)
print(session.evaluate(mean, PureDPBudget(0.5)).collect())
print(session.evaluate(QueryBuilder("people").count(), PureDPBudget(0.25)).collect())
print(session.remaining_privacy_budget)
