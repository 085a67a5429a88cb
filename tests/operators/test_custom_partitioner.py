"""partition_custom's partitioner on its own: the user's choice per record, its checks, its hooks."""

from __future__ import annotations

from typing import Any

import pytest

from flott.datastream.functions import KeySelector, Partitioner
from flott.errors import InvalidJobGraphError
from flott.runtime.jobgraph import PartitionerDescriptor
from flott.runtime.operators.specs import CustomPartitionerSpec
from flott.runtime.partitioner import CustomPartitionerWrapper, create_partitioner


class Modulo(Partitioner):
    def __init__(self) -> None:
        self.events: list[str] = []

    def open(self, runtime_context: Any) -> None:
        self.events.append(f"open {runtime_context}")

    def close(self) -> None:
        self.events.append("close")

    def partition(self, key: Any, num_partitions: int) -> int:
        return key % num_partitions


class First(KeySelector):
    def get_key(self, value: Any) -> Any:
        return value[0]


def make(
    partitioner: Any, key_selector: Any, channels: int, timestamped: bool = False
) -> CustomPartitionerWrapper:
    p = create_partitioner(
        PartitionerDescriptor(kind="custom", key_selector="blob"),
        subtask_index=0,
        parallelism=1,
        max_parallelism=128,
        key_selector=CustomPartitionerSpec(partitioner, key_selector),
        timestamped=timestamped,
    )
    assert isinstance(p, CustomPartitionerWrapper) and repr(p) == "CUSTOM"
    p.setup(channels)
    return p


def test_each_record_goes_where_the_partitioner_says() -> None:
    p = make(Modulo(), First(), 3)
    buffers: list[list[Any]] = [[], [], []]
    records = [(n, str(n)) for n in range(10)]
    p.distribute(records, buffers)
    assert buffers == [[r for r in records if r[0] % 3 == i] for i in range(3)]
    assert p.select_channel((7, "x")) == 1
    # Plain functions work for both, and timestamped records are routed by their value.
    q = make(lambda key, n: n - 1 if key == "b" else 0, lambda v: v, 2, timestamped=True)
    buffers = [[], []]
    q.distribute([("a", 1), ("b", 2), ("c", None)], buffers)
    assert buffers == [[("a", 1), ("c", None)], [("b", 2)]]


def test_one_channel_still_asks_the_partitioner_and_checks_its_answer() -> None:
    p = make(lambda key, n: 1, lambda v: v, 1)
    assert p.single_channel is None
    with pytest.raises(ValueError, match=r"returned partition 1 for key 'x', but there are 1 partitions"):
        p.distribute(["x"], [[]])


@pytest.mark.parametrize("answer", [-1, 3, 7])
def test_a_partition_out_of_range_is_a_clear_error_not_a_wrapped_index(answer: int) -> None:
    p = make(lambda key, n: answer, lambda v: v, 3)
    buffers: list[list[Any]] = [[], [], []]
    with pytest.raises(ValueError, match=rf"returned partition {answer} .* \(0\.\.2\)"):
        p.distribute([5], buffers)
    assert buffers == [[], [], []]


def test_open_and_close_reach_the_user_objects_once() -> None:
    part = Modulo()
    p = make(part, First(), 2)
    p.open("ctx")
    p.close()
    p.close()
    assert part.events == ["open ctx", "close"]


def test_a_custom_edge_without_its_spec_is_refused() -> None:
    with pytest.raises(InvalidJobGraphError, match="Partitioner"):
        create_partitioner(
            PartitionerDescriptor(kind="custom"), subtask_index=0, parallelism=1, max_parallelism=128
        )
