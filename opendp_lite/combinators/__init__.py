"""Combinators: chaining, composition and conversion of measures (``dp.c``).

Re-exports use ``import x as x`` (explicit re-export for mypy); there is no ``__all__``.
"""

from ..core import make_chain_mt as make_chain_mt
from ..core import make_chain_pm as make_chain_pm
from ..core import make_chain_tt as make_chain_tt

# -- composition, conversions, amplification, private candidate selection (issue 6) --
