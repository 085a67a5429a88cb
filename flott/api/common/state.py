"""State interfaces and descriptors (Flink's ``org.apache.flink.api.common.state``).

PyFlink's ``pyflink.datastream.state`` re-exports them (``flott.datastream.state``); they live
here, below the user API and the runtime's state backends, which both need them.

User functions declare state with a descriptor and obtain it from their
RuntimeContext; the runtime implements the State classes over its keyed state
backend (scoped to the current key). The classes here are the contract only:
abstract interfaces plus descriptors that are plain data, so they pickle with
the user's function and can be inspected on the client (e.g. to report state
names when mapping a savepoint).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from enum import Enum
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from flott.api.common.durations import to_millis
from flott.common.time import Duration
from flott.errors import NotYetSupportedError

if TYPE_CHECKING:
    from flott.api.common.functions import AggregateFunction, ReduceFunction

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")
IN = TypeVar("IN")
OUT = TypeVar("OUT")

__all__ = [
    "AggregatingState",
    "AggregatingStateDescriptor",
    "AppendingState",
    "BroadcastState",
    "KeyedStateStore",
    "ListState",
    "ListStateDescriptor",
    "MapState",
    "MapStateDescriptor",
    "MergingState",
    "OperatorStateStore",
    "ReadOnlyBroadcastState",
    "ReducingState",
    "ReducingStateDescriptor",
    "State",
    "StateDescriptor",
    "StateTtlConfig",
    "ValueState",
    "ValueStateDescriptor",
    "validate_ttl_config",
]


# --------------------------------------------------------------------------- states


class State(ABC):
    """Base of all state handles; ``clear`` drops the value for the current key."""

    @abstractmethod
    def clear(self) -> None: ...


class ValueState(State, Generic[T]):
    """One value per key; ``value()`` is None until ``update`` was called."""

    @abstractmethod
    def value(self) -> T | None: ...

    @abstractmethod
    def update(self, value: T) -> None: ...


class AppendingState(State, Generic[IN, OUT]):
    """State that values are added to; ``get`` returns the accumulated view."""

    @abstractmethod
    def get(self) -> OUT: ...

    @abstractmethod
    def add(self, value: IN) -> None: ...


class MergingState(AppendingState[IN, OUT]):
    """AppendingState whose per-namespace values can be merged (merging windows)."""


class ListState(MergingState[T, Iterable[T]]):
    """A list per key."""

    @abstractmethod
    def add_all(self, values: list[T]) -> None: ...

    @abstractmethod
    def update(self, values: list[T]) -> None: ...

    def __iter__(self) -> Iterator[T]:
        return iter(self.get())


class ReducingState(MergingState[T, T]):
    """Values added are combined with the descriptor's ReduceFunction."""


class AggregatingState(MergingState[IN, OUT]):
    """Values added are folded with the descriptor's AggregateFunction."""


class MapState(State, Generic[K, V]):
    """A dictionary per key."""

    @abstractmethod
    def get(self, key: K) -> V: ...

    @abstractmethod
    def put(self, key: K, value: V) -> None: ...

    @abstractmethod
    def put_all(self, dict_value: dict[K, V]) -> None: ...

    @abstractmethod
    def remove(self, key: K) -> None: ...

    @abstractmethod
    def contains(self, key: K) -> bool: ...

    @abstractmethod
    def items(self) -> Iterable[tuple[K, V]]: ...

    @abstractmethod
    def keys(self) -> Iterable[K]: ...

    @abstractmethod
    def values(self) -> Iterable[V]: ...

    @abstractmethod
    def is_empty(self) -> bool: ...

    def __getitem__(self, key: K) -> V:
        return self.get(key)

    def __setitem__(self, key: K, value: V) -> None:
        self.put(key, value)

    def __delitem__(self, key: K) -> None:
        self.remove(key)

    def __contains__(self, key: object) -> bool:
        return self.contains(key)  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[K]:
        return iter(self.keys())


class ReadOnlyBroadcastState(State, Generic[K, V]):
    """Broadcast state as seen from the non-broadcast side (read only)."""

    @abstractmethod
    def get(self, key: K) -> V: ...

    @abstractmethod
    def contains(self, key: K) -> bool: ...

    @abstractmethod
    def items(self) -> Iterable[tuple[K, V]]: ...

    @abstractmethod
    def keys(self) -> Iterable[K]: ...

    @abstractmethod
    def values(self) -> Iterable[V]: ...

    @abstractmethod
    def is_empty(self) -> bool: ...

    def __getitem__(self, key: K) -> V:
        return self.get(key)

    def __contains__(self, key: object) -> bool:
        return self.contains(key)  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[K]:
        return iter(self.keys())


class BroadcastState(ReadOnlyBroadcastState[K, V]):
    """Broadcast state as seen from the broadcast side (writable)."""

    @abstractmethod
    def put(self, key: K, value: V) -> None: ...

    @abstractmethod
    def put_all(self, dict_value: dict[K, V]) -> None: ...

    @abstractmethod
    def remove(self, key: K) -> None: ...

    def __setitem__(self, key: K, value: V) -> None:
        self.put(key, value)

    def __delitem__(self, key: K) -> None:
        self.remove(key)


# --------------------------------------------------------------------------- stores


class KeyedStateStore(ABC):
    """Where a function obtains keyed state (the RuntimeContext implements this)."""

    @abstractmethod
    def get_state(self, state_descriptor: ValueStateDescriptor) -> ValueState: ...

    @abstractmethod
    def get_list_state(self, state_descriptor: ListStateDescriptor) -> ListState: ...

    @abstractmethod
    def get_map_state(self, state_descriptor: MapStateDescriptor) -> MapState: ...

    @abstractmethod
    def get_reducing_state(self, state_descriptor: ReducingStateDescriptor) -> ReducingState: ...

    @abstractmethod
    def get_aggregating_state(self, state_descriptor: AggregatingStateDescriptor) -> AggregatingState: ...


class OperatorStateStore(ABC):
    """Operator (non-keyed) state; flott offers broadcast state through it."""

    @abstractmethod
    def get_broadcast_state(self, state_descriptor: MapStateDescriptor) -> BroadcastState: ...


# --------------------------------------------------------------------------- TTL


class StateTtlConfig:
    """Time-to-live settings of a state (plain data; the state backend applies them)."""

    class UpdateType(Enum):
        Disabled = 0
        OnCreateAndWrite = 1
        OnReadAndWrite = 2

    class StateVisibility(Enum):
        ReturnExpiredIfNotCleanedUp = 0
        NeverReturnExpired = 1

    class TtlTimeCharacteristic(Enum):
        ProcessingTime = 0

    class CleanupStrategies:
        """Which background cleanups run in addition to lazy cleanup on read."""

        class Strategies(Enum):
            FULL_STATE_SCAN_SNAPSHOT = 0
            INCREMENTAL_CLEANUP = 1
            ROCKSDB_COMPACTION_FILTER = 2

        class CleanupStrategy(ABC):  # noqa: B024 - a marker type, as in PyFlink
            """Marker base of cleanup strategies."""

        class EmptyCleanupStrategy(CleanupStrategy):
            pass

        class IncrementalCleanupStrategy(CleanupStrategy):
            def __init__(self, cleanup_size: int, run_cleanup_for_every_record: bool) -> None:
                self._cleanup_size = cleanup_size
                self._run_cleanup_for_every_record = run_cleanup_for_every_record

            def get_cleanup_size(self) -> int:
                return self._cleanup_size

            def run_cleanup_for_every_record(self) -> bool:
                return self._run_cleanup_for_every_record

        class RocksdbCompactFilterCleanupStrategy(CleanupStrategy):
            def __init__(
                self, query_time_after_num_entries: int, periodic_compaction_time: Any = None
            ) -> None:
                self._query_time_after_num_entries = query_time_after_num_entries
                self._periodic_compaction_time = (
                    periodic_compaction_time if periodic_compaction_time else Duration.of_days(30)
                )

            def get_query_time_after_num_entries(self) -> int:
                return self._query_time_after_num_entries

            def get_periodic_compaction_time(self) -> Any:
                return self._periodic_compaction_time

        EMPTY_STRATEGY = EmptyCleanupStrategy()

        def __init__(
            self,
            strategies: dict[StateTtlConfig.CleanupStrategies.Strategies, Any],
            is_cleanup_in_background: bool,
        ) -> None:
            self._strategies = strategies
            self._is_cleanup_in_background = is_cleanup_in_background

        def in_full_snapshot(self) -> bool:
            return self.Strategies.FULL_STATE_SCAN_SNAPSHOT in self._strategies

        def is_cleanup_in_background(self) -> bool:
            return self._is_cleanup_in_background

        def get_incremental_cleanup_strategy(
            self,
        ) -> StateTtlConfig.CleanupStrategies.IncrementalCleanupStrategy | None:
            """The configured one; else, while cleanup in background is on, Flink's default (5, False)."""
            default = (
                StateTtlConfig.CleanupStrategies.IncrementalCleanupStrategy(5, False)
                if self._is_cleanup_in_background
                else None
            )
            return self._strategies.get(self.Strategies.INCREMENTAL_CLEANUP, default)

        def get_rocksdb_compact_filter_cleanup_strategy(
            self,
        ) -> StateTtlConfig.CleanupStrategies.RocksdbCompactFilterCleanupStrategy | None:
            """The configured one; else, while cleanup in background is on, Flink's default (1000)."""
            default = (
                StateTtlConfig.CleanupStrategies.RocksdbCompactFilterCleanupStrategy(1000)
                if self._is_cleanup_in_background
                else None
            )
            return self._strategies.get(self.Strategies.ROCKSDB_COMPACTION_FILTER, default)

    class Builder:
        """Fluent construction, as ``StateTtlConfig.new_builder(Time.seconds(1))...build()``."""

        def __init__(self, ttl: Any) -> None:
            self._ttl = ttl
            self._update_type = StateTtlConfig.UpdateType.OnCreateAndWrite
            self._state_visibility = StateTtlConfig.StateVisibility.NeverReturnExpired
            self._ttl_time_characteristic = StateTtlConfig.TtlTimeCharacteristic.ProcessingTime
            self._is_cleanup_in_background = True
            self._strategies: dict[StateTtlConfig.CleanupStrategies.Strategies, Any] = {}

        def set_update_type(self, update_type: StateTtlConfig.UpdateType) -> StateTtlConfig.Builder:
            self._update_type = update_type
            return self

        def update_ttl_on_create_and_write(self) -> StateTtlConfig.Builder:
            return self.set_update_type(StateTtlConfig.UpdateType.OnCreateAndWrite)

        def update_ttl_on_read_and_write(self) -> StateTtlConfig.Builder:
            return self.set_update_type(StateTtlConfig.UpdateType.OnReadAndWrite)

        def set_state_visibility(
            self, state_visibility: StateTtlConfig.StateVisibility
        ) -> StateTtlConfig.Builder:
            self._state_visibility = state_visibility
            return self

        def return_expired_if_not_cleaned_up(self) -> StateTtlConfig.Builder:
            return self.set_state_visibility(StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp)

        def never_return_expired(self) -> StateTtlConfig.Builder:
            return self.set_state_visibility(StateTtlConfig.StateVisibility.NeverReturnExpired)

        def set_ttl_time_characteristic(
            self, ttl_time_characteristic: StateTtlConfig.TtlTimeCharacteristic
        ) -> StateTtlConfig.Builder:
            self._ttl_time_characteristic = ttl_time_characteristic
            return self

        def use_processing_time(self) -> StateTtlConfig.Builder:
            return self.set_ttl_time_characteristic(StateTtlConfig.TtlTimeCharacteristic.ProcessingTime)

        def cleanup_full_snapshot(self) -> StateTtlConfig.Builder:
            """Leave expired state out of checkpoints and savepoints."""
            self._strategies[StateTtlConfig.CleanupStrategies.Strategies.FULL_STATE_SCAN_SNAPSHOT] = (
                StateTtlConfig.CleanupStrategies.EMPTY_STRATEGY
            )
            return self

        def cleanup_incrementally(
            self, cleanup_size: int, run_cleanup_for_every_record: bool
        ) -> StateTtlConfig.Builder:
            self._strategies[StateTtlConfig.CleanupStrategies.Strategies.INCREMENTAL_CLEANUP] = (
                StateTtlConfig.CleanupStrategies.IncrementalCleanupStrategy(
                    cleanup_size, run_cleanup_for_every_record
                )
            )
            return self

        def cleanup_in_rocksdb_compact_filter(
            self, query_time_after_num_entries: int, periodic_compaction_time: Any = None
        ) -> StateTtlConfig.Builder:
            """Background cleanup on RocksDB (flott: in the scan of each checkpoint, see
            ``flott.runtime.state.ttl``); ignored on the heap backend, as in Flink."""
            self._strategies[StateTtlConfig.CleanupStrategies.Strategies.ROCKSDB_COMPACTION_FILTER] = (
                StateTtlConfig.CleanupStrategies.RocksdbCompactFilterCleanupStrategy(
                    query_time_after_num_entries, periodic_compaction_time
                )
            )
            return self

        def disable_cleanup_in_background(self) -> StateTtlConfig.Builder:
            self._is_cleanup_in_background = False
            return self

        def set_ttl(self, ttl: Any) -> StateTtlConfig.Builder:
            self._ttl = ttl
            return self

        def build(self) -> StateTtlConfig:
            return StateTtlConfig(
                self._update_type,
                self._state_visibility,
                self._ttl_time_characteristic,
                self._ttl,
                StateTtlConfig.CleanupStrategies(self._strategies, self._is_cleanup_in_background),
            )

    def __init__(
        self,
        update_type: StateTtlConfig.UpdateType,
        state_visibility: StateTtlConfig.StateVisibility,
        ttl_time_characteristic: StateTtlConfig.TtlTimeCharacteristic,
        ttl: Any,
        cleanup_strategies: StateTtlConfig.CleanupStrategies,
    ) -> None:
        self._update_type = update_type
        self._state_visibility = state_visibility
        self._ttl_time_characteristic = ttl_time_characteristic
        self._ttl = ttl
        self._cleanup_strategies = cleanup_strategies

    @staticmethod
    def new_builder(ttl: Any) -> StateTtlConfig.Builder:
        return StateTtlConfig.Builder(ttl)

    def get_update_type(self) -> StateTtlConfig.UpdateType:
        return self._update_type

    def get_state_visibility(self) -> StateTtlConfig.StateVisibility:
        return self._state_visibility

    def get_ttl(self) -> Any:
        return self._ttl

    def get_ttl_time_characteristic(self) -> StateTtlConfig.TtlTimeCharacteristic:
        return self._ttl_time_characteristic

    def get_cleanup_strategies(self) -> StateTtlConfig.CleanupStrategies:
        return self._cleanup_strategies

    def is_enabled(self) -> bool:
        """False for ``UpdateType.Disabled``: such a state has no TTL at all (Flink's rule)."""
        return self._update_type.value != StateTtlConfig.UpdateType.Disabled.value

    def get_ttl_millis(self) -> int:
        """The TTL in milliseconds, whatever duration type the program passed."""
        return to_millis(self._ttl)

    def __repr__(self) -> str:
        return (
            f"StateTtlConfig<update_type={self._update_type}, state_visibility={self._state_visibility},"
            f"ttl_time_characteristic ={self._ttl_time_characteristic},ttl={self._ttl}>"
        )


def validate_ttl_config(config: Any) -> None:
    """Refuse what flott cannot do and what Flink rejects (``flott.runtime.state.ttl`` says why)."""
    try:
        ttl_ms = config.get_ttl_millis()
    except TypeError as e:
        raise ValueError(f"state TTL: {e}") from None
    if ttl_ms <= 0:
        raise ValueError(f"state TTL is expected to be positive, got {ttl_ms} ms")
    if config.get_ttl_time_characteristic() is not StateTtlConfig.TtlTimeCharacteristic.ProcessingTime:
        raise NotYetSupportedError(
            "state TTL supports only processing time (TtlTimeCharacteristic.ProcessingTime)"
        )
    incremental = config.get_cleanup_strategies().get_incremental_cleanup_strategy()
    if incremental is not None:
        if incremental.run_cleanup_for_every_record():
            raise NotYetSupportedError(
                "StateTtlConfig cleanup_incrementally(..., run_cleanup_for_every_record=True) is not "
                "supported: flott cleans up incrementally on state access only; pass False"
            )
        if incremental.get_cleanup_size() <= 0:
            raise ValueError(
                f"cleanup_incrementally: number of incrementally cleaned up state entries should be "
                f"positive, got {incremental.get_cleanup_size()}"
            )


# --------------------------------------------------------------------------- descriptors


class StateDescriptor(ABC):  # noqa: B024 - abstract by intent, as in PyFlink
    """Names a state and its element type; the name is the state's identity in checkpoints."""

    def __init__(self, name: str, type_info: Any) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError("a state descriptor needs a non-empty name")
        self.name = name
        self.type_info = type_info
        self._ttl_config: StateTtlConfig | None = None

    def get_name(self) -> str:
        return self.name

    def enable_time_to_live(self, ttl_config: StateTtlConfig) -> None:
        """Give the state a time-to-live (``flott.runtime.state.ttl`` says how it is kept).

        Settings flott cannot honour are refused here, when the program sets them.
        """
        if not isinstance(ttl_config, StateTtlConfig):
            raise TypeError(f"enable_time_to_live expects a StateTtlConfig, got {type(ttl_config).__name__}")
        if ttl_config.is_enabled():
            validate_ttl_config(ttl_config)
        self._ttl_config = ttl_config

    def get_ttl_config(self) -> StateTtlConfig | None:
        return self._ttl_config

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.name == other.name  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.name))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class ValueStateDescriptor(StateDescriptor):
    def __init__(self, name: str, value_type_info: Any) -> None:
        super().__init__(name, value_type_info)


class ListStateDescriptor(StateDescriptor):
    def __init__(self, name: str, elem_type_info: Any) -> None:
        super().__init__(name, elem_type_info)
        self.elem_type_info = elem_type_info


class MapStateDescriptor(StateDescriptor):
    def __init__(self, name: str, key_type_info: Any, value_type_info: Any) -> None:
        super().__init__(name, (key_type_info, value_type_info))
        self.key_type_info = key_type_info
        self.value_type_info = value_type_info


class ReducingStateDescriptor(StateDescriptor):
    """``reduce_function`` may be a ReduceFunction or a plain two-argument callable."""

    def __init__(self, name: str, reduce_function: ReduceFunction | Any, type_info: Any) -> None:
        super().__init__(name, type_info)
        if not callable(reduce_function) and not hasattr(reduce_function, "reduce"):
            raise TypeError("reduce_function must be a ReduceFunction or a callable")
        self._reduce_function = reduce_function

    def get_reduce_function(self) -> Any:
        return self._reduce_function


class AggregatingStateDescriptor(StateDescriptor):
    def __init__(self, name: str, agg_function: AggregateFunction, state_type_info: Any) -> None:
        super().__init__(name, state_type_info)
        self._agg_function = agg_function

    def get_agg_function(self) -> AggregateFunction:
        return self._agg_function
