"""State TTL in real jobs on an embedded cluster (TaskExecutor processes): a KeyedProcessFunction's
short-lived state is gone when its processing-time timer fires, and TTL timestamps go through a
stop-with-savepoint and a resume unchanged.

No assertion compares wall-clock durations: the short TTL (200 ms) is a small fraction of the time
between the write and the read (at least a 1.5 s sleep), the long one (an hour) far more than a
test takes.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flott.client.pipeline_executor import EmbeddedExecutor
from flott.common import Types
from flott.common.job_status import JobStatus
from flott.common.serialization import Encoder
from flott.common.time import Time
from flott.common.watermark_strategy import WatermarkStrategy
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.connectors.file_sink import FileSink
from flott.datastream.connectors.number_seq import NumberSequenceSource
from flott.datastream.functions import KeyedProcessFunction
from flott.datastream.state import ListStateDescriptor, StateTtlConfig, ValueStateDescriptor
from flott.runtime.checkpoint.metadata import load_metadata
from flott.runtime.checkpoint.snapshot import key_group_blobs, read_key_group
from flott.runtime.checkpoint.storage import FsspecCheckpointStorage
from flott.runtime.state.ttl import TtlValue
from tests.e2e.conftest import embedded as embedded
from tests.e2e.conftest import read_output_lines


def ttl(descriptor: Any, ttl: Time) -> Any:
    descriptor.enable_time_to_live(StateTtlConfig.new_builder(ttl).build())
    return descriptor


class RememberAndCheckLater(KeyedProcessFunction):
    """Keeps each key's value in a 200 ms state and an hour-long one; its timer looks at both.

    The timers are event-time timers, due at the end of the input (the final watermark), which
    comes after a "pause" record that makes the function sleep 1.5 s.
    """

    def open(self, runtime_context: Any) -> None:
        self.short = runtime_context.get_state(
            ttl(ValueStateDescriptor("short", None), Time.milliseconds(200))
        )
        self.long = runtime_context.get_state(ttl(ValueStateDescriptor("long", None), Time.hours(1)))
        self.events = runtime_context.get_list_state(
            ttl(ListStateDescriptor("events", None), Time.milliseconds(200))
        )

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Any:
        key, word = value
        if word == "pause":
            time.sleep(1.5)
            return
        self.short.update(word)
        self.long.update(word)
        self.events.add(word)
        ctx.timer_service().register_event_time_timer(1000)
        yield f"{key} wrote short={self.short.value()} long={self.long.value()} events={self.events.get()}"

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Any:
        yield (
            f"{ctx.get_current_key()} timer short={self.short.value()} long={self.long.value()} "
            f"events={self.events.get()}"
        )


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_a_keyed_process_function_sees_its_state_expire(
    embedded: EmbeddedExecutor,
    tmp_path: Path,
    backend: str,
) -> None:
    out = tmp_path / "out"
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.configure({"state.backend.type": backend})
    pair = Types.TUPLE([Types.STRING(), Types.STRING()])
    (
        env.from_collection([("a", "x"), ("b", "y"), ("zz", "pause")], type_info=pair)
        .key_by(lambda r: r[0], key_type=Types.STRING())
        .process(RememberAndCheckLater(), output_type=Types.STRING())
        .uid("remember")
        .sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder()).build())
    )
    env.execute(f"ttl expiry on {backend}")
    assert sorted(read_output_lines(out)) == [
        "a timer short=None long=x events=[]",
        "a wrote short=x long=x events=['x']",
        "b timer short=None long=y events=[]",
        "b wrote short=y long=y events=['y']",
    ]


# --- savepoint and resume ----------------------------------------------------------------------


class FirstSeen(KeyedProcessFunction):
    """Remembers the first number of each key in an hour-long TTL state (written once, never again)."""

    def open(self, runtime_context: Any) -> None:
        self.first = runtime_context.get_state(ttl(ValueStateDescriptor("first", None), Time.hours(1)))

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Any:
        first = self.first.value()
        if first is None:
            self.first.update(value)
            first = value
        yield f"{value % 3} {first}"


def _slowly(x: int) -> int:
    if x % 50 == 0:
        time.sleep(0.01)
    return x


def first_seen_job(out: Path, checkpoints: Path, savepoint: str | None) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.enable_checkpointing(300)
    env.get_checkpoint_config().set_checkpoint_storage_dir(checkpoints.as_uri())
    if savepoint is not None:
        env.configure({"execution.savepoint.path": savepoint})
    (
        env.from_source(NumberSequenceSource(0, 200_000), WatermarkStrategy.no_watermarks(), "numbers")
        .uid("numbers")
        .map(_slowly, output_type=Types.LONG())
        .uid("slowly")
        .key_by(lambda x: x % 3)
        .process(FirstSeen(), output_type=Types.STRING())
        .uid("first-seen")
        .sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder()).build())
        .uid("files")
    )
    return env


def saved_state(savepoint: str, name: str) -> dict[Any, Any]:
    """``key -> stored value`` of state ``name`` in every key-group file of a savepoint."""
    storage = FsspecCheckpointStorage()
    out: dict[Any, Any] = {}
    directory = savepoint.removeprefix("file://")
    for op in load_metadata(storage, directory).operators:
        for _, path, offset, size in key_group_blobs(directory, op.key_groups):
            states = read_key_group(storage, path, offset, size)
            if name in states:
                out.update(states[name][1])
    return out


def wait_for_output(out: Path, more_than: int, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not (out.exists() and len(read_output_lines(out)) > more_than):
        assert time.monotonic() < deadline, "no output committed"
        time.sleep(0.05)


@pytest.fixture
def dirs(tmp_path: Path) -> Iterator[tuple[Path, Path, Path]]:
    yield tmp_path / "out", tmp_path / "chk", tmp_path / "sp"


def test_ttl_timestamps_survive_a_savepoint_and_a_resume(
    embedded: EmbeddedExecutor,
    dirs: tuple[Path, Path, Path],
) -> None:
    out, chk, sp = dirs
    started_ms = time.time_ns() // 1_000_000
    first = first_seen_job(out, chk, None).execute_async("first")
    wait_for_output(out, 0)
    savepoint1 = first.stop_with_savepoint(False, str(sp)).result(timeout=60)
    stopped_ms = time.time_ns() // 1_000_000
    assert first.get_job_status().result() is JobStatus.FINISHED
    saved1 = saved_state(savepoint1, "first")
    assert sorted(saved1) == [0, 1, 2]
    for key, stored in saved1.items():
        assert isinstance(stored, TtlValue), stored
        assert stored.user_value == key  # the first numbers: 0, 1, 2
        assert started_ms <= stored.last_access_timestamp <= stopped_ms

    done = len(read_output_lines(out))
    second = first_seen_job(out, chk, savepoint1).execute_async("resumed")
    wait_for_output(out, done)
    savepoint2 = second.stop_with_savepoint(False, str(sp)).result(timeout=60)
    resumed_lines = read_output_lines(out)[done:]
    assert resumed_lines and all(line.split() == [line.split()[0]] * 2 for line in resumed_lines), (
        "after the resume every key still remembers its first number from before the savepoint"
    )
    assert saved_state(savepoint2, "first") == saved1  # same values, same last-access times
