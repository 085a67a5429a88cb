"""Broadcast state operators: ``stream.connect(other.broadcast(descriptor)).process(...)`` with a
BroadcastProcessFunction or, on a KeyedStream, a KeyedBroadcastProcessFunction (Flink's
``CoBroadcastWithNonKeyedOperator`` and ``CoBroadcastWithKeyedOperator``).

Input 1 is the non-broadcast stream (``process_element``, read-only access to the broadcast
state), input 2 the broadcast stream (``process_broadcast_element``, read-write access). Every
subtask receives every broadcast element, so every subtask builds the same broadcast state, as
long as the user's function updates it deterministically (Flink's contract too).

Broadcast state is *operator* state: one map per declared MapStateDescriptor per subtask. Every
subtask snapshots its copy (mode BROADCAST); a restore at any parallelism gives every new
subtask one whole copy (see ``flott.runtime.checkpoint.restore``). Keyed state and timers of the
keyed variant live in its keyed state backend, as for any keyed operator.

As in Flink, nothing orders the elements of the two inputs against each other in STREAMING
execution. In BATCH execution Flink processes the whole broadcast side first; here the operator
holds the non-broadcast records (and the watermark) until the broadcast input ended, then
processes them, so ``process_element`` sees the complete broadcast state. The held records are
kept in memory (Flink's batch exchanges spill to disk instead).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from flott.api.common.state import BroadcastState, MapStateDescriptor, ReadOnlyBroadcastState
from flott.api.streaming.functions import BroadcastProcessFunction, KeyedBroadcastProcessFunction
from flott.api.streaming.time_domain import TimeDomain
from flott.errors import InvalidJobGraphError
from flott.runtime.checkpoint.metadata import BROADCAST
from flott.runtime.operators.co_operators import _TwoInputOperator
from flott.runtime.operators.specs import BROADCAST_STATE_NAMES
from flott.runtime.operators.stateless_operators import NonKeyedTimerService
from flott.runtime.operators.stream_operator import OperatorSetup
from flott.runtime.operators.timer_service import InternalTimerService, KeyedTimerService
from flott.runtime.operators.user_timers import UserTimerFiring
from flott.runtime.state.backend import KeyedStateBackend

UNKNOWN_STATE = (
    "The requested state does not exist. Check for typos in your state descriptor, or specify the "
    "state descriptor in the datastream.broadcast(...) call if you forgot to register it."
)


class ReadOnlyBroadcastStateView(ReadOnlyBroadcastState[Any, Any]):
    """The non-broadcast side's view of one broadcast state: reads only."""

    __slots__ = ("_entries",)

    def __init__(self, entries: dict[Any, Any]) -> None:
        self._entries = entries

    def get(self, key: Any) -> Any:
        """The value of ``key``, None if absent (as PyFlink's map state)."""
        return self._entries.get(key)

    def contains(self, key: Any) -> bool:
        return key in self._entries

    def items(self) -> Iterable[tuple[Any, Any]]:
        return list(self._entries.items())

    def keys(self) -> Iterable[Any]:
        return list(self._entries)

    def values(self) -> Iterable[Any]:
        return list(self._entries.values())

    def is_empty(self) -> bool:
        return not self._entries

    def clear(self) -> None:
        raise RuntimeError(
            "The broadcast state is read-only here: only process_broadcast_element may modify it."
        )

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._entries))


class BroadcastStateMap(ReadOnlyBroadcastStateView, BroadcastState[Any, Any]):
    """The broadcast side's view of one broadcast state: reads and writes."""

    __slots__ = ()

    def put(self, key: Any, value: Any) -> None:
        self._entries[key] = value

    def put_all(self, dict_value: dict[Any, Any]) -> None:
        self._entries.update(dict_value)

    def remove(self, key: Any) -> None:
        self._entries.pop(key, None)

    def clear(self) -> None:
        self._entries.clear()


class BroadcastStates:
    """All broadcast states of one operator subtask: declared names, contents, snapshot, restore.

    Pure data, no I/O: the operator hands :meth:`snapshot` to the checkpoint and feeds
    :meth:`restore` with what its subtask's share of a snapshot holds.
    """

    def __init__(self, names: Iterable[str]) -> None:
        self._entries: dict[str, dict[Any, Any]] = {name: {} for name in names}
        self._writable = {name: BroadcastStateMap(e) for name, e in self._entries.items()}
        self._read_only = {name: ReadOnlyBroadcastStateView(e) for name, e in self._entries.items()}

    @property
    def names(self) -> list[str]:
        return list(self._entries)

    def _name(self, descriptor: Any) -> str:
        if not isinstance(descriptor, MapStateDescriptor):
            raise TypeError("get_broadcast_state() takes the MapStateDescriptor given to broadcast()")
        name = descriptor.name
        if name not in self._entries:
            raise RuntimeError(UNKNOWN_STATE)
        return name

    def writable(self, descriptor: Any) -> BroadcastStateMap:
        return self._writable[self._name(descriptor)]

    def read_only(self, descriptor: Any) -> ReadOnlyBroadcastStateView:
        return self._read_only[self._name(descriptor)]

    def contents(self, name: str) -> dict[Any, Any]:
        return dict(self._entries[name])

    def snapshot(self) -> dict[str, tuple[str, list[Any]]]:
        """``{state name: (BROADCAST, [(key, value), ...])}``: this subtask's copy of every state."""
        return {name: (BROADCAST, list(entries.items())) for name, entries in self._entries.items()}

    def restore(self, restored: Callable[[str], list[Any]]) -> None:
        """Fill every declared state from ``restored(name)`` (its ``(key, value)`` pairs)."""
        for name, entries in self._entries.items():
            entries.clear()
            entries.update(restored(name))


class _BroadcastContextBase:
    """What every broadcast context offers: the record's timestamp, time, and broadcast state."""

    def __init__(
        self, states: BroadcastStates, timer_service: Any, processing_time: Callable[[], int]
    ) -> None:
        self._states = states
        self._timer_service = timer_service
        self._processing_time = processing_time
        self._watermark: Callable[[], int] = lambda: 0
        self.record_timestamp: int | None = None
        self.domain: TimeDomain | None = None
        self.out: list[Any] = []
        self.timestamped_output = False

    def timestamp(self) -> int | None:
        return self.record_timestamp

    def current_processing_time(self) -> int:
        return self._processing_time()

    def current_watermark(self) -> int:
        return self._watermark()

    def timer_service(self) -> Any:
        return self._timer_service


class BroadcastProcessContext(_BroadcastContextBase, BroadcastProcessFunction.Context):
    """``BroadcastProcessFunction.Context`` (broadcast side): read-write broadcast state."""

    def get_broadcast_state(self, state_descriptor: Any) -> BroadcastStateMap:
        return self._states.writable(state_descriptor)


class BroadcastProcessReadOnlyContext(_BroadcastContextBase, BroadcastProcessFunction.ReadOnlyContext):
    """``BroadcastProcessFunction.ReadOnlyContext`` (non-broadcast side): read-only broadcast state."""

    def get_broadcast_state(self, state_descriptor: Any) -> ReadOnlyBroadcastStateView:
        return self._states.read_only(state_descriptor)


class KeyedBroadcastContext(_BroadcastContextBase, KeyedBroadcastProcessFunction.Context):
    """``KeyedBroadcastProcessFunction.Context`` (broadcast side): read-write broadcast state; no key,
    so its timer service answers time queries only."""

    def get_broadcast_state(self, state_descriptor: Any) -> BroadcastStateMap:
        return self._states.writable(state_descriptor)


class KeyedBroadcastReadOnlyContext(_BroadcastContextBase, KeyedBroadcastProcessFunction.OnTimerContext):
    """``ReadOnlyContext`` of ``process_element`` and ``OnTimerContext`` of ``on_timer``: the current
    key, keyed timers, read-only broadcast state; ``time_domain()`` only inside ``on_timer``."""

    def __init__(
        self,
        states: BroadcastStates,
        timer_service: Any,
        processing_time: Callable[[], int],
        backend: KeyedStateBackend,
    ) -> None:
        super().__init__(states, timer_service, processing_time)
        self._backend = backend

    def get_broadcast_state(self, state_descriptor: Any) -> ReadOnlyBroadcastStateView:
        return self._states.read_only(state_descriptor)

    def get_current_key(self) -> Any:
        return self._backend.current_key

    def time_domain(self) -> TimeDomain:
        if self.domain is None:
            raise RuntimeError("time_domain() is only available in on_timer()")
        return self.domain


class BroadcastSideTimerService(NonKeyedTimerService):
    """The timer service of the broadcast side of a keyed broadcast function: it has no current key."""

    def _refuse(self) -> RuntimeError:
        return RuntimeError(
            "Timers can only be set in process_element() or on_timer() of a "
            "KeyedBroadcastProcessFunction: process_broadcast_element() has no current key."
        )


class _NoCurrentKey:
    """The keyed backend's current key while the broadcast side runs: keyed state is per key and
    the broadcast side has none, so any keyed state access fails (as in Flink) instead of
    silently using the key of the last non-broadcast record."""

    _message = (
        "Keyed state is not available in process_broadcast_element() of a "
        "KeyedBroadcastProcessFunction: the broadcast side has no current key."
    )

    def __hash__(self) -> int:
        raise RuntimeError(self._message)

    def __reduce__(self) -> Any:
        raise RuntimeError(self._message)

    def __repr__(self) -> str:
        return "<no current key>"


NO_CURRENT_KEY = _NoCurrentKey()


def _state_names(setup: OperatorSetup) -> list[str]:
    names = setup.config.get(BROADCAST_STATE_NAMES)
    if not names:
        raise InvalidJobGraphError(
            f"broadcast operator '{setup.descriptor.name}' declares no broadcast state"
        )
    return [str(n) for n in names]


class _BroadcastOperator(_TwoInputOperator):
    """Shared by both variants: broadcast states, their snapshot and restore, the two contexts."""

    methods = ("process_element", "process_broadcast_element")
    takes_context = True

    def __init__(self, setup: OperatorSetup) -> None:
        super().__init__(setup)
        self.broadcast_states = BroadcastStates(_state_names(setup))
        if setup.restore is not None:
            self.broadcast_states.restore(setup.restored_operator_state)
        self._processing_time = setup.processing_time_service.get_current_processing_time
        self._read_only_ctx: Any = None
        self._broadcast_ctx: Any = None

    def _contexts(self, read_only: Any, broadcast: Any) -> None:
        for ctx in (read_only, broadcast):
            ctx.timestamped_output = self._ts_out
            ctx._watermark = self._watermark
        self._read_only_ctx = read_only
        self._broadcast_ctx = broadcast

    def _watermark(self) -> int:
        return self.current_watermark

    def process_batch(self, batch: Iterable[Any]) -> list[Any]:
        self._ctx = self._read_only_ctx
        return self._process(batch, self._ts1, self._key1, self._call1)

    def process_batch2(self, batch: Iterable[Any]) -> list[Any]:
        self._ctx = self._broadcast_ctx
        return self._process(batch, self._ts2, None, self._call2)

    def snapshot_operator_state(self, checkpoint_id: int) -> dict[str, tuple[str, list[Any]]]:
        return self.broadcast_states.snapshot()


class _BroadcastSideFirstInBatch:
    """BATCH execution: non-broadcast records and watermarks wait until the broadcast input ended
    (Flink's ``BatchCoBroadcastWith*Operator`` rely on the broadcast side being processed first)."""

    output: Any

    def __init__(self, setup: OperatorSetup) -> None:
        super().__init__(setup)  # type: ignore[call-arg]
        self._held: list[list[Any]] | None = None if setup.streaming else []
        self._held_watermark: int | None = None

    def process_batch(self, batch: Iterable[Any]) -> list[Any]:
        if self._held is not None:
            self._held.append(list(batch))
            return []
        return super().process_batch(batch)  # type: ignore[misc, no-any-return]

    def process_watermark(self, timestamp: int) -> None:
        if self._held is not None:
            self._held_watermark = timestamp
            return
        super().process_watermark(timestamp)  # type: ignore[misc]

    def end_input2(self) -> None:
        held, self._held = self._held, None
        if held is None:
            return
        for batch in held:
            out = self.process_batch(batch)
            if out:
                self.output.collect(out)
        if self._held_watermark is not None:
            self.process_watermark(self._held_watermark)


class CoBroadcastWithNonKeyedOperator(_BroadcastSideFirstInBatch, _BroadcastOperator):
    """``process`` with a BroadcastProcessFunction on a non-keyed stream."""

    def __init__(self, setup: OperatorSetup) -> None:
        super().__init__(setup)
        pts = self._processing_time
        timers = NonKeyedTimerService(self, pts)
        self._contexts(
            BroadcastProcessReadOnlyContext(self.broadcast_states, timers, pts),
            BroadcastProcessContext(self.broadcast_states, timers, pts),
        )


class CoBroadcastWithKeyedOperator(_BroadcastSideFirstInBatch, UserTimerFiring, _BroadcastOperator):
    """``process`` with a KeyedBroadcastProcessFunction on a KeyedStream: broadcast state, keyed state
    and timers of the first input's keys."""

    def __init__(self, setup: OperatorSetup) -> None:
        super().__init__(setup)
        if self.backend is None:
            raise InvalidJobGraphError(
                f"KeyedBroadcastProcessFunction '{self.name}' needs a keyed first input: call key_by"
            )
        on_timer = getattr(self._function, "on_timer", None)
        self._on_timer = on_timer if callable(on_timer) else None
        self.timers = InternalTimerService("user-timers", self.backend, setup.processing_time_service, self)
        pts = self._processing_time
        self._contexts(
            KeyedBroadcastReadOnlyContext(
                self.broadcast_states, KeyedTimerService(self.timers), pts, self.backend
            ),
            KeyedBroadcastContext(self.broadcast_states, BroadcastSideTimerService(self, pts), pts),
        )
        self._batch_size = setup.batch_size
        self._timer_out: list[Any] = []
        self._timer_results_timestamped = self._ts_out

    def process_batch2(self, batch: Iterable[Any]) -> list[Any]:
        assert self.backend is not None
        self.backend.current_key = NO_CURRENT_KEY
        return super().process_batch2(batch)

    def _fire(self, timestamp: int, domain: TimeDomain, output_timestamp: int | None) -> None:
        self._ctx = self._read_only_ctx
        super()._fire(timestamp, domain, output_timestamp)

    def _finish_timer_output(self, out: list[Any]) -> list[Any]:
        return self._finish(out)

    def close(self) -> None:
        self.timers.close()
        super().close()
