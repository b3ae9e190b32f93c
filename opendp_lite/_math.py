"""Float special functions used to choose parameters (never to compute a map: maps go through
:mod:`opendp_lite._arith`).
"""

import math

from .errors import InvalidParameter


def lambert_w_minus1(x: float) -> float:
    """The lower real branch W₋₁(x) for x in [−1/e, 0), by Halley's iteration (float).

    >>> w = lambert_w_minus1(-0.1)
    >>> abs(w * math.exp(w) + 0.1) < 1e-15
    True
    """
    if not (-1 / math.e <= x < 0):
        raise InvalidParameter(f"W_-1 is real on [-1/e, 0), got {x!r}")
    if x == -1 / math.e:
        return -1.0
    # start below the branch point: ln(−x) − ln(−ln(−x)) for small |x|, a series near −1/e
    if x < -0.25:
        p = -math.sqrt(2 * (1 + math.e * x))
        w = -1 + p - p * p / 3
    else:
        lx = math.log(-x)
        w = lx - math.log(-lx)
    for _ in range(100):
        ew = math.exp(w)
        f = w * ew - x
        denom = ew * (w + 1) - (w + 2) * f / (2 * w + 2)
        if denom == 0:
            break
        step = f / denom
        w -= step
        if abs(step) <= 1e-15 * abs(w):
            break
    return w
