"""BATCH jobs under Flink's adaptive batch scheduler, on real TaskExecutor processes over TCP.

What a user sees: the parallelism each stage ran with (each record says how many subtasks the
operator had, from its RuntimeContext), the exact results, and the job's vertices while it runs
(-1 until decided, as Flink's REST API shows them).
"""

from __future__ import annotations

import collections
import time
from pathlib import Path

import psutil

from flott.client.pipeline_executor import EmbeddedExecutor
from flott.common import Configuration, Encoder, Types, WatermarkStrategy
from flott.common.restart_strategy import RestartStrategies
from flott.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from flott.datastream.connectors.datagen import DataGeneratorSource, RateLimiterStrategy
from flott.datastream.connectors.file_system import FileSink, FileSource, StreamFormat
from flott.datastream.functions import MapFunction, RuntimeContext
from tests.e2e.conftest import read_output_lines

VOLUME = "execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task"
ENABLED = "execution.batch.adaptive.auto-parallelism.enabled"


class TagParallelism(MapFunction):
    """``(key, count)`` → ``key,count,<subtasks of the stage before>,<subtasks of this one>``."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.parallelism = runtime_context.get_number_of_parallel_subtasks()

    def map(self, value: tuple[str, int]) -> str:
        return f"{value[0]},{value[1]},{self.parallelism}"


def _env(parallelism: int, **config: str) -> StreamExecutionEnvironment:
    configuration = Configuration()
    for key, value in config.items():
        configuration.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(configuration)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.set_parallelism(parallelism)
    return env


def _count_job(
    env: StreamExecutionEnvironment, src: Path, out: Path, keyed_parallelism: int | None = None
) -> None:
    """Count the lines of ``src`` per key (the line's first word); the stage after the keyed
    reduce is chained to it, so its tag is the keyed stage's parallelism."""
    lines = env.from_source(
        FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(src))
        .process_static_file_set()
        .build(),
        WatermarkStrategy.no_watermarks(),
        "lines",
    )
    counted = (
        lines.map(lambda line: (line.split()[0], 1), output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
        .key_by(lambda t: t[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
    )
    tagged = counted.map(TagParallelism(), output_type=Types.STRING())
    if keyed_parallelism is not None:  # both, so that they stay chained: the tag is the reduce's
        counted.set_parallelism(keyed_parallelism)
        tagged.set_parallelism(keyed_parallelism)
    tagged.sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder()).build())


def _write_input(path: Path, keys: int, repeat: int = 1) -> collections.Counter[str]:
    expected: collections.Counter[str] = collections.Counter()
    with path.open("w") as f:
        for r in range(repeat):
            for k in range(keys):
                key = f"key-{k:07d}"
                expected[key] += 1
                f.write(f"{key} line {r}\n")
    return expected


def _results(out: Path) -> tuple[collections.Counter[str], set[int]]:
    counts: collections.Counter[str] = collections.Counter()
    parallelism: set[int] = set()
    for line in read_output_lines(out):
        key, count, p = line.split(",")
        assert key not in counts, f"{key} emitted twice"
        counts[key] = int(count)
        parallelism.add(int(p))
    return counts, parallelism


def test_a_small_input_runs_the_keyed_stage_at_parallelism_one(
    tmp_path: Path, embedded: EmbeddedExecutor
) -> None:
    expected = _write_input(tmp_path / "in.txt", keys=50, repeat=20)
    env = _env(2)
    _count_job(env, tmp_path / "in.txt", tmp_path / "out")
    env.execute("small")
    counts, parallelism = _results(tmp_path / "out")
    assert counts == expected
    assert parallelism == {1}, "a few KiB are far below 16 MiB per task: one subtask, as in PyFlink"


def test_more_data_than_the_volume_per_task_raises_the_parallelism_up_to_the_max(
    tmp_path: Path, embedded: EmbeddedExecutor
) -> None:
    expected = _write_input(tmp_path / "in.txt", keys=40_000)  # distinct keys: the combiner keeps them all
    env = _env(3, **{VOLUME: "64kb"})
    _count_job(env, tmp_path / "in.txt", tmp_path / "out")
    env.execute("large")
    counts, parallelism = _results(tmp_path / "out")
    assert counts == expected
    assert parallelism == {3}, "~1 MiB at 64 KiB per task wants 16 subtasks; env.set_parallelism(3) caps it"


def test_an_explicit_parallelism_is_kept(tmp_path: Path, embedded: EmbeddedExecutor) -> None:
    expected = _write_input(tmp_path / "in.txt", keys=50, repeat=2)
    env = _env(3)
    _count_job(env, tmp_path / "in.txt", tmp_path / "out", keyed_parallelism=2)
    env.execute("explicit")
    counts, parallelism = _results(tmp_path / "out")
    assert counts == expected
    assert parallelism == {2}


def test_disabled_auto_parallelism_runs_at_the_parallelism_asked_for(
    tmp_path: Path, embedded: EmbeddedExecutor
) -> None:
    expected = _write_input(tmp_path / "in.txt", keys=50, repeat=2)
    env = _env(2, **{ENABLED: "false"})
    _count_job(env, tmp_path / "in.txt", tmp_path / "out")
    env.execute("disabled")
    counts, parallelism = _results(tmp_path / "out")
    assert counts == expected
    assert parallelism == {2}


def test_a_killed_task_executor_restarts_the_job_and_the_output_is_exact(
    tmp_path: Path, embedded: EmbeddedExecutor
) -> None:
    env = _env(2)
    env.set_restart_strategy(RestartStrategies.fixed_delay_restart(3, 200))
    n = 3000
    source = DataGeneratorSource(lambda i: i, n, RateLimiterStrategy.per_second(1000), Types.LONG())
    (
        env.from_source(source, WatermarkStrategy.no_watermarks(), "numbers")
        .map(lambda i: (f"k{i % 7}", 1), output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
        .key_by(lambda t: t[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
        .map(TagParallelism(), output_type=Types.STRING())
        .sink_to(FileSink.for_row_format(str(tmp_path / "out"), Encoder.simple_string_encoder()).build())
    )
    client = env.execute_async("killed")
    cluster = embedded.last_cluster
    assert cluster is not None
    deadline = time.monotonic() + 30
    while True:
        info = client.loop.run(client.cluster_client.request_job(str(client.get_job_id())))
        if sum(v.task_counts.get("RUNNING", 0) for v in info.vertices) >= 2:
            break
        assert time.monotonic() < deadline, "the sources did not start"
        time.sleep(0.05)
    # while the sources run, the keyed stage waits: its parallelism is not decided yet
    assert [v.parallelism for v in info.vertices] == [2, -1]
    psutil.Process(cluster.task_executor_pids()[0]).kill()
    while "RESTARTING" not in info.timestamps:  # the whole job runs again (no region failover)
        assert time.monotonic() < deadline + 30, "the job did not restart"
        time.sleep(0.05)
        info = client.loop.run(client.cluster_client.request_job(str(client.get_job_id())))
    client.get_job_execution_result().result(timeout=60)
    counts, parallelism = _results(tmp_path / "out")
    assert counts == collections.Counter({f"k{k}": len(range(k, n, 7)) for k in range(7)})
    assert parallelism == {1}



def test_an_unchained_forward_the_program_did_not_ask_for_is_decided_on_its_own(
    tmp_path: Path, embedded: EmbeddedExecutor
) -> None:
    """As PyFlink: source (2 subtasks) → map starting a new chain runs the map at 1 (Flink's
    ForwardForUnspecified edge becomes a rescale), while an explicit ``forward()`` keeps 2."""
    for explicit in (False, True):
        env = _env(2)
        numbers = env.from_source(
            DataGeneratorSource(lambda i: i, 40, Types.LONG()), WatermarkStrategy.no_watermarks(), "numbers"
        )
        upstream = numbers.forward() if explicit else numbers
        out = tmp_path / f"out-{explicit}"
        (
            upstream.map(lambda i: (f"k{i}", 1), output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
            .start_new_chain()
            .map(TagParallelism(), output_type=Types.STRING())
            .sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder()).build())
        )
        env.execute(f"forward {explicit}")
        counts, parallelism = _results(out)
        assert counts == collections.Counter({f"k{i}": 1 for i in range(40)})
        assert parallelism == ({2} if explicit else {1})
