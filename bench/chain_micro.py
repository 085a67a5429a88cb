"""Micro-benchmark: an operator chain vs. the same user functions in a bare Python loop.

The chain is flat_map -> map -> key_by -> reduce (word count), run through
flott's operators (``OperatorChain.process`` on batches) and, for comparison,
as the tightest loop a user would write by hand around the same functions.
The goal: the chain runs at >= 0.8x the bare loop's speed.

Also measured: the same chain followed by a hash RecordWriter into 4
subpartitions whose ``emit`` pickles each buffer (what the network layer will
do), and a batch-size sweep of that, which is how the default
``taskmanager.network.batch-size`` was chosen.

Run: ``python bench/chain_micro.py [--lines 20000] [--repeat 30] [--sweep]``
"""

from __future__ import annotations

import argparse
import functools
import gc
import pickle
import random
import time
from collections.abc import Callable, Iterator
from typing import Any

from flott.runtime.execution.environment import InputEdgeGroup, OutputEdge, TaskEnvironment, TaskIOMetrics
from flott.runtime.jobgraph import JobEdge, JobVertex, OperatorDescriptor, PartitionerDescriptor, new_id
from flott.runtime.partitioner import KeyGroupStreamPartitioner
from flott.runtime.tasks.operator_chain import OperatorChain
from flott.runtime.tasks.record_writer import RecordWriter


# --- the user's functions (what a PyFlink word count passes) -----------------------------------
def tokenize(line: str) -> Iterator[str]:
    yield from line.split()


def to_pair(word: str) -> tuple[str, int]:
    return word, 1


def key_of(pair: tuple[str, int]) -> str:
    return pair[0]


def add_counts(a: tuple[str, int], b: tuple[str, int]) -> tuple[str, int]:
    return a[0], a[1] + b[1]


# --- bare loops --------------------------------------------------------------------------------
def bare_loop(lines: list[str], streaming: bool) -> int:
    """The same functions, hand-inlined: what the chain must come close to."""
    counts: dict[str, tuple[str, int]] = {}
    out: list[tuple[str, int]] = []
    emit = out.append
    for line in lines:
        for word in tokenize(line):
            pair = to_pair(word)
            key = key_of(pair)
            if key in counts:
                pair = add_counts(counts[key], pair)
            counts[key] = pair
            if streaming:
                emit(pair)
    return len(out) if streaming else len(counts)


# --- through flott's operators -----------------------------------------------------------------
class _Blobs:
    def __init__(self) -> None:
        self.objects: dict[str, Any] = {}

    def add(self, obj: Any) -> str:
        blob = new_id()
        self.objects[blob] = obj
        return blob


def build_chain(streaming: bool, batch_size: int) -> OperatorChain:
    blobs = _Blobs()

    def op(kind: str, fn: Any, key: Any = None) -> OperatorDescriptor:
        return OperatorDescriptor(
            operator_id=new_id(),
            name=kind,
            kind=kind,
            function=blobs.add(fn),
            key_selector=None if key is None else blobs.add(key),
        )

    vertex = JobVertex(
        id=new_id(),
        name="wordcount",
        parallelism=1,
        max_parallelism=128,
        operators=[op("flat_map", tokenize), op("map", to_pair), op("reduce", add_counts, key_of)],
    )
    env = TaskEnvironment(
        job_id=new_id(),
        job_name="bench",
        vertex=vertex,
        subtask_index=0,
        attempt_number=0,
        job_config={},
        inputs=[],
        outputs=[],
        load_user_object=blobs.objects.__getitem__,
    )
    chain = OperatorChain.build(env, streaming=streaming, batch_size=batch_size)
    chain.open()
    return chain


def chain_run(lines: list[str], streaming: bool, batch_size: int) -> int:
    chain = build_chain(streaming, batch_size)
    process = chain.process
    n = 0
    for start in range(0, len(lines), batch_size):
        n += len(process(lines[start : start + batch_size]))
    for out in chain.end_input():
        n += len(out)
    chain.close()
    return n


class PicklingPartitionWriter:
    """Stands in for the network: pickles each buffer (protocol 5), as the exchange layer will."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.bytes = 0

    @property
    def num_subpartitions(self) -> int:
        return self.n

    def emit(self, subpartition: int, records: list[Any]) -> None:
        self.bytes += len(pickle.dumps(records, protocol=5))

    def broadcast_event(self, event: object) -> None:
        pass

    def finish(self) -> None:
        pass

    def release(self) -> None:
        pass


def chain_to_network_run(lines: list[str], batch_size: int) -> int:
    """flat_map -> map, then the keyed exchange: hash RecordWriter into 4 pickling subpartitions."""
    blobs = _Blobs()
    ops = [
        OperatorDescriptor(operator_id=new_id(), name=k, kind=k, function=blobs.add(f))
        for k, f in (("flat_map", tokenize), ("map", to_pair))
    ]
    vertex = JobVertex(id=new_id(), name="tokenize", parallelism=1, max_parallelism=128, operators=ops)
    edge = JobEdge(
        id=new_id(), source=vertex.id, target=new_id(), partitioner=PartitionerDescriptor(kind="hash")
    )
    writer_sink = PicklingPartitionWriter(4)
    metrics = TaskIOMetrics()
    env = TaskEnvironment(
        job_id=new_id(),
        job_name="bench",
        vertex=vertex,
        subtask_index=0,
        attempt_number=0,
        job_config={},
        inputs=list[InputEdgeGroup](),
        outputs=[OutputEdge(edge, writer_sink)],
        load_user_object=blobs.objects.__getitem__,
        metrics=metrics,
    )
    chain = OperatorChain.build(env, streaming=True, batch_size=batch_size)
    chain.open()
    writer = RecordWriter(writer_sink, KeyGroupStreamPartitioner(key_of, 128), batch_size, metrics)
    process = chain.process
    for start in range(0, len(lines), batch_size):
        out = process(lines[start : start + batch_size])
        if out:
            writer.write(out)
    writer.finish()
    return metrics.num_buffers_out


def bare_to_network(lines: list[str], batch_size: int) -> int:
    """Hand-written equivalent: per record, compute the subtask and append; pickle full buffers."""
    from flott.runtime.state.key_groups import key_to_subtask_function

    subtask_of = key_to_subtask_function(128, 4)
    cache: dict[str, int] = {}
    buffers: list[list[Any]] = [[] for _ in range(4)]
    sent = 0
    for line in lines:
        for word in tokenize(line):
            pair = to_pair(word)
            key = key_of(pair)
            channel = cache.get(key)
            if channel is None:
                channel = cache[key] = subtask_of(key)
            buffer = buffers[channel]
            buffer.append(pair)
            if len(buffer) >= batch_size:
                pickle.dumps(buffer, protocol=5)
                buffers[channel] = []
                sent += 1
    return sent


# --- harness -----------------------------------------------------------------------------------
def make_lines(n: int, words_per_line: int = 8, vocabulary: int = 1000, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    vocab = [f"w{i:04d}" for i in range(vocabulary)]
    return [" ".join(rng.choice(vocab) for _ in range(words_per_line)) for _ in range(n)]


def measure(cases: dict[str, Callable[[], Any]], repeat: int) -> dict[str, float]:
    """Best CPU time of each case over ``repeat`` interleaved rounds.

    Interleaving (A B C A B C ...) and CPU time (not wall time) keep a noisy,
    shared machine from favouring whichever case happened to run in a quiet moment.
    """
    best = dict.fromkeys(cases, float("inf"))
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            for name, fn in cases.items():
                start = time.process_time()
                fn()
                best[name] = min(best[name], time.process_time() - start)
                gc.collect()
    finally:
        if gc_was_enabled:
            gc.enable()
    return best


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lines", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--sweep", action="store_true", help="also sweep batch sizes of chain + exchange")
    args = parser.parse_args()
    lines = make_lines(args.lines)
    words = sum(len(line.split()) for line in lines)
    size = args.batch_size
    print(f"{args.lines} lines, {words} words, batch size {size}, ", end="")
    print(f"best CPU time of {args.repeat} interleaved runs\n")
    pairs = [
        ("STREAMING", lambda: bare_loop(lines, True), lambda: chain_run(lines, True, size)),
        ("BATCH", lambda: bare_loop(lines, False), lambda: chain_run(lines, False, size)),
        ("hash exchange", lambda: bare_to_network(lines, size), lambda: chain_to_network_run(lines, size)),
    ]
    cases: dict[str, Callable[[], Any]] = {}
    for label, bare, chained in pairs:
        cases[f"bare loop, {label}"] = bare
        cases[f"operator chain, {label}"] = chained
    best = measure(cases, args.repeat)
    print(f"{'case':<40}{'records/s':>14}{'chain/bare':>12}")
    for label, _, _ in pairs:
        bare_t, chain_t = best[f"bare loop, {label}"], best[f"operator chain, {label}"]
        print(f"{'bare loop, ' + label:<40}{words / bare_t:>14,.0f}")
        print(f"{'operator chain, ' + label:<40}{words / chain_t:>14,.0f}{bare_t / chain_t:>12.2f}")
    if args.sweep:
        print("\nbatch-size sweep (flat_map -> map -> hash RecordWriter -> pickled buffers):")
        sizes = (16, 64, 256, 1024, 4096, 16384)
        sweep_cases: dict[str, Callable[[], Any]] = {}
        for n in sizes:
            sweep_cases[str(n)] = functools.partial(chain_to_network_run, lines, n)
        sweep = measure(sweep_cases, args.repeat)
        for n in sizes:
            print(f"  batch size {n:>6}: {words / sweep[str(n)]:>12,.0f} records/s")


if __name__ == "__main__":
    main()
