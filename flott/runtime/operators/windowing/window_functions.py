"""What runs when a window fires (Flink's ``InternalWindowFunction`` family).

The user chooses one of PyFlink's shapes: an incremental ``reduce`` or
``aggregate`` (the window keeps one value) optionally followed by a
WindowFunction/ProcessWindowFunction that sees that one value, or ``apply`` /
``process`` over all elements of the window. Each shape becomes one
:class:`InternalWindowFunction` with a single call signature, resolved once
when the operator is built, so firing a window is one call.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flott.api.streaming.functions import ProcessAllWindowFunction, ProcessWindowFunction
from flott.errors import InvalidJobGraphError
from flott.runtime.operators.specs import WindowOperatorSpec
from flott.runtime.operators.stream_operator import close_user_function, open_user_function, user_method


class InternalWindowFunction:
    """``process(key, window, context, contents)`` -> outputs; ``clear`` when the window is cleaned up.

    ``contents`` is the list of elements (apply/process) or the single
    reduced/aggregated value (reduce/aggregate).
    """

    def __init__(self, user_objects: list[Any]) -> None:
        self._user_objects = [o for o in user_objects if o is not None]

    def open(self, runtime_context: Any) -> None:
        for obj in self._user_objects:
            open_user_function(obj, runtime_context)

    def close(self) -> None:
        for obj in self._user_objects:
            close_user_function(obj)

    def process(self, key: Any, window: Any, context: Any, contents: Any) -> Iterable[Any] | None:
        raise NotImplementedError

    def clear(self, window: Any, context: Any) -> None:
        """Only ProcessWindowFunctions have per-window state of their own to clear."""


class _PassThrough(InternalWindowFunction):
    """reduce/aggregate without a window function: the window's one value is the result."""

    def process(self, key: Any, window: Any, context: Any, contents: Any) -> Iterable[Any]:
        return (contents,)


class _Apply(InternalWindowFunction):
    """A WindowFunction (``apply(key, window, inputs)``) or AllWindowFunction (``apply(window, inputs)``)."""

    def __init__(self, function: Any, single_value: bool, all_window: bool, user_objects: list[Any]) -> None:
        super().__init__(user_objects)
        self._apply = user_method(function, "apply", "window function")
        self._single_value = single_value
        self._all_window = all_window

    def process(self, key: Any, window: Any, context: Any, contents: Any) -> Iterable[Any] | None:
        inputs = [contents] if self._single_value else contents
        if self._all_window:
            return self._apply(window, inputs)  # type: ignore[no-any-return]
        return self._apply(key, window, inputs)  # type: ignore[no-any-return]


class _Process(InternalWindowFunction):
    """A ProcessWindowFunction (``process(key, ctx, elements)``) or ProcessAllWindowFunction."""

    def __init__(self, function: Any, single_value: bool, all_window: bool, user_objects: list[Any]) -> None:
        super().__init__(user_objects)
        self._function = function
        self._process = user_method(function, "process", "process window function")
        clear = getattr(function, "clear", None)
        if getattr(clear, "__func__", None) in (ProcessWindowFunction.clear, ProcessAllWindowFunction.clear):
            clear = None  # the base class's no-op: nothing to call per window cleanup
        self._clear = clear if callable(clear) else None
        self._single_value = single_value
        self._all_window = all_window

    def process(self, key: Any, window: Any, context: Any, contents: Any) -> Iterable[Any] | None:
        elements = [contents] if self._single_value else contents
        if self._all_window:
            return self._process(context, elements)  # type: ignore[no-any-return]
        return self._process(key, context, elements)  # type: ignore[no-any-return]

    def clear(self, window: Any, context: Any) -> None:
        if self._clear is not None:
            self._clear(context)


def _is_process_window_function(function: Any) -> bool:
    if isinstance(function, ProcessWindowFunction | ProcessAllWindowFunction):
        return True
    return callable(getattr(function, "process", None)) and not callable(getattr(function, "apply", None))


def create_window_function(spec: WindowOperatorSpec) -> InternalWindowFunction:
    """The internal function of ``spec`` (which of PyFlink's window function shapes it is)."""
    kind = spec.function_kind
    incremental = kind in ("reduce", "aggregate")
    user = [spec.reduce_function, spec.aggregate_function, spec.window_function]
    window_function = spec.window_function
    if window_function is None:
        if incremental:
            return _PassThrough(user)
        raise InvalidJobGraphError(f"window '{kind}' needs a window function")
    if kind in ("process",) or (incremental and _is_process_window_function(window_function)):
        return _Process(window_function, incremental, spec.all_window, user)
    if kind in ("apply",) or incremental:
        return _Apply(window_function, incremental, spec.all_window, user)
    raise InvalidJobGraphError(f"unknown window function kind {kind!r}")
