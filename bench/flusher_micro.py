"""Micro-benchmark for instruction counts: what a task's output path costs per record.

A STREAMING producer chain (flat_map -> map, a lazy tail) wired to its outputs the way
:class:`~flott.runtime.tasks.stream_task.StreamTask` wires them: a
:class:`~flott.runtime.tasks.record_writer.RecordWriterDelegate` over one ``hash`` (or ``forward``)
edge into a partition writer that only counts buffers, so the chain, the partitioner and the
delegate's own per-batch work (with a positive buffer timeout: the output flusher's lock and the
tail collector the flusher reads from) are all that is measured. The flusher thread itself is not
started: it runs once per interval, not per record.

One case per process; the measured pass is the script's only call of ``operator.call``, so
callgrind collects just that pass (C function ``_operator_call``)::

    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=_operator_call \\
        --callgrind-out-file=/tmp/cg.%p python bench/flusher_micro.py --timeout 100 --lines 5000
    callgrind_annotate /tmp/cg.<pid> | grep "PROGRAM TOTALS"     # divide by the records printed

``--timeout``: the task's ``execution.buffer-timeout`` in ms (100: flusher wiring; -1: none).
``--batch-size``: records per input batch (the source's batches are far smaller when the user's
function is slow, which is where per-batch costs would show). Runs against whatever ``flott`` is
on ``PYTHONPATH``, so the same script measures a tree before the flusher existed.
"""

from __future__ import annotations

import argparse
import operator
import random
from collections.abc import Iterator
from typing import Any

from flott.runtime.execution.environment import OutputEdge, TaskEnvironment, TaskIOMetrics
from flott.runtime.jobgraph import JobEdge, JobVertex, OperatorDescriptor, PartitionerDescriptor, new_id
from flott.runtime.tasks.operator_chain import OperatorChain
from flott.runtime.tasks.record_writer import RecordWriterDelegate


def tokenize(line: str) -> Iterator[str]:
    yield from line.split()


def to_pair(word: str) -> tuple[str, int]:
    return word, 1


def key_of(pair: tuple[str, int]) -> str:
    return pair[0]


class CountingPartitionWriter:
    """Stands in for a result partition: counts buffers and records, keeps nothing."""

    def __init__(self, n: int) -> None:
        self.num_subpartitions = n
        self.buffers = 0
        self.records = 0

    def emit(self, subpartition: int, records: list[Any]) -> None:
        self.buffers += 1
        self.records += len(records)

    def broadcast_event(self, event: object) -> None:
        pass

    def finish(self) -> None:
        pass

    def release(self, cause: str | None = None) -> None:
        pass


def build(kind: str, timeout_ms: int, batch_size: int) -> tuple[OperatorChain, RecordWriterDelegate, Any]:
    objects: dict[str, Any] = {}

    def blob(obj: Any) -> str:
        objects[key := new_id()] = obj
        return key

    ops = [
        OperatorDescriptor(operator_id=new_id(), name=k, kind=k, function=blob(f))
        for k, f in (("flat_map", tokenize), ("map", to_pair))
    ]
    vertex = JobVertex(id=new_id(), name="tokenize", parallelism=1, max_parallelism=128, operators=ops)
    partitioner = PartitionerDescriptor(kind=kind, key_selector=blob(key_of) if kind == "hash" else None)
    edge = JobEdge(id=new_id(), source=vertex.id, target=new_id(), partitioner=partitioner)
    sink = CountingPartitionWriter(4 if kind == "hash" else 1)
    env = TaskEnvironment(
        job_id=new_id(),
        job_name="bench",
        vertex=vertex,
        subtask_index=0,
        attempt_number=0,
        job_config={},
        inputs=[],
        outputs=[OutputEdge(edge, sink)],
        load_user_object=objects.__getitem__,
        metrics=TaskIOMetrics(),
    )
    chain = OperatorChain.build(env, streaming=True, batch_size=1024)
    outputs = RecordWriterDelegate.create(env, batch_size=1024, buffer_timeout_ms=timeout_ms)
    chain.set_task_output(outputs.write, outputs.broadcast_event)
    if getattr(outputs, "has_flusher", False):  # the tree has the output flusher: wire it as a task does
        chain.set_tail_collector(outputs.collect_tail)
    chain.open()
    return chain, outputs, sink


def run(chain: OperatorChain, outputs: RecordWriterDelegate, batches: list[list[str]]) -> None:
    process = chain.process
    write = outputs.write
    flush_if_due = outputs.flush_if_due
    for batch in batches:
        result = process(batch)
        if result:
            write(result)
        flush_if_due(0)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--timeout", type=int, default=100, help="execution.buffer-timeout in ms")
    parser.add_argument("--kind", choices=["hash", "forward"], default="hash")
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--batch-size", type=int, default=64, help="input lines per batch")
    args = parser.parse_args()
    rng = random.Random(1)
    vocab = [f"w{i:04d}" for i in range(1000)]
    lines = [" ".join(rng.choice(vocab) for _ in range(8)) for _ in range(args.lines)]
    batches = [lines[i : i + args.batch_size] for i in range(0, len(lines), args.batch_size)]
    chain, outputs, _ = build(args.kind, args.timeout, args.batch_size)
    run(chain, outputs, batches[: max(1, len(batches) // 10)])  # warm up
    chain2, outputs2, sink = build(args.kind, args.timeout, args.batch_size)
    operator.call(run, chain2, outputs2, batches)  # the measured pass
    outputs2.finish()
    print(f"records out: {sink.records}, buffers: {sink.buffers}")


if __name__ == "__main__":
    main()
