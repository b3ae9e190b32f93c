# (3) median and quantiles, diffprivlib 0.6.6.
from diffprivlib.tools import median, quantile

print(median(df["age"], epsilon=0.5, bounds=(18, 90)))
print(quantile(df["age"], [0.25, 0.75], epsilon=0.5, bounds=(18, 90)))
