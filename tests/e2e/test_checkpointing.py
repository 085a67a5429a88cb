"""Exactly-once state and output on real TaskExecutor processes: failovers, savepoints, rescaling.

The job: a deterministic sequence, keyed by ``n % KEYS``, a running count per key (STREAMING
reduce: one update per record), written by a transactional FileSink. Exactly once means: for
every key the committed output holds the updates ``1..count(key)`` each exactly once, whatever
was killed, stopped or rescaled in between.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from flott.client.pipeline_executor import EmbeddedExecutor
from flott.common import Types
from flott.common.job_status import JobStatus
from flott.common.restart_strategy import RestartStrategies
from flott.common.serialization import Encoder
from flott.common.watermark_strategy import WatermarkStrategy
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.connectors.file_sink import FileSink
from flott.datastream.connectors.number_seq import NumberSequenceSource
from flott.errors import FlottError
from tests.e2e.conftest import (
    KEYS,
    assert_exactly_once,
    read_output_lines,
    task_executor_processes,
    wait_committed_output,
    wait_running,
)


def _pause_now_and_then(x: int) -> tuple[int, int]:
    if x % 250 == 0:
        time.sleep(0.01)  # keeps the job running long enough to be killed or stopped mid-way
    return (x % KEYS, 1)


def counting_job(
    out: Path,
    checkpoints: Path,
    n: int,
    parallelism: int,
    savepoint: str | None = None,
    backend: str = "hashmap",
) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    env.set_max_parallelism(64)
    env.enable_checkpointing(300)
    env.get_checkpoint_config().set_checkpoint_storage_dir(checkpoints.as_uri())
    env.set_restart_strategy(RestartStrategies.fixed_delay_restart(20, 100))
    env.configure({"state.backend.type": backend})
    if savepoint is not None:
        env.configure({"execution.savepoint.path": savepoint})
    (
        env.from_source(NumberSequenceSource(0, n - 1), WatermarkStrategy.no_watermarks(), "numbers")
        .uid("numbers")
        .map(_pause_now_and_then, output_type=Types.TUPLE([Types.LONG(), Types.LONG()]))
        .uid("pairs")
        .key_by(lambda t: t[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
        .uid("counts")
        .sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder()).build())
        .uid("files")
    )
    return env


@pytest.fixture
def dirs(tmp_path: Path) -> Iterator[tuple[Path, Path, Path]]:
    out, chk, sp = tmp_path / "out", tmp_path / "chk", tmp_path / "sp"
    yield out, chk, sp


def test_killing_task_executors_repeatedly_loses_and_duplicates_nothing(
    embedded: EmbeddedExecutor, dirs: tuple[Path, Path, Path]
) -> None:
    out, chk, _ = dirs
    n = 150_000
    client = counting_job(out, chk, n, parallelism=2).execute_async("killed thrice")
    wait_running(client)
    kills: list[int] = []

    def killer() -> None:
        for _ in range(3):
            time.sleep(1.2)
            victims = task_executor_processes()
            if not victims or client.get_job_status().result().is_globally_terminal_state():
                return
            victims[0].kill()
            kills.append(victims[0].pid)

    thread = threading.Thread(target=killer)
    thread.start()
    client.get_job_execution_result().result(timeout=120)
    thread.join()
    assert len(kills) == 3, "the job ended before it could be killed three times; make it longer"
    assert_exactly_once(out, n)


def test_stop_with_savepoint_then_resume_at_4_and_at_1(
    embedded: EmbeddedExecutor, dirs: tuple[Path, Path, Path]
) -> None:
    out, chk, sp = dirs
    n = 120_000
    first = counting_job(out, chk, n, parallelism=2).execute_async("p2")
    wait_committed_output(out)
    savepoint1 = first.stop_with_savepoint(False, str(sp)).result(timeout=60)
    assert first.get_job_status().result() is JobStatus.FINISHED
    assert (Path(savepoint1.removeprefix("file://")) / "_metadata").is_file()
    done_at_stop = len(read_output_lines(out))
    assert 0 < done_at_stop < n, "stopped mid-way, with everything before the savepoint committed"

    second = counting_job(out, chk, n, parallelism=4, savepoint=savepoint1).execute_async("p4")
    wait_running(second)
    deadline = time.monotonic() + 30
    while len(read_output_lines(out)) == done_at_stop:  # the resumed job committed more
        assert time.monotonic() < deadline
        time.sleep(0.05)
    savepoint2 = second.stop_with_savepoint(False, str(sp)).result(timeout=60)
    assert len(read_output_lines(out)) < n

    counting_job(out, chk, n, parallelism=1, savepoint=savepoint2).execute("p1")
    assert_exactly_once(out, n)


def test_a_savepoint_restores_on_the_other_state_backend(
    embedded: EmbeddedExecutor, dirs: tuple[Path, Path, Path]
) -> None:
    out, chk, sp = dirs
    n = 100_000
    first = counting_job(out, chk, n, parallelism=2, backend="hashmap").execute_async("heap")
    wait_committed_output(out)
    savepoint1 = first.stop_with_savepoint(False, str(sp)).result(timeout=60)
    done = len(read_output_lines(out))
    second = counting_job(out, chk, n, 2, savepoint=savepoint1, backend="rocksdb").execute_async("disk")
    wait_running(second)
    deadline = time.monotonic() + 30
    while len(read_output_lines(out)) == done:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    savepoint2 = second.stop_with_savepoint(False, str(sp)).result(timeout=60)
    counting_job(out, chk, n, 2, savepoint=savepoint2, backend="hashmap").execute("heap again")
    assert_exactly_once(out, n)


def test_missing_or_corrupt_savepoint_refuses_the_job(
    embedded: EmbeddedExecutor, dirs: tuple[Path, Path, Path]
) -> None:
    out, chk, sp = dirs
    with pytest.raises(FlottError, match="does not exist"):
        counting_job(out, chk, 10, parallelism=1, savepoint=str(sp / "nowhere")).execute("missing")
    broken = sp / "savepoint-broken"
    broken.mkdir(parents=True)
    (broken / "_metadata").write_text("{not json")
    with pytest.raises(FlottError, match="corrupt snapshot metadata"):
        counting_job(out, chk, 10, parallelism=1, savepoint=str(broken)).execute("corrupt")
    assert not out.exists(), "no job started"
