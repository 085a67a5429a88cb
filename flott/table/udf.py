"""Python user-defined functions: ``@udf`` / ``ScalarFunction``, ``@udaf`` / ``AggregateFunction`` and
``@udtf`` / ``TableFunction``.

A wrapper carries the function and its declared result type; the planner types the call with it and
the calc calls ``evaluator()`` per row (plain Python, in the task, no serialisation between JVM and
Python as in PyFlink). ``func_type='pandas'`` (vectorized UDFs) live in :mod:`flott.table.pandas_udf`:
the calc hands a vectorized scalar function its arguments as pandas Series of a batch of rows, and a
vectorized aggregate gets a group's values as Series.
"""

from __future__ import annotations

import functools
import types
from typing import Any

from flott.common.types import Row
from flott.errors import NotYetSupportedError
from flott.table.planner import table_error

__all__ = [
    "AggregateFunction",
    "FunctionContext",
    "ScalarFunction",
    "TableAggregateFunction",
    "TableFunction",
    "UserDefinedFunctionWrapper",
    "UserDefinedTableFunctionWrapper",
    "udaf",
    "udf",
    "udtaf",
    "udtf",
]


class FunctionContext:
    def __init__(self, runtime_context: Any = None) -> None:
        self._ctx = runtime_context

    def get_metric_group(self) -> Any:
        return self._ctx.get_metrics_group() if self._ctx is not None else None

    def get_job_parameter(self, key: str, default_value: str) -> str:
        return self._ctx.get_job_parameter(key, default_value) if self._ctx is not None else default_value


class UserDefinedFunction:
    def open(self, function_context: FunctionContext) -> None:
        """Called once per subtask before the first call."""

    def close(self) -> None:
        """Called once per subtask after the last call."""

    def is_deterministic(self) -> bool:
        return True


class ScalarFunction(UserDefinedFunction):
    def eval(self, *args: Any) -> Any:
        raise NotImplementedError


class TableFunction(UserDefinedFunction):
    """``eval`` yields (or returns a list/range/generator of) the rows one input row joins with."""

    def eval(self, *args: Any) -> Any:
        raise NotImplementedError


class AggregateFunction(UserDefinedFunction):
    def create_accumulator(self) -> Any:
        raise NotImplementedError

    def accumulate(self, accumulator: Any, *args: Any) -> None:
        raise NotImplementedError

    def retract(self, accumulator: Any, *args: Any) -> None:
        raise RuntimeError("Method retract is not implemented")  # PyFlink's text

    def get_value(self, accumulator: Any) -> Any:
        raise NotImplementedError


def require_retract(fn: Any) -> None:
    """A Python aggregate over an updating input (a group aggregate's result, say) must retract what
    a -U/-D row takes away. PyFlink fails the job on the first retraction ("Method retract is not
    implemented"); flott refuses when the job is planned, before any row is read."""
    inherited = type(fn).retract in (AggregateFunction.retract, TableAggregateFunction.retract)
    if isinstance(fn, AggregateFunction | TableAggregateFunction) and inherited:
        raise table_error(
            f"the aggregate function {type(fn).__name__} is "
            "applied to an updating input but defines no retract(accumulator, *args): Method retract "
            "is not implemented"
        )


class TableAggregateFunction(UserDefinedFunction):
    """A group's accumulator gives any number of rows (``emit_value`` yields them): Table API's
    ``flat_aggregate``."""

    def create_accumulator(self) -> Any:
        raise NotImplementedError

    def accumulate(self, accumulator: Any, *args: Any) -> None:
        raise NotImplementedError

    def retract(self, accumulator: Any, *args: Any) -> None:
        raise RuntimeError("Method retract is not implemented")  # PyFlink's text

    def emit_value(self, accumulator: Any) -> Any:
        raise NotImplementedError

    def get_result_type(self) -> Any:
        raise RuntimeError("Method get_result_type is not implemented")

    def get_accumulator_type(self) -> Any:
        raise RuntimeError("Method get_accumulator_type is not implemented")


def udtaf(
    f: Any = None,
    input_types: Any = None,
    result_type: Any = None,
    accumulator_type: Any = None,
    deterministic: Any = None,
    name: str | None = None,
    func_type: str = "general",
) -> Any:
    if func_type != "general":
        raise NotYetSupportedError(
            "vectorized (func_type='pandas') table aggregate functions are not yet supported"
        )
    if f is None:
        return functools.partial(
            udtaf,
            input_types=input_types,
            result_type=result_type,
            accumulator_type=accumulator_type,
            name=name,
        )
    if not isinstance(f, TableAggregateFunction):
        raise TypeError(f"udtaf takes a TableAggregateFunction instance, got {type(f).__name__}")
    if result_type is None:
        result_type = f.get_result_type()
    return UserDefinedFunctionWrapper(f, "table_aggregate", result_type, name, input_types, accumulator_type)


class _FunctionEvaluator:
    """What the calc calls: the user's eval, opened once per subtask."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self._call = fn.eval if isinstance(fn, ScalarFunction) else fn
        self._opened = False

    def __call__(self, *args: Any) -> Any:
        if not self._opened:
            self._opened = True
            if isinstance(self.fn, UserDefinedFunction):
                self.fn.open(FunctionContext())
                self._call = self.fn.eval if isinstance(self.fn, ScalarFunction) else self._call
        return self._call(*args)


class UserDefinedFunctionWrapper:
    def __init__(
        self,
        fn: Any,
        kind: str,
        result_type: Any,
        name: str | None,
        input_types: Any = None,
        accumulator_type: Any = None,
    ) -> None:
        if isinstance(result_type, str):
            from flott.table.sql_types import parse_type

            result_type = parse_type(result_type)
        if result_type is None:
            raise NotYetSupportedError(
                "a Python UDF needs its result_type (type inference is not yet supported)"
            )
        self.fn, self.kind, self.result_type, self.name = fn, kind, result_type, name
        self.input_types, self.accumulator_type = input_types, accumulator_type
        self.func_type = "general"
        """'pandas' for a vectorized function (its calls take and give pandas Series)."""
        self.deterministic = True
        """``deterministic=`` of @udf/@udaf (or the function's is_deterministic()). Nothing in
        PyFlink 2.3's running of Python UDFs depends on it that a program can see (measured: a
        call written twice runs twice per row, a call of literals runs per row, either way), and
        flott's calcs do the same; it is kept for what may come to read it."""
        functools.update_wrapper(
            self, fn if callable(fn) and not isinstance(fn, UserDefinedFunction) else type(fn)
        )

    def evaluator(self, arg_types: Any = None) -> Any:
        """What the runtime calls; a vectorized aggregate needs its arguments' types (they give
        the dtypes of the Series it receives)."""
        if self.func_type == "pandas":
            from flott.table.pandas_udf import (  # deferred: pandas_udf imports this module
                PandasAggregateFunction,
                PandasScalarEvaluator,
            )

            if self.kind == "aggregate":
                arg_list = list(arg_types or ())
                return PandasAggregateFunction(self.fn, self.function_name(), arg_list, self.result_type)
            return PandasScalarEvaluator(self.fn, self.function_name(), self.result_type)
        if self.kind in ("aggregate", "table_aggregate"):
            return self.fn
        return _FunctionEvaluator(self.fn)

    def function_name(self) -> str:
        """The name PyFlink's messages give the function (its name= or the Python name)."""
        if self.name:
            return self.name
        return str(getattr(self.fn, "__name__", type(self.fn).__name__))

    def __call__(self, *args: Any) -> Any:
        from flott.table.expressions import call

        return call(self, *args)

    def alias(self, *alias_names: str) -> UserDefinedFunctionWrapper:
        return self


def udf(
    f: Any = None,
    input_types: Any = None,
    result_type: Any = None,
    deterministic: Any = None,
    name: str | None = None,
    func_type: str = "general",
    udf_type: str | None = None,
) -> Any:
    kind = udf_type or func_type
    _check_func_type(kind)
    if f is None:
        return functools.partial(
            udf,
            input_types=input_types,
            result_type=result_type,
            deterministic=deterministic,
            name=name,
            func_type=kind,
        )
    wrapper = UserDefinedFunctionWrapper(f, "scalar", result_type, name, input_types)
    wrapper.func_type = kind
    wrapper.deterministic = _deterministic(f, deterministic)
    return wrapper


def _deterministic(f: Any, deterministic: Any) -> bool:
    """PyFlink's rule: the argument if given, else the function object's is_deterministic()."""
    if deterministic is not None:
        return bool(deterministic)
    if isinstance(f, UserDefinedFunction):
        return bool(f.is_deterministic())
    return True


def _check_func_type(func_type: str) -> None:
    if func_type not in ("general", "pandas"):  # PyFlink's text
        raise ValueError(
            f"The func_type must be one of 'general, pandas', got {func_type}."
        )


def udaf(
    f: Any = None,
    input_types: Any = None,
    result_type: Any = None,
    accumulator_type: Any = None,
    deterministic: Any = None,
    name: str | None = None,
    func_type: str = "general",
) -> Any:
    _check_func_type(func_type)
    if f is None:
        return functools.partial(
            udaf,
            input_types=input_types,
            result_type=result_type,
            accumulator_type=accumulator_type,
            deterministic=deterministic,
            name=name,
            func_type=func_type,
        )
    wrapper = UserDefinedFunctionWrapper(f, "aggregate", result_type, name, input_types, accumulator_type)
    wrapper.func_type = func_type
    wrapper.deterministic = _deterministic(f, deterministic)
    return wrapper


class UserDefinedTableFunctionWrapper(UserDefinedFunctionWrapper):
    """A ``@udtf``: its result columns (``f0, f1, ...`` unless a ``ROW<a ..., b ...>`` string names
    them, as PyFlink's) and the names ``.alias(...)`` gave, for ``join_lateral(f.alias('a', 'b'))``
    where the function takes the whole row."""

    def __init__(self, fn: Any, result_types: Any, name: str | None, input_types: Any = None) -> None:
        from flott.table.sql_types import parse_type
        from flott.table.types import DataType, RowType

        names: list[str] | None = None
        if isinstance(result_types, str):
            parsed = parse_type(result_types)
            if isinstance(parsed, RowType):
                names, result_types = parsed.field_names(), parsed.field_types()
            else:
                result_types = [parsed]
        elif isinstance(result_types, RowType):
            result_types = result_types.field_types()
        elif isinstance(result_types, DataType):
            result_types = [result_types]
        elif result_types is None:
            raise NotYetSupportedError(
                "a Python table function needs its result_types (type inference is not yet supported)"
            )
        types = [parse_type(t) if isinstance(t, str) else t for t in result_types]
        for t in types:
            if not isinstance(t, DataType):
                raise TypeError(
                    f"Invalid result_type: result_type should be DataType or str but contains {t}"
                )
        super().__init__(fn, "table", RowType([]), name, input_types)
        self.result_types: list[DataType] = types
        self.result_names: list[str] = names or [f"f{i}" for i in range(len(types))]
        self.alias_names: list[str] | None = None

    def evaluator(self, arg_types: Any = None) -> Any:
        return _TableFunctionEvaluator(self.fn)

    def alias(self, *alias_names: str) -> UserDefinedTableFunctionWrapper:
        self.alias_names = list(alias_names)
        return self


class _TableFunctionEvaluator(_FunctionEvaluator):
    """The user's eval, opened once per subtask, its result as a list of rows (each a tuple of the
    result columns), normalised as PyFlink does: None is no row; a list, range or generator is one
    row per item; anything else one row. A row is a tuple's or Row's fields, else a single value."""

    def __init__(self, fn: Any) -> None:
        super().__init__(fn)
        self._call = fn.eval if isinstance(fn, TableFunction) else fn

    def __call__(self, *args: Any) -> Any:
        if not self._opened:
            self._opened = True
            if isinstance(self.fn, TableFunction):
                self.fn.open(FunctionContext())
                self._call = self.fn.eval
        result = self._call(*args)
        if result is None:
            return ()
        if isinstance(result, (list, range, types.GeneratorType)):
            return [_one_row(item) for item in result]
        return [_one_row(result)]

    def close(self) -> None:
        if self._opened and isinstance(self.fn, TableFunction):
            self.fn.close()


def _one_row(value: Any) -> tuple[Any, ...]:
    if isinstance(value, tuple):
        return value
    if isinstance(value, Row):
        return tuple(value._values)
    return (value,)


def udtf(
    f: Any = None,
    input_types: Any = None,
    result_types: Any = None,
    deterministic: Any = None,
    name: str | None = None,
) -> Any:
    if f is None:
        return functools.partial(udtf, input_types=input_types, result_types=result_types, name=name)
    return UserDefinedTableFunctionWrapper(f, result_types, name, input_types)
