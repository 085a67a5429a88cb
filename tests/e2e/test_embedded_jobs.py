"""Done-means of the runtime core: real jobs on real TaskExecutor processes, exact results."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from flott.client.pipeline_executor import EmbeddedExecutor
from flott.common import Encoder, Types, WatermarkStrategy
from flott.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from flott.datastream.connectors.file_system import FileSink, FileSource, StreamFormat
from flott.errors import JobExecutionError
from tests.e2e.conftest import generate_text, parse_tuple_line, read_output_lines

REPO = Path(__file__).resolve().parents[2]


def word_count_job(src: Path, out: Path, parallelism: int, mode: RuntimeExecutionMode) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    env.set_runtime_mode(mode)
    ds = env.from_source(
        FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(src))
        .process_static_file_set()
        .build(),
        WatermarkStrategy.no_watermarks(),
        "file_source",
    )
    ds = (
        ds.flat_map(lambda line: line.split())
        .map(lambda w: (w, 1), output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
        .key_by(lambda t: t[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
    )
    ds.sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder()).build())
    env.execute("word_count")


@pytest.mark.parametrize("parallelism", [1, 2, 4])
@pytest.mark.parametrize("mode", [RuntimeExecutionMode.BATCH, RuntimeExecutionMode.STREAMING])
def test_word_count_equals_counter(
    tmp_path: Path, embedded: EmbeddedExecutor, parallelism: int, mode: RuntimeExecutionMode
) -> None:
    expected = generate_text(tmp_path / "in.txt", lines=3000)
    word_count_job(tmp_path / "in.txt", tmp_path / "out", parallelism, mode)
    pairs = [parse_tuple_line(line) for line in read_output_lines(tmp_path / "out")]
    if mode is RuntimeExecutionMode.BATCH:
        assert len(pairs) == len(expected), "BATCH emits exactly one final record per key"
        assert dict(pairs) == dict(expected)
    else:
        assert len(pairs) == sum(expected.values()), "STREAMING emits one update per input record"
        last: dict[str, int] = {}
        for word, count in pairs:
            assert count == last.get(word, 0) + 1, f"updates of {word!r} out of order"
            last[word] = count
        assert last == dict(expected)


def test_keyed_process_function_with_value_state(tmp_path: Path, embedded: EmbeddedExecutor) -> None:
    from flott.datastream.functions import KeyedProcessFunction, RuntimeContext
    from flott.datastream.state import ValueStateDescriptor

    class RunningMax(KeyedProcessFunction):
        def open(self, runtime_context: RuntimeContext) -> None:
            self.best = runtime_context.get_state(ValueStateDescriptor("best", Types.INT()))
            self.seen = runtime_context.get_state(ValueStateDescriptor("seen", Types.INT()))

        def process_element(self, value, ctx):
            best = self.best.value()
            seen = (self.seen.value() or 0) + 1
            self.seen.update(seen)
            if best is None or value[1] > best:
                self.best.update(value[1])
            if seen == 50:
                yield ctx.get_current_key(), self.best.value(), seen

    data = [(f"k{i % 7}", (i * 37) % 101) for i in range(350)]
    expected = {}
    for k in {k for k, _ in data}:
        values = [v for kk, v in data if kk == k]
        expected[k] = (max(values[:50]), 50)
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    out = tmp_path / "out"
    (
        env.from_collection(data)
        .rebalance()
        .key_by(lambda t: t[0])
        .process(RunningMax(), output_type=Types.TUPLE([Types.STRING(), Types.INT(), Types.INT()]))
        .sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder()).build())
    )
    env.execute("running_max")
    got = {}
    for line in read_output_lines(out):
        key, best, seen = line[1:-1].split(",")
        got[key] = (int(best), int(seen))
    assert got == expected


def test_raising_udf_fails_job_with_users_message(embedded: EmbeddedExecutor) -> None:
    def explode(x: int) -> int:
        if x == 42:
            raise ValueError(f"cannot handle record {x}")
        return x

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.from_collection(list(range(100))).rebalance().map(explode).print()
    with pytest.raises(JobExecutionError) as info:
        env.execute("explodes")
    msg = str(info.value)
    assert "ValueError: cannot handle record 42" in msg
    assert "in explode" in msg and "test_embedded_jobs.py" in msg, (
        "the worker's traceback names the user code"
    )


def test_killed_task_executor_fails_job_with_cause(embedded: EmbeddedExecutor) -> None:
    from flott.datastream.connectors.datagen import DataGeneratorSource, RateLimiterStrategy

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    source = DataGeneratorSource(lambda i: i, None, RateLimiterStrategy.per_second(1000), Types.LONG())
    (
        env.from_source(source, WatermarkStrategy.no_watermarks(), "numbers")
        .key_by(lambda x: x % 10)
        .reduce(lambda a, b: a + b)
        .filter(lambda x: False)
        .print()
    )
    client = env.execute_async("killed")
    cluster = embedded.last_cluster
    assert cluster is not None
    deadline = time.monotonic() + 30
    while client.get_job_status().result().name != "RUNNING" or _running_tasks(client) < 4:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    victim = cluster.task_executor_pids()[0]
    killed_at = time.monotonic()
    psutil.Process(victim).kill()
    with pytest.raises(JobExecutionError) as info:
        client.get_job_execution_result().result(timeout=30)
    took = time.monotonic() - killed_at
    assert took < 5.0, f"failure detected after {took:.1f}s; heartbeat timeout is 5 s"
    assert "TaskExecutor" in str(info.value) or "lost connection" in str(info.value)


def _running_tasks(client) -> int:
    info = client.loop.run(client.cluster_client.request_job(str(client.get_job_id())))
    return sum(v.task_counts.get("RUNNING", 0) for v in info.vertices)


def test_execute_async_cancel_unbounded_job(embedded: EmbeddedExecutor) -> None:
    from flott.datastream.connectors.datagen import DataGeneratorSource, RateLimiterStrategy

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    source = DataGeneratorSource(lambda i: i, None, RateLimiterStrategy.per_second(10_000), Types.LONG())
    env.from_source(source, WatermarkStrategy.no_watermarks(), "numbers").map(lambda x: x * 2).filter(
        lambda x: x < 0
    ).print()
    client = env.execute_async("unbounded")
    cluster = embedded.last_cluster
    assert cluster is not None
    pids = cluster.task_executor_pids()
    deadline = time.monotonic() + 30
    while _running_tasks(client) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    client.cancel().result(timeout=30)
    assert client.get_job_status().result().name == "CANCELED"
    _gone, alive = psutil.wait_procs([psutil.Process(p) for p in pids if psutil.pid_exists(p)], timeout=10)
    assert not alive, "worker processes must be gone after the job was cancelled"


def test_slow_sink_bounds_producer_memory(embedded: EmbeddedExecutor) -> None:
    """A fast source into a slow sink: backpressure must hold the producer's memory flat."""
    from flott.datastream.connectors.datagen import DataGeneratorSource, RateLimiterStrategy
    from flott.datastream.functions import MapFunction

    class Slow(MapFunction):
        def map(self, value):
            time.sleep(0.001)
            return value

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    payload = "x" * 1000
    source = DataGeneratorSource(lambda i: (i, payload), None, RateLimiterStrategy.no_op(), None)
    (
        env.from_source(source, WatermarkStrategy.no_watermarks(), "fast")
        .map(lambda t: t)
        .disable_chaining()
        .rebalance()
        .map(Slow())
        .filter(lambda t: False)
        .print()
    )
    client = env.execute_async("backpressure")
    cluster = embedded.last_cluster
    assert cluster is not None
    deadline = time.monotonic() + 30
    while _running_tasks(client) < 3:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    procs = [psutil.Process(p) for p in cluster.task_executor_pids()]
    time.sleep(1.0)
    first = sum(p.memory_info().rss for p in procs)
    samples = []
    for _ in range(8):
        time.sleep(0.5)
        samples.append(sum(p.memory_info().rss for p in procs))
    client.cancel().result(timeout=30)
    growth = max(samples) - first
    # Unbounded buffering would grow by ~1 KB per record at >100k records/s: hundreds of MB in 4 s.
    assert growth < 40 * 2**20, f"worker memory grew by {growth / 2**20:.1f} MiB under backpressure"


def test_example_runs_with_flott_run_and_python(tmp_path: Path) -> None:
    expected = generate_text(tmp_path / "in.txt", lines=500)
    for cmd, out in ((["flott", "run"], tmp_path / "out1"), ([sys.executable], tmp_path / "out2")):
        proc = subprocess.run(
            [
                *cmd,
                str(REPO / "examples" / "word_count.py"),
                "--input",
                str(tmp_path / "in.txt"),
                "--output",
                str(out),
                "--mode",
                "batch",
                "--parallelism",
                "2",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        assert proc.returncode == 0, proc.stderr
        assert dict(parse_tuple_line(line) for line in read_output_lines(out)) == dict(expected)


def test_ctrl_c_of_flott_run_leaves_no_process() -> None:
    import signal

    proc = subprocess.Popen(
        ["flott", "run", str(REPO / "examples" / "streaming_counts.py")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        workers: list[psutil.Process] = []
        while len(workers) < 2:
            assert time.monotonic() < deadline, "the job's TaskExecutors did not start"
            time.sleep(0.2)
            workers = [
                c
                for c in psutil.Process(proc.pid).children(recursive=True)
                if "flott.runtime.taskexecutor" in " ".join(c.cmdline())
            ]
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
        assert proc.returncode == 130
        _gone, alive = psutil.wait_procs(workers, timeout=10)
        assert not alive, f"TaskExecutors left behind: {[p.pid for p in alive]}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_keyed_state_example_prints_per_sensor_summaries() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "examples" / "keyed_state.py")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    readings = [(f"sensor-{i % 4}", float((i * 7919) % 1000) / 10.0) for i in range(1000)]
    expected = set()
    for sensor in {s for s, _ in readings}:
        values = [v for s, v in readings if s == sensor]
        for n in (100, 200):
            expected.add(f"({sensor},{n},{max(values[:n])})")
    printed = {line.split("> ", 1)[-1] for line in proc.stdout.splitlines() if line.strip()}
    assert printed == expected


EXIT_PROBE = """
import atexit, threading

def report():  # registered before flott is imported: runs after flott's exit hooks
    alive = [t.name for t in threading.enumerate() if t.name == "flott-client-loop" and t.is_alive()]
    print("loop threads alive at exit:", alive)

atexit.register(report)

from flott.datastream import StreamExecutionEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
env.from_collection([1, 2, 3]).map(lambda x: x * 2).print()
env.execute("exit probe")
"""


def test_a_finished_script_exits_with_its_event_loop_stopped(tmp_path: Path) -> None:
    """The client's event loop runs on a daemon thread; left running into interpreter
    teardown it can crash a program that finished its work (SIGSEGV after the last line)."""
    script = tmp_path / "probe.py"
    script.write_text(EXIT_PROBE)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert sorted(line for line in proc.stdout.splitlines() if line[:1].isdigit()) == ["2", "4", "6"]
    assert "loop threads alive at exit: []" in proc.stdout
