"""Combinators: chaining, composition and conversion of measures (``dp.c``).

Each family module lists its public names in its ``__all__`` and is re-exported here whole
(``from .x import *`` re-exports exactly ``__all__``, for mypy too), so a new combinator needs
no edit here.  The chaining constructors live in the core and re-export by name.
"""

from ..core import make_chain_mt as make_chain_mt
from ..core import make_chain_pm as make_chain_pm
from ..core import make_chain_tt as make_chain_tt

# isort: split
# -- composition, conversions, amplification, private candidate selection --
from .amplification import *  # noqa: F403
from .composition import *  # noqa: F403
from .conversions import *  # noqa: F403
from .select_private_candidate import *  # noqa: F403

# isort: split
# -- local release, random DP --
from .local import *  # noqa: F403
from .random_dp import *  # noqa: F403

# isort: split
# -- grouped releases: a measurement mapped over the groups of a partition --
from .grouped import *  # noqa: F403
