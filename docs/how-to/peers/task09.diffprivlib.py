# (9) a DP linear regression in scikit-learn style, diffprivlib 0.6.6.
from diffprivlib.models import LinearRegression

model = LinearRegression(epsilon=1.0, bounds_X=(18, 90), bounds_y=(0, 100_000))
model.fit(df[["age"]], df["income"])
print(model.coef_, model.intercept_)
