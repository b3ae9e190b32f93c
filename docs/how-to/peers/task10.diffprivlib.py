# (10) DP sum by group over a pandas DataFrame, diffprivlib 0.6.6: public region keys, one row
# per person, so the per-region sums compose in parallel (the user's argument, not checked).
from diffprivlib.tools import sum as dp_sum

print({r: dp_sum(df.income[df.region == r], epsilon=1.0, bounds=(0, 100_000)) for r in regions})
