"""Broadcast state and partition_custom in real jobs on an embedded cluster (TaskExecutor processes).

The broadcast job: numbers ``0..RULES-1`` are broadcast as rules; each rule ``n`` appends ``n`` to
the list of key ``n % KEYS`` in the broadcast state. The keyed side counts its records per key
(keyed state) and sets a timer that fires on the final watermark, after both inputs ended; the
timer writes the key's count, the key's list from the broadcast state and the subtask that holds
it. Exactly-once broadcast state means every list is exactly ``[k, k + KEYS, ...]`` in every
subtask, whatever was killed, stopped or rescaled in between.
"""

from __future__ import annotations

import ast
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from flott.client.pipeline_executor import EmbeddedExecutor
from flott.common import Encoder, Types, WatermarkStrategy
from flott.common.job_status import JobStatus
from flott.common.restart_strategy import RestartStrategies
from flott.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from flott.datastream.connectors.file_sink import FileSink
from flott.datastream.connectors.number_seq import NumberSequenceSource
from flott.datastream.functions import (
    BroadcastProcessFunction,
    KeyedBroadcastProcessFunction,
    MapFunction,
    Partitioner,
)
from flott.datastream.state import MapStateDescriptor, ValueStateDescriptor
from flott.errors import JobExecutionError
from flott.runtime.checkpoint.metadata import load_metadata
from flott.runtime.checkpoint.storage import FsspecCheckpointStorage
from tests.e2e.conftest import read_output_lines
from tests.e2e.test_checkpointing import task_executor_processes, wait_running

KEYS = 12
RULES_DESC = MapStateDescriptor("rules", Types.INT(), Types.PICKLED_BYTE_ARRAY())


class SlowRule(MapFunction):
    """Passes rules on slowly (checkpoints and kills land mid-way) and logs each one it handles, so
    a test sees which rules were replayed after a recovery."""

    def __init__(self, log: Path) -> None:
        self.log = str(log)

    def map(self, value: Any) -> Any:
        time.sleep(0.02)
        with open(self.log, "a") as f:
            f.write(f"{value}\n")
        return value


def handled_rules(log: Path) -> list[int]:
    return [int(line) for line in log.read_text().split()]


def _slow_reading(n: int) -> tuple[int, int]:
    if n % 50 == 0:
        time.sleep(0.01)
    return (n % KEYS, n)


class CollectRules(KeyedBroadcastProcessFunction):
    def open(self, runtime_context: Any) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.INT()))
        self.subtask = runtime_context.get_index_of_this_subtask()

    def process_element(self, value: Any, ctx: Any) -> Any:
        self.count.update((self.count.value() or 0) + 1)
        ctx.timer_service().register_event_time_timer(1000)

    def process_broadcast_element(self, value: Any, ctx: Any) -> Any:
        rules = ctx.get_broadcast_state(RULES_DESC)
        key = value % KEYS
        rules.put(key, [*(rules.get(key) or []), value])

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        key = ctx.get_current_key()
        yield repr((key, self.count.value(), ctx.get_broadcast_state(RULES_DESC).get(key), self.subtask))


def rules_job(
    out: Path,
    checkpoints: Path,
    parallelism: int,
    rules: int,
    readings: int,
    savepoint: str | None = None,
) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    env.set_max_parallelism(64)
    env.enable_checkpointing(300)
    env.get_checkpoint_config().set_checkpoint_storage_dir(checkpoints.as_uri())
    env.set_restart_strategy(RestartStrategies.fixed_delay_restart(10, 100))
    # Small batches: a source hands out a few rules at a time, so barriers pass between them.
    env.configure({"taskmanager.network.batch-size": "4"})
    if savepoint is not None:
        env.configure({"execution.savepoint.path": savepoint})
    no_wm = WatermarkStrategy.no_watermarks()
    rule_stream = (
        env.from_source(NumberSequenceSource(0, rules - 1), no_wm, "rules")
        .set_parallelism(1)
        .uid("rules-source")
        .map(SlowRule(out.parent / "rules.log"), output_type=Types.LONG())
        .set_parallelism(1)
        .uid("slow-rules")
    )
    (
        env.from_source(NumberSequenceSource(0, readings - 1), no_wm, "readings")
        .uid("readings-source")
        .map(_slow_reading, output_type=Types.TUPLE([Types.LONG(), Types.LONG()]))
        .uid("readings")
        .key_by(lambda r: r[0])
        .connect(rule_stream.broadcast(RULES_DESC))
        .process(CollectRules(), output_type=Types.STRING())
        .uid("collect-rules")
        .sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder()).build())
        .uid("files")
    )
    return env


def assert_complete_rules(out: Path, rules: int, readings: int) -> set[int]:
    """Every key reported once, with its exact count and its exact rule list; returns the subtasks."""
    rows = [ast.literal_eval(line) for line in read_output_lines(out)]
    by_key = {key: (count, got, subtask) for key, count, got, subtask in rows}
    assert len(rows) == len(by_key) == KEYS, f"one line per key, got {sorted(r[0] for r in rows)}"
    for key, (count, got, _subtask) in by_key.items():
        assert count == len(range(key, readings, KEYS)), f"key {key}: keyed state count {count}"
        assert got == list(range(key, rules, KEYS)), f"key {key}: broadcast state {got}"
    return {subtask for _c, _g, subtask in by_key.values()}


def test_broadcast_rules_reach_every_subtask_of_a_keyed_stream(
    tmp_path: Path, embedded: EmbeddedExecutor
) -> None:
    rules_job(tmp_path / "out", tmp_path / "chk", 2, rules=30, readings=600).execute("rules")
    assert assert_complete_rules(tmp_path / "out", 30, 600) == {0, 1}


def _completed_checkpoints(chk: Path) -> list[Path]:
    return sorted(chk.rglob("chk-*/_metadata"))


def test_broadcast_state_survives_a_task_executor_crash(tmp_path: Path, embedded: EmbeddedExecutor) -> None:
    out, chk = tmp_path / "out", tmp_path / "chk"
    rules, readings = 150, 3000
    client = rules_job(out, chk, 2, rules=rules, readings=readings).execute_async("crash")
    wait_running(client)
    killed: list[int] = []

    def killer() -> None:
        deadline = time.monotonic() + 30
        while not _completed_checkpoints(chk) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        victims = task_executor_processes()
        if victims and not client.get_job_status().result().is_globally_terminal_state():
            victims[0].kill()
            killed.append(victims[0].pid)

    thread = threading.Thread(target=killer)
    thread.start()
    client.get_job_execution_result().result(timeout=180)
    thread.join()
    assert killed, "the job ended before a TaskExecutor could be killed; make it longer"
    handled = handled_rules(tmp_path / "rules.log")
    assert handled.count(0) == 1 and len(handled) > rules, (
        "restored from a checkpoint taken after rule 0, replaying the rules after it: "
        "the early rules reach the output only through the restored broadcast state"
    )
    assert assert_complete_rules(out, rules, readings) == {0, 1}


def test_broadcast_state_restores_from_a_savepoint_at_another_parallelism(
    tmp_path: Path, embedded: EmbeddedExecutor
) -> None:
    out, chk, sp = tmp_path / "out", tmp_path / "chk", tmp_path / "sp"
    rules, readings = 120, 2400
    first = rules_job(out, chk, 2, rules=rules, readings=readings).execute_async("p2")
    wait_running(first)
    log, deadline = tmp_path / "rules.log", time.monotonic() + 30
    while not (log.exists() and len(handled_rules(log)) >= 20):  # some rules handled, more to come
        assert time.monotonic() < deadline, "no rules handled"
        time.sleep(0.05)
    savepoint = first.stop_with_savepoint(False, str(sp)).result(timeout=60)
    assert first.get_job_status().result() is JobStatus.FINISHED
    assert read_output_lines(out) == [], "the timers fire only at the end of input"
    meta = load_metadata(FsspecCheckpointStorage(), savepoint)
    state = meta.operator("collect-rules")
    assert len(state.operator_states) == 2, "one copy of the broadcast state per subtask"
    assert state.state_sizes()["rules"] > 0, "the broadcast state was saved with the rules so far"
    handled_before = len(handled_rules(tmp_path / "rules.log"))
    rules_job(out, chk, 3, rules=rules, readings=readings, savepoint=savepoint).execute("p3")
    assert sorted(handled_rules(tmp_path / "rules.log")) == list(range(rules)), "each rule handled once"
    assert 0 < handled_before < rules, "the savepoint was taken mid-way"
    assert assert_complete_rules(out, rules, readings) == {0, 1, 2}, "the new subtask got a copy too"


class Remainder(Partitioner):
    def open(self, runtime_context: Any) -> None:
        self.opened_in = runtime_context.get_index_of_this_subtask()

    def partition(self, key: Any, num_partitions: int) -> int:
        return key % num_partitions


class TagSubtask(MapFunction):
    def open(self, runtime_context: Any) -> None:
        self.subtask = runtime_context.get_index_of_this_subtask()

    def map(self, value: Any) -> Any:
        return f"{value} {self.subtask}"


def partition_job(out: Path, partitioner: Any, n: int) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    (
        env.from_source(NumberSequenceSource(0, n - 1), WatermarkStrategy.no_watermarks(), "numbers")
        .partition_custom(partitioner, lambda x: x)
        .map(TagSubtask(), output_type=Types.STRING())
        .set_parallelism(3)
        .sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder()).build())
    )
    env.execute("partition_custom")


def test_partition_custom_routes_every_record_to_the_chosen_subtask(
    tmp_path: Path, embedded: EmbeddedExecutor
) -> None:
    partition_job(tmp_path / "out", Remainder(), 3000)
    pairs = [tuple(map(int, line.split())) for line in read_output_lines(tmp_path / "out")]
    assert sorted(v for v, _ in pairs) == list(range(3000))
    assert all(subtask == value % 3 for value, subtask in pairs), (
        "num_partitions is the consumer's parallelism"
    )


def test_a_partition_out_of_range_fails_the_job_with_the_reason(
    tmp_path: Path, embedded: EmbeddedExecutor
) -> None:
    with pytest.raises(JobExecutionError, match=r"partition_custom: the Partitioner returned partition 3"):
        partition_job(tmp_path / "out", lambda key, n: n, 10)


def test_plain_broadcast_partitioning_still_sends_every_record_to_every_subtask(
    tmp_path: Path, embedded: EmbeddedExecutor
) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(3)
    (
        env.from_source(NumberSequenceSource(0, 99), WatermarkStrategy.no_watermarks(), "numbers")
        .set_parallelism(1)
        .broadcast()
        .map(TagSubtask(), output_type=Types.STRING())
        .sink_to(FileSink.for_row_format(str(tmp_path / "out"), Encoder.simple_string_encoder()).build())
    )
    env.execute("broadcast partitioning")
    pairs = sorted(tuple(map(int, line.split())) for line in read_output_lines(tmp_path / "out"))
    assert pairs == [(n, s) for n in range(100) for s in range(3)]


class SeeAllRules(BroadcastProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Any:
        yield f"{value} {len(list(ctx.get_broadcast_state(RULES_DESC).keys()))}"

    def process_broadcast_element(self, value: Any, ctx: Any) -> Any:
        ctx.get_broadcast_state(RULES_DESC).put(int(value), [value])


def test_batch_execution_processes_the_broadcast_side_first(
    tmp_path: Path, embedded: EmbeddedExecutor
) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    no_wm = WatermarkStrategy.no_watermarks()
    rules = (
        env.from_source(NumberSequenceSource(0, 24), no_wm, "rules")
        .set_parallelism(1)
        .map(SlowRule(tmp_path / "rules.log"), output_type=Types.LONG())
        .set_parallelism(1)
    )
    (
        env.from_source(NumberSequenceSource(0, 199), no_wm, "numbers")
        .connect(rules.broadcast(RULES_DESC))
        .process(SeeAllRules(), output_type=Types.STRING())
        .sink_to(FileSink.for_row_format(str(tmp_path / "out"), Encoder.simple_string_encoder()).build())
    )
    env.execute("batch broadcast")
    lines = sorted(read_output_lines(tmp_path / "out"), key=lambda line: int(line.split()[0]))
    assert lines == [f"{n} 25" for n in range(200)], "every record saw all 25 rules"
