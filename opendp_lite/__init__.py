"""opendp_lite: differential privacy with exact samplers, conservative maps and typed chains.

Use it through the OpenDP-style prelude::

    import opendp_lite.prelude as dp
"""

__version__ = "0.1.0"
