"""Keyed operators: reduce and its built-in aggregations, and keyed process.

Both own a :class:`KeyedStateBackend`. Per record they compute the key,
make it the backend's current key (so user state reads see that key) and call
the user function. The keyed reduce keeps its running value in a state table
of the backend (``key -> value``), indexing that dict directly: that is one
dict operation per record and the value still ends up in snapshots.

STREAMING mode emits every updated value, like PyFlink; BATCH mode emits the
final value per key at end of input, like Flink's batch execution.

The keyed process operator owns an :class:`InternalTimerService`: timers set
through ``ctx.timer_service()`` live in the backend, event-time ones fire when
a watermark passes them, processing-time ones on the wall clock; ``on_timer``
outputs carry the timer's timestamp (event time) or none (processing time).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from flott.api.common.output_tag import OutputTag
from flott.api.streaming.functions import KeyedProcessFunction
from flott.api.streaming.time_domain import TimeDomain
from flott.common.fit_check import LOCALS, fit_branch, namespace
from flott.common.type_conversion import ValueFix
from flott.runtime.operators.aggregation import create_aggregator
from flott.runtime.operators.stateless_operators import without_side_outputs
from flott.runtime.operators.stream_operator import (
    OperatorSetup,
    StreamOperator,
    close_user_function,
    open_user_function,
    user_method,
)
from flott.runtime.operators.timer_service import InternalTimerService, KeyedTimerService
from flott.runtime.operators.user_timers import UserTimerFiring
from flott.runtime.state.backend import KeyedStateBackend
from flott.runtime.state.key_groups import unhashable_key_error

REDUCE_STATE_NAME = "_op_state"
"""State name of the keyed reduce's running value (Flink uses the same name)."""

AGGREGATION_KINDS = ("sum", "min", "max", "min_by", "max_by")


def _rethrow_unhashable(key: Any, error: TypeError) -> None:
    """Turn 'unhashable type' from a state dict into an error that names the key selector."""
    try:
        hash(key)
    except TypeError:
        raise unhashable_key_error(key, error) from None


class StreamGroupedReduceOperator(StreamOperator):
    """``reduce`` on a keyed stream, and ``sum``/``min``/``max``/``min_by``/``max_by`` (config ``field``)."""

    def __init__(self, setup: OperatorSetup) -> None:
        super().__init__(setup)
        self._setup = setup
        self._streaming = setup.streaming
        self._key_object, self._key = setup.key_selector()
        if setup.descriptor.kind in AGGREGATION_KINDS:
            field = setup.descriptor.config.get("field", 0)
            self._function: Any = create_aggregator(setup.descriptor.kind, field)
        else:
            self._function = setup.load_function(setup.descriptor.function, "reduce function")
        self._reduce: Callable[[Any, Any], Any] = user_method(
            self._function, "reduce", f"reduce '{self.name}'"
        )
        self.backend: KeyedStateBackend = setup.keyed_state_backend()
        self._values = self.backend.state_table(REDUCE_STATE_NAME)
        self._timestamped = setup.timestamped_input

    def open(self) -> None:
        ctx = self._setup.runtime_context(self.backend)
        open_user_function(self._key_object, ctx)
        open_user_function(self._function, ctx)

    def fold_input_check(self, type_info: Any, fix: ValueFix) -> bool:
        """Check the input against its producer's declared ``type_info`` inside the BATCH loop
        (a BATCH combiner, fed by the function before key_by); ``fix`` converts or refuses a record
        that does not fit as it is. False where the operator has no such loop (STREAMING,
        timestamped input, a type without a generated check): its caller then checks the input
        in front of it. In the loop the check costs no call and no generator step per record."""
        if self._streaming or self._timestamped:
            return False
        body = [
            "key = key_of(value)",
            "backend.current_key = key",
            "if key in values:",
            "    value = reduce(values[key], value)",
            "values[key] = value",
        ]
        fits = fit_branch(type_info, "value", [*body, "continue"], "            ")
        if fits is None:
            return False
        source = "\n".join(
            [
                f"def run(batch, key_of, reduce, values, backend, {LOCALS}):",
                "    key = None",
                "    try:",
                "        for value in batch:",
                *fits,
                "            value = SLOW(value)",
                *(f"            {line}" for line in body),
                "    except TypeError as e:",
                "        RETHROW(key, e)",
                "        raise",
                "    return []",
                "",
            ]
        )
        compiled = namespace(SLOW=fix, RETHROW=_rethrow_unhashable)
        exec(compile(source, f"<checked batch reduce '{self.name}'>", "exec"), compiled)
        run = compiled["run"]
        key_of, reduce, values, backend = self._key, self._reduce, self._values, self.backend

        def process_batch(batch: Iterable[Any]) -> list[Any]:
            return run(batch, key_of, reduce, values, backend)  # type: ignore[no-any-return]

        self.process_batch = process_batch  # type: ignore[method-assign]
        return True

    def process_batch(self, batch: Iterable[Any]) -> list[Any]:
        key_of = self._key
        reduce = self._reduce
        values = self._values
        backend = self.backend
        key: Any = None
        try:
            if self._timestamped:
                return self._process_timestamped(batch)
            if self._streaming:
                out: list[Any] = []
                emit = out.append
                for value in batch:
                    key = key_of(value)
                    backend.current_key = key
                    if key in values:
                        value = reduce(values[key], value)
                    values[key] = value
                    emit(value)
                return out
            for value in batch:
                key = key_of(value)
                backend.current_key = key
                if key in values:
                    value = reduce(values[key], value)
                values[key] = value
            return []
        except TypeError as e:
            _rethrow_unhashable(key, e)
            raise

    def _process_timestamped(self, batch: Iterable[Any]) -> list[Any]:
        key_of = self._key
        reduce = self._reduce
        values = self._values
        backend = self.backend
        streaming = self._streaming
        out: list[Any] = []
        emit = out.append
        key: Any = None
        try:
            for value, ts in batch:
                key = key_of(value)
                backend.current_key = key
                if key in values:
                    value = reduce(values[key], value)
                values[key] = value
                if streaming:
                    emit((value, ts))
        except TypeError as e:
            _rethrow_unhashable(key, e)
            raise
        return out

    def end_input(self) -> list[Any]:
        if self._streaming:
            return []
        if self._timestamped:
            # Flink's batch reduce emits the final value without a timestamp.
            return [(v, None) for v in self._values.values()]
        return list(self._values.values())

    def close(self) -> None:
        try:
            close_user_function(self._function)
            close_user_function(self._key_object)
        finally:
            self.backend.dispose()


class KeyedProcessContext(KeyedProcessFunction.OnTimerContext):
    """``KeyedProcessFunction.Context`` and ``OnTimerContext``: key, timestamp, timers, side outputs.

    One object serves both: ``time_domain()`` is only meaningful inside ``on_timer``.
    """

    def __init__(self, backend: KeyedStateBackend, timer_service: KeyedTimerService) -> None:
        self._backend = backend
        self._timer_service = timer_service
        self.record_timestamp: int | None = None
        self.domain: TimeDomain | None = None
        self.out: list[Any] = []
        self.timestamped_output = False

    def get_current_key(self) -> Any:
        return self._backend.current_key

    def timestamp(self) -> int | None:
        return self.record_timestamp

    def timer_service(self) -> KeyedTimerService:
        return self._timer_service

    def time_domain(self) -> TimeDomain:
        if self.domain is None:
            raise RuntimeError("time_domain() is only available in on_timer()")
        return self.domain

    def output(self, output_tag: OutputTag, value: Any) -> None:
        """Emit ``value`` to the side output ``output_tag`` (same as yielding ``(output_tag, value)``)."""
        if not isinstance(output_tag, OutputTag):
            raise TypeError("output() takes an OutputTag and a value")
        side = (output_tag, value)
        self.out.append((side, self.record_timestamp) if self.timestamped_output else side)


class KeyedProcessOperator(UserTimerFiring, StreamOperator):
    """``process`` on a keyed stream with a KeyedProcessFunction; ``process_element`` yields outputs."""

    def __init__(self, setup: OperatorSetup) -> None:
        super().__init__(setup)
        self._setup = setup
        self._key_object, self._key = setup.key_selector()
        self._function = setup.load_function(setup.descriptor.function, "KeyedProcessFunction")
        self._process_element = user_method(self._function, "process_element", f"keyed process '{self.name}'")
        on_timer = getattr(self._function, "on_timer", None)
        self._on_timer = on_timer if callable(on_timer) else None
        self.backend: KeyedStateBackend = setup.keyed_state_backend()
        self.timers = InternalTimerService("user-timers", self.backend, setup.processing_time_service, self)
        self._ctx = KeyedProcessContext(self.backend, KeyedTimerService(self.timers))
        self._timestamped = setup.timestamped_input
        self._ctx.timestamped_output = self._timestamped
        self._keep_side_outputs = bool(setup.side_output_tags)
        self._batch_size = setup.batch_size
        self._timer_out: list[Any] = []
        self._timer_results_timestamped = self._timestamped

    def open(self) -> None:
        ctx = self._setup.runtime_context(self.backend)
        open_user_function(self._key_object, ctx)
        open_user_function(self._function, ctx)

    def _finish_outputs(self, out: list[Any]) -> list[Any]:
        if self._keep_side_outputs:
            return out
        return without_side_outputs(out, self._timestamped)

    def process_batch(self, batch: Iterable[Any]) -> list[Any]:
        out: list[Any] = []
        key_of = self._key
        process_element = self._process_element
        ctx = self._ctx
        ctx.out = out
        ctx.domain = None
        backend = self.backend
        if self._timestamped:
            append = out.append
            for value, ts in batch:
                backend.current_key = key_of(value)
                ctx.record_timestamp = ts
                produced = process_element(value, ctx)
                if produced is not None:
                    for result in produced:
                        append((result, ts))
        else:
            extend = out.extend
            for value in batch:
                backend.current_key = key_of(value)
                produced = process_element(value, ctx)
                if produced is not None:
                    extend(produced)
        return self._finish_outputs(out)

    # --- timers ---------------------------------------------------------------------------------

    def _finish_timer_output(self, out: list[Any]) -> list[Any]:
        return self._finish_outputs(out)

    def close(self) -> None:
        try:
            self.timers.close()
            close_user_function(self._function)
            close_user_function(self._key_object)
        finally:
            self.backend.dispose()
