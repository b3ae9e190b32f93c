"""LazyFrame plans read through the reader's whitelist (:func:`read_plan`).

Polars 1.x and 2.1 write a plan as JSON (``lf.serialize(format="json")``, deprecated by
Polars); the plan nodes are read here and their expressions by the expression reader.  The
private input is a scan of an in-memory frame (``pl.LazyFrame(data)`` or
``pl.LazyFrame(schema=...)``): only its schema is read, never its data bytes.  The one other
input a plan may hold is a public key frame joined after the aggregation; its values are read
(they are public).  Any other plan node (a file scan, a Python function, slice, unique,
concat, rename, explode, ...) is refused by name.
"""

from __future__ import annotations

import io
import json
import warnings
from typing import TYPE_CHECKING, Any, NoReturn

from opendp_lite.table import nodes as n
from opendp_lite.table.polars_reader import (
    GroupByAgg,
    JoinKeys,
    PlanReading,
    PlanStep,
    SortStep,
    UnsupportedPolarsExpression,
    _bool,
    _drift,
    _fields,
    _one_key,
    _read,
    _read_dtype,
    _refuse,
    _str,
)

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl

#: plan nodes refused by name, with the alternative
_REFUSED_PLANS = {
    "PythonScan": ("a Python-defined scan", "pass an in-memory LazyFrame or DataFrame"),
    "MapFunction": (
        "a frame function (rename, drop, explode, unnest, with_row_index, map_batches, ...)",
        "use select/with_columns with .alias for renaming",
    ),
    "Slice": ("head/tail/slice (row positions)", "filter rows with a predicate"),
    "Distinct": ("unique (deduplication)", "no alternative: it changes contributions"),
    "Union": ("concat", "query each frame separately"),
    "HConcat": ("horizontal concat", "query each frame separately"),
    "Cache": ("cache", "drop the .cache() call"),
    "ExtContext": ("with_context", "join a public key frame instead"),
    "Sink": ("a sink", "collect the released frame instead"),
    "MergeSorted": ("merge_sorted", "query each frame separately"),
}

#: what a plan may hold, named in every refusal of a plan node
PLAN_SUPPORTED = (
    "a LazyFrame of in-memory data, pl.LazyFrame(schema=...) or a file scan as the input, "
    "then select, with_columns, filter, group_by(...).agg(...), sort, and a join with a "
    "public key frame after the aggregation (with_keys)"
)


def _refuse_plan(construct: str, detail: str = "", alternatives: str = "") -> NoReturn:
    _refuse(construct, detail, alternatives, PLAN_SUPPORTED)


_HOW = {"Left": "left", "Right": "right", "Inner": "inner"}


def _schema(body: Any) -> tuple[tuple[str, n.DType], ...]:
    if not isinstance(body, dict) or set(body) not in ({"fields"}, {"fields", "metadata"}):
        _drift("a frame schema", body)
    if body.get("metadata") not in (None, {}):
        _drift("a frame schema's metadata", body["metadata"])
    fields = body["fields"]
    if not isinstance(fields, dict):
        _drift("a frame schema", fields)
    out = []
    for name, dtype in fields.items():
        try:
            out.append((name, _read_dtype(dtype)))
        except UnsupportedPolarsExpression as error:
            raise UnsupportedPolarsExpression(
                f"the column {name!r}'s type",
                error.construct,
                alternatives="drop or cast the column before building the query",
            ) from None
    return tuple(out)


def _scan(body: Any) -> tuple[tuple[str, n.DType], ...]:
    d = _fields(body, {"df", "schema"}, "a frame scan")
    return _schema(d["schema"])


def _exprs(v: Any, where: str) -> tuple[n.Expr, ...]:
    if not isinstance(v, list):
        _drift(where, v)
    return tuple(_read(e) for e in v)


_SELECT_OPTIONS = (
    {"run_parallel", "duplicate_check", "should_broadcast"},
    {"run_parallel", "duplicate_check", "should_broadcast", "maintain_dataframe_height"},
)


def _projection_options(v: Any) -> None:
    if not isinstance(v, dict) or set(v) not in _SELECT_OPTIONS:
        _drift("select/with_columns options", v)
    for key, flag in v.items():
        _bool(flag, f"the select option {key}")


def _unwrap(node: Any) -> Any:
    """The plan inside Polars' ``IR`` wrapper (written for a frame whose schema was already
    resolved, e.g. by ``collect_schema()``): ``{"IR": {"dsl": plan, "version": n}}``."""
    while isinstance(node, dict) and set(node) == {"IR"}:
        body = _fields(node["IR"], {"dsl", "version"}, "a resolved plan")
        if not isinstance(body["version"], int) or isinstance(body["version"], bool):
            _drift("a resolved plan's version", body["version"])
        node = body["dsl"]
    return node


def _keys_frame(node: Any) -> tuple[tuple[str, n.DType, tuple[Any, ...]], ...] | None:
    """The columns of a bare in-memory frame (a public key set), or None if ``node`` is not
    one."""
    node = _unwrap(node)
    if not (isinstance(node, dict) and set(node) == {"DataFrameScan"}):
        return None
    d = _fields(node["DataFrameScan"], {"df", "schema"}, "a frame scan")
    schema = _schema(d["schema"])
    data = d["df"]
    if not isinstance(data, list) or not all(isinstance(b, int) and 0 <= b < 256 for b in data):
        _drift("a key frame's data", "...")
    import polars as pl

    try:
        frame = pl.read_ipc_stream(io.BytesIO(bytes(data)))
    except (KeyboardInterrupt, SystemExit):  # pragma: no cover
        raise
    except BaseException:  # any failure to read is drift (Polars' Rust panics included)
        _drift("a key frame's data", "unreadable bytes")
    if tuple(frame.columns) != tuple(name for name, _ in schema):
        _drift("a key frame's columns", frame.columns)
    return tuple((name, dtype, tuple(frame.get_column(name).to_list())) for name, dtype in schema)


def _contains(node: Any, kind: str) -> bool:
    if isinstance(node, dict):
        return kind in node or any(_contains(v, kind) for v in node.values())
    if isinstance(node, list):
        return any(_contains(v, kind) for v in node)
    return False


def _join(body: Any, steps: list[PlanStep]) -> tuple[tuple[str, n.DType], ...] | None:
    if not isinstance(body, dict):
        _drift("a join", body)
    if set(body) == {"input_left", "input_right", "condition", "options"}:  # Polars 2
        kind, cond = _one_key(body["condition"], "a join condition")
        if kind != "Equi":
            _refuse_plan(
                f"a {kind} join (a non-equality condition)", alternatives="join on columns"
            )
        c = _fields(cond, {"left_on", "right_on"}, "a join condition")
        left_on, right_on = c["left_on"], c["right_on"]
    elif set(body) == {"input_left", "input_right", "left_on", "right_on", "predicates", "options"}:
        if body["predicates"] != []:
            _refuse_plan("a join with predicates (join_where)", alternatives="join on columns")
        left_on, right_on = body["left_on"], body["right_on"]
    else:
        _drift("a join", sorted(body))
    options = body["options"]
    if isinstance(options, dict) and {"options", "rows_left", "rows_right"} <= set(options):
        # Polars 1.30 also writes the join type's options (none for an equi-join) and row
        # estimates (ignored)
        if options["options"] is not None:
            _refuse_plan("a join with type options (asof, ...)", alternatives="join on columns")
        options = {
            k: v for k, v in options.items() if k not in ("options", "rows_left", "rows_right")
        }
    options = _fields(options, {"allow_parallel", "force_parallel", "args"}, "a join")
    args = options["args"]
    known = {"how", "validation", "suffix", "slice", "nulls_equal", "coalesce", "maintain_order"}
    if not isinstance(args, dict) or set(args) not in (known, known | {"build_side"}):
        _drift("a join's arguments", args)
    how = args["how"]
    if how not in _HOW:
        name = how if isinstance(how, str) else _one_key(how, "a join kind")[0]
        _refuse_plan(
            f"a {name} join",
            alternatives="join a public key frame: query.with_keys(keys), or "
            "keys.join(query, on=..., how='left') / query.join(keys, on=..., how='right')",
        )
    if args["validation"] != "ManyToMany":
        _refuse_plan(
            "join(validate=...) (it fails on the private data's duplicates)",
            alternatives="leave validate unset",
        )
    if args["slice"] is not None:
        _refuse_plan("a sliced join", alternatives="filter rows with a predicate")
    if args.get("build_side") is not None:
        _drift("a join's build side", args["build_side"])
    if args["coalesce"] != "JoinSpecific" or args["maintain_order"] != "None":
        _refuse_plan(
            "join(coalesce=..., maintain_order=...)",
            alternatives="leave coalesce and maintain_order unset",
        )
    left, right = body["input_left"], body["input_right"]
    left_keys, right_keys = _keys_frame(left), _keys_frame(right)
    if (left_keys is None) == (right_keys is None) or not _contains(
        right if left_keys is not None else left, "GroupBy"
    ):
        _refuse_plan(
            "a join other than of a public key frame with an aggregated query",
            alternatives="join after group_by(...).agg(...) with an in-memory key frame: "
            "query.with_keys(keys)",
        )
    if (left_keys is not None) != (_HOW[how] == "left") or how == "Inner":
        _refuse_plan(
            f"a {_HOW[how]} join that does not keep the key frame's rows",
            "the released groups would be those of the private data",
            alternatives="keep every key: keys.join(query, on=..., how='left') or "
            "query.join(keys, on=..., how='right'), or query.with_keys(keys)",
        )
    private = right if left_keys is not None else left
    schema = _walk(private, steps)
    keys = left_keys if left_keys is not None else right_keys
    assert keys is not None  # noqa: S101 - one side is the key frame (checked above)
    steps.append(
        JoinKeys(
            keys,
            keys_on_left=left_keys is not None,
            how=_HOW[how],
            left_on=_exprs(left_on, "a join's columns"),
            right_on=_exprs(right_on, "a join's columns"),
            nulls_equal=_bool(args["nulls_equal"], "a join's nulls_equal"),
            suffix=_str(args["suffix"], "a join's suffix"),
        )
    )
    return schema


def _walk(node: Any, steps: list[PlanStep]) -> tuple[tuple[str, n.DType], ...] | None:
    """The schema of the plan's private input; ``steps`` gets the steps, first to last."""
    kind, body = _one_key(_unwrap(node), "a plan node")
    if kind == "DataFrameScan":
        return _scan(body)
    if kind == "Scan":
        # a file scan stands for the data the measurement is called on: its schema is the
        # input domain's, and none of its options (paths, parsing) is read
        return None
    if kind == "Select":
        d = _fields(body, {"expr", "input", "options"}, "a select")
        _projection_options(d["options"])
        schema = _walk(d["input"], steps)
        steps.append(n.Select(_exprs(d["expr"], "a select's expressions")))
        return schema
    if kind == "HStack":
        d = _fields(body, {"exprs", "input", "options"}, "a with_columns")
        _projection_options(d["options"])
        schema = _walk(d["input"], steps)
        steps.append(n.WithColumns(_exprs(d["exprs"], "with_columns' expressions")))
        return schema
    if kind == "Filter":
        d = _fields(body, {"input", "predicate"}, "a filter")
        schema = _walk(d["input"], steps)
        steps.append(n.FilterRows(_read(d["predicate"])))
        return schema
    if kind == "GroupBy":
        if isinstance(body, dict):
            # Polars 1.30 writes neither field, 1.35 no predicates
            body = {"apply": None, "predicates": [], **body}
        d = _fields(
            body,
            {"input", "keys", "predicates", "aggs", "maintain_order", "options", "apply"},
            "a group_by",
        )
        if d["apply"] is not None:
            _refuse_plan("group_by(...).map_groups (a Python function)", alternatives="use .agg")
        if d["predicates"] != []:
            _refuse_plan("a group_by with predicates", alternatives="filter before grouping")
        options = _fields(d["options"], {"dynamic", "rolling", "slice"}, "group_by options")
        if options["dynamic"] is not None or options["rolling"] is not None:
            _refuse_plan("group_by_dynamic/rolling", alternatives="group_by on columns")
        if options["slice"] is not None:
            _refuse_plan("a sliced group_by", alternatives="filter rows with a predicate")
        schema = _walk(d["input"], steps)
        steps.append(
            GroupByAgg(
                _exprs(d["keys"], "group_by's keys"),
                _exprs(d["aggs"], "agg's expressions"),
                _bool(d["maintain_order"], "group_by's maintain_order"),
            )
        )
        return schema
    if kind == "Sort":
        d = _fields(body, {"input", "by_column", "slice", "sort_options"}, "a sort")
        if d["slice"] is not None:
            _refuse_plan("a sort with a slice (top_k/bottom_k)", alternatives="sort(...)")
        o = _fields(
            d["sort_options"],
            {"descending", "nulls_last", "multithreaded", "maintain_order", "limit"},
            "sort options",
        )
        if o["limit"] is not None:
            _refuse_plan("a sort with a limit", alternatives="sort(...)")
        by = _exprs(d["by_column"], "sort's keys")
        descending, nulls_last = o["descending"], o["nulls_last"]
        if not (
            isinstance(descending, list)
            and isinstance(nulls_last, list)
            and all(isinstance(f, bool) for f in descending + nulls_last)
        ):
            _drift("sort options", o)
        if len(descending) == 1:
            descending = descending * len(by)
        if len(nulls_last) == 1:
            nulls_last = nulls_last * len(by)
        if len(descending) != len(by) or len(nulls_last) != len(by):
            _drift("sort options", o)
        schema = _walk(d["input"], steps)
        steps.append(
            SortStep(
                by,
                tuple(descending),
                tuple(nulls_last),
                _bool(o["maintain_order"], "sort's maintain_order"),
            )
        )
        return schema
    if kind == "Join":
        return _join(body, steps)
    if kind in _REFUSED_PLANS:
        construct, alternative = _REFUSED_PLANS[kind]
        if kind == "MapFunction" and _contains(body, "OpaquePython"):
            construct = "a Python function on the frame (map_batches: a UDF)"
            alternative = "express it with select/with_columns"
        _refuse_plan(construct, alternatives=alternative)
    _refuse_plan(f"the Polars plan node {kind!r}")


def read_plan_json(text: str) -> PlanReading:
    """Read a plan from Polars' JSON text (untrusted: unknown shapes are refused)."""
    try:
        node = json.loads(text)
    except ValueError:
        _drift("a plan", "not JSON")
    steps: list[PlanStep] = []
    schema = _walk(node, steps)
    return PlanReading(schema, tuple(steps))


def read_plan(lf: pl.LazyFrame) -> PlanReading:
    """Read a LazyFrame's plan (``lf.serialize(format="json")``, Polars' deprecation warning
    silenced) through the whitelist: a scan of an in-memory frame (its schema only), then
    ``select``, ``with_columns``, ``filter``, ``group_by(...).agg(...)``, ``sort`` and a join
    with a public key frame.  Anything else is refused with :class:`UnsupportedPolarsExpression`.

    >>> import polars as pl
    >>> lf = pl.LazyFrame(schema={"a": pl.Int64}).filter(pl.col("a") > 0)
    >>> plan = read_plan(lf)
    >>> plan.schema, plan.steps[0].predicate
    ((('a', 'Int64'),), Binary(op='>', left=Col(name='a'), right=Lit(value=0, dtype=None)))
    """
    import polars as pl

    if not isinstance(lf, pl.LazyFrame):
        raise UnsupportedPolarsExpression(
            f"a {type(lf).__name__}",
            "expected a Polars LazyFrame",
            alternatives="pass a pl.LazyFrame (DataFrame.lazy())",
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Polars deprecates JSON plans
        try:
            text = lf.serialize(format="json")
        except Exception as error:  # a plan Polars cannot write (e.g. a Python scan)
            raise UnsupportedPolarsExpression(
                "a LazyFrame plan Polars cannot write as JSON",
                type(error).__name__,
                alternatives="build the plan from an in-memory frame and the supported steps",
            ) from None
    return read_plan_json(text)


#: what collecting a query's stand-in plan raises (Polars' ComputeError quotes it)
SHIM_MESSAGE = (
    "OpenDP expressions must be passed through the query's release: a private query's "
    "polars_plan holds no data and runs no private aggregate (use query.release().collect())"
)


def shim_plan(schema: dict[str, n.DType], steps: tuple[n.Step, ...], released: bool) -> Any:
    """A Polars plan that stands for a private query (its ``polars_plan``, OpenDP's shim): an
    empty frame of the input's ``schema`` and the row ``steps`` compiled by the Polars engine,
    so that ``explain()`` shows them.  With private aggregates (``released``) the plan ends in a
    column that fails to parse :data:`SHIM_MESSAGE` as an integer: collecting it raises
    Polars' ``ComputeError`` quoting the message.  No data is held: the plan cannot reach the
    private frame, and its function is never the query's.

    Raises:
        NotImplementedForType: for a step the Polars engine does not compile (truncation).
    """
    import polars as pl

    from opendp_lite.backends.tables import polars as engine
    from opendp_lite.errors import NotImplementedForType

    lf = pl.LazyFrame(schema={k: engine.polars_dtype(v) for k, v in schema.items()})
    for step in steps:
        token = engine._FLOATS.set(engine._float_columns(lf))
        try:
            if isinstance(step, n.WithColumns):
                lf = lf.with_columns([engine._named(e) for e in step.exprs])
            elif isinstance(step, n.Select):
                lf = lf.select([engine._named(e) for e in step.exprs])
            elif isinstance(step, n.FilterRows):
                lf = lf.filter(engine.compile_expr(step.predicate))
            elif isinstance(step, n.GroupAgg):
                lf = lf.group_by([engine._named(b) for b in step.by]).agg(
                    [engine.stable_agg_expr(e) for e in step.aggs]
                )
            else:
                raise NotImplementedForType(f"{type(step).__name__} has no Polars stand-in")
        finally:
            engine._FLOATS.reset(token)
    if released:
        lf = lf.select(pl.lit(SHIM_MESSAGE).str.to_integer().alias("release"))
    return lf
