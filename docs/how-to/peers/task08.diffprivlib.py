# (8) a local-DP randomized-response survey with debiasing, diffprivlib 0.6.6.
import math

from diffprivlib.mechanisms import Binary

binary = Binary(epsilon=1.0, value0="0", value1="1")
share = sum(binary.randomise(str(int(a))) == "1" for a in df["smoker"]) / len(df)
p = math.exp(1.0) / (1 + math.exp(1.0))
print((share - (1 - p)) / (2 * p - 1))
