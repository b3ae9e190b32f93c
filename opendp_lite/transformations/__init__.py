"""Transformations: stable functions that shape data before noise (``dp.t``).

Each ``make_x`` has a ``then_x`` partial for ``(domain, metric) >> then_x(...)`` chains.
Re-exports use ``import x as x`` (explicit re-export for mypy); there is no ``__all__``.
"""

from .user import make_user_transformation as make_user_transformation

# isort: split
# -- dataset handling, casting, cleaning, bounds, lookup (issue 5, part A) --
from .cast import make_cast as make_cast
from .cast import make_cast_default as make_cast_default
from .cast import make_cast_inherent as make_cast_inherent
from .cast import then_cast as then_cast
from .cast import then_cast_default as then_cast_default
from .cast import then_cast_inherent as then_cast_inherent
from .clamp import make_clamp as make_clamp
from .clamp import then_clamp as then_clamp
from .dataset import make_create_dataframe as make_create_dataframe
from .dataset import make_select_column as make_select_column
from .dataset import make_split_dataframe as make_split_dataframe
from .dataset import make_split_lines as make_split_lines
from .dataset import make_split_records as make_split_records
from .lookup import make_find as make_find
from .lookup import make_find_bin as make_find_bin
from .lookup import make_identity as make_identity
from .lookup import make_index as make_index
from .lookup import make_is_equal as make_is_equal
from .lookup import then_find as then_find
from .lookup import then_find_bin as then_find_bin
from .lookup import then_identity as then_identity
from .lookup import then_index as then_index
from .lookup import then_is_equal as then_is_equal
from .nulls import make_drop_null as make_drop_null
from .nulls import make_impute_constant as make_impute_constant
from .nulls import make_impute_uniform_float as make_impute_uniform_float
from .nulls import make_is_null as make_is_null
from .nulls import then_drop_null as then_drop_null
from .nulls import then_impute_constant as then_impute_constant
from .nulls import then_impute_uniform_float as then_impute_uniform_float
from .nulls import then_is_null as then_is_null
from .order import make_metric_bounded as make_metric_bounded
from .order import make_metric_unbounded as make_metric_unbounded
from .order import make_ordered_random as make_ordered_random
from .order import make_unordered as make_unordered
from .order import then_metric_bounded as then_metric_bounded
from .order import then_metric_unbounded as then_metric_unbounded
from .order import then_ordered_random as then_ordered_random
from .order import then_unordered as then_unordered
from .resize import make_resize as make_resize
from .resize import then_resize as then_resize

# isort: split
# -- aggregates, quantiles, trees (issue 5, part B) --
from .count import make_count as make_count
from .count import make_count_by as make_count_by
from .count import make_count_by_categories as make_count_by_categories
from .count import make_count_distinct as make_count_distinct
from .count import then_count as then_count
from .count import then_count_by as then_count_by
from .count import then_count_by_categories as then_count_by_categories
from .count import then_count_distinct as then_count_distinct
from .lipschitz import make_lipschitz_float_mul as make_lipschitz_float_mul
from .lipschitz import then_lipschitz_float_mul as then_lipschitz_float_mul
from .moments import make_mean as make_mean
from .moments import make_sum_of_squared_deviations as make_sum_of_squared_deviations
from .moments import make_variance as make_variance
from .moments import then_mean as then_mean
from .moments import then_sum_of_squared_deviations as then_sum_of_squared_deviations
from .moments import then_variance as then_variance
from .quantile import make_cdf as make_cdf
from .quantile import make_quantile_score_candidates as make_quantile_score_candidates
from .quantile import make_quantiles_from_counts as make_quantiles_from_counts
from .quantile import then_quantile_score_candidates as then_quantile_score_candidates
from .sum import make_bounded_float_checked_sum as make_bounded_float_checked_sum
from .sum import make_bounded_float_ordered_sum as make_bounded_float_ordered_sum
from .sum import make_bounded_int_monotonic_sum as make_bounded_int_monotonic_sum
from .sum import make_bounded_int_ordered_sum as make_bounded_int_ordered_sum
from .sum import make_bounded_int_split_sum as make_bounded_int_split_sum
from .sum import make_sized_bounded_float_checked_sum as make_sized_bounded_float_checked_sum
from .sum import make_sized_bounded_float_ordered_sum as make_sized_bounded_float_ordered_sum
from .sum import make_sized_bounded_int_checked_sum as make_sized_bounded_int_checked_sum
from .sum import make_sized_bounded_int_monotonic_sum as make_sized_bounded_int_monotonic_sum
from .sum import make_sized_bounded_int_ordered_sum as make_sized_bounded_int_ordered_sum
from .sum import make_sized_bounded_int_split_sum as make_sized_bounded_int_split_sum
from .sum import make_sum as make_sum
from .sum import then_sum as then_sum
from .tree import choose_branching_factor as choose_branching_factor
from .tree import make_b_ary_tree as make_b_ary_tree
from .tree import make_consistent_b_ary_tree as make_consistent_b_ary_tree
from .tree import then_b_ary_tree as then_b_ary_tree
