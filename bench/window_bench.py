"""Windowed aggregation: a keyed tumbling event-time window count on flott, Bytewax and PyFlink.

    python bench/window_bench.py [--quick] [--records 2000000] [--pyflink-records 20000]
                                 [--keys 100] [--rounds 3] [--no-peers] [--only flott,bytewax,pyflink]

Every runner sees the same records, ``(key, timestamp)`` pairs made by one
generator function (``record`` below): ``--keys`` keys (default 100), 10
records per millisecond of event time with up to 500 ms of disorder, so a 1 s
window of a key holds about 100 records. The job, in each system's own API:

    source -> timestamps + watermarks (bounded out-of-orderness 1 s)
        -> key by key -> tumbling event-time window of 1 s -> count -> (key, window start, count)

- bare loop, 1 process: generate the records and count per (key, window) in a dict
  (CPU time; the per-core limit);
- flott p=1 and p=2 (embedded cluster, STREAMING): a generating source (subtask k of p
  makes records k, k + p, ...) -> ``assign_timestamps_and_watermarks`` -> ``key_by`` ->
  ``window(TumblingEventTimeWindows.of(1 s)).aggregate(count, ProcessWindowFunction)``;
- Bytewax 0.21 with 1 and 2 processes (``bytewax.testing.cluster_main``, 1 worker per
  process): a ``FixedPartitionedSource`` with one partition per process ->
  ``windowing.count_window`` with an ``EventClock`` (wait 1 s) and a ``TumblingWindower``
  (1 s). Bytewax keeps one clock per key and has no minimum over its inputs' watermarks
  (Flink and flott take the minimum over input channels), so a key fed by two partitions
  that drift apart would see its records late; the partitions therefore split the records
  by key (each partition makes, in order, the records of its keys). The clock's system
  time is frozen: its watermark is the largest timestamp seen minus 1 s, as Flink's bounded
  out-of-orderness, and wall-clock stalls on this shared machine cannot make records late;
- PyFlink 2.3 DataStream p=1 and p=2 (local MiniCluster, STREAMING): ``NumberSequenceSource``
  -> Python ``map`` to the record -> ``assign_timestamps_and_watermarks`` with a Python
  ``TimestampAssigner`` -> ``key_by`` -> ``window(TumblingEventTimeWindows.of(1 s))
  .aggregate(count, ProcessWindowFunction)``, results through ``execute_and_collect``.
  Its Python UDF path is orders of magnitude slower, so it runs on a smaller input
  (``--pyflink-records``); flott p=2 and the bare loop run on that input too, and its
  ratios compare like with like.

Each flott, Bytewax and PyFlink run is its own process (this file, ``--run SYSTEM``; the
peers from bench/.venv-peers, skipped with a line saying so when it is missing). Runs
are interleaved (every runner once per round, in the same order). Every run's output,
all (key, window start, count) triples, is checked against the bare loop's dict before
its time counts. Times: flott and PyFlink, ``env.execute`` (flott starts its embedded
cluster's TaskExecutor processes in it: a 1-record job, run every round, measures that
fixed cost; PyFlink starts the MiniCluster, its JVM gateway is up before); Bytewax,
spawning its worker processes until they exit. Ratios are throughput ratios taken
within a round, then summarised (median and range).

``--quick``: 200,000 records, 1 round, no PyFlink rows unless ``--only pyflink`` asks for
them (2,000 records, p=1): PyFlink's start alone takes 15-60 s on this 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
# This checkout's flott, for this process and the TaskExecutor processes it starts.
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)

WINDOW_MS = 1000
OUT_OF_ORDERNESS_MS = 1000
DISORDER_MS = 500
RECORDS_PER_MS = 10
BYTEWAX_BATCH = 1000
RUN_TIMEOUT_S = 1800


def record(i: int, keys: int) -> tuple[int, int]:
    """The i-th record: (key, timestamp); the timestamp trails i / 10 by a deterministic 0..499 ms."""
    return (i * 7919) % keys, i // RECORDS_PER_MS - (i * 104729) % DISORDER_MS


Counts = dict[tuple[int, int], int]  # (key, window start) -> count


# --------------------------------------------------------------------------- bare loop


def bare_loop(records: int, keys: int) -> tuple[float, Counts]:
    """CPU seconds and the (key, window start) -> count dict of the hand-written aggregation."""
    start = time.process_time()
    counts: Counts = {}
    get = counts.get
    for i in range(records):
        key, ts = record(i, keys)
        window = (key, ts - ts % WINDOW_MS)
        counts[window] = get(window, 0) + 1
    elapsed = time.process_time() - start
    return elapsed, counts


def write_results(path: Path, rows: Any) -> None:
    """``key window_start count`` lines."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        f.writelines(f"{k} {w} {c}\n" for k, w, c in rows)


def read_results(out: Path) -> Counts:
    got: Counts = {}
    for part in sorted(out.glob("part-*")):
        for line in part.read_text().splitlines():
            k, w, c = (int(x) for x in line.split())
            if (k, w) in got:
                raise RuntimeError(f"window (key {k}, start {w}) emitted twice")
            got[(k, w)] = c
    return got


def check(got: Counts, expected: Counts) -> None:
    if got == expected:
        return
    missing = len(expected.keys() - got.keys())
    extra = len(got.keys() - expected.keys())
    wrong = sum(1 for kw, c in got.items() if kw in expected and expected[kw] != c)
    raise RuntimeError(
        f"wrong output: {sum(got.values()):,} records in {len(got):,} windows, expected "
        f"{sum(expected.values()):,} in {len(expected):,} ({missing} windows missing, {extra} extra, "
        f"{wrong} with other counts); run discarded"
    )


# --------------------------------------------------------------------------- flott


class GeneratedReader:
    """Subtask ``index`` of ``parallelism`` generates records index, index + p, ... in batches."""

    def __init__(self, index: int, parallelism: int, records: int, keys: int) -> None:
        self._next = index
        self._step = parallelism
        self._records = records
        self._keys = keys

    def poll_batch(self, max_records: int) -> list[Any] | None:
        if self._next >= self._records:
            return None
        stop = min(self._records, self._next + max_records * self._step)
        keys = self._keys
        batch = [record(i, keys) for i in range(self._next, stop, self._step)]
        self._next = stop
        return batch

    def close(self) -> None:
        pass


class GeneratedSource:
    def __init__(self, records: int, keys: int) -> None:
        self.records = records
        self.keys = keys

    def get_boundedness(self) -> Any:
        from flott.datastream.connectors.base import Boundedness

        return Boundedness.BOUNDED

    def create_reader(self, subtask_index: int, parallelism: int) -> GeneratedReader:
        return GeneratedReader(subtask_index, parallelism, self.records, self.keys)


class ResultWriter:
    """Keeps the (key, window start, count) triples it receives; writes them to its file at the end."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._rows: list[Any] = []

    def write_batch(self, records: list[Any]) -> None:
        self._rows.extend(records)

    def flush(self, end_of_input: bool) -> None:
        if end_of_input:
            write_results(self._path, self._rows)

    def close(self) -> None:
        pass


class ResultSink:
    def __init__(self, directory: str) -> None:
        self.directory = directory

    def create_writer(self, subtask_index: int, parallelism: int, input_type: object | None) -> ResultWriter:
        return ResultWriter(Path(self.directory) / f"part-{subtask_index}")


def run_flott(records: int, keys: int, parallelism: int, out: Path) -> float:
    """Wall seconds of ``env.execute``; the results go to ``out``/part-*."""
    from flott.common import Duration, WatermarkStrategy
    from flott.common.watermark_strategy import TimestampAssigner
    from flott.datastream import StreamExecutionEnvironment
    from flott.datastream.functions import AggregateFunction, ProcessWindowFunction
    from flott.datastream.window import TumblingEventTimeWindows

    class SecondField(TimestampAssigner):
        def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
            return value[1]

    class Count(AggregateFunction):
        def create_accumulator(self) -> int:
            return 0

        def add(self, value: Any, accumulator: int) -> int:
            return accumulator + 1

        def get_result(self, accumulator: int) -> int:
            return accumulator

        def merge(self, acc_a: int, acc_b: int) -> int:
            return acc_a + acc_b

    class WithWindow(ProcessWindowFunction):
        def process(self, key: Any, context: Any, elements: Any) -> Any:
            for count in elements:
                yield key, context.window().start, count

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(
        Duration.of_millis(OUT_OF_ORDERNESS_MS)
    ).with_timestamp_assigner(SecondField())
    (
        env.from_source(GeneratedSource(records, keys), WatermarkStrategy.no_watermarks(), "records")
        .assign_timestamps_and_watermarks(strategy)
        .key_by(lambda r: r[0])
        .window(TumblingEventTimeWindows.of(WINDOW_MS))
        .aggregate(Count(), window_function=WithWindow())
        .sink_to(ResultSink(str(out)))
    )
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.execute(f"window_bench_p{parallelism}")
    return time.perf_counter() - start


# --------------------------------------------------------------------------- Bytewax


def key_partition(records: int, keys: int, index: int, parts: int) -> Iterator[list[tuple[int, int]]]:
    """Batches of the records whose key % parts == index, in generation order.

    A record's key depends only on i % keys, so the partition walks those residues.
    """
    residues = [r for r in range(keys) if record(r, keys)[0] % parts == index]
    if not residues:
        return
    per_batch = max(1, BYTEWAX_BATCH // len(residues))
    for base in range(0, records, keys * per_batch):
        stop = min(records, base + keys * per_batch)
        yield [record(b + r, keys) for b in range(base, stop, keys) for r in residues if b + r < stop]


def bytewax_flow(records: int, keys: int, out: Path, proc_id: int, procs: int) -> Any:
    from datetime import UTC, datetime, timedelta

    import bytewax.operators as op
    from bytewax.dataflow import Dataflow
    from bytewax.inputs import FixedPartitionedSource, StatefulSourcePartition
    from bytewax.operators.windowing import EventClock, TumblingWindower, count_window
    from bytewax.outputs import DynamicSink, StatelessSinkPartition

    epoch = datetime(1970, 1, 1, tzinfo=UTC)

    class Partition(StatefulSourcePartition):  # type: ignore[misc]
        def __init__(self, index: int) -> None:
            self._batches = key_partition(records, keys, index, procs)

        def next_batch(self) -> list[tuple[int, int]]:
            return next(self._batches)  # StopIteration ends the partition

        def snapshot(self) -> None:
            return None

    class Source(FixedPartitionedSource):  # type: ignore[misc]
        def list_parts(self) -> list[str]:
            return [f"part-{proc_id}"]  # this process's partition only: one partition per process

        def build_part(self, step_id: str, for_part: str, resume_state: Any) -> Partition:
            return Partition(int(for_part.split("-")[1]))

    class Part(StatelessSinkPartition):  # type: ignore[misc]
        def __init__(self, path: Path) -> None:
            self._rows: list[tuple[str, int, int]] = []
            self._path = path

        def write_batch(self, items: list[Any]) -> None:
            self._rows.extend((k, wid * WINDOW_MS, c) for k, (wid, c) in items)

        def close(self) -> None:
            write_results(self._path, self._rows)

    class Sink(DynamicSink):  # type: ignore[misc]
        def build(self, step_id: str, worker_index: int, worker_count: int) -> Part:
            return Part(out / f"part-{worker_index}")

    def timestamp(r: tuple[int, int]) -> datetime:
        return epoch + timedelta(milliseconds=r[1])

    clock = EventClock(
        ts_getter=timestamp,
        wait_for_system_duration=timedelta(milliseconds=OUT_OF_ORDERNESS_MS),
        now_getter=lambda: epoch,  # frozen: the watermark is event time only (see the docstring)
        to_system_utc=lambda t: None,  # windows close on watermarks from items and at EOF
    )
    windower = TumblingWindower(length=timedelta(milliseconds=WINDOW_MS), align_to=epoch)
    flow = Dataflow("window_bench")
    stream = op.input("records", flow, Source())
    counted = count_window("count", stream, clock, windower, key=lambda r: str(r[0]))
    op.output("out", counted.down, Sink())
    return flow


def run_bytewax(records: int, keys: int, parallelism: int, out: Path) -> float:
    from benchlib import free_port

    addresses = ";".join(f"127.0.0.1:{free_port()}" for _ in range(parallelism))
    common = ["--records", str(records), "--keys", str(keys), "--parallelism", str(parallelism)]
    common += ["--out", str(out), "--addresses", addresses]
    start = time.perf_counter()
    procs = [
        subprocess.Popen([sys.executable, __file__, "--run", "bytewax-worker", "--proc-id", str(i), *common])
        for i in range(parallelism)
    ]
    try:
        codes = [p.wait(timeout=RUN_TIMEOUT_S) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    elapsed = time.perf_counter() - start
    if any(codes):
        raise RuntimeError(f"bytewax workers exited with {codes}")
    return elapsed


def bytewax_worker(records: int, keys: int, procs: int, out: Path, proc_id: int, addresses: str) -> None:
    from bytewax.testing import cluster_main

    flow = bytewax_flow(records, keys, out, proc_id, procs)
    cluster_main(flow, addresses.split(";"), proc_id, worker_count_per_proc=1)


# --------------------------------------------------------------------------- PyFlink


def run_pyflink(records: int, keys: int, parallelism: int, out: Path) -> float:
    from pyflink.common import Duration, Time, Types, WatermarkStrategy
    from pyflink.common.configuration import Configuration
    from pyflink.common.watermark_strategy import TimestampAssigner
    from pyflink.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
    from pyflink.datastream.connectors.number_seq import NumberSequenceSource
    from pyflink.datastream.functions import AggregateFunction, ProcessWindowFunction
    from pyflink.datastream.window import TumblingEventTimeWindows

    class SecondField(TimestampAssigner):  # type: ignore[misc]
        def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
            return int(value[1])

    class Count(AggregateFunction):  # type: ignore[misc]
        def create_accumulator(self) -> int:
            return 0

        def add(self, value: Any, accumulator: int) -> int:
            return accumulator + 1

        def get_result(self, accumulator: int) -> int:
            return accumulator

        def merge(self, acc_a: int, acc_b: int) -> int:
            return acc_a + acc_b

    class WithWindow(ProcessWindowFunction):  # type: ignore[misc]
        def process(self, key: Any, context: Any, elements: Any) -> Any:
            for count in elements:
                yield key, context.window().start, count

    config = Configuration()
    config.set_string("python.executable", sys.executable)
    config.set_string("rest.bind-port", "0")
    # As in the word count: Python keyed state is cached in the UDF worker (default 1000 entries).
    config.set_string("python.state.cache-size", "20000")
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(parallelism)
    env.set_runtime_mode(RuntimeExecutionMode.STREAMING)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(
        Duration.of_millis(OUT_OF_ORDERNESS_MS)
    ).with_timestamp_assigner(SecondField())
    n_keys = keys
    results = (
        env.from_source(NumberSequenceSource(0, records - 1), WatermarkStrategy.no_watermarks(), "numbers")
        .map(lambda i: record(i, n_keys), output_type=Types.TUPLE([Types.INT(), Types.LONG()]))
        .assign_timestamps_and_watermarks(strategy)
        .key_by(lambda r: r[0], key_type=Types.INT())
        .window(TumblingEventTimeWindows.of(Time.milliseconds(WINDOW_MS)))
        .aggregate(
            Count(),
            window_function=WithWindow(),
            accumulator_type=Types.LONG(),
            output_type=Types.TUPLE([Types.INT(), Types.LONG(), Types.LONG()]),
        )
    )
    start = time.perf_counter()
    with results.execute_and_collect(f"window_bench_p{parallelism}") as it:
        rows = list(it)
    elapsed = time.perf_counter() - start
    write_results(out / "part-0", rows)
    return elapsed


RUNNERS = {"flott": run_flott, "bytewax": run_bytewax, "pyflink": run_pyflink}


def run_in_process(args: argparse.Namespace) -> int:
    """``--run SYSTEM``: one run in this process; the last stdout line is {"elapsed": s}."""
    out = Path(args.out)
    if args.run == "bytewax-worker":
        bytewax_worker(args.records, args.keys, args.parallelism, out, args.proc_id, args.addresses)
        return 0
    elapsed = RUNNERS[args.run](args.records, args.keys, args.parallelism, out)
    sys.stdout.flush()
    os.write(1, (json.dumps({"elapsed": elapsed}) + "\n").encode())
    return 0


# --------------------------------------------------------------------------- the harness


@dataclass
class Runner:
    name: str
    system: str  # bare, flott, bytewax, pyflink
    parallelism: int
    input: str  # "main" or "small"
    times: list[float | None] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def run_once(r: Runner, n: int, keys: int, expected: Counts, tmp: Path) -> float:
    """One run in its own process; its output checked against ``expected``; wall seconds."""
    from benchlib import PEERS_PY, java_home

    out = tmp / f"out-{r.system}-{r.parallelism}-{r.input}"
    shutil.rmtree(out, ignore_errors=True)
    python = sys.executable if r.system == "flott" else str(PEERS_PY)
    cmd = [python, __file__, "--run", r.system, "--records", str(n), "--keys", str(keys)]
    cmd += ["--parallelism", str(r.parallelism), "--out", str(out)]
    env = dict(os.environ)
    if r.system == "pyflink" and java_home():
        env["JAVA_HOME"] = java_home() or ""
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, cwd=str(tmp), env=env, timeout=RUN_TIMEOUT_S
        )
        if proc.returncode != 0:
            raise RuntimeError(f"exit {proc.returncode}: {proc.stderr.strip().splitlines()[-3:]}")
        elapsed = float(json.loads(proc.stdout.strip().splitlines()[-1])["elapsed"])
        check(read_results(out), expected)
        return elapsed
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--pyflink-records", type=int, default=20_000)
    parser.add_argument("--keys", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="200k records, 1 round; PyFlink only with --only pyflink (2,000 records, p=1)",
    )
    parser.add_argument("--no-peers", action="store_true", help="the bare loop and flott only")
    parser.add_argument("--only", default="", help="comma-separated systems: flott,bytewax,pyflink")
    # one run in this process (started by the harness):
    parser.add_argument("--run", choices=[*RUNNERS, "bytewax-worker"], help=argparse.SUPPRESS)
    parser.add_argument("--parallelism", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--proc-id", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--addresses", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        return run_in_process(args)

    from benchlib import fmt_num, java_home, log, markdown_table, peer_available, summary

    def ratio_cell(ratios: list[float]) -> str:
        """Median of per-round ratios with their range (small ratios with 2 significant digits)."""
        if not ratios:
            return "–"

        def f(x: float) -> str:
            return f"{x:.2f}" if x >= 0.1 else f"{x:#.2g}"

        med, lo, hi = summary(ratios)
        return f"{f(med)}×" if len(ratios) == 1 else f"{f(med)}× ({f(lo)}–{f(hi)})"

    if args.quick:
        args.records, args.pyflink_records, args.rounds = 200_000, 2_000, 1
    args.pyflink_records = min(args.pyflink_records, args.records)
    n, keys = args.records, args.keys
    sizes = {"main": n, "small": args.pyflink_records}
    only = set(filter(None, args.only.split(",")))
    notes: list[str] = []

    runners = [Runner("bare loop, 1 process", "bare", 1, "main")]
    if not only or "flott" in only:
        runners += [Runner("flott p=1", "flott", 1, "main"), Runner("flott p=2", "flott", 2, "main")]
    if args.no_peers:
        notes.append("Peers skipped (--no-peers).")
    else:
        if only and "bytewax" not in only:
            pass
        elif peer_available("bytewax"):
            runners += [
                Runner("Bytewax 0.21, 1 process", "bytewax", 1, "main"),
                Runner("Bytewax 0.21, 2 processes", "bytewax", 2, "main"),
            ]
        else:
            notes.append("Bytewax rows skipped: bench/.venv-peers has no bytewax (run bench/setup).")
        if only and "pyflink" not in only:
            pass
        elif args.quick and "pyflink" not in only:
            notes.append(
                "--quick: PyFlink rows skipped (starting its MiniCluster and Python worker takes "
                "15-60 s here; `--quick --only pyflink` runs them)."
            )
        elif peer_available("pyflink") and java_home():
            pf = "main"
            if sizes["small"] != n:
                pf = "small"
                runners += [
                    Runner("bare loop, 1 process (PyFlink's input)", "bare", 1, "small"),
                    Runner("flott p=2 (PyFlink's input)", "flott", 2, "small"),
                ]
            runners.append(Runner("PyFlink 2.3 p=1", "pyflink", 1, pf))
            if not args.quick:
                runners.append(Runner("PyFlink 2.3 p=2", "pyflink", 2, pf))
            else:
                notes.append("--quick: PyFlink p=2 skipped.")
        else:
            notes.append(
                "PyFlink rows skipped: bench/.venv-peers has no pyflink or there is no Java "
                "(run bench/setup)."
            )

    expected = {k: bare_loop(size, keys)[1] for k, size in sizes.items()}
    startup: list[float] = []
    tmp = Path(tempfile.mkdtemp(prefix="flott-bench-windows-"))
    started = time.monotonic()
    try:
        for round_no in range(args.rounds):
            for r in runners:
                log(f"windows round {round_no + 1}/{args.rounds}: {r.name}")
                size = sizes[r.input]
                try:
                    if r.system == "bare":
                        elapsed, counts = bare_loop(size, keys)
                        check(counts, expected[r.input])
                    else:
                        elapsed = run_once(r, size, keys, expected[r.input], tmp)
                    r.times.append(elapsed)
                except Exception as e:  # the row says so; other rows go on
                    r.times.append(None)
                    r.failures.append(str(e))
                    log(f"{r.name}: {e}")
            if any(r.system == "flott" for r in runners):
                try:
                    startup.append(run_once(Runner("", "flott", 1, "one"), 1, 1, {(0, 0): 1}, tmp))
                except Exception as e:
                    log(f"flott 1-record job: {e}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    total_s = time.monotonic() - started

    def base_of(r: Runner) -> Runner:
        return next(b for b in runners if b.system == "bare" and b.input == r.input)

    def flott2_of(r: Runner) -> Runner | None:
        return next(
            (b for b in runners if b.system == "flott" and b.parallelism == 2 and b.input == r.input), None
        )

    def per_round(a: Runner | None, b: Runner | None) -> list[float]:
        """Throughput of a over throughput of b (same input), round by round where both ran."""
        if a is None or b is None:
            return []
        return [tb / ta for ta, tb in zip(a.times, b.times, strict=False) if ta and tb]

    rows = []
    for r in runners:
        ok = [t for t in r.times if t is not None]
        size = sizes[r.input]
        if not ok:
            rows.append([r.name, f"{size:,}", "failed", "", "", "", "", f"0/{len(r.times)}"])
            continue
        med, lo, hi = summary(ok)
        vs_flott = "" if r.system in ("bare", "flott") else ratio_cell(per_round(flott2_of(r), r))
        rows.append(
            [
                r.name,
                f"{size:,}",
                f"{med:.2f}",
                f"{lo:.2f} / {hi:.2f}",
                fmt_num(size / med),
                ratio_cell(per_round(r, base_of(r))),
                vs_flott,
                f"{len(ok)}/{len(r.times)}",
            ]
        )
    print(
        f"\n### Windowed aggregation: keyed tumbling event-time window count "
        f"({args.rounds} interleaved round(s), {total_s:.0f} s in all)\n"
    )
    small = f" ({sizes['small']:,} for PyFlink)" if any(r.input == "small" for r in runners) else ""
    print(
        f"{n:,} records{small}, {keys:,} keys, {WINDOW_MS} ms windows, "
        f"bounded out-of-orderness {OUT_OF_ORDERNESS_MS} ms; {len(expected['main']):,} (key, window) "
        "results, every run's output checked against the bare loop's.\n"
    )
    print(
        markdown_table(
            [
                "runner",
                "input records",
                "median s",
                "min / max s",
                "records/s (median)",
                "vs bare loop (same input)",
                "flott p=2 vs this (same input)",
                "runs ok",
            ],
            rows,
        )
    )
    print(
        "\nRatios are throughput ratios taken within a round (median, and range over rounds). The bare "
        "loop's time is CPU time in this process; flott: `env.execute()`, which starts the embedded "
        "cluster's TaskExecutor processes; PyFlink: `execute_and_collect()` until the last result, which "
        "starts its MiniCluster and Python UDF worker; Bytewax: spawning its worker processes until "
        "they exit."
    )
    if startup:
        notes.insert(
            0,
            f"flott times include starting the embedded cluster: a 1-record job takes "
            f"{statistics.median(startup):.2f} s (median over rounds).",
        )
    for r in runners:
        if r.failures:
            notes.append(f"{r.name}: {len(r.failures)} failed run(s): {r.failures[0][:300]}")
    if notes:
        print()
        for note in notes:
            print(f"- {note}")
    bad = [r.name for r in runners if r.system in ("bare", "flott") and r.failures]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
