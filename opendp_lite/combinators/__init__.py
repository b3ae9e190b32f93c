"""Combinators: chaining, composition and conversion of measures (``dp.c``).

Re-exports use ``import x as x`` (explicit re-export for mypy); there is no ``__all__``.
"""

from ..core import make_chain_mt as make_chain_mt
from ..core import make_chain_pm as make_chain_pm
from ..core import make_chain_tt as make_chain_tt

# -- composition, conversions, amplification, private candidate selection (issue 6) --
from .amplification import make_population_amplification as make_population_amplification
from .composition import BudgetExceeded as BudgetExceeded
from .composition import Odometer as Odometer
from .composition import OdometerQueryable as OdometerQueryable
from .composition import make_adaptive_composition as make_adaptive_composition
from .composition import make_basic_composition as make_basic_composition
from .composition import make_composition as make_composition
from .composition import make_fully_adaptive_composition as make_fully_adaptive_composition
from .composition import make_privacy_filter as make_privacy_filter
from .composition import make_sequential_composition as make_sequential_composition
from .composition import then_adaptive_composition as then_adaptive_composition
from .composition import then_fully_adaptive_composition as then_fully_adaptive_composition
from .composition import then_sequential_composition as then_sequential_composition
from .conversions import make_approximate as make_approximate
from .conversions import make_fix_delta as make_fix_delta
from .conversions import make_fixed_approxDP_to_approxDP as make_fixed_approxDP_to_approxDP
from .conversions import make_pureDP_to_zCDP as make_pureDP_to_zCDP
from .conversions import make_zCDP_to_approxDP as make_zCDP_to_approxDP
from .select_private_candidate import (
    make_select_private_candidate as make_select_private_candidate,
)

# isort: split
# -- local / federated (issue 7) --
from .local import make_local_release as make_local_release
from .local import then_local_release as then_local_release
from .random_dp import make_random_dp_as_worst_case as make_random_dp_as_worst_case

# isort: split
# -- grouped releases: a measurement mapped over the groups of a partition (issue 15) --
from .grouped import grouped_count as grouped_count
from .grouped import grouped_mean as grouped_mean
from .grouped import grouped_sum as grouped_sum
from .grouped import make_grouped as make_grouped
from .grouped import then_grouped as then_grouped
