"""StreamTask end to end on threads: chains, exchanges, runtime modes, failures, cancel, buffer timeout."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import pytest

from flott.datastream.functions import FlatMapFunction, KeyedProcessFunction, MapFunction, RuntimeContext
from flott.datastream.state import ValueStateDescriptor
from flott.errors import TaskCancelledError, UserCodeError
from flott.runtime.execution.environment import OutputEdge
from flott.runtime.jobgraph import JobEdge, PartitionerDescriptor, new_id
from tests.operators.task_harness import (
    Blobs,
    CollectingPartitionWriter,
    CollectionSource,
    CollectSink,
    TaskThread,
    UnboundedSource,
    edge,
    make_env,
    op,
    run_job,
    vertex,
)

LINES = [
    "to be or not to be",
    "that is the question",
    "whether tis nobler in the mind to suffer",
    "the slings and arrows of outrageous fortune",
    "or to take arms against a sea of troubles",
] * 40
WORDS = Counter(w for line in LINES for w in line.split())


class Tokenizer(FlatMapFunction):
    def flat_map(self, value: str) -> Any:
        yield from value.split()


def word_count_job(blobs: Blobs, sink: CollectSink, aggregate: str = "reduce") -> tuple[list, list]:
    source = vertex(
        "Source: lines -> flat_map -> map",
        2,
        op(blobs, "source", CollectionSource(LINES)),
        op(blobs, "flat_map", Tokenizer()),
        op(blobs, "map", lambda w: (w, 1)),
    )
    if aggregate == "reduce":
        agg = op(blobs, "reduce", lambda a, b: (a[0], a[1] + b[1]), key=lambda t: t[0])
    else:
        agg = op(blobs, "sum", key=lambda t: t[0], config={"field": 1})
    counter = vertex("counts -> sink", 3, agg, op(blobs, "sink", sink))
    return [source, counter], [edge(blobs, source, counter, "hash", key=lambda t: t[0])]


@pytest.mark.parametrize("aggregate", ["reduce", "sum"])
def test_word_count_batch_emits_final_count_per_key(aggregate: str) -> None:
    blobs, sink = Blobs(), CollectSink()
    vertices, edges = word_count_job(blobs, sink, aggregate)
    run = run_job(
        vertices, edges, blobs, {"execution.runtime-mode": "BATCH", "taskmanager.network.batch-size": "7"}
    )
    run.join()
    run.raise_first()
    results = sink.all()
    assert len(results) == len(WORDS)  # exactly one record per key
    assert Counter(dict(results)) == WORDS
    assert all(e.startswith(("flush(True)", "close")) for e in sink.events)


@pytest.mark.parametrize("aggregate", ["reduce", "sum"])
def test_word_count_streaming_emits_every_update(aggregate: str) -> None:
    blobs, sink = Blobs(), CollectSink()
    vertices, edges = word_count_job(blobs, sink, aggregate)
    run = run_job(vertices, edges, blobs, {"execution.runtime-mode": "STREAMING"})
    run.join()
    run.raise_first()
    results = sink.all()
    assert len(results) == sum(WORDS.values())  # one update per word occurrence
    final: dict[str, int] = {}
    for word, count in results:
        final[word] = max(final.get(word, 0), count)
    assert Counter(final) == WORDS
    # Per key, the updates are 1, 2, ..., n in order (each key lives on one subtask).
    for subtask_results in sink.results.values():
        seen: dict[str, int] = {}
        for word, count in subtask_results:
            assert count == seen.get(word, 0) + 1
            seen[word] = count


def test_hash_exchange_puts_each_key_on_exactly_one_subtask() -> None:
    blobs, sink = Blobs(), CollectSink()
    vertices, edges = word_count_job(blobs, sink)
    run = run_job(vertices, edges, blobs, {"execution.runtime-mode": "BATCH"})
    run.join()
    run.raise_first()
    owners: dict[str, set[int]] = {}
    for subtask, records in sink.results.items():
        for word, _ in records:
            owners.setdefault(word, set()).add(subtask)
    assert all(len(s) == 1 for s in owners.values())
    assert len({next(iter(s)) for s in owners.values()}) > 1  # and keys do spread


class CountPerKey(KeyedProcessFunction):
    """Counts records per key in ValueState and emits (key, count, first value seen)."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count", None))
        self.first = runtime_context.get_state(ValueStateDescriptor("first", None))
        self.subtask = runtime_context.get_index_of_this_subtask()

    def process_element(self, value: tuple[str, int], ctx: KeyedProcessFunction.Context) -> Any:
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        if self.first.value() is None:
            self.first.update(value[1])
        yield ctx.get_current_key(), n, self.first.value()


def test_keyed_process_with_value_state_across_keys() -> None:
    """Both subtasks get keys; each runs its own copy of the (shared) function object."""
    blobs, sink = Blobs(), CollectSink()
    keys = [f"key{i}" for i in range(12)]
    records = [(k, i) for i in range(50) for k in keys]
    source = vertex("src", 1, op(blobs, "source", CollectionSource(records, delay_s=0.001)))
    proc = vertex(
        "keyed process",
        2,
        op(blobs, "keyed_process", CountPerKey(), key=lambda r: r[0]),
        op(blobs, "sink", sink),
    )
    edges = [edge(blobs, source, proc, "hash", key=lambda r: r[0])]
    run = run_job([source, proc], edges, blobs, {"taskmanager.network.batch-size": "10"})
    run.join()
    run.raise_first()
    out = sink.all()
    assert len(out) == 50 * len(keys)
    assert all(sink.results[subtask] for subtask in (0, 1))
    last = {k: (n, first) for k, n, first in out}
    assert last == {k: (50, 0) for k in keys}


def divide(value: int) -> float:
    return 10 / (value - 3)  # ZeroDivisionError at 3


def test_raising_user_function_becomes_user_code_error() -> None:
    blobs = Blobs()
    v = vertex("Source -> Map", 1, op(blobs, "source", CollectionSource(range(10))), op(blobs, "map", divide))
    sink_out = CollectingPartitionWriter(1)
    e = JobEdge(id=new_id(), source=v.id, target=new_id(), partitioner=PartitionerDescriptor(kind="forward"))
    env = make_env(v, blobs, outputs=[OutputEdge(e, sink_out)])
    t = TaskThread(env).start()
    t.join()
    err = t.error
    assert isinstance(err, UserCodeError)
    assert err.exception_type == "ZeroDivisionError"
    assert err.exception_message == "division by zero"
    assert "test_stream_task.py" in err.traceback
    assert "return 10 / (value - 3)" in err.traceback
    assert err.traceback.lstrip().startswith("Traceback")
    assert "Source -> Map (1/1)#0" in str(err)
    assert sink_out.released.is_set() and not sink_out.finished
    assert sink_out.release_cause is not None and "division by zero" in sink_out.release_cause, (
        "the consumers learn why their producer failed"
    )


class FailingOpen(MapFunction):
    closed = False

    def open(self, runtime_context: RuntimeContext) -> None:
        raise RuntimeError("cannot connect to the database")

    def map(self, value: Any) -> Any:
        return value

    def close(self) -> None:
        FailingOpen.closed = True


def test_failure_in_open_is_user_code_error_and_close_is_still_called() -> None:
    blobs = Blobs()
    v = vertex("v", 1, op(blobs, "source", CollectionSource([1])), op(blobs, "map", FailingOpen()))
    t = TaskThread(make_env(v, blobs)).start()
    t.join()
    assert isinstance(t.error, UserCodeError)
    assert t.error.exception_type == "RuntimeError"
    assert "cannot connect" in t.error.exception_message
    assert FailingOpen.closed


def test_cancel_mid_stream_is_quick() -> None:
    blobs = Blobs()
    v = vertex(
        "endless", 1, op(blobs, "source", UnboundedSource(endless=True)), op(blobs, "map", lambda x: x * 2)
    )
    out = CollectingPartitionWriter(1)
    e = JobEdge(id=new_id(), source=v.id, target=new_id(), partitioner=PartitionerDescriptor(kind="forward"))
    t = TaskThread(make_env(v, blobs, outputs=[OutputEdge(e, out)])).start()
    while len(out.records()) < 10_000:
        time.sleep(0.01)
    t.task.cancel()
    t.join(30)  # raises if the task does not end: no wall-clock bound, a loaded machine is slow
    assert isinstance(t.error, TaskCancelledError)
    assert out.released.is_set() and not out.finished


def test_cancel_while_blocked_in_emit_under_backpressure() -> None:
    """Cancel wakes a task blocked in emit, and the time it was blocked counts as back-pressured.

    No wall-clock thresholds: the test waits for the condition (the writer full, an emit waiting)
    and compares the metric with the interval it saw the task blocked itself, which the metric must
    cover however slowly the machine runs."""
    blobs = Blobs()
    v = vertex("endless", 1, op(blobs, "source", UnboundedSource(endless=True)))
    out = CollectingPartitionWriter(1, capacity=2048)  # never drained: emit blocks
    e = JobEdge(id=new_id(), source=v.id, target=new_id(), partitioner=PartitionerDescriptor(kind="forward"))
    env = make_env(v, blobs, outputs=[OutputEdge(e, out)])
    t = TaskThread(env).start()
    assert out.blocked.wait(30), "the task never filled its output"
    seen_blocked_ns = time.perf_counter_ns()
    time.sleep(0.05)  # let it stay blocked a while; the assertion below does not depend on how long
    assert not t.done.is_set()
    blocked_for_ns = time.perf_counter_ns() - seen_blocked_ns
    t.task.cancel()
    t.join(30)  # raises if cancel did not wake the task blocked in emit
    assert isinstance(t.error, TaskCancelledError)
    assert env.metrics.back_pressured_time_ns >= blocked_for_ns


def test_cancel_by_flag_while_waiting_for_input() -> None:
    blobs, sink = Blobs(), CollectSink()
    src = vertex("idle source", 1, op(blobs, "source", UnboundedSource([1, 2, 3])))
    dst = vertex("sink", 1, op(blobs, "sink", sink))
    run = run_job([src, dst], [edge(blobs, src, dst)], blobs)
    time.sleep(0.3)
    for t in run.all_tasks():
        t.env.cancelled.set()  # the TaskExecutor may only set the flag
    run.join(30)  # raises if a task does not notice the flag
    assert all(isinstance(e, TaskCancelledError) for e in run.errors()) and len(run.errors()) == 2
    assert sorted(sink.all()) == [1, 2, 3]


@pytest.mark.parametrize("timeout_ms", [30, 0])
def test_buffer_timeout_flushes_partial_batches(timeout_ms: int) -> None:
    blobs = Blobs()
    v = vertex("trickle", 1, op(blobs, "source", UnboundedSource(list(range(5)))), op(blobs, "map", str))
    out = CollectingPartitionWriter(1)
    e = JobEdge(id=new_id(), source=v.id, target=new_id(), partitioner=PartitionerDescriptor(kind="forward"))
    config = {"execution.buffer-timeout": f"{timeout_ms} ms", "taskmanager.network.batch-size": "1000"}
    t = TaskThread(make_env(v, blobs, config=config, outputs=[OutputEdge(e, out)]))
    start = time.monotonic()  # before the task can write anything: elapsed bounds the wait from below
    t.start()
    deadline = start + 2
    while not out.records() and time.monotonic() < deadline:
        time.sleep(0.002)
    elapsed = time.monotonic() - start
    t.task.cancel()
    t.join()
    assert out.records() == ["0", "1", "2", "3", "4"]
    assert elapsed < 0.5
    if timeout_ms:
        assert elapsed >= timeout_ms / 1000 * 0.9


def test_without_buffer_timeout_partial_batches_wait_for_the_end() -> None:
    blobs = Blobs()
    v = vertex("trickle", 1, op(blobs, "source", UnboundedSource(list(range(5)))))
    out = CollectingPartitionWriter(1)
    e = JobEdge(id=new_id(), source=v.id, target=new_id(), partitioner=PartitionerDescriptor(kind="forward"))
    config = {"execution.buffer-timeout": "-1"}
    t = TaskThread(make_env(v, blobs, config=config, outputs=[OutputEdge(e, out)])).start()
    time.sleep(0.3)
    assert out.records() == []
    t.task.cancel()
    t.join()


def test_full_buffers_are_emitted_at_batch_size() -> None:
    blobs = Blobs()
    v = vertex("src", 1, op(blobs, "source", CollectionSource(range(1000))))
    out = CollectingPartitionWriter(1)
    e = JobEdge(id=new_id(), source=v.id, target=new_id(), partitioner=PartitionerDescriptor(kind="forward"))
    env = make_env(v, blobs, config={"taskmanager.network.batch-size": "64"}, outputs=[OutputEdge(e, out)])
    t = TaskThread(env).start()
    t.join()
    assert t.error is None
    sizes = [len(b) for b in out.buffers[0]]
    # The source's first polls are 1, 2, 4, ... 64 records (its batches start small so that a
    # checkpoint trigger never waits for a batch of slow records): the first buffer holds those
    # 127, every later full buffer exactly 64.
    assert sizes[0] == 127 and sizes[1:-1] == [64] * 13 and sizes[-1] == 1000 - 127 - 13 * 64
    assert out.records() == list(range(1000)) and out.finished
    assert env.metrics.num_records_out == 1000 and env.metrics.num_buffers_out == 15


def test_metrics_count_records_and_buffers() -> None:
    blobs, sink = Blobs(), CollectSink()
    src = vertex(
        "src", 1, op(blobs, "source", CollectionSource(range(500))), op(blobs, "filter", lambda x: x % 2)
    )
    dst = vertex("dst", 1, op(blobs, "map", lambda x: x + 1), op(blobs, "sink", sink))
    run = run_job(
        [src, dst], [edge(blobs, src, dst, "rebalance")], blobs, {"taskmanager.network.batch-size": "100"}
    )
    run.join()
    run.raise_first()
    src_metrics = run.tasks["src"][0].env.metrics
    dst_metrics = run.tasks["dst"][0].env.metrics
    assert src_metrics.num_records_out == 250 and src_metrics.num_records_in == 0
    assert dst_metrics.num_records_in == 250 and dst_metrics.num_records_out == 0
    assert dst_metrics.num_buffers_in == src_metrics.num_buffers_out == 3
    assert dst_metrics.busy_time_ns > 0 and dst_metrics.idle_time_ns >= 0
    assert sorted(sink.all()) == list(range(2, 501, 2))


class UsesTimers(KeyedProcessFunction):
    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Any:
        ctx.timer_service().register_processing_time_timer(0)
        yield value

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Any:
        yield ("timer", timestamp, ctx.get_current_key(), ctx.time_domain().name)


def test_a_processing_time_timer_that_is_due_fires_on_the_task_thread() -> None:
    blobs, sink = Blobs(), CollectSink()
    v = vertex(
        "v",
        1,
        op(blobs, "source", CollectionSource([7])),
        op(blobs, "keyed_process", UsesTimers(), key=lambda x: x),
        op(blobs, "sink", sink),
    )
    t = TaskThread(make_env(v, blobs)).start()
    t.join()
    assert t.error is None
    assert sink.all() == [7, ("timer", 0, 7, "PROCESSING_TIME")]


def test_chain_of_every_stateless_kind_and_sink_lifecycle() -> None:
    blobs, sink = Blobs(), CollectSink()
    v = vertex(
        "chain",
        1,
        op(blobs, "source", CollectionSource(range(20))),
        op(blobs, "filter", lambda x: x % 3 != 0),
        op(blobs, "flat_map", lambda x: [x, -x] if x % 2 else None),
        op(blobs, "map", abs),
        op(blobs, "sink", sink),
    )
    t = TaskThread(make_env(v, blobs)).start()
    t.join()
    assert t.error is None
    assert sink.all() == [n for x in range(20) if x % 3 and x % 2 for n in (x, x)]
    assert sink.events == ["flush(True)@0", "close@0"]
