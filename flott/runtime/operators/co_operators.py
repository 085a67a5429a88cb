"""Two-input operators: ``connect(...)`` with CoMapFunction, CoFlatMapFunction, CoProcessFunction and
KeyedCoProcessFunction (Flink's ``CoStreamMap``, ``CoStreamFlatMap``, ``CoProcessOperator``,
``KeyedCoProcessOperator``).

The task feeds input 1 through :meth:`process_batch` and input 2 through
:meth:`process_batch2`; watermarks arrive already combined over both inputs
(the task's valves take the minimum). When both inputs are keyed
(``connect(...).key_by(k1, k2)``) the operator has one keyed state backend:
both sides see the same state for equal keys, which is what makes a join of
two keyed streams possible; the keyed process function also gets timers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from flott.api.streaming.functions import CoProcessFunction, KeyedCoProcessFunction
from flott.errors import InvalidJobGraphError
from flott.runtime.operators.keyed_operators import KeyedProcessContext
from flott.runtime.operators.specs import KeySelectorPair
from flott.runtime.operators.stateless_operators import NonKeyedTimerService, without_side_outputs
from flott.runtime.operators.stream_operator import (
    TIMESTAMPED_INPUT2,
    OperatorSetup,
    StreamOperator,
    close_user_function,
    open_user_function,
    user_method,
)
from flott.runtime.operators.timer_service import InternalTimerService, KeyedTimerService
from flott.runtime.operators.user_timers import UserTimerFiring
from flott.runtime.state.backend import KeyedStateBackend


class CoProcessContext(CoProcessFunction.Context):
    """``CoProcessFunction.Context``: the record's timestamp and a query-only timer service."""

    def __init__(self, timer_service: Any) -> None:
        self._timer_service = timer_service
        self.record_timestamp: int | None = None
        self.out: list[Any] = []
        self.timestamped_output = False

    def timestamp(self) -> int | None:
        return self.record_timestamp

    def timer_service(self) -> Any:
        return self._timer_service

    def output(self, output_tag: Any, value: Any) -> None:
        side = (output_tag, value)
        self.out.append((side, self.record_timestamp) if self.timestamped_output else side)


class KeyedCoProcessContext(KeyedProcessContext, KeyedCoProcessFunction.OnTimerContext):
    """``KeyedCoProcessFunction.Context`` / ``OnTimerContext``: key, timestamp, timers, side outputs."""


class _TwoInputOperator(StreamOperator):
    """Shared plumbing: per-input timestamps, optional keys, side outputs, the per-record loop."""

    methods: tuple[str, str] = ("", "")
    takes_context = False
    single_result = False
    """True for map-like functions: the method returns one record, not an iterable of them."""

    def __init__(self, setup: OperatorSetup) -> None:
        super().__init__(setup)
        self._setup = setup
        self._function = setup.load_function(setup.descriptor.function, "function")
        what = f"{setup.descriptor.kind} '{self.name}'"
        self._call1 = user_method(self._function, self.methods[0], what)
        self._call2 = user_method(self._function, self.methods[1], what)
        self._ts1 = setup.timestamped_input
        self._ts2 = bool(setup.config.get(TIMESTAMPED_INPUT2, False))
        self._ts_out = setup.timestamped_output
        self._keep_side_outputs = bool(setup.side_output_tags)
        self._key_objects: list[Any] = []
        self._key1: Callable[[Any], Any] | None = None
        self._key2: Callable[[Any], Any] | None = None
        self.backend: KeyedStateBackend | None = None
        if setup.descriptor.key_selector is not None:
            pair = setup.load_function(setup.descriptor.key_selector, "key selectors")
            if not isinstance(pair, KeySelectorPair):
                raise InvalidJobGraphError(f"two-input operator '{self.name}' needs a key selector per input")
            # A keyed broadcast operator is keyed on its first input only (key_selector2 None).
            self._key_objects = [k for k in (pair.key_selector1, pair.key_selector2) if k is not None]
            self._key1 = user_method(pair.key_selector1, "get_key", f"first key selector of '{self.name}'")
            if pair.key_selector2 is not None:
                what = f"second key selector of '{self.name}'"
                self._key2 = user_method(pair.key_selector2, "get_key", what)
            self.backend = setup.keyed_state_backend()
        self._ctx: Any = None

    def open(self) -> None:
        ctx = self._setup.runtime_context(self.backend)
        for obj in self._key_objects:
            open_user_function(obj, ctx)
        open_user_function(self._function, ctx)

    def process_batch(self, batch: Iterable[Any]) -> list[Any]:
        return self._process(batch, self._ts1, self._key1, self._call1)

    def process_batch2(self, batch: Iterable[Any]) -> list[Any]:
        return self._process(batch, self._ts2, self._key2, self._call2)

    def _finish(self, out: list[Any]) -> list[Any]:
        if self._keep_side_outputs:
            return out
        return without_side_outputs(out, self._ts_out)

    def _process(
        self,
        batch: Iterable[Any],
        timestamped: bool,
        key_of: Callable[[Any], Any] | None,
        call: Callable[..., Any],
    ) -> list[Any]:
        out: list[Any] = []
        ctx = self._ctx
        if ctx is not None:
            ctx.out = out
            ctx.domain = None
        ts_out = self._ts_out
        backend = self.backend
        takes_context = self.takes_context
        single = self.single_result
        ts = None
        for record in batch:
            if timestamped:
                value, ts = record
            else:
                value = record
            if key_of is not None:
                assert backend is not None
                backend.current_key = key_of(value)
            if ctx is not None:
                ctx.record_timestamp = ts
            produced = call(value, ctx) if takes_context else call(value)
            if single:
                out.append((produced, ts) if ts_out else produced)
            elif produced is not None:
                if ts_out:
                    out.extend([(result, ts) for result in produced])
                else:
                    out.extend(produced)
        return self._finish(out)

    def close(self) -> None:
        try:
            close_user_function(self._function)
            for obj in self._key_objects:
                close_user_function(obj)
        finally:
            if self.backend is not None:
                self.backend.dispose()


class CoStreamMap(_TwoInputOperator):
    methods = ("map1", "map2")
    single_result = True


class CoStreamFlatMap(_TwoInputOperator):
    methods = ("flat_map1", "flat_map2")


class CoProcessOperator(_TwoInputOperator):
    """``process`` with a CoProcessFunction on connected (non-keyed) streams."""

    methods = ("process_element1", "process_element2")
    takes_context = True

    def __init__(self, setup: OperatorSetup) -> None:
        super().__init__(setup)
        pts = setup.processing_time_service
        self._ctx = CoProcessContext(NonKeyedTimerService(self, pts.get_current_processing_time))
        self._ctx.timestamped_output = self._ts_out


class KeyedCoProcessOperator(UserTimerFiring, _TwoInputOperator):
    """``process`` with a KeyedCoProcessFunction on connected keyed streams: shared keyed state, timers."""

    methods = ("process_element1", "process_element2")
    takes_context = True

    def __init__(self, setup: OperatorSetup) -> None:
        super().__init__(setup)
        if self.backend is None:
            raise InvalidJobGraphError(
                f"KeyedCoProcessFunction '{self.name}' needs keyed inputs: "
                "call key_by on the connected streams"
            )
        on_timer = getattr(self._function, "on_timer", None)
        self._on_timer = on_timer if callable(on_timer) else None
        self.timers = InternalTimerService("user-timers", self.backend, setup.processing_time_service, self)
        self._ctx = KeyedCoProcessContext(self.backend, KeyedTimerService(self.timers))
        self._ctx.timestamped_output = self._ts_out
        self._batch_size = setup.batch_size
        self._timer_out: list[Any] = []
        self._timer_results_timestamped = self._ts_out

    def _finish_timer_output(self, out: list[Any]) -> list[Any]:
        return self._finish(out)

    def close(self) -> None:
        self.timers.close()
        super().close()
