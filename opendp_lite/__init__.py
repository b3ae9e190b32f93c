"""opendp_lite: differential privacy with exact samplers, conservative maps and typed chains.

Use it through the OpenDP-style prelude::

    import opendp_lite.prelude as dp
"""

__version__ = "0.1.0"

# Records the constructor call on everything built from now on, so that ``dp.serialize`` can
# write it (see opendp_lite/serialization.py); it must run before any constructor is imported.
from . import serialization as _serialization  # noqa: F401
