"""Unaligned checkpoints on real TaskExecutor processes, under sustained backpressure.

The job (p=2): numbers -> (n % KEYS, 1) -> key_by -> running count (reduce) -> a map that sleeps
per record -> transactional FileSink. The slow map is chained with the reduce, so the source
task fills the keyed exchange and stays backpressured: an aligned barrier waits behind every
queued buffer; an unaligned one overtakes them. A TaskExecutor is killed after an unaligned
checkpoint with in-flight data completed; the job restores (channel state replayed first) and
the committed output holds every running-count update exactly once.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import pytest

from flott.client.pipeline_executor import EmbeddedExecutor
from flott.common import Types
from flott.common.restart_strategy import RestartStrategies
from flott.common.serialization import Encoder
from flott.common.watermark_strategy import WatermarkStrategy
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.connectors.file_sink import FileSink
from flott.datastream.connectors.number_seq import NumberSequenceSource
from flott.runtime.checkpoint.metadata import decode_metadata
from tests.e2e.conftest import KEYS, assert_exactly_once, task_executor_processes, wait_running

pytestmark = pytest.mark.timeout(240)

SLOW_S = 0.005
BATCH = 100
"""A buffer of the keyed exchange takes 0.5 s to process: an aligned barrier queued behind the
~16 buffers in flight to a reduce subtask takes several seconds (measured: bench/
unaligned_checkpoint_bench.py); an unaligned one waits for about the buffer being processed
(flott's chain processes a buffer at a time: the barrier is handled between two buffers)."""


def _pair(x: int) -> tuple[int, int]:
    return (x % KEYS, 1)


def _slow(t: tuple[int, int]) -> tuple[int, int]:
    time.sleep(SLOW_S)
    return t


def backpressured_job(out: Path, chk: Path, n: int, unaligned: bool) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.set_max_parallelism(64)
    env.enable_checkpointing(60_000)  # checkpoints are triggered by the test (and the final one)
    config = env.get_checkpoint_config()
    config.set_checkpoint_storage_dir(chk.as_uri())
    if unaligned:
        config.enable_unaligned_checkpoints()
    env.set_restart_strategy(RestartStrategies.fixed_delay_restart(5, 100))
    env.configure({"taskmanager.network.batch-size": str(BATCH)})
    pairs = Types.TUPLE([Types.LONG(), Types.LONG()])
    (
        env.from_source(NumberSequenceSource(0, n - 1), WatermarkStrategy.no_watermarks(), "numbers")
        .uid("numbers")
        .map(_pair, output_type=pairs)
        .uid("pairs")
        .key_by(lambda t: t[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
        .uid("counts")
        .map(_slow, output_type=pairs)
        .uid("slow")
        .sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder()).build())
        .uid("files")
    )
    return env


def timed_checkpoint(client: object, chk: Path) -> tuple[int, float]:
    """Trigger a checkpoint, wait for it; its id and duration (trigger timestamp in its metadata
    to its ``_metadata`` file written: the client's own polling backs off to 2 s)."""
    cid = client.loop.run(  # type: ignore[attr-defined]
        client.cluster_client.trigger_checkpoint(  # type: ignore[attr-defined]
            str(client.get_job_id()), timeout_s=120
        ),
        timeout=130,
    )
    metadata_file = next(chk.rglob(f"chk-{cid}/_metadata"))
    metadata = decode_metadata(metadata_file.read_bytes(), str(metadata_file))
    return cid, metadata_file.stat().st_mtime - metadata.timestamp / 1000


def channel_buffers(chk: Path, cid: int) -> tuple[int, int]:
    """(input, output) batches of in-flight data the checkpoint holds."""
    metadata_file = next(chk.rglob(f"chk-{cid}/_metadata"))
    metadata = decode_metadata(metadata_file.read_bytes(), str(metadata_file))
    handles = [h for op in metadata.operators for h in op.channel_states]
    return sum(h.input_buffers for h in handles), sum(h.output_buffers for h in handles)


def test_unaligned_checkpoint_under_backpressure_is_fast_and_restores_exactly_once(
    embedded: EmbeddedExecutor, tmp_path: Path
) -> None:
    out, chk = tmp_path / "out", tmp_path / "chk"
    n = 8_000
    client = backpressured_job(out, chk, n, unaligned=True).execute_async("unaligned")
    try:
        wait_running(client)
        time.sleep(2)  # the exchange fills up: the source is backpressured
        durations = []
        cid = -1
        for _ in range(3):  # the first one may still meet the job warming up
            cid, took = timed_checkpoint(client, chk)
            durations.append(took)
        assert min(durations[1:]) < 2.5, f"unaligned checkpoints under backpressure took {durations} s"
        inputs, outputs = channel_buffers(chk, cid)
        assert inputs + outputs > 0, "under backpressure an unaligned checkpoint holds in-flight data"
        victims = task_executor_processes()
        assert victims
        victims[0].kill()
        client.get_job_execution_result().result(timeout=200)
    except BaseException:
        with contextlib.suppress(Exception):
            client.cancel().result()
        raise
    assert_exactly_once(out, n)
    print(f"unaligned checkpoint durations under backpressure: {durations}; in-flight {inputs}+{outputs}")
