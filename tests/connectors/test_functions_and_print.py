"""SourceFunction/SinkFunction adapters and PrintSink's Flink-style output."""

from __future__ import annotations

import threading
import time

import cloudpickle
import pytest

from flott.common import Types
from flott.datastream.connectors import Boundedness
from flott.datastream.connectors.base import get_source_max_parallelism
from flott.datastream.connectors.print_sink import PrintSink, print_prefix
from flott.datastream.connectors.source_function import (
    ParallelSourceFunction,
    SinkFunction,
    SinkFunctionSink,
    SourceFunction,
    sink_from_sink_function,
    source_from_source_function,
)


def drain(reader, max_records: int = 100, timeout: float = 10.0) -> list:
    out: list = []
    deadline = time.monotonic() + timeout
    while (batch := reader.poll_batch(max_records)) is not None:
        assert len(batch) <= max_records
        out.extend(batch)
        assert time.monotonic() < deadline
    return out


class CountingSource(SourceFunction):
    def __init__(self, n: int) -> None:
        self.n = n
        self.running = True

    def run(self, ctx) -> None:
        for i in range(self.n):
            if not self.running:
                return
            ctx.collect(i)

    def cancel(self) -> None:
        self.running = False


class EndlessSource(SourceFunction):
    def __init__(self) -> None:
        self.running = True

    def run(self, ctx) -> None:
        i = 0
        while self.running:
            ctx.collect(i)
            i += 1

    def cancel(self) -> None:
        self.running = False


class FailingSource(SourceFunction):
    def run(self, ctx) -> None:
        ctx.collect("before")
        raise RuntimeError("boom")


def test_source_function_emits_everything_then_ends() -> None:
    source, non_parallel = source_from_source_function(CountingSource(50_000))
    assert non_parallel and get_source_max_parallelism(source) == 1
    assert source.get_boundedness() is Boundedness.CONTINUOUS_UNBOUNDED
    source = cloudpickle.loads(cloudpickle.dumps(source))
    reader = source.create_reader(0, 1)
    assert drain(reader, 1000) == list(range(50_000))  # backpressure: queue smaller than the output
    reader.close()
    assert source.create_reader(1, 2).poll_batch(10) is None  # non-parallel: other subtasks idle


def test_source_function_error_is_raised_after_its_records() -> None:
    source, _ = source_from_source_function(FailingSource())
    reader = source.create_reader(0, 1)
    got = []
    with pytest.raises(RuntimeError, match="boom"):
        while (batch := reader.poll_batch(10)) is not None:
            got.extend(batch)
    assert got == ["before"]


def test_endless_source_is_cancelled_on_close() -> None:
    source, _ = source_from_source_function(EndlessSource())
    reader = source.create_reader(0, 1)
    assert len(reader.poll_batch(100)) > 0
    before = threading.active_count()
    reader.close()
    assert threading.active_count() < before


class Slow(SourceFunction):
    def run(self, ctx) -> None:
        time.sleep(0.2)
        ctx.collect("late")


def test_poll_batch_returns_empty_while_waiting() -> None:
    reader = source_from_source_function(Slow())[0].create_reader(0, 1)
    start = time.monotonic()
    assert reader.poll_batch(10) == []
    assert time.monotonic() - start < 0.2  # bounded wait
    assert drain(reader) == ["late"]


class Par(ParallelSourceFunction):
    def run(self, ctx) -> None:
        ctx.collect("x")


def test_parallel_source_function_runs_in_every_subtask() -> None:
    source, non_parallel = source_from_source_function(Par())
    assert not non_parallel
    assert [drain(source.create_reader(i, 3)) for i in range(3)] == [["x"]] * 3


class Collecting(SinkFunction):
    def __init__(self) -> None:
        self.seen: list = []

    def invoke(self, value, context) -> None:
        assert context.current_processing_time() > 0
        self.seen.append(value)


def test_sink_function_adapter() -> None:
    fn = Collecting()
    sink = sink_from_sink_function(fn)
    assert isinstance(sink, SinkFunctionSink)
    writer = sink.create_writer(0, 1, None)
    writer.write_batch([1, 2])
    writer.write_batch([3])
    writer.flush(True)
    writer.close()
    assert fn.seen == [1, 2, 3]
    print_sink = PrintSink()
    assert sink_from_sink_function(print_sink) is print_sink
    with pytest.raises(TypeError):
        sink_from_sink_function(object())


def test_print_prefix_rules() -> None:
    assert print_prefix(None, 0, 1) == ""
    assert print_prefix(None, 2, 4) == "3> "
    assert print_prefix("out", 0, 1) == "out> "
    assert print_prefix("out", 1, 2) == "out:2> "
    assert print_prefix("", 1, 2) == "2> "


def test_print_sink_writes_formatted_lines(capsys) -> None:
    w = PrintSink().create_writer(0, 1, Types.TUPLE([Types.STRING(), Types.INT()]))
    w.write_batch([("a", 1), ("b", 2)])
    w.flush(True)
    assert capsys.readouterr().out == "(a,1)\n(b,2)\n"
    w2 = PrintSink("id").create_writer(1, 3, None)
    w2.write_batch([("a", 1)])
    assert capsys.readouterr().out == "id:2> ('a', 1)\n"
    w3 = PrintSink(to_stderr=True).create_writer(0, 2, Types.DOUBLE())
    w3.write_batch([1e10])
    captured = capsys.readouterr()
    assert captured.err == "1> 1.0E10\n" and captured.out == ""
