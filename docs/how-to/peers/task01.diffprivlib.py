# (1) count and histogram of a categorical CSV column, diffprivlib 0.6.6.
# diffprivlib's histogram is numeric only, so each category's count gets its own mechanism
# (a person is in one category: the counts compose in parallel).
import pandas as pd
from diffprivlib.mechanisms import Geometric

col = pd.read_csv(path)["marital"]
geometric = Geometric(epsilon=0.5, sensitivity=1)
print(geometric.randomise(len(col)))
print({c: geometric.randomise(int((col == c).sum())) for c in categories})
