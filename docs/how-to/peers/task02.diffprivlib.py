# (2) mean of a bounded column whose size is private, diffprivlib 0.6.6.
from diffprivlib.tools import mean

print(mean(df["age"], epsilon=1.0, bounds=(18, 90)))
