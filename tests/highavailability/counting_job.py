"""The failover tests' job: ``counting_job.py OUT CHECKPOINTS N [DELAY_MS] [PARALLELISM] [PROBE_DIR]``.

The numbers ``0..N-1``, keyed by ``n % 7``, a running count per key (one update per record),
written by a transactional FileSink, checkpointed every 200 ms. Exactly once means: for every
key the committed output holds the updates ``1..count(key)`` each exactly once. ``DELAY_MS``
per record keeps the job running long enough to lose its JobManager mid-way. With
``PROBE_DIR`` every task attempt writes the wall-clock time of its first record there
(``first-in-*`` at the map after the source, ``first-out-*`` just before the sink): what
``bench/failover_bench.py`` measures "first record after the failover" with.
"""

from __future__ import annotations

import os
import sys
import time
import uuid

from flott.common import Types
from flott.common.restart_strategy import RestartStrategies
from flott.common.serialization import Encoder
from flott.common.watermark_strategy import WatermarkStrategy
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.connectors.file_sink import FileSink
from flott.datastream.connectors.number_seq import NumberSequenceSource

KEYS = 7


def main(argv: list[str]) -> None:
    out, checkpoints, n = argv[0], argv[1], int(argv[2])
    delay_s = float(argv[3]) / 1000 if len(argv) > 3 else 0.0
    parallelism = int(argv[4]) if len(argv) > 4 else 2
    probe_dir = argv[5] if len(argv) > 5 else ""
    first_in: list[bool] = []  # per task attempt: the closure is unpickled by each task
    first_out: list[bool] = []

    def probe(kind: str, seen: list[bool]) -> None:
        if probe_dir and not seen:
            seen.append(True)
            name = os.path.join(probe_dir, f"first-{kind}-{uuid.uuid4().hex}")
            with open(name + ".tmp", "w") as f:
                f.write(repr(time.time()))
            os.replace(name + ".tmp", name)

    def pair(x: int) -> tuple[int, int]:
        probe("in", first_in)
        if delay_s:
            time.sleep(delay_s)
        return (x % KEYS, 1)

    def to_sink(t: tuple[int, int]) -> tuple[int, int]:
        probe("out", first_out)
        return t

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    env.set_max_parallelism(64)
    env.enable_checkpointing(200)
    env.get_checkpoint_config().set_checkpoint_storage_dir(checkpoints)
    env.set_restart_strategy(RestartStrategies.fixed_delay_restart(50, 200))
    # small batches: a checkpoint barrier waits behind at most 50 slow records
    env.configure({"taskmanager.network.batch-size": "50"})
    (
        env.from_source(NumberSequenceSource(0, n - 1), WatermarkStrategy.no_watermarks(), "numbers")
        .uid("numbers")
        .map(pair, output_type=Types.TUPLE([Types.LONG(), Types.LONG()]))
        .uid("pairs")
        .key_by(lambda t: t[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
        .uid("counts")
        .map(to_sink, output_type=Types.TUPLE([Types.LONG(), Types.LONG()]))
        .uid("probe")
        .sink_to(FileSink.for_row_format(out, Encoder.simple_string_encoder()).build())
        .uid("files")
    )
    env.execute("ha-counting")


if __name__ == "__main__":
    main(sys.argv[1:])
