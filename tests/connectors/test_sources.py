"""NumberSequenceSource, DataGeneratorSource and CollectionSource: splits, counts, rates."""

from __future__ import annotations

import sys
import time

import cloudpickle
import pytest

from flott.common import Types
from flott.datastream.connectors import Boundedness
from flott.datastream.connectors.base import get_produced_type, get_source_max_parallelism
from flott.datastream.connectors.collection import CollectionSource
from flott.datastream.connectors.datagen import DataGeneratorSource, GeneratorFunction, RateLimiterStrategy
from flott.datastream.connectors.number_seq import NumberSequenceSource, split_range


def flatten(parts) -> list:
    return [x for part in parts for x in part]


def drain(reader, max_records: int = 1000) -> list:
    out: list = []
    while (batch := reader.poll_batch(max_records)) is not None:
        assert len(batch) <= max_records
        out.extend(batch)
    reader.close()
    return out


@pytest.mark.parametrize("parallelism", [1, 2, 3, 7, 16])
def test_number_sequence_inclusive_and_split(parallelism: int) -> None:
    src = cloudpickle.loads(cloudpickle.dumps(NumberSequenceSource(5, 104)))
    parts = [drain(src.create_reader(i, parallelism), 9) for i in range(parallelism)]
    assert flatten(parts) == list(range(5, 105))
    sizes = [len(p) for p in parts]
    assert max(sizes) - min(sizes) <= 1
    assert src.get_boundedness() is Boundedness.BOUNDED
    assert get_produced_type(src) == Types.LONG()


def test_number_sequence_edges() -> None:
    assert drain(NumberSequenceSource(3, 3).create_reader(0, 1)) == [3]
    assert drain(NumberSequenceSource(0, 1).create_reader(2, 3)) == [1]
    with pytest.raises(ValueError):
        NumberSequenceSource(2, 1)
    assert split_range(0, 10, 0, 3) == (0, 3) and split_range(0, 10, 2, 3) == (6, 10)


class Squares(GeneratorFunction):
    def __init__(self) -> None:
        self.opened = False

    def open(self) -> None:
        self.opened = True

    def map(self, value: int) -> int:
        assert self.opened
        return value * value


@pytest.mark.parametrize("parallelism", [1, 3, 7])
def test_datagen_bounded_count_split_across_subtasks(parallelism: int) -> None:
    src = DataGeneratorSource(lambda i: f"r{i}", 1000, RateLimiterStrategy.no_op(), Types.STRING())
    src = cloudpickle.loads(cloudpickle.dumps(src))
    got = flatten(drain(src.create_reader(i, parallelism), 64) for i in range(parallelism))
    assert sorted(got) == sorted(f"r{i}" for i in range(1000))
    assert src.get_boundedness() is Boundedness.BOUNDED
    assert src.get_produced_type() == Types.STRING()


def test_datagen_generator_function_and_type_info_as_third_argument() -> None:
    src = DataGeneratorSource(Squares(), 10, Types.LONG())
    assert drain(src.create_reader(0, 1)) == [i * i for i in range(10)]
    assert src.get_produced_type() == Types.LONG()


def test_datagen_rate_limit_is_for_the_whole_source() -> None:
    rate = 200.0
    parallelism = 2
    src = DataGeneratorSource(lambda i: i, 60, RateLimiterStrategy.per_second(rate))
    readers = [src.create_reader(i, parallelism) for i in range(parallelism)]
    start = time.monotonic()
    got: list[int] = []
    done = [False] * parallelism
    while not all(done):
        for k, r in enumerate(readers):
            if not done[k]:
                batch = r.poll_batch(1000)
                if batch is None:
                    done[k] = True
                else:
                    got.extend(batch)
    elapsed = time.monotonic() - start
    assert sorted(got) == list(range(60))
    # 60 records at 200/s for the whole source take ~0.3 s (each subtask: 30 at 100/s).
    assert 0.2 <= elapsed < 1.5, elapsed


def test_datagen_unbounded_never_ends() -> None:
    for count in (None, sys.maxsize):
        src = DataGeneratorSource(lambda i: i, count)
        assert src.get_boundedness() is Boundedness.CONTINUOUS_UNBOUNDED
        reader = src.create_reader(1, 2)
        first = reader.poll_batch(5)
        assert first is not None and len(first) == 5 and first[0] > 10**17
        for _ in range(100):
            assert reader.poll_batch(1000)
        reader.close()


def test_collection_source_is_non_parallel_and_bounded() -> None:
    src = CollectionSource([1, "a", (2, 3)], Types.PICKLED_BYTE_ARRAY())
    assert get_source_max_parallelism(src) == 1
    assert src.get_boundedness() is Boundedness.BOUNDED
    assert drain(src.create_reader(0, 1), 2) == [1, "a", (2, 3)]
    assert drain(src.create_reader(1, 2)) == []
    assert drain(CollectionSource([]).create_reader(0, 1)) == []
