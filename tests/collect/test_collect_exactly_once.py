"""With checkpoints, a TaskExecutor killed mid-job loses and duplicates no collected result."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from flott.client.pipeline_executor import EmbeddedExecutor
from flott.common.restart_strategy import RestartStrategies
from flott.common.watermark_strategy import WatermarkStrategy
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.connectors.number_seq import NumberSequenceSource
from tests.e2e.conftest import embedded_executor, task_executor_processes


def _slow_now_and_then(x: int) -> int:
    if x % 200 == 0:
        time.sleep(0.02)  # keeps the job running long enough to be killed mid-way
    return x


@pytest.fixture
def embedded() -> Iterator[EmbeddedExecutor]:
    with embedded_executor(heartbeat_interval_ms=300, heartbeat_timeout_ms=3000) as executor:
        yield executor


def test_killed_task_executor_collects_every_result_exactly_once(
    embedded: EmbeddedExecutor, tmp_path: Path
) -> None:
    n = 20_000
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.enable_checkpointing(200)
    env.get_checkpoint_config().set_checkpoint_storage_dir((tmp_path / "chk").as_uri())
    env.set_restart_strategy(RestartStrategies.fixed_delay_restart(10, 100))
    stream = env.from_source(NumberSequenceSource(0, n - 1), WatermarkStrategy.no_watermarks(), "numbers")
    it = stream.map(_slow_now_and_then).uid("slow").execute_and_collect("exactly once")
    got: list[int] = []
    killed: list[int] = []
    with it:
        for value in it:
            got.append(value)
            if len(got) == 500:
                victim = task_executor_processes()[0]
                threading.Thread(target=victim.kill).start()
                killed.append(victim.pid)
    restarts = it._iterator._fetcher.buffer.restarts  # type: ignore[attr-defined]
    assert killed and restarts >= 1, "the sink restarted under a new version"
    assert len(got) == n and sorted(got) == list(range(n)), (len(got), len(set(got)))
