"""The output flusher (record_writer.py) racing the task thread: nothing lost, doubled or reordered.

Real StreamTasks on threads (the harness's gates): a producer chain whose lazy tail yields records
slowly now and then, so a flusher ticking every millisecond keeps taking prefixes of the chain's
output list and flushing partial buffers while the task thread appends to them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import msgspec
import pytest

from flott.datastream.functions import FlatMapFunction
from flott.errors import UserCodeError
from flott.runtime.execution.environment import OutputEdge
from flott.runtime.jobgraph import JobEdge, PartitionerDescriptor, new_id
from tests.operators.task_harness import (
    Blobs,
    CollectingPartitionWriter,
    CollectionSource,
    CollectSink,
    TaskThread,
    edge,
    make_env,
    op,
    run_job,
    vertex,
)

N = 6000


class Stutter(FlatMapFunction):
    """Three records per input; every 97th input it pauses between them."""

    def flat_map(self, value: int) -> Iterator[tuple[int, int]]:
        for part in range(3):
            if value % 97 == 0 and part == 1:
                time.sleep(0.002)
            yield value, part


FAST_FLUSHER = {"execution.buffer-timeout": "1 ms", "taskmanager.network.batch-size": "50"}


def test_forward_edge_keeps_the_exact_order() -> None:
    blobs = Blobs()
    sink = CollectSink()
    up = vertex(
        "Source -> stutter",
        1,
        op(blobs, "source", CollectionSource(range(N))),
        op(blobs, "flat_map", Stutter()),
    )
    down = vertex("sink", 1, op(blobs, "sink", sink))
    run = run_job([up, down], [edge(blobs, up, down, "rebalance")], blobs, FAST_FLUSHER)
    run.join(60)
    run.raise_first()
    assert sink.results[0] == [(v, p) for v in range(N) for p in range(3)]


def test_hash_edge_keeps_the_order_per_key() -> None:
    blobs = Blobs()
    sink = CollectSink()
    up = vertex(
        "Source -> stutter",
        1,
        op(blobs, "source", CollectionSource(range(N))),
        op(blobs, "flat_map", Stutter()),
    )
    down = vertex("sink", 2, op(blobs, "sink", sink))
    run = run_job([up, down], [edge(blobs, up, down, "hash", key=lambda r: r[0] % 10)], blobs, FAST_FLUSHER)
    run.join(60)
    run.raise_first()
    got = sink.all()
    assert sorted(got) == [(v, p) for v in range(N) for p in range(3)]
    for k in range(10):
        mine = [r for r in got if r[0] % 10 == k]
        assert mine == sorted(mine)


class EmitThenFail(FlatMapFunction):
    def flat_map(self, value: int) -> Iterator[object]:
        yield "fine"
        yield 1.5  # not a STRING: the declared type check fails, possibly on the flusher thread
        time.sleep(0.05)


@pytest.mark.parametrize("timeout", ["1 ms", "-1"])
def test_a_type_error_the_flusher_meets_fails_the_task(timeout: str) -> None:
    from flott.common import Types  # deferred: only this test declares an output type

    blobs = Blobs()
    flat_map = msgspec.structs.replace(
        op(blobs, "flat_map", EmitThenFail()), output_type=blobs.add(Types.STRING())
    )
    v = vertex("Source -> typed", 1, op(blobs, "source", CollectionSource([1])), flat_map)
    out = CollectingPartitionWriter(1)
    e = JobEdge(id=new_id(), source=v.id, target=new_id(), partitioner=PartitionerDescriptor(kind="forward"))
    config = {"execution.buffer-timeout": timeout}
    t = TaskThread(make_env(v, blobs, config=config, outputs=[OutputEdge(e, out)]))
    t.start().join(30)
    assert isinstance(t.error, UserCodeError), t.error
    assert out.released.is_set()
