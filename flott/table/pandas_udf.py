"""Vectorized (``func_type='pandas'``) Python functions, as PyFlink 2.3 runs them.

A vectorized aggregate receives one pandas.Series per argument holding a group's (or window's)
values and returns one value. The Series have the dtypes PyFlink's Arrow batches give
(:func:`flott.table.pandas_conversion.column_series`). The accumulator is the list of argument
tuples seen so far, so retraction and merging (session windows) need nothing from the user.

A vectorized scalar function receives a Series per argument holding a batch of rows' values and
returns a Series of as many values; :mod:`flott.table.pandas_calc` plans the calc that feeds it.
"""

from __future__ import annotations

from typing import Any

from flott.errors import NotYetSupportedError
from flott.table.pandas_conversion import _pandas, column_series, from_pandas_value
from flott.table.types import DataType
from flott.table.udf import AggregateFunction, FunctionContext, ScalarFunction, UserDefinedFunction

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
    out (PyFlink's checks and messages when it is not a Series or the lengths differ). A
    ScalarFunction's ``open``/``close`` run once per task, as for general UDFs."""

    def __init__(self, fn: Any, name: str, result_type: DataType) -> None:
        self.fn, self.name, self.result_type = fn, name, result_type
        self._call = fn.eval if isinstance(fn, ScalarFunction) else fn

    def open(self, runtime_context: Any = None) -> None:
        if isinstance(self.fn, UserDefinedFunction):
            self.fn.open(FunctionContext(runtime_context))

    def close(self) -> None:
        if isinstance(self.fn, UserDefinedFunction):
            self.fn.close()

    def call_batch(self, arg_types: list[DataType], columns: list[Any], length: int) -> list[Any]:
        """``columns``: a list of values per column argument, or an object with ``value`` for a
        literal argument (passed as that value, as PyFlink passes it)."""
        pd = _pandas()
        series = [
            column_series(t, c) if isinstance(c, list) else c.value
            for t, c in zip(arg_types, columns, strict=True)
        ]
        out = self._call(*series)
        if type(out) is not pd.Series and type(out) is not pd.DataFrame:
            raise AssertionError(
                f"The result type of Pandas UDF '{self.name}' must be pandas.Series or "
                f"pandas.DataFrame, got {type(out)}"
            )
        if len(out) != length:
            raise AssertionError(
                f"The result length '{len(out)}' of Pandas UDF '{self.name}' is not equal to the "
                f"input length '{length}'"
            )
        if type(out) is pd.DataFrame:
            raise NotYetSupportedError(
                f"Pandas UDF '{self.name}' returned a pandas.DataFrame: ROW results of vectorized "
                "scalar UDFs are not yet supported by flott"
            )
        return [from_pandas_value(self.result_type, v) for v in out.tolist()]
