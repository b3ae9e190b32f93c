"""Combinators: chaining, composition and conversion of measures (``dp.c``)."""

from ..core import make_chain_mt, make_chain_pm, make_chain_tt

__all__ = ["make_chain_mt", "make_chain_pm", "make_chain_tt"]
