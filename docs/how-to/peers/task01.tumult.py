# (1) count and histogram of a categorical CSV column, Tumult Analytics.
# Written from the public Tumult Analytics documentation (docs.tmlt.dev); not run here
# (Tumult Analytics needs Spark and is not installed).
from pyspark.sql import SparkSession
from tmlt.analytics import AddOneRow, KeySet, PureDPBudget, QueryBuilder, Session

spark = SparkSession.builder.getOrCreate()
session = Session.from_dataframe(
    privacy_budget=PureDPBudget(1),
    source_id="people",
    dataframe=spark.read.csv(path, header=True),
    protected_change=AddOneRow(),
)
print(session.evaluate(QueryBuilder("people").count(), PureDPBudget(0.5)).collect())
keys = KeySet.from_dict({"marital": categories})
session.evaluate(QueryBuilder("people").groupby(keys).count(), PureDPBudget(0.5)).show()
