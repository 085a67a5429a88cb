"""Blocking result partitions (a BATCH job's exchanges): the producer never waits, its output
outlives it, memory stays under the bound (the rest is spilled to a file), consumers that come
later read everything in order, locally and over TCP, and the file goes when it is consumed."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from conftest import EnvFactory

from flott.runtime.io.network import InputChannelSpec
from flott.runtime.io.network.api import EndOfPartition
from flott.runtime.io.network.blocking_partition import BlockingResultPartition

pytestmark = pytest.mark.timeout(30)


def _read_all(gate: object) -> list[int]:
    records: list[int] = []
    ended = 0
    while ended < gate.num_channels:  # type: ignore[attr-defined]
        item = gate.poll(5.0)  # type: ignore[attr-defined]
        assert item is not None, "the consumer got nothing within 5 s"
        _, payload = item
        if isinstance(payload, EndOfPartition):
            ended += 1
        elif isinstance(payload, list):
            records.extend(payload)
    return records


@pytest.mark.parametrize("mode", ["local", "remote"])
def test_everything_is_kept_for_a_late_consumer_and_spilled_beyond_the_bound(
    make_env: EnvFactory, mode: str, tmp_path: Path
) -> None:
    producer_env = make_env(blocking_partition_memory_bytes=64 << 10, spill_dir=str(tmp_path))
    consumer_env = producer_env if mode == "local" else make_env()
    partition = producer_env.create_result_partition("blocking", 2, blocking=True)
    assert isinstance(partition, BlockingResultPartition)
    # no consumer at all: the producer writes ~1 MiB without ever blocking, and finishes
    for i in range(0, 20_000, 100):
        partition.emit(i // 100 % 2, [f"record-{n:08d}-{'x' * 32}" for n in range(i, i + 100)])
    partition.finish()
    assert partition.num_bytes_produced > 900_000
    assert partition.num_bytes_spilled > partition.num_bytes_produced - (64 << 10) - 10_000
    spill = partition.spill_path
    assert spill is not None and os.path.getsize(spill) == partition.num_bytes_spilled
    # later, one consumer reads both subpartitions (a range, as a decided parallelism of 1 does)
    gate = consumer_env.create_input_gate(
        [InputChannelSpec(producer_env.address, "blocking", i) for i in range(2)]
    )
    records = _read_all(gate)
    assert sorted(records) == [f"record-{n:08d}-{'x' * 32}" for n in range(20_000)]
    assert [r for r in records if int(r[7:15]) // 100 % 2 == 0] == sorted(
        r for r in records if int(r[7:15]) // 100 % 2 == 0
    ), "a subpartition is read in the order it was written"
    deadline = time.monotonic() + 5
    while os.path.exists(spill) or producer_env.get_result_partition("blocking") is not None:
        assert time.monotonic() < deadline, "a consumed partition keeps its spill file or registration"
        time.sleep(0.01)
    gate.close()


def test_release_deletes_the_spill_file(make_env: EnvFactory, tmp_path: Path) -> None:
    env = make_env(blocking_partition_memory_bytes=1024, spill_dir=str(tmp_path))
    partition = env.create_result_partition("dropped", 1, blocking=True)
    for i in range(50):
        partition.emit(0, [i] * 100)
    partition.finish()
    spill = partition.spill_path
    assert spill is not None and os.path.exists(spill)
    env.release_partitions("dropped")
    assert not os.path.exists(spill)
