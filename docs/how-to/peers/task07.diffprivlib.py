# (7) pick a category with the exponential mechanism, diffprivlib 0.6.6.
from diffprivlib.mechanisms import Exponential

counts = [int((df["marital"] == c).sum()) for c in categories]
print(Exponential(epsilon=1.0, sensitivity=1, utility=counts, candidates=categories).randomise())
