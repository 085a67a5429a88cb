"""CheckpointingMode.AT_LEAST_ONCE on real TaskExecutors: checkpoints complete without alignment.

The job unions two sources into a keyed count, so the counting tasks have several input
channels (the case where the mode matters: barriers are tracked, channels never blocked).
The transactional FileSink commits only on completed checkpoints, so committed output at
all proves the barriers were tracked to completion; without failures, nothing repeats.
"""

from __future__ import annotations

import collections
from pathlib import Path

from flott.client.pipeline_executor import EmbeddedExecutor
from flott.common import Types
from flott.common.serialization import Encoder
from flott.common.watermark_strategy import WatermarkStrategy
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.checkpointing_mode import CheckpointingMode
from flott.datastream.connectors.file_sink import FileSink
from flott.datastream.connectors.number_seq import NumberSequenceSource
from tests.e2e.conftest import read_output_lines

KEYS = 5


def _pair(x: int) -> tuple[int, int]:
    return (x % KEYS, 1)


def test_at_least_once_checkpoints_complete_and_commit_every_update(
    embedded: EmbeddedExecutor, tmp_path: Path
) -> None:
    out, chk = tmp_path / "out", tmp_path / "chk"
    n = 20_000
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.enable_checkpointing(100, CheckpointingMode.AT_LEAST_ONCE)
    env.get_checkpoint_config().set_checkpoint_storage_dir(chk.as_uri())
    low = env.from_source(NumberSequenceSource(0, n // 2 - 1), WatermarkStrategy.no_watermarks(), "low")
    high = env.from_source(NumberSequenceSource(n // 2, n - 1), WatermarkStrategy.no_watermarks(), "high")
    (
        low.union(high)
        .map(_pair, output_type=Types.TUPLE([Types.LONG(), Types.LONG()]))
        .key_by(lambda t: t[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
        .uid("counts")
        .sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder()).build())
    )
    assert env.get_checkpointing_mode() is CheckpointingMode.AT_LEAST_ONCE
    env.execute("at least once")

    seen: dict[int, list[int]] = collections.defaultdict(list)
    for line in read_output_lines(out):
        key_text, count_text = line[1:-1].split(",")
        seen[int(key_text)].append(int(count_text))
    expected = collections.Counter(x % KEYS for x in range(n))
    for key, total in expected.items():
        assert sorted(seen[key]) == list(range(1, total + 1)), f"key {key}"
    assert any(p.name.startswith("chk-") for p in chk.rglob("chk-*")), "no checkpoint completed"
