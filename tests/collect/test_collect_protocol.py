"""The collect sink's buffer and the client's result buffer, without a cluster (pure state, threads only)."""

from __future__ import annotations

import pickle
import threading
import time
from typing import Any

import pytest

from flott.errors import IllegalStateTransitionError
from flott.runtime.execution.environment import TaskEnvironment
from flott.runtime.operators.collect.protocol import (
    CollectCoordinationRequest,
    CollectCoordinationResponse,
    decode_response,
    encode,
)
from flott.runtime.operators.collect.result_fetcher import CollectResultBuffer
from flott.runtime.operators.collect.sink import CollectSink, CollectSinkWriter


class FakeEnv:
    """The two fields of TaskEnvironment a collect writer uses."""

    def __init__(self) -> None:
        self.coordination_handlers: dict[str, Any] = {}
        self.accumulators: dict[str, bytes] = {}
        self.cancelled = threading.Event()


def bound_writer(sink: CollectSink, env: FakeEnv) -> CollectSinkWriter:
    writer = sink.create_writer(0, 1, None)
    writer.bind_task(env, "op")  # type: ignore[arg-type]
    return writer


def ask(env: FakeEnv, version: str, offset: int) -> CollectCoordinationResponse:
    handler = env.coordination_handlers["op"]
    return decode_response(handler(encode(CollectCoordinationRequest(version, offset))))


def values(response: CollectCoordinationResponse) -> list[Any]:
    return [pickle.loads(r) for r in response.results]


def test_client_learns_the_version_then_acknowledges_by_offset() -> None:
    env = FakeEnv()
    writer = bound_writer(CollectSink("acc"), env)
    writer.write_batch([1, 2, 3])
    first = ask(env, "", 0)
    assert first.results == [] and first.version == writer.version, "an unknown version gets no results"
    r = ask(env, writer.version, 0)
    assert (r.offset, values(r)) == (0, [1, 2, 3])
    r = ask(env, writer.version, 2)  # the client holds 1, 2
    assert (r.offset, values(r)) == (2, [3])
    writer.flush(True)
    final = decode_response(env.accumulators["acc"])
    assert (final.offset, values(final), final.last_checkpointed_offset) == (2, [3], 3)
    writer.close()
    assert env.coordination_handlers == {}


def test_a_full_buffer_blocks_the_task_until_the_client_acknowledges() -> None:
    env = FakeEnv()
    writer = bound_writer(CollectSink("acc", max_bytes=200), env)
    done = threading.Event()

    def produce() -> None:
        for i in range(20):
            writer.write_batch([b"x" * 50, i])
        done.set()

    thread = threading.Thread(target=produce, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not env.coordination_handlers and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not done.wait(0.5), "the producer waits: the buffer is bounded"
    got: list[Any] = []
    offset = 0
    version = ask(env, "", 0).version
    while not (done.is_set() and len(got) == 40) and time.monotonic() < deadline:
        r = ask(env, version, offset)
        assert sum(len(x) for x in r.results) <= 200 + 100, "a response is bounded too"
        got.extend(values(r))
        offset = r.offset + len(r.results)
    thread.join(5)
    assert got == [v for i in range(20) for v in (b"x" * 50, i)]


def test_cancel_unblocks_a_waiting_sink() -> None:
    env = FakeEnv()
    writer = bound_writer(CollectSink("acc", max_bytes=10), env)
    thread = threading.Thread(target=writer.write_batch, args=([b"y" * 100],), daemon=True)
    thread.start()
    time.sleep(0.2)
    assert thread.is_alive()
    env.cancelled.set()
    thread.join(5)
    assert not thread.is_alive()


def test_checkpointed_state_restores_under_a_new_version() -> None:
    sink = CollectSink("acc")
    env = FakeEnv()
    writer = bound_writer(sink, env)
    writer.write_batch(["a", "b", "c"])
    v1 = writer.version
    ask(env, v1, 1)  # client acknowledged "a"
    committables = writer.prepare_commit(7)
    sink.commit(committables)
    assert ask(env, v1, 1).last_checkpointed_offset == 3
    writer.write_batch(["d"])  # after the checkpoint: lost with the failure, replayed by the sources
    # restart: a fresh Sink object (unpickled again) gets the restored committables first
    restored = CollectSink("acc")
    restored.commit(committables)
    env2 = FakeEnv()
    writer2 = bound_writer(restored, env2)
    assert writer2.version != v1
    r = ask(env2, writer2.version, 1)
    assert (r.offset, values(r), r.last_checkpointed_offset) == (1, ["b", "c"], 3)


def response(version: str, lcp: int, offset: int, results: list[Any]) -> CollectCoordinationResponse:
    return CollectCoordinationResponse(version, lcp, offset, [pickle.dumps(x) for x in results])


def taken(buffer: CollectResultBuffer) -> list[Any]:
    return [pickle.loads(x) for x in buffer.take_visible()]


def test_checkpointed_client_shows_only_checkpointed_results_and_sees_each_once() -> None:
    b = CollectResultBuffer(checkpointed=True)
    b.on_response(response("v1", 0, 0, []))
    assert b.on_response(response("v1", 0, 0, [1, 2, 3, 4])) == 4
    assert taken(b) == [], "nothing is checkpointed yet"
    b.on_response(response("v1", 2, 4, []))
    assert taken(b) == [1, 2]
    # the sink restarts from the checkpoint ending at offset 3: results 3 come again, 4 is replayed
    b.on_response(response("v2", 3, 0, []))
    assert (b.version, b.offset, b.restarts) == ("v2", 3, 1)
    assert taken(b) == [3]
    b.on_response(response("v2", 3, 3, [40, 50]))
    b.end_of_results()
    assert taken(b) == [40, 50]


def test_uncheckpointed_client_hands_out_at_once_and_restarts_from_zero() -> None:
    b = CollectResultBuffer(checkpointed=False)
    b.on_response(response("v1", 0, 0, ["a", "b"]))
    assert taken(b) == ["a", "b"]
    b.on_response(response("v2", 0, 0, []))
    assert b.offset == 0, "at least once: the restarted sink's results are all delivered again"
    b.on_response(response("v2", 0, 0, ["a", "b", "c"]))
    assert taken(b) == ["a", "b", "c"]


def test_a_gap_in_offsets_is_an_error() -> None:
    b = CollectResultBuffer(checkpointed=False)
    b.on_response(response("v1", 0, 0, []))
    with pytest.raises(IllegalStateTransitionError):
        b.on_response(response("v1", 0, 5, ["x"]))


def test_task_environment_has_the_fields_the_writer_uses() -> None:
    fields = TaskEnvironment.__dataclass_fields__
    assert {"coordination_handlers", "accumulators", "cancelled"} <= set(fields)
