"""Checkpoint duration under sustained backpressure: aligned vs unaligned barriers.

    python bench/unaligned_checkpoint_bench.py [--record-ms 5] [--checkpoints 4] [--records 8000]

The job (p=2, an embedded cluster of real TaskExecutor processes): numbers -> (n % 7, 1) ->
key_by -> running count -> a map sleeping ``--record-ms`` per record -> FileSink. The slow map
is chained with the reduce, so the source fills the keyed exchange and stays backpressured.
Each checkpoint is triggered by hand once the exchange is full; its duration is its trigger
timestamp (in its ``_metadata``) to its ``_metadata`` file written, i.e. what Flink reports as
the end-to-end duration. Aligned barriers queue behind every buffer in flight; unaligned ones
overtake them (their in-flight data goes into the checkpoint: "in-flight batches").

flott's operator chain processes an input buffer (``taskmanager.network.batch-size`` records,
100 here) at a time, so an unaligned barrier still waits for the buffer being processed
(Flink handles its priority events between two records).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from flott.client.pipeline_executor import EmbeddedExecutor, use_executor  # noqa: E402
from flott.common import Types  # noqa: E402
from flott.common.job_status import JobStatus  # noqa: E402
from flott.common.serialization import Encoder  # noqa: E402
from flott.common.watermark_strategy import WatermarkStrategy  # noqa: E402
from flott.configuration import Configuration  # noqa: E402
from flott.datastream import StreamExecutionEnvironment  # noqa: E402
from flott.datastream.connectors.file_sink import FileSink  # noqa: E402
from flott.datastream.connectors.number_seq import NumberSequenceSource  # noqa: E402
from flott.errors import OperationFailedError  # noqa: E402
from flott.runtime.checkpoint.metadata import decode_metadata  # noqa: E402

SLOW_S = 0.005


def _pair(x: int) -> tuple[int, int]:
    return (x % 7, 1)


def _slow(t: tuple[int, int]) -> tuple[int, int]:
    time.sleep(SLOW_S)
    return t


def build(out: Path, chk: Path, n: int, unaligned: bool) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.enable_checkpointing(600_000)
    config = env.get_checkpoint_config()
    config.set_checkpoint_storage_dir(chk.as_uri())
    if unaligned:
        config.enable_unaligned_checkpoints()
    env.configure({"taskmanager.network.batch-size": "100"})
    pairs = Types.TUPLE([Types.LONG(), Types.LONG()])
    (
        env.from_source(NumberSequenceSource(0, n - 1), WatermarkStrategy.no_watermarks(), "numbers")
        .map(_pair, output_type=pairs)
        .key_by(lambda t: t[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
        .map(_slow, output_type=pairs)
        .sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder()).build())
    )
    return env


def trigger(client: Any) -> int:
    """Trigger a checkpoint and wait for it (retried while the tasks are still being deployed)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return int(
                client.loop.run(
                    client.cluster_client.trigger_checkpoint(str(client.get_job_id()), timeout_s=300),
                    timeout=310,
                )
            )
        except OperationFailedError as e:
            if "not all required tasks" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def run(mode: str, work: Path, n: int, checkpoints: int) -> list[tuple[float, int]]:
    out, chk = work / mode / "out", work / mode / "chk"
    client = build(out, chk, n, mode == "unaligned").execute_async(f"backpressure-{mode}")
    results = []
    try:
        deadline = time.monotonic() + 60
        while client.get_job_status().result() is not JobStatus.RUNNING:
            assert time.monotonic() < deadline, "job did not start"
            time.sleep(0.05)
        time.sleep(2)  # the exchange fills up
        for _ in range(checkpoints):
            cid = trigger(client)
            path = next(chk.rglob(f"chk-{cid}/_metadata"))
            metadata = decode_metadata(path.read_bytes(), str(path))
            in_flight = sum(
                h.input_buffers + h.output_buffers for op in metadata.operators for h in op.channel_states
            )
            results.append((path.stat().st_mtime - metadata.timestamp / 1000, in_flight))
            took = results[-1][0]
            print(f"{mode}: checkpoint {cid} {took:.2f} s, {in_flight} in-flight batches", flush=True)
    finally:
        with contextlib.suppress(Exception):
            client.cancel().result()
    return results


def main() -> int:
    global SLOW_S
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--record-ms", type=float, default=5.0, help="the slow map's time per record")
    ap.add_argument("--checkpoints", type=int, default=4, help="checkpoints per mode (the first is dropped)")
    ap.add_argument("--records", type=int, default=8000)
    args = ap.parse_args()
    SLOW_S = args.record_ms / 1000
    rows = []
    with tempfile.TemporaryDirectory(prefix="flott-bench-uc-") as tmp:
        executor = EmbeddedExecutor(Configuration({}))
        with use_executor(executor):
            for mode in ("aligned", "unaligned"):
                results = run(mode, Path(tmp), args.records, args.checkpoints)[1:]
                durations = [d for d, _ in results]
                rows.append(
                    f"| {mode} | {len(durations)} | {statistics.median(durations):.2f} | "
                    f"{min(durations):.2f} / {max(durations):.2f} | "
                    f"{statistics.median([b for _, b in results]):.0f} |"
                )
    print(f"\nslow map {args.record_ms:g} ms/record, batch 100 records, p=2\n")
    print("| barriers | checkpoints | duration s (median) | min / max s | in-flight batches (median) |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
