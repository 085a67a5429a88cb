"""map, flat_map, filter and non-keyed process (StreamMap, StreamFlatMap, StreamFilter, ProcessOperator).

``map``/``filter``/``flat_map`` are lazy: they wrap their input in the builtins
``map``/``filter``/``chain.from_iterable``, which call the user's function from
C, and the chain lets the next operator pull records through them. The
per-record cost is the user's function plus a few tens of ns.

On event-time paths records are ``(value, timestamp)`` pairs: the user's
function sees the value and each output keeps its input's timestamp, as
Flink's operators keep a StreamRecord's timestamp. That costs a generator
step and a tuple per record (~100 ns), paid only where event time is used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import chain
from operator import itemgetter
from typing import Any

from flott.api.common.output_tag import OutputTag
from flott.api.streaming.functions import ProcessFunction
from flott.runtime.operators.stream_operator import (
    OperatorSetup,
    StreamOperator,
    close_user_function,
    open_user_function,
    user_method,
)

_flatten = chain.from_iterable

BATCH_FLAT_MAP = "flott_flat_map_batch"
"""A flat_map function object with this method gets its records in bundles, as PyFlink's Python
operators do: a list of values in, a list of as many results (an iterable or None each, what
``flat_map`` would give for that value) out. A bundle holds at most ``BUNDLE``'s record count
and ends after its milliseconds, before a watermark passes, before a checkpoint barrier and at
the end of input. flott's Table runtime uses it to evaluate vectorized (pandas) UDFs."""
BUNDLE = "flott_bundle"
"""(max records, max milliseconds) of a bundle, on a function with :data:`BATCH_FLAT_MAP`."""
_first_field = itemgetter(0)


class _UserFunctionOperator(StreamOperator):
    """An operator around one user function object resolved to the method ``method_name``."""

    method_name = ""

    def __init__(self, setup: OperatorSetup) -> None:
        super().__init__(setup)
        self._setup = setup
        self._timestamped = setup.timestamped_input
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
        if self._timestamped:
            call = self._call
            return ((call(value), ts) for value, ts in records)
        return map(self._call, records)


class StreamFlatMap(_UserFunctionOperator):
    """PyFlink flat_map functions return or yield an iterable per record; we flatten in C.

    A function may also return None (nothing): ``filter(None, ...)`` drops it, and
    with it empty results, which contribute nothing anyway.
    """

    method_name = "flat_map"
    lazy = True

    def __init__(self, setup: OperatorSetup) -> None:
        super().__init__(setup)
        self._batch_call: Callable[[list[Any]], list[Any]] | None = getattr(
            self._function, BATCH_FLAT_MAP, None
        )
        self._bundle: list[Any] = []
        self._bundle_timer: Any = None
        self._pts = setup.processing_time_service
        bundle: tuple[int, int] = getattr(self._function, BUNDLE, (1000, 1000))
        self._bundle_size, self._bundle_time_ms = bundle
        if self._batch_call is not None:
            self.lazy = False

    def transform(self, records: Iterable[Any]) -> Iterable[Any]:
        if self._timestamped:
            call = self._call
            return ((out, ts) for value, ts in records for out in (call(value) or ()))
        return _flatten(filter(None, map(self._call, records)))

    # --- bundles (functions with BATCH_FLAT_MAP) ----------------------------------------------

    def process_batch(self, batch: Iterable[Any]) -> list[Any]:
        if self._batch_call is None:
            return list(self.transform(batch))
        bundle = self._bundle
        bundle.extend(batch)
        if len(bundle) < self._bundle_size:
            self._ensure_bundle_timer()
            return []
        size = self._bundle_size
        full = len(bundle) - len(bundle) % size
        ready, self._bundle = bundle[:full], bundle[full:]
        out = self._evaluate(ready)
        if self._bundle:
            self._ensure_bundle_timer()
        return out

    def _evaluate(self, records: list[Any]) -> list[Any]:
        """The function's results for ``records``; outputs keep their input's timestamp."""
        assert self._batch_call is not None
        out: list[Any] = []
        size = self._bundle_size
        for start in range(0, len(records), size):
            chunk = records[start : start + size]
            if not self._timestamped:
                out.extend(_flatten(filter(None, self._batch_call(chunk))))
                continue
            results = self._batch_call([value for value, _ in chunk])
            out.extend((o, ts) for (_, ts), outs in zip(chunk, results, strict=True) for o in (outs or ()))
        return out

    def _flush(self) -> list[Any]:
        if self._bundle_timer is not None:
            self._bundle_timer.cancel()
            self._bundle_timer = None
        bundle, self._bundle = self._bundle, []
        return self._evaluate(bundle) if bundle else []

    def _ensure_bundle_timer(self) -> None:
        if self._bundle_timer is not None or not self._bundle:
            return
        due = self._pts.get_current_processing_time() + self._bundle_time_ms
        self._bundle_timer = self._pts.register_timer(due, self._on_bundle_time)

    def _on_bundle_time(self, _now: int) -> None:
        self._bundle_timer = None
        out = self._flush()
        if out:
            self.output.collect(out)

    def process_watermark(self, timestamp: int) -> None:
        """A bundle ends before a watermark passes, as PyFlink's Python operators end theirs."""
        if self._batch_call is not None:
            out = self._flush()
            if out:
                self.output.collect(out)
        super().process_watermark(timestamp)

    def end_input(self) -> list[Any]:
        return self._flush() if self._batch_call is not None else []

    def snapshot_operator_state(self, checkpoint_id: int) -> None:
        """A bundle ends ahead of the barrier (Flink's prepareSnapshotPreBarrier), so no state."""
        if self._batch_call is not None:
            out = self._flush()
            if out:
                self.output.collect(out)

    def close(self) -> None:
        if self._bundle_timer is not None:
            self._bundle_timer.cancel()
            self._bundle_timer = None
        super().close()


class StreamFilter(_UserFunctionOperator):
    method_name = "filter"
    lazy = True

    def transform(self, records: Iterable[Any]) -> Iterable[Any]:
        if self._timestamped:
            call = self._call
            return (record for record in records if call(record[0]))
        return filter(self._call, records)


def is_side_output(value: Any) -> bool:
    """PyFlink's way to emit to a side output: yield ``(output_tag, value)``."""
    return type(value) is tuple and len(value) == 2 and isinstance(value[0], OutputTag)


def without_side_outputs(records: list[Any], timestamped: bool = False) -> list[Any]:
    """Drop side-output records (``(OutputTag, value)``, or such a pair with a timestamp).

    Used where no side output of the operator is consumed: PyFlink drops side
    outputs nobody consumes. The common cases are settled by C-level passes
    over the batch (~30 ns per record without tuples, ~80 ns with), not a
    Python call per record.
    """
    if timestamped:
        if not records:
            return records
        values = list(map(_first_field, records))
        if len(without_side_outputs(values)) == len(values):
            return records
        return [r for r in records if not is_side_output(r[0])]
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
    return [r for r in records if not is_side_output(r)]


class ProcessContext(ProcessFunction.Context):
    """``ProcessFunction.Context``: the record's timestamp, time, and ``output`` to a side output.

    Non-keyed operators have no timers (Flink refuses them outside keyed streams);
    the timer service answers the current time only.
    """

    def __init__(self, operator: StreamOperator, timer_service: Any) -> None:
        self._operator = operator
        self._timer_service = timer_service
        self.record_timestamp: int | None = None
        self.out: list[Any] = []

    def timestamp(self) -> int | None:
        return self.record_timestamp

    def timer_service(self) -> Any:
        return self._timer_service

    def output(self, output_tag: OutputTag, value: Any) -> None:
        """Emit ``value`` to the side output ``output_tag`` (same as yielding ``(output_tag, value)``)."""
        if not isinstance(output_tag, OutputTag):
            raise TypeError("output() takes an OutputTag and a value")
        ts = self.record_timestamp
        self.out.append(((output_tag, value), ts) if self._operator_timestamped else (output_tag, value))

    @property
    def _operator_timestamped(self) -> bool:
        return bool(getattr(self._operator, "_timestamped", False))


class NonKeyedTimerService:
    """The timer service of a non-keyed ProcessFunction: time queries only (as in Flink)."""

    def __init__(self, operator: StreamOperator, processing_time: Callable[[], int]) -> None:
        self._operator = operator
        self._processing_time = processing_time

    def current_processing_time(self) -> int:
        return self._processing_time()

    def current_watermark(self) -> int:
        return self._operator.current_watermark

    def _refuse(self) -> RuntimeError:
        # Flink's UnsupportedOperationException: a misuse in user code, reported at the user's call.
        return RuntimeError("Setting timers is only supported on a keyed streams.")

    def register_processing_time_timer(self, timestamp: int) -> None:
        raise self._refuse()

    def register_event_time_timer(self, timestamp: int) -> None:
        raise self._refuse()

    def delete_processing_time_timer(self, timestamp: int) -> None:
        raise self._refuse()

    def delete_event_time_timer(self, timestamp: int) -> None:
        raise self._refuse()


class ProcessOperator(_UserFunctionOperator):
    """``process`` with a ProcessFunction: ``process_element(value, ctx)`` *yields* its outputs."""

    method_name = "process_element"

    def __init__(self, setup: OperatorSetup) -> None:
        super().__init__(setup)
        pts = setup.processing_time_service
        self._ctx = ProcessContext(self, NonKeyedTimerService(self, pts.get_current_processing_time))
        self._keep_side_outputs = bool(setup.side_output_tags)

    def process_batch(self, batch: Iterable[Any]) -> list[Any]:
        out: list[Any] = []
        process_element = self._call
        ctx = self._ctx
        ctx.out = out
        if self._timestamped:
            append = out.append
            for value, ts in batch:
                ctx.record_timestamp = ts
                produced = process_element(value, ctx)
                if produced is not None:
                    for result in produced:
                        append((result, ts))
        else:
            extend = out.extend
            for value in batch:
                produced = process_element(value, ctx)
                if produced is not None:
                    extend(produced)
        if self._keep_side_outputs:
            return out
        return without_side_outputs(out, self._timestamped)
