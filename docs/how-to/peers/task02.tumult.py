# (2) mean of a bounded column whose size is private, Tumult Analytics.
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
query = QueryBuilder("people").average("age", low=18, high=90)
print(session.evaluate(query, PureDPBudget(1)).collect())
