"""Python user-defined functions: ``@udf`` / ``ScalarFunction`` and ``@udaf`` / ``AggregateFunction``.

A wrapper carries the function and its declared result type; the planner types the call with it and
the calc calls ``evaluator()`` per row (plain Python, in the task, no serialisation between JVM and
Python as in PyFlink). ``func_type='pandas'`` (vectorized UDFs) is refused until Arrow batches exist.
"""

from __future__ import annotations

import functools
from typing import Any

from flott.errors import NotYetSupportedError

__all__ = [
    "AggregateFunction",
    "FunctionContext",
    "ScalarFunction",
    "UserDefinedFunctionWrapper",
    "udaf",
    "udf",
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


class AggregateFunction(UserDefinedFunction):
    def create_accumulator(self) -> Any:
        raise NotImplementedError

    def accumulate(self, accumulator: Any, *args: Any) -> None:
        raise NotImplementedError

    def retract(self, accumulator: Any, *args: Any) -> None:
        raise NotYetSupportedError(
            f"{type(self).__name__} has no retract(): it cannot aggregate an updating input"
        )

    def get_value(self, accumulator: Any) -> Any:
        raise NotImplementedError


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
        functools.update_wrapper(
            self, fn if callable(fn) and not isinstance(fn, UserDefinedFunction) else type(fn)
        )

    def evaluator(self) -> Any:
        if self.kind == "aggregate":
            return self.fn
        return _FunctionEvaluator(self.fn)

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
    if (udf_type or func_type) != "general":
        raise NotYetSupportedError("vectorized (func_type='pandas') UDFs are not yet supported")
    if f is None:
        return functools.partial(udf, input_types=input_types, result_type=result_type, name=name)
    return UserDefinedFunctionWrapper(f, "scalar", result_type, name, input_types)


def udaf(
    f: Any = None,
    input_types: Any = None,
    result_type: Any = None,
    accumulator_type: Any = None,
    deterministic: Any = None,
    name: str | None = None,
    func_type: str = "general",
) -> Any:
    if func_type != "general":
        raise NotYetSupportedError("vectorized (func_type='pandas') UDAFs are not yet supported")
    if f is None:
        return functools.partial(
            udaf,
            input_types=input_types,
            result_type=result_type,
            accumulator_type=accumulator_type,
            name=name,
        )
    return UserDefinedFunctionWrapper(f, "aggregate", result_type, name, input_types, accumulator_type)


def udtf(f: Any = None, **kwargs: Any) -> Any:
    raise NotYetSupportedError("table functions (@udtf) are not yet supported")
