"""In-flight async lookups are part of checkpoints: a killed TaskExecutor loses and duplicates nothing.

The job of tests/e2e/test_checkpointing.py with an async lookup in the middle:
numbers -> unordered async lookup (a few ms each, up to 20 in flight per
subtask) -> running count per key -> transactional FileSink. At every
checkpoint some lookups are in flight, their inputs already consumed from the
source; only if the operator stores them and issues them again on restore does
every key's committed output hold ``1..count(key)`` exactly once.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

from flott.client.pipeline_executor import EmbeddedExecutor
from flott.common import Encoder, Types
from flott.common.restart_strategy import RestartStrategies
from flott.common.time import Time
from flott.common.watermark_strategy import WatermarkStrategy
from flott.datastream import AsyncDataStream, AsyncFunction, StreamExecutionEnvironment
from flott.datastream.connectors.file_sink import FileSink
from flott.datastream.connectors.number_seq import NumberSequenceSource
from tests.e2e.conftest import (
    KEYS,
    assert_exactly_once,
    read_output_lines,
    task_executor_processes,
    wait_committed_output,
)


class SlowLookup(AsyncFunction):
    async def async_invoke(self, value: int) -> list[tuple[int, int]]:
        await asyncio.sleep(0.002 + (value % 5) * 0.001)
        return [(value % KEYS, 1)]


def lookup_job(
    out: Path, checkpoints: Path, n: int, savepoint: str | None = None, parallelism: int = 2
) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    env.set_max_parallelism(64)
    env.enable_checkpointing(300)
    env.get_checkpoint_config().set_checkpoint_storage_dir(checkpoints.as_uri())
    env.set_restart_strategy(RestartStrategies.fixed_delay_restart(20, 100))
    if savepoint is not None:
        env.configure({"execution.savepoint.path": savepoint})
    numbers = env.from_source(
        NumberSequenceSource(0, n - 1), WatermarkStrategy.no_watermarks(), "numbers"
    ).uid("numbers")
    pairs = Types.TUPLE([Types.LONG(), Types.LONG()])
    (
        AsyncDataStream.unordered_wait(numbers, SlowLookup(), Time.seconds(60), 20, pairs)
        .uid("lookup")
        .key_by(lambda t: t[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
        .uid("counts")
        .sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder()).build())
        .uid("files")
    )
    return env


def test_killing_a_task_executor_mid_lookup_loses_and_duplicates_nothing(
    tmp_path: Path, embedded: EmbeddedExecutor
) -> None:
    out, chk = tmp_path / "out", tmp_path / "chk"
    n = 12_000
    client = lookup_job(out, chk, n).execute_async("lookups, killed twice")
    wait_committed_output(out, timeout_s=60)
    kills: list[int] = []

    def killer() -> None:
        for _ in range(2):
            victims = task_executor_processes()
            if not victims or client.get_job_status().result().is_globally_terminal_state():
                return
            victims[0].kill()
            kills.append(victims[0].pid)
            time.sleep(2.5)

    thread = threading.Thread(target=killer)
    thread.start()
    client.get_job_execution_result().result(timeout=240)
    thread.join()
    assert kills, "the job ended before a TaskExecutor could be killed; make it longer"
    assert_exactly_once(out, n)


def test_a_drained_savepoint_holds_no_lookup_twice(tmp_path: Path, embedded: EmbeddedExecutor) -> None:
    """``stop --drain`` finishes the lookups in flight before the savepoint: resuming from it
    neither repeats them nor misses them."""
    out, chk, sp = tmp_path / "out", tmp_path / "chk", tmp_path / "sp"
    n = 12_000
    first = lookup_job(out, chk, n).execute_async("lookups, drained")
    wait_committed_output(out, timeout_s=60)
    savepoint = first.stop_with_savepoint(True, str(sp)).result(timeout=120)
    assert len(read_output_lines(out)) < n, "stopped mid-way"
    lookup_job(out, chk, n, savepoint=savepoint).execute("lookups, resumed")
    assert_exactly_once(out, n)


def test_lookups_in_flight_at_a_savepoint_are_redistributed_when_resumed_at_another_parallelism(
    tmp_path: Path, embedded: EmbeddedExecutor
) -> None:
    out, chk, sp = tmp_path / "out", tmp_path / "chk", tmp_path / "sp"
    n = 12_000
    first = lookup_job(out, chk, n).execute_async("lookups at 2")
    wait_committed_output(out, timeout_s=60)
    savepoint = first.stop_with_savepoint(False, str(sp)).result(timeout=120)
    assert len(read_output_lines(out)) < n, "stopped mid-way"
    lookup_job(out, chk, n, savepoint=savepoint, parallelism=3).execute("lookups at 3")
    assert_exactly_once(out, n)
