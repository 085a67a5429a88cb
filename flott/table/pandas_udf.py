"""Vectorized (``func_type='pandas'``) Python functions, as PyFlink 2.3 runs them.

A vectorized aggregate receives one pandas.Series per argument holding a group's (or window's)
values and returns one value. The Series have the dtypes PyFlink's Arrow batches give
(:func:`flott.table.pandas_conversion.column_series`). The accumulator is the list of argument
tuples seen so far, so retraction and merging (session windows) need nothing from the user.

Vectorized scalar functions are refused when planned until the calc feeds them batches.
"""

from __future__ import annotations

from typing import Any

from flott.table.pandas_conversion import column_series, from_pandas_value
from flott.table.types import DataType
from flott.table.udf import AggregateFunction

__all__ = ["PandasAggregateFunction", "PandasScalarEvaluator"]


class PandasAggregateFunction(AggregateFunction):
    """A pandas UDAF behind the AggregateFunction protocol the group and window aggregates use."""

    vectorized = True
    """The streaming group aggregate refuses these (PyFlink: batch, windows and over windows only)."""

    def __init__(self, fn: Any, name: str, arg_types: list[DataType], result_type: DataType) -> None:
        self.fn, self.name, self.arg_types, self.result_type = fn, name, arg_types, result_type

    def create_accumulator(self) -> list[tuple[Any, ...]]:
        return []

    def accumulate(self, accumulator: Any, *args: Any) -> None:
        accumulator.append(args)

    def retract(self, accumulator: Any, *args: Any) -> None:
        accumulator.remove(args)

    def merge(self, accumulator: Any, accumulators: Any) -> None:
        for other in accumulators:
            accumulator.extend(other)

    def get_value(self, accumulator: Any) -> Any:
        columns = [
            column_series(t, [row[i] for row in accumulator]) for i, t in enumerate(self.arg_types)
        ]
        return from_pandas_value(self.result_type, self.fn(*columns))


class PandasScalarEvaluator:
    """A pandas scalar UDF over one batch: a Series per argument in, a Series of as many values
    out (PyFlink's check and message when the lengths differ)."""

    def __init__(self, fn: Any, name: str, result_type: DataType) -> None:
        self.fn, self.name, self.result_type = fn, name, result_type

    def call_batch(self, arg_types: list[DataType], columns: list[list[Any]]) -> list[Any]:
        series = [column_series(t, c) for t, c in zip(arg_types, columns, strict=True)]
        out = self.fn(*series)
        length = len(columns[0]) if columns else 0
        if len(out) != length:
            raise AssertionError(
                f"The result length '{len(out)}' of Pandas UDF '{self.name}' is not equal to the "
                f"input length '{length}'"
            )
        return [from_pandas_value(self.result_type, v) for v in list(out)]
