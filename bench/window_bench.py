"""Windowed aggregation throughput: a keyed tumbling event-time window count on flott vs a bare loop.

    python bench/window_bench.py [--quick] [--records 2000000] [--keys 100] [--rounds 3]

Every runner sees the same records, ``(key, timestamp)`` pairs made by one
generator function: ``--keys`` keys (default 100), 10 records per millisecond
of event time with up to 500 ms of disorder, so a 1 s window of a key holds
about 100 records. The job:

    source (p subtasks) -> assign_timestamps_and_watermarks(bounded out-of-orderness 1 s)
        -> key_by(key) -> window(TumblingEventTimeWindows.of(1 s)).aggregate(count) -> sink

at parallelism 1 and 2 (embedded cluster, STREAMING), beside the bare-Python
loop doing the same aggregation (generate the records, count per key and
window in a dict) in one process. Each flott run's output is checked: the
window counts must add up to the number of records, and there must be as many
(key, window) results as the bare loop found. Times are wall-clock seconds
of ``env.execute`` (cluster start included; a 1-record job measures that
fixed cost, shown separately) and the bare loop's CPU time; runs are
interleaved round by round.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# This checkout's flott, for this process and the TaskExecutor processes it starts.
sys.path.insert(0, str(REPO))
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)

WINDOW_MS = 1000
OUT_OF_ORDERNESS_MS = 1000
DISORDER_MS = 500
RECORDS_PER_MS = 10


def record(i: int, keys: int) -> tuple[int, int]:
    """The i-th record: (key, timestamp); the timestamp trails i / 10 by a deterministic 0..499 ms."""
    return (i * 7919) % keys, i // RECORDS_PER_MS - (i * 104729) % DISORDER_MS


# --------------------------------------------------------------------------- bare loop


def bare_loop(records: int, keys: int) -> tuple[float, int, int]:
    """CPU seconds, total count and number of (key, window) results of the hand-written aggregation."""
    start = time.process_time()
    counts: dict[tuple[int, int], int] = {}
    get = counts.get
    for i in range(records):
        key, ts = record(i, keys)
        window = (key, ts - ts % WINDOW_MS)
        counts[window] = get(window, 0) + 1
    elapsed = time.process_time() - start
    return elapsed, sum(counts.values()), len(counts)


# --------------------------------------------------------------------------- the flott job


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


class CountSummaryWriter:
    """Adds up the counts it receives; writes ``total results`` to its file when done."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._total = 0
        self._results = 0

    def write_batch(self, records: list[Any]) -> None:
        self._results += len(records)
        self._total += sum(count for _, _, count in records)

    def flush(self, end_of_input: bool) -> None:
        if end_of_input:
            self._path.write_text(f"{self._total} {self._results}")

    def close(self) -> None:
        pass


class CountSummarySink:
    def __init__(self, directory: str) -> None:
        self.directory = directory

    def create_writer(
        self, subtask_index: int, parallelism: int, input_type: object | None
    ) -> CountSummaryWriter:
        return CountSummaryWriter(Path(self.directory) / f"part-{subtask_index}")


def run_flott(records: int, keys: int, parallelism: int) -> tuple[float, int, int]:
    """Wall seconds of ``env.execute``, total count and number of window results."""
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

    with tempfile.TemporaryDirectory() as out:
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
            .sink_to(CountSummarySink(out))
        )
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            env.execute(f"window_bench_p{parallelism}")
        elapsed = time.perf_counter() - start
        total = results = 0
        for part in Path(out).glob("part-*"):
            t, r = part.read_text().split()
            total += int(t)
            results += int(r)
    return elapsed, total, results


# --------------------------------------------------------------------------- report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--keys", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="200k records, 1 round")
    args = parser.parse_args()
    if args.quick:
        args.records, args.rounds = 200_000, 1
    n, keys = args.records, args.keys
    times: dict[str, list[float]] = {"bare loop (1 process)": [], "flott p=1": [], "flott p=2": []}
    startup: list[float] = []
    for round_no in range(args.rounds):
        bare_s, _, bare_results = bare_loop(n, keys)
        times["bare loop (1 process)"].append(bare_s)
        for p in (1, 2):
            elapsed, total, results = run_flott(n, keys, p)
            if total != n or results != bare_results:
                sys.exit(f"flott p={p}: {total} records in {results} windows, expected {n} in {bare_results}")
            times[f"flott p={p}"].append(elapsed)
        startup.append(run_flott(1, 1, 1)[0])
        print(f"round {round_no + 1}/{args.rounds} done", file=sys.stderr)
    bare = statistics.median(times["bare loop (1 process)"])
    print()
    print(
        f"Keyed tumbling event-time window count, {n:,} records, {keys:,} keys, "
        f"{WINDOW_MS} ms windows, {bare_results:,} window results, {args.rounds} interleaved round(s)"
    )
    print()
    print("| runner | median s | min s | max s | records/s (median) | vs bare loop |")
    print("|---|---|---|---|---|---|")
    for name, values in times.items():
        median = statistics.median(values)
        print(
            f"| {name} | {median:.2f} | {min(values):.2f} | {max(values):.2f} | "
            f"{n / median:,.0f} | {bare / median:.2f}× |"
        )
    print()
    fixed = statistics.median(startup)
    print(f"flott times include starting the embedded cluster: a 1-record job takes {fixed:.2f} s.")


if __name__ == "__main__":
    main()
