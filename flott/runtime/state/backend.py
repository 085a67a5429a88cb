"""What the runtime needs of a keyed state backend, whatever keeps the state.

:class:`KeyedStateBackend` is the contract: the heap backend
(:class:`~flott.runtime.state.heap.HeapKeyedStateBackend`, Flink's ``hashmap``) and the
embedded-store backend (:class:`~flott.runtime.state.rocksdb.RocksDBKeyedStateBackend`,
Flink's ``rocksdb``) both satisfy it, operators and the snapshot code type against it, and
:func:`~flott.runtime.operators.state_backend_loader.create_keyed_state_backend` picks one from
the job configuration.

Three groups of members:

* **Per record.** ``current_key`` / ``current_namespace`` are plain attributes the operator
  assigns before user code runs; state objects read them on every access.
* **State handles.** ``get_*_state`` (scoped to the current key) and ``get_namespaced_*_state``
  (scoped to the current key *and* namespace, for windows); ``state_table`` /
  ``namespaced_table`` give operators a ``key -> value`` mapping of their own state (a dict on
  the heap, a store-backed mapping elsewhere: use only the ``MutableMapping`` methods).
  Timers: one :class:`TimerQueue` per name (``timer_queue``).
* **Snapshots.** ``state_names`` / ``state_kind``, ``iter_key_group_entries`` (every state of
  one key group at a time, ascending: what a checkpoint writes, without holding all state in
  memory), ``entries_by_key_group`` (one state split per key group), ``restore_entries``,
  ``timer_queues``. ``dispose`` frees everything (for a store: its working directory).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:  # not at run time: flott.datastream imports the operators, which import this
    from flott.api.common.state import AggregatingState, ListState, MapState, ReducingState, ValueState
    from flott.runtime.state.key_groups import KeyGroupRange

StateKind = Literal["value", "list", "map", "reducing", "aggregating", "operator"]
"""Kinds of keyed state tables (``operator``: an operator's own table, e.g. a keyed reduce's)."""

TIMER_KIND = "timer"
"""The kind a timer queue has in a snapshot's key-group files."""

Timer = tuple[int, Any, Any]
"""``(timestamp, key, namespace)``."""


@runtime_checkable
class TimerQueue(Protocol):
    """Deduplicated ``(timestamp, key, namespace)`` timers of one operator and time domain."""

    name: str

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[Timer]: ...

    def add(self, timestamp: int, key: Any, namespace: Any) -> bool: ...

    def remove(self, timestamp: int, key: Any, namespace: Any) -> bool: ...

    def contains(self, timestamp: int, key: Any, namespace: Any) -> bool: ...

    def peek_timestamp(self) -> int | None: ...

    def poll(self, up_to: int) -> Timer | None: ...

    def entries_by_key_group(self, max_parallelism: int) -> dict[int, list[Timer]]: ...

    def restore(self, timers: Iterable[Timer]) -> None: ...

    def add_restore_listener(self, listener: Callable[[], None]) -> None: ...

    def clear(self) -> None: ...


@runtime_checkable
class KeyedStateBackend(Protocol):
    """The keyed state of one operator in one subtask."""

    current_key: Any
    current_namespace: Any
    max_parallelism: int
    key_group_range: KeyGroupRange
    ttl_time_provider: Callable[[], int]
    """Milliseconds now for state TTL (``flott.runtime.state.ttl``), read at every access of a TTL state."""

    def set_current_key(self, key: Any) -> None: ...

    def get_current_key(self) -> Any: ...

    # --- state handles ---------------------------------------------------------------------------

    def get_value_state(self, descriptor: Any) -> ValueState[Any]: ...

    def get_list_state(self, descriptor: Any) -> ListState[Any]: ...

    def get_map_state(self, descriptor: Any) -> MapState[Any, Any]: ...

    def get_reducing_state(self, descriptor: Any) -> ReducingState[Any]: ...

    def get_aggregating_state(self, descriptor: Any) -> AggregatingState[Any, Any]: ...

    def get_namespaced_value_state(self, descriptor: Any) -> ValueState[Any]: ...

    def get_namespaced_list_state(self, descriptor: Any) -> ListState[Any]: ...

    def get_namespaced_map_state(self, descriptor: Any) -> MapState[Any, Any]: ...

    def get_namespaced_reducing_state(self, descriptor: Any) -> ReducingState[Any]: ...

    def get_namespaced_aggregating_state(self, descriptor: Any) -> AggregatingState[Any, Any]: ...

    def state_table(self, name: str, kind: StateKind = "operator") -> MutableMapping[Any, Any]: ...

    def namespaced_table(self, name: str, kind: StateKind) -> MutableMapping[Any, Any]: ...

    def is_namespaced(self, name: str) -> bool: ...

    def timer_queue(self, name: str) -> TimerQueue: ...

    def timer_queues(self) -> Mapping[str, TimerQueue]: ...

    # --- inspection, snapshots, lifecycle ------------------------------------------------------

    def state_names(self) -> list[str]: ...

    def state_kind(self, name: str) -> StateKind: ...

    def num_keys(self, name: str) -> int: ...

    def keys(self, name: str) -> Iterator[Any]: ...

    def entries_by_key_group(self, name: str) -> dict[int, dict[Any, Any]]: ...

    def iter_key_group_entries(self) -> Iterator[tuple[int, dict[str, dict[Any, Any]]]]: ...

    def restore_entries(self, name: str, kind: StateKind, entries: dict[Any, Any]) -> None: ...

    def dispose(self) -> None: ...
