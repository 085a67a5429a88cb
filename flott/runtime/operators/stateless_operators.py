"""map, flat_map, filter and non-keyed process (StreamMap, StreamFlatMap, StreamFilter, ProcessOperator).

``map``/``filter``/``flat_map`` are lazy: they wrap their input in the builtins
``map``/``filter``/``chain.from_iterable``, which call the user's function from
C, and the chain lets the next operator pull records through them. The
per-record cost is the user's function plus a few tens of ns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import chain
from operator import itemgetter
from typing import Any

from flott.datastream.functions import ProcessFunction
from flott.datastream.output_tag import OutputTag
from flott.errors import NotYetSupportedError
from flott.runtime.operators.stream_operator import (
    OperatorSetup,
    StreamOperator,
    close_user_function,
    open_user_function,
    user_method,
)

_flatten = chain.from_iterable
_first_field = itemgetter(0)


class _UserFunctionOperator(StreamOperator):
    """An operator around one user function object resolved to the method ``method_name``."""

    method_name = ""

    def __init__(self, setup: OperatorSetup) -> None:
        super().__init__(setup)
        self._setup = setup
        self._function = setup.load_function(setup.descriptor.function, "function")
        self._call: Callable[..., Any] = user_method(
            self._function, self.method_name, f"{setup.descriptor.kind} '{self.name}'"
        )

    def open(self) -> None:
        open_user_function(self._function, self._setup.runtime_context(None))

    def close(self) -> None:
        close_user_function(self._function)


class StreamMap(_UserFunctionOperator):
    method_name = "map"
    lazy = True

    def transform(self, records: Iterable[Any]) -> Iterable[Any]:
        return map(self._call, records)


class StreamFlatMap(_UserFunctionOperator):
    """PyFlink flat_map functions return or yield an iterable per record; we flatten in C.

    A function may also return None (nothing): ``filter(None, ...)`` drops it, and
    with it empty results, which contribute nothing anyway.
    """

    method_name = "flat_map"
    lazy = True

    def transform(self, records: Iterable[Any]) -> Iterable[Any]:
        return _flatten(filter(None, map(self._call, records)))


class StreamFilter(_UserFunctionOperator):
    method_name = "filter"
    lazy = True

    def transform(self, records: Iterable[Any]) -> Iterable[Any]:
        return filter(self._call, records)


def timers_not_supported() -> NotYetSupportedError:
    return NotYetSupportedError(
        "timers (ctx.timer_service(): processing-time and event-time timers) are not supported yet"
    )


def _is_side_output(record: Any) -> bool:
    return type(record) is tuple and len(record) == 2 and isinstance(record[0], OutputTag)


def without_side_outputs(records: list[Any]) -> list[Any]:
    """Drop ``(OutputTag, value)`` records: PyFlink's way to emit to a side output.

    No side output can be consumed yet (``get_side_output`` is not built), and
    PyFlink drops side outputs nobody consumes, so dropping them is faithful.
    The common cases are settled by C-level passes over the batch (~30 ns per
    record without tuples, ~80 ns with), not a Python call per record.
    """
    types = set(map(type, records))
    if tuple not in types:
        return records
    if len(types) == 1:
        try:
            first_types = set(map(type, map(_first_field, records)))
        except IndexError:  # an empty tuple among them: take the slow path
            first_types = {OutputTag}
        if not any(issubclass(t, OutputTag) for t in first_types):
            return records
    return [r for r in records if not _is_side_output(r)]


class ProcessContext(ProcessFunction.Context):
    """``ProcessFunction.Context``: record timestamp (none yet: no event time) and the timer service."""

    def timestamp(self) -> int | None:
        return None

    def timer_service(self) -> Any:
        raise timers_not_supported()


class ProcessOperator(_UserFunctionOperator):
    """``process`` with a ProcessFunction: ``process_element(value, ctx)`` *yields* its outputs."""

    method_name = "process_element"

    def __init__(self, setup: OperatorSetup) -> None:
        super().__init__(setup)
        self._ctx = ProcessContext()

    def process_batch(self, batch: Iterable[Any]) -> list[Any]:
        out: list[Any] = []
        extend = out.extend
        process_element = self._call
        ctx = self._ctx
        for value in batch:
            produced = process_element(value, ctx)
            if produced is not None:
                extend(produced)
        return without_side_outputs(out)
