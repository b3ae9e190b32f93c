import os
import tempfile

import numpy as np
import pandas as pd

n = 2_000
i = np.arange(n)
categories = ["Married-civ-spouse", "Never-married", "Divorced", "Widowed"]
regions = ["north", "south", "east", "west"]
df = pd.DataFrame(
    {
        "age": (18 + (i * 37) % 73).astype(float),
        "income": ((i * 7_919) % 100_000).astype(float),
        "region": np.array(regions)[(i * 7) % 4],
        "marital": np.array(categories)[np.minimum((i * 13) % 10, 9) // 3],
        "smoker": (i * 11) % 10 < 3,
    }
)
path = os.path.join(tempfile.mkdtemp(), "people.csv")
df.to_csv(path, index=False)
