"""A calc whose expressions call vectorized (``func_type='pandas'``) scalar UDFs.

Flink's planner splits such a Calc (PythonCalcSplitRule and its kin): the pandas calls go to a
Python operator that evaluates them over Arrow batches, the rest stays in ordinary calcs below and
above it. flott does the same on its plan: :func:`split_pandas_calc` rewrites the calc into

    Calc(input -> input columns + the pandas calls' arguments)
      -> PandasCalc (input columns + one column per pandas call, computed per batch of rows)
      -> ... (once more per nesting level: a pandas call over another's result)
      -> Calc(the original projections and condition, the pandas calls read as columns)

so pandas UDFs mix freely with ordinary expressions and general Python UDFs, in the projection,
in the condition (evaluated as a column, then filtered above, as Flink does) and nested in each
other, as PyFlink allows. A condition without pandas calls is applied in the lowest calc, so the
UDFs only see the rows it keeps.

Batches, as PyFlink cuts them: the operator gathers a bundle of ``python.fn-execution.bundle.size``
rows (default 1000), ending it early after ``python.fn-execution.bundle.time`` ms (default 1000),
before a watermark passes, before a checkpoint barrier and at the end of input; the UDF gets each
bundle in Arrow batches of at most ``python.fn-execution.arrow.batch.size`` rows (default 1000,
measured on PyFlink 2.3: 25,000 rows arrive as 25 batches of 1000). So a small bounded input
reaches the UDF as one batch on both systems; where a streaming source's bundles end by time
depends on timing on both.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from flott.datastream.functions import FlatMapFunction
from flott.errors import ConfigurationError
from flott.table.plan import Calc, PlanNode, TranslationContext
from flott.table.planner import Rex
from flott.table.types import DataType

__all__ = ["PandasCalc", "has_pandas_call", "split_pandas_calc"]

ARROW_BATCH_SIZE = "python.fn-execution.arrow.batch.size"
BUNDLE_SIZE = "python.fn-execution.bundle.size"
BUNDLE_TIME = "python.fn-execution.bundle.time"
DEFAULT_ARROW_BATCH_SIZE = 1000
DEFAULT_BUNDLE_SIZE = 1000
DEFAULT_BUNDLE_TIME_MS = 1000


def is_pandas_call(rex: Rex) -> bool:
    return rex.kind == "udf" and getattr(rex.value, "func_type", "general") == "pandas"


def has_pandas_call(rex: Rex | None) -> bool:
    if rex is None:
        return False
    return is_pandas_call(rex) or any(has_pandas_call(o) for o in rex.operands)


def _innermost(rex: Rex, found: dict[int, Rex]) -> None:
    """The pandas calls of ``rex`` whose arguments hold no pandas call."""
    if is_pandas_call(rex) and not any(has_pandas_call(o) for o in rex.operands):
        found.setdefault(_call_key(rex), rex)
        return
    for o in rex.operands:
        _innermost(o, found)


def _call_key(rex: Rex) -> int:
    """Each place a pandas call is written is its own call, deterministic or not: PyFlink 2.3
    calls a Python UDF written twice in one projection twice per row (measured with a UDF
    logging its calls: ``select(f(a), f(a))`` over 2 rows logs 4 calls with deterministic=True
    and with False; ``f(lit(7))`` is called per row, not folded at planning)."""
    return id(rex)


def _replace(rex: Rex, columns: dict[int, Rex]) -> Rex:
    if is_pandas_call(rex) and _call_key(rex) in columns:
        return columns[_call_key(rex)]
    if not rex.operands:
        return rex
    return dataclasses.replace(rex, operands=[_replace(o, columns) for o in rex.operands])


def split_pandas_calc(calc: Calc) -> PlanNode:
    """The calc as plain calcs around PandasCalc nodes (see the module's docstring)."""
    projections = list(calc.projections)
    condition = calc.condition
    lower_condition = None if has_pandas_call(condition) else condition
    if lower_condition is not None:
        condition = None
    node: PlanNode = calc.input
    width = len(node.names)
    names, types = list(node.names), list(node.types)
    while any(has_pandas_call(p) for p in projections) or has_pandas_call(condition):
        found: dict[int, Rex] = {}
        for e in [*projections, *([condition] if condition is not None else [])]:
            _innermost(e, found)
        calls = list(found.values())
        passthrough = [Rex("input", t, index=i) for i, t in enumerate(types)]
        arguments = [o for call in calls for o in call.operands if o.kind != "lit"]
        arg_names = [f"$pandas_arg{i}" for i in range(len(arguments))]
        lower = Calc(node, passthrough + arguments, names + arg_names, lower_condition)
        lower_condition = None
        node = PandasCalc(lower, width, calls)
        columns = {
            _call_key(call): Rex("input", call.type, index=width + k) for k, call in enumerate(calls)
        }
        projections = [_replace(p, columns) for p in projections]
        condition = None if condition is None else _replace(condition, columns)
        width, names, types = len(node.names), list(node.names), list(node.types)
    return Calc(node, projections, calc.names, condition)


class PandasCalc(PlanNode):
    """The input's first ``width`` columns, then one column per pandas call; each call's
    arguments are the input's next columns, in order, but for literals: PyFlink hands a pandas
    UDF a literal argument as the plain value, not a Series (measured: ``f(lit(7))`` gets 7)."""

    def __init__(self, input: PlanNode, width: int, calls: list[Rex]) -> None:
        self.input, self.width, self.calls = input, width, calls
        offset = width
        self.arguments: list[list[int | Literal]] = []
        for call in calls:
            positions: list[int | Literal] = []
            for o in call.operands:
                if o.kind == "lit":
                    positions.append(Literal(o.value))
                else:
                    positions.append(offset)
                    offset += 1
            self.arguments.append(positions)
        self.names = list(input.names[:width]) + [f"$pandas{width + k}" for k in range(len(calls))]
        self.types = list(input.types[:width]) + [c.type for c in calls]
        self.rowtime = input.rowtime if input.rowtime is not None and input.rowtime < width else None

    def is_updating(self, streaming: bool) -> bool:
        return self.input.is_updating(streaming)

    def _translate(self, ctx: TranslationContext) -> Any:
        upstream = self.input.translate(ctx)
        evaluators = []
        for call in self.calls:
            arg_types = [o.type for o in call.operands]
            evaluators.append((call.value.evaluator(), arg_types))
        config = ctx.env.configuration
        bundle = (
            _positive_int(config, BUNDLE_SIZE, DEFAULT_BUNDLE_SIZE),
            _positive_int(config, BUNDLE_TIME, DEFAULT_BUNDLE_TIME_MS),
        )
        arrow = _positive_int(config, ARROW_BATCH_SIZE, DEFAULT_ARROW_BATCH_SIZE)
        fn = PandasCalcFunction(self.width, evaluators, self.arguments, min(arrow, bundle[0]), bundle)
        calc = upstream.flat_map(fn).name("PandasCalc").set_parallelism(upstream.transformation.parallelism)
        return ctx.uid(calc, "pandas-calc")


def _positive_int(config: dict[str, str], key: str, default: int) -> int:
    raw = config.get(key)
    if raw is None:
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise ConfigurationError(f"Could not parse value '{raw}' for key '{key}'.") from None
    if value <= 0:
        raise ConfigurationError(f"{key} must be greater than 0, got {value}")
    return value


@dataclasses.dataclass(frozen=True)
class Literal:
    """A pandas call's literal argument (passed as the value itself)."""

    value: Any


class PandasCalcFunction(FlatMapFunction):
    """Per batch of ``(kind, values)`` records: each pandas call over its argument columns, the
    results appended to the first ``width`` values; the row kind passes through."""

    def __init__(
        self,
        width: int,
        evaluators: list[tuple[Any, list[DataType]]],
        arguments: list[list[int | Literal]],
        max_rows: int,
        bundle: tuple[int, int],
    ) -> None:
        self.width, self.evaluators, self.arguments, self.max_rows = width, evaluators, arguments, max_rows
        self.flott_bundle = bundle
        """(records, milliseconds) of a bundle: the flat_map operator hands them over at once."""

    def open(self, runtime_context: Any) -> None:
        for evaluator, _ in self.evaluators:
            evaluator.open(runtime_context)

    def close(self) -> None:
        for evaluator, _ in self.evaluators:
            evaluator.close()

    def flat_map(self, value: Any) -> Any:
        return self.flott_flat_map_batch([value])[0]

    def flott_flat_map_batch(self, records: list[Any]) -> list[Any]:
        out: list[Any] = []
        width = self.width
        for start in range(0, len(records), self.max_rows):
            chunk = records[start : start + self.max_rows]
            rows = [r[1] for r in chunk]
            results = []
            for (evaluator, arg_types), positions in zip(self.evaluators, self.arguments, strict=True):
                columns = [
                    i if isinstance(i, Literal) else [row[i] for row in rows] for i in positions
                ]
                results.append(evaluator.call_batch(arg_types, columns, len(rows)))
            for j, (kind, row) in enumerate(chunk):
                out.append(((kind, row[:width] + tuple(r[j] for r in results)),))
        return out
