"""Micro-benchmark for instruction counts: the cost per record of a declared output type check.

The BATCH word count's producer chain (flat_map -> map -> Local reduce, the combiner checking its
input against the map's declared ``Types.TUPLE([Types.STRING(), Types.INT()])`` as PyFlink's coder
would), built the way a task builds it (``OperatorChain.build`` from a JobVertex), with and without
the declared type; and the STREAMING chain (flat_map -> map) with the task's output to key_by: a
RecordWriterDelegate with the hash partitioner over 2 channels, the map's output checked where it
leaves the task (:class:`DeclaredOutputType`, in front of the partitioner or, where the tree folds
it, inside the partitioner's loop).

The machine is shared, so wall-clock timings are noise: count instructions instead, one case per
process. The chain is built and warmed up first; the measured pass is the script's only call of
``operator.call``, so callgrind collects just that pass (C function ``_operator_call``)::

    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=_operator_call \\
        --callgrind-out-file=/tmp/cg.%p python bench/type_check_micro.py --case typed --words 20000
    callgrind_annotate /tmp/cg.<pid> | grep "PROGRAM TOTALS"     # divide by --words

(``python`` must be the interpreter binary, not a pyenv shim script.) ``--case``: ``bare`` (the
user functions in a hand-written loop), ``untyped`` and ``typed`` (the BATCH producer chain with
the combiner), ``streaming-untyped`` and ``streaming-typed`` (chain, then the task's record writer:
declared output check and hash partitioning). ``--exchange`` adds what a remote channel does to
every emitted buffer: the partition's encoder (pickle; for ``streaming-typed`` the typed stream's msgpack
encoder of record_codec.py where the tree has it) and the consumer's decoder. Without valgrind,
``--time`` prints the best CPU time of 5 rounds of every case (noisy on a shared machine).
"""

from __future__ import annotations

import argparse
import operator
import random
import time
from collections.abc import Callable, Iterator
from typing import Any

from flott.common import Types
from flott.runtime.execution.environment import TaskEnvironment, TaskIOMetrics
from flott.runtime.jobgraph import JobVertex, OperatorDescriptor, new_id
from flott.runtime.operators.declared_output_type import DeclaredOutputType
from flott.runtime.partitioner import KeyGroupStreamPartitioner
from flott.runtime.tasks.operator_chain import OperatorChain
from flott.runtime.tasks.record_writer import CHECK_INPUT, RecordWriter, RecordWriterDelegate


def split(line: str) -> Iterator[str]:
    yield from line.split()


def pair(word: str) -> tuple[str, int]:
    return word, 1


def key(p: tuple[str, int]) -> str:
    return p[0]


def add(a: tuple[str, int], b: tuple[str, int]) -> tuple[str, int]:
    return a[0], a[1] + b[1]


WORD_PAIR = Types.TUPLE([Types.STRING(), Types.INT()])


def build_chain(typed: bool, streaming: bool, batch_size: int) -> OperatorChain:
    """The producer chain of the word count as a task builds it (BATCH: with the combiner)."""
    objects: dict[str, Any] = {}

    def blob(obj: Any) -> str:
        ref = new_id()
        objects[ref] = obj
        return ref

    type_ref = blob(WORD_PAIR) if typed else None
    ops = [
        OperatorDescriptor(operator_id=new_id(), name="split", kind="flat_map", function=blob(split)),
        OperatorDescriptor(
            operator_id=new_id(), name="pair", kind="map", function=blob(pair), output_type=type_ref
        ),
    ]
    if not streaming:
        config: dict[str, Any] = {"local_pre_aggregation": True, "declared_output_unchecked": True}
        if typed:
            config[CHECK_INPUT] = {"type": type_ref, "producer": "pair", "keyed": True}
        ops.append(
            OperatorDescriptor(
                operator_id=new_id(),
                name="Local reduce",
                kind="reduce",
                function=blob(add),
                key_selector=blob(key),
                config=config,
            )
        )
    vertex = JobVertex(id=new_id(), name="wc", parallelism=1, max_parallelism=128, operators=ops)
    env = TaskEnvironment(
        job_id=new_id(),
        job_name="bench",
        vertex=vertex,
        subtask_index=0,
        attempt_number=0,
        job_config={},
        inputs=[],
        outputs=[],
        load_user_object=objects.__getitem__,
    )
    chain = OperatorChain.build(env, streaming=streaming, batch_size=batch_size)
    chain.open()
    return chain


def bare(lines: list[str]) -> int:
    """The same user functions in the loop a user would write by hand."""
    counts: dict[str, tuple[str, int]] = {}
    for line in lines:
        for word in split(line):
            p = pair(word)
            k = key(p)
            if k in counts:
                p = add(counts[k], p)
            counts[k] = p
    return len(counts)


def exchange_codec(streaming: bool, typed: bool, declared: DeclaredOutputType | None) -> tuple[
    Callable[[list[Any]], bytes], Callable[[bytes], Any]
]:
    """What a remote channel does to the chain's output: the partition's encoder (the typed
    stream's schema-driven one where the tree has it, else pickle) and the consumer's decoder."""
    import pickle

    from flott.runtime.io.network.protocol import serialize

    try:
        from flott.runtime.io.network.record_codec import deserialize, typed_encoder
    except ImportError:  # a checkout from before the typed encoder: pickle both ways
        return serialize, pickle.loads
    encode = None
    if streaming and typed and declared is not None:
        encode = typed_encoder(
            WORD_PAIR, none_allowed=declared.none_allowed, timestamped=False, fallback=serialize
        )
    return encode or serialize, deserialize


class CountingWriter:
    """A result partition of 2 subpartitions that counts what is emitted, after encoding and
    decoding each buffer as a remote channel does when ``codec`` is given."""

    num_subpartitions = 2

    def __init__(self, codec: tuple[Callable[[list[Any]], bytes], Callable[[bytes], Any]] | None) -> None:
        self.codec = codec
        self.records = 0

    def emit(self, subpartition: int, records: list[Any]) -> None:
        if self.codec is not None:
            encode, decode = self.codec
            records = decode(encode(records))
        self.records += len(records)

    def broadcast_event(self, event: object) -> None:
        pass

    def finish(self) -> None:
        pass

    def release(self, cause: str | None = None) -> None:
        pass


def prepare(case: str, batch_size: int, exchange: bool = False) -> Callable[[list[str]], int]:
    """The case's chain, built and opened: a function pushing lines through it in batches."""
    if case == "bare":
        return bare
    streaming = case.startswith("streaming")
    typed = case.endswith("-typed") or case == "typed"
    chain = build_chain(typed, streaming, batch_size)
    process = chain.process
    if not streaming:
        codec = exchange_codec(False, typed, None) if exchange else None

        def drive_batch(lines: list[str]) -> int:
            n = 0
            for start in range(0, len(lines), batch_size):
                out = process(lines[start : start + batch_size])
                if codec is not None and out:
                    out = codec[1](codec[0](out))
                n += len(out)
            return n

        return drive_batch
    declared = (
        DeclaredOutputType.of(WORD_PAIR, "pair", "wc", keyed=True, timestamped=False) if typed else None
    )
    sink = CountingWriter(exchange_codec(True, typed, declared) if exchange else None)
    metrics = TaskIOMetrics()
    partitioner = KeyGroupStreamPartitioner(key, 128)
    output = RecordWriterDelegate(
        [RecordWriter(sink, partitioner, batch_size, metrics)], metrics, -1, None, False, declared
    )

    def drive(lines: list[str]) -> int:
        sink.records = 0
        for start in range(0, len(lines), batch_size):
            out = process(lines[start : start + batch_size])
            if out:
                output.write(out)
        output.flush()
        return sink.records

    return drive


def make_lines(words: int, per_line: int = 8, vocabulary: int = 1000) -> list[str]:
    rng = random.Random(1)
    vocab = [f"w{i:04d}" for i in range(vocabulary)]
    return [" ".join(rng.choice(vocab) for _ in range(per_line)) for _ in range(words // per_line)]


CASES = ("bare", "untyped", "typed", "streaming-untyped", "streaming-typed")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--case", choices=CASES, default="typed")
    parser.add_argument("--words", type=int, default=200_000)
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument(
        "--exchange",
        action="store_true",
        help="also encode each output batch as a remote channel does and decode it as its consumer does",
    )
    parser.add_argument("--time", action="store_true", help="best CPU time of 5 rounds per case")
    args = parser.parse_args()
    lines = make_lines(args.words)
    if not args.time:
        drive = prepare(args.case, args.batch_size, args.exchange)
        drive(lines)  # warm up: the interpreter specialises the loops' bytecode
        # The measured pass is the only call of operator.call: --toggle-collect=_operator_call.
        operator.call(drive, lines)
        return
    for case in CASES:
        best = float("inf")
        for _ in range(5):
            drive = prepare(case, args.batch_size, args.exchange)
            start = time.process_time()
            drive(lines)
            best = min(best, time.process_time() - start)
        print(f"{case:<20}{best * 1e9 / args.words:>8.1f} ns/record")

if __name__ == "__main__":
    main()
