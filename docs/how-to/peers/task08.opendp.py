# (8) a local-DP randomized-response survey with debiasing, OpenDP 0.16.
import math

import opendp.prelude as dp

dp.enable_features("contrib")
p = math.exp(1.0) / (1 + math.exp(1.0)) - 1e-12
rr = dp.m.make_randomized_response_bool(prob=p)
share = sum(rr(bool(a)) for a in df["smoker"]) / len(df)
print((share - (1 - p)) / (2 * p - 1))
