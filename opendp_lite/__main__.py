"""A short guided tour of opendp_lite: ``python -m opendp_lite``."""

from __future__ import annotations

import sys

from .tour import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
