"""The OpenDP-style entry point: ``import opendp_lite.prelude as dp``.

``dp.t`` (transformations), ``dp.m`` (measurements) and ``dp.c`` (combinators), plus the
domain, metric and measure constructors and the feature flags, as in OpenDP 0.16.

>>> import opendp_lite.prelude as dp
>>> dp.vector_domain(dp.atom_domain(T=float)), dp.symmetric_distance(), dp.max_divergence()
(VectorDomain(AtomDomain(nan=true, T=f64)), SymmetricDistance(), MaxDivergence)
"""

from . import combinators as c
from . import measurements as m
from . import transformations as t
from .core import (
    Domain,
    Function,
    Measure,
    Measurement,
    Metric,
    PartialMeasurement,
    PartialTransformation,
    Queryable,
    Transformation,
    assert_features,
    disable_features,
    enable_features,
    new_function,
    new_queryable,
)
from .domains import (
    AtomDomain,
    DataFrameDomain,
    MapDomain,
    OptionDomain,
    UserDomain,
    VectorDomain,
    atom_domain,
    dataframe_domain,
    map_domain,
    option_domain,
    user_domain,
    vector_domain,
)
from .errors import OpenDPLiteError
from .errors import OpenDPLiteError as OpenDPException
from .measures import (
    Approximate,
    MaxDivergence,
    PrivacyProfile,
    RenyiDivergence,
    SmoothedMaxDivergence,
    UserDivergence,
    ZeroConcentratedDivergence,
    approximate,
    fixed_smoothed_max_divergence,
    max_divergence,
    renyi_divergence,
    smoothed_max_divergence,
    user_divergence,
    zero_concentrated_divergence,
)
from .metrics import (
    AbsoluteDistance,
    ChangeOneDistance,
    DiscreteDistance,
    HammingDistance,
    InsertDeleteDistance,
    L1Distance,
    L2Distance,
    LInfDistance,
    SymmetricDistance,
    UserDistance,
    absolute_distance,
    change_one_distance,
    discrete_distance,
    hamming_distance,
    insert_delete_distance,
    l1_distance,
    l2_distance,
    linf_distance,
    symmetric_distance,
    user_distance,
)

# Sections (keep each import block sorted; `ruff check --fix` sorts within a block):
# -- accuracy helpers --
# isort: split
from .accuracy import (
    accuracy_to_discrete_gaussian_scale,
    accuracy_to_discrete_laplacian_scale,
    accuracy_to_gaussian_scale,
    accuracy_to_laplacian_scale,
    discrete_gaussian_scale_to_accuracy,
    discrete_laplacian_scale_to_accuracy,
    gaussian_scale_to_accuracy,
    laplacian_scale_to_accuracy,
)

# -- parameter search --
# isort: split
# -- domains and metrics that live beside the mechanisms that define them --
from .measurements.randomized_response import BitVectorDomain, bitvector_domain
from .measurements.threshold import L0PInfDistance, l01inf_distance, l02inf_distance
from .metrics import (  # the metrics of individuals and partitions
    ChangeOneIdDistance,
    PartitionDistance,
    SymmetricIdDistance,
    change_one_id_distance,
    partition_distance,
    symmetric_id_distance,
)
from .search import binary_search, binary_search_chain, binary_search_param

# isort: split
# -- OpenDP helpers: privacy profiles, branching factors, arrays --
from .combinators.composition import Odometer, OdometerQueryable
from .core import as_array
from .domains import CategoricalDomain, ExtrinsicDomain, categorical_domain
from .errors import UnknownTypeException
from .measures import ExtrinsicDivergence, new_privacy_profile

# isort: split
# -- OpenDP module paths, type descriptors and the Context API --
from . import __version__
from .context import (
    Context,
    PartialChain,
    Query,
    domain_of,
    loss_of,
    metric_of,
    register,
    space_of,
    unit_of,
)
from .mod import GLOBAL_FEATURES, ApproximateDivergence, exponential_bounds_search
from .serialization import deserialize, register_serializable, serialize
from .typing import (
    BitVector,
    HashMap,
    Option,
    RuntimeType,
    String,
    Vec,
    f32,
    f64,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    set_default_float_type,
    set_default_int_type,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
)

# isort: split
# -- the table API's domains and metric (OpenDP 0.16's Polars-facing constructors) --
from .table.domains import (
    DataFrame,
    DatetimeDomain,
    EnumDomain,
    Expr,
    LazyFrame,
    LazyFrameDomain,
    Series,
    SeriesDomain,
    WildExprDomain,
    datetime_domain,
    enum_domain,
    lazyframe_domain,
    series_domain,
    wild_expr_domain,
    with_margin,
)
from .table.metrics import FrameDistance, frame_distance

# isort: split
# -- OpenDP 0.16's constructors beneath the table API: importing them publishes them on dp.m
# (make_private_lazyframe, make_private_expr) and dp.t (make_stable_lazyframe,
# make_stable_expr); the table layer sits above those packages (opendp_lite._registry.publish)
from .table import private as _table_private  # noqa: F401
from .table import stable as _table_stable  # noqa: F401

# isort: split
# -- the DP table API: dp.col, dp.len, dp.polars (Margin, Bound, OnceFrame) --
from .table._polars_entry import len as len
from .table._polars_entry import register_on_import as _register_on_import
from .table.builder import col as col
from .table.query import polars_namespace as polars

# isort: split
# -- OpenDP's extras: dp.numpy, dp.examples; dp.sklearn on first use (needs scikit-learn) --
from .extras import examples as examples
from .extras import numpy as numpy

# isort: split
# -- the accuracy-first planner: dp.planner.Plan.minimize([dp.planner.Count(...), ...]) --
from . import planner as planner


def __getattr__(name: str) -> object:
    if name == "sklearn":
        from .extras import sklearn

        return sklearn
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "GLOBAL_FEATURES",
    "AbsoluteDistance",
    "Approximate",
    "ApproximateDivergence",
    "AtomDomain",
    "BitVector",
    "BitVectorDomain",
    "CategoricalDomain",
    "ChangeOneDistance",
    "ChangeOneIdDistance",
    "Context",
    "DataFrame",
    "DataFrameDomain",
    "DatetimeDomain",
    "DiscreteDistance",
    "Domain",
    "EnumDomain",
    "Expr",
    "ExtrinsicDivergence",
    "ExtrinsicDomain",
    "FrameDistance",
    "Function",
    "HammingDistance",
    "HashMap",
    "InsertDeleteDistance",
    "L0PInfDistance",
    "L1Distance",
    "L2Distance",
    "LInfDistance",
    "LazyFrame",
    "LazyFrameDomain",
    "MapDomain",
    "MaxDivergence",
    "Measure",
    "Measurement",
    "Metric",
    "Odometer",
    "OdometerQueryable",
    "OpenDPException",
    "OpenDPLiteError",
    "Option",
    "OptionDomain",
    "PartialChain",
    "PartialMeasurement",
    "PartialTransformation",
    "PartitionDistance",
    "PrivacyProfile",
    "Query",
    "Queryable",
    "RenyiDivergence",
    "RuntimeType",
    "Series",
    "SeriesDomain",
    "SmoothedMaxDivergence",
    "String",
    "SymmetricDistance",
    "SymmetricIdDistance",
    "Transformation",
    "UnknownTypeException",
    "UserDistance",
    "UserDivergence",
    "UserDomain",
    "Vec",
    "VectorDomain",
    "WildExprDomain",
    "ZeroConcentratedDivergence",
    "__version__",
    "absolute_distance",
    "accuracy_to_discrete_gaussian_scale",
    "accuracy_to_discrete_laplacian_scale",
    "accuracy_to_gaussian_scale",
    "accuracy_to_laplacian_scale",
    "approximate",
    "as_array",
    "assert_features",
    "atom_domain",
    "binary_search",
    "binary_search_chain",
    "binary_search_param",
    "bitvector_domain",
    "c",
    "categorical_domain",
    "change_one_distance",
    "change_one_id_distance",
    "col",
    "dataframe_domain",
    "datetime_domain",
    "deserialize",
    "disable_features",
    "discrete_distance",
    "discrete_gaussian_scale_to_accuracy",
    "discrete_laplacian_scale_to_accuracy",
    "domain_of",
    "enable_features",
    "enum_domain",
    "exponential_bounds_search",
    "f32",
    "f64",
    "fixed_smoothed_max_divergence",
    "frame_distance",
    "gaussian_scale_to_accuracy",
    "hamming_distance",
    "i8",
    "i16",
    "i32",
    "i64",
    "i128",
    "insert_delete_distance",
    "isize",
    "l01inf_distance",
    "l02inf_distance",
    "l1_distance",
    "l2_distance",
    "laplacian_scale_to_accuracy",
    "lazyframe_domain",
    "len",
    "linf_distance",
    "loss_of",
    "m",
    "map_domain",
    "max_divergence",
    "metric_of",
    "new_function",
    "new_privacy_profile",
    "new_queryable",
    "option_domain",
    "partition_distance",
    "polars",
    "register",
    "register_serializable",
    "renyi_divergence",
    "serialize",
    "series_domain",
    "set_default_float_type",
    "set_default_int_type",
    "smoothed_max_divergence",
    "space_of",
    "symmetric_distance",
    "symmetric_id_distance",
    "t",
    "u8",
    "u16",
    "u32",
    "u64",
    "u128",
    "unit_of",
    "user_distance",
    "user_divergence",
    "user_domain",
    "usize",
    "vector_domain",
    "wild_expr_domain",
    "with_margin",
    "zero_concentrated_divergence",
]

_register_on_import()  # pl.Expr.dp, when Polars is (or gets) imported
