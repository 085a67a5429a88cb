"""``partition_custom(partitioner, key_selector)``: the user's Partitioner picks each record's channel
(Flink's CustomPartitionerWrapper).

Per record: the key selector gives the key, ``partition(key, num_partitions)`` the consumer
subtask. ``num_partitions`` is the consumer's parallelism (the number of channels). An index
outside ``[0, num_partitions)`` is the user's mistake and fails the task with a message saying so
(Python would silently wrap a negative index). The user's objects get ``open(runtime_context)``
when the task's writers are built and ``close()`` when they finish, as PyFlink calls them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flott.runtime.operators.specs import CustomPartitionerSpec
from flott.runtime.operators.stream_operator import close_user_function, open_user_function, user_method
from flott.runtime.partitioner.stream_partitioner import StreamPartitioner


def partition_out_of_range(partition: Any, key: Any, num_partitions: int) -> ValueError:
    return ValueError(
        f"partition_custom: the Partitioner returned partition {partition!r} for key {key!r}, "
        f"but there are {num_partitions} partitions (0..{num_partitions - 1})"
    )


class CustomPartitionerWrapper(StreamPartitioner):
    """Routes each record to the channel the user's Partitioner returns for its key."""

    def __init__(self, spec: CustomPartitionerSpec, *, timestamped: bool = False) -> None:
        super().__init__()
        self._spec = spec
        self._partition: Callable[[Any, int], int] = user_method(
            spec.partitioner, "partition", "the Partitioner of partition_custom"
        )
        self._key_of: Callable[[Any], Any] = user_method(
            spec.key_selector, "get_key", "the key selector of partition_custom"
        )
        self._timestamped = timestamped
        self._opened = False

    def setup(self, num_channels: int) -> None:
        super().setup(num_channels)
        self.single_channel = None  # the user decides, even for one channel (index 0 is checked)

    def open(self, runtime_context: Any) -> None:
        open_user_function(self._spec.partitioner, runtime_context)
        open_user_function(self._spec.key_selector, runtime_context)
        self._opened = True

    def close(self) -> None:
        if self._opened:
            self._opened = False
            close_user_function(self._spec.partitioner)
            close_user_function(self._spec.key_selector)

    def select_channel(self, record: Any) -> int:
        key = self._key_of(record[0] if self._timestamped else record)
        channel = self._partition(key, self.num_channels)
        if not 0 <= channel < self.num_channels:
            raise partition_out_of_range(channel, key, self.num_channels)
        return channel

    def distribute(self, records: list[Any], buffers: list[list[Any]]) -> None:
        partition = self._partition
        key_of = self._key_of
        n = self.num_channels
        if self._timestamped:
            for record in records:
                key = key_of(record[0])
                channel = partition(key, n)
                if not 0 <= channel < n:
                    raise partition_out_of_range(channel, key, n)
                buffers[channel].append(record)
        else:
            for record in records:
                key = key_of(record)
                channel = partition(key, n)
                if not 0 <= channel < n:
                    raise partition_out_of_range(channel, key, n)
                buffers[channel].append(record)

    def __repr__(self) -> str:
        return "CUSTOM"
