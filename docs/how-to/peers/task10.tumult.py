# (10) DP sum by group over a pandas DataFrame, Tumult Analytics.
# Written from the public Tumult Analytics documentation (docs.tmlt.dev); not run here
# (Tumult Analytics needs Spark and is not installed).
from pyspark.sql import SparkSession
from tmlt.analytics import AddOneRow, KeySet, PureDPBudget, QueryBuilder, Session

spark = SparkSession.builder.getOrCreate()
session = Session.from_dataframe(
    privacy_budget=PureDPBudget(1),
    source_id="people",
    dataframe=spark.createDataFrame(df),
    protected_change=AddOneRow(),
)
keys = KeySet.from_dict({"region": regions})
query = QueryBuilder("people").groupby(keys).sum("income", low=0, high=100_000)
session.evaluate(query, PureDPBudget(1)).show()
