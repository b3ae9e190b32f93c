"""Regenerate the documentation's figures: ``python docs/make_figures.py [DIR]``.

The plotting code lives in :func:`opendp_lite.tour.write_figures` (also run by
``python -m opendp_lite --plots DIR``); the committed figures are in ``docs/figures``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from opendp_lite.tour import write_figures

if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("figures")
    for path in write_figures(target):
        print(f"wrote {path}")
