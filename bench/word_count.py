"""Word-count throughput: flott at parallelism 1 and 2 beside a bare single-process Python loop.

    python bench/word_count.py [--lines 1000000] [--rounds 3]

The input is generated with a fixed seed (a Zipf-like vocabulary of 10,000
words, 10 words per line). The bare loop calls the same Python functions as the
flott job (split, pair, key, reduce) in one process: that is the per-core
physical limit. Runs are interleaved (bare, p=1, p=2, bare, ...) and every
flott run's output is checked against the bare loop's counts before its time
counts. Times are wall clock from ``env.execute()`` to its return, so they
include starting the embedded cluster's TaskExecutor processes.
"""

from __future__ import annotations

import argparse
import collections
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def generate(
    path: Path, lines: int, vocabulary: int = 10_000, words_per_line: int = 10, seed: int = 42
) -> None:
    rng = random.Random(seed)
    vocab = [f"word{i}" for i in range(vocabulary)]
    cum = []
    total = 0.0
    for i in range(vocabulary):
        total += 1.0 / (i + 1)
        cum.append(total)
    with path.open("w") as f:
        batch = []
        for _ in range(lines):
            batch.append(" ".join(rng.choices(vocab, cum_weights=cum, k=words_per_line)))
            if len(batch) == 10_000:
                f.write("\n".join(batch) + "\n")
                batch = []
        if batch:
            f.write("\n".join(batch) + "\n")


# The user's functions: the same objects for the bare loop and the flott job.
def split(line: str) -> list[str]:
    return line.split()


def pair(word: str) -> tuple[str, int]:
    return (word, 1)


def key(t: tuple[str, int]) -> str:
    return t[0]


def add(a: tuple[str, int], b: tuple[str, int]) -> tuple[str, int]:
    return (a[0], a[1] + b[1])


def bare_loop(path: Path) -> tuple[float, dict[str, int]]:
    start = time.perf_counter()
    state: dict[str, tuple[str, int]] = {}
    with path.open() as f:
        for line in f:
            for word in split(line.rstrip("\n")):
                t = pair(word)
                k = key(t)
                old = state.get(k)
                state[k] = t if old is None else add(old, t)
    result = {k: v[1] for k, v in state.items()}
    return time.perf_counter() - start, result


def flott_job(path: Path, out: Path, parallelism: int) -> tuple[float, dict[str, int]]:
    from flott.common import Encoder, Types, WatermarkStrategy
    from flott.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
    from flott.datastream.connectors.file_system import FileSink, FileSource, StreamFormat

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    ds = env.from_source(
        FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(path))
        .process_static_file_set()
        .build(),
        WatermarkStrategy.no_watermarks(),
        "lines",
    )
    (
        ds.flat_map(split)
        .map(pair, output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
        .key_by(key)
        .reduce(add)
        .sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder()).build())
    )
    start = time.perf_counter()
    env.execute(f"bench_word_count_p{parallelism}")
    elapsed = time.perf_counter() - start
    counts: dict[str, int] = {}
    for p in out.rglob("*"):
        if p.is_file() and not p.name.startswith("."):
            for line in p.read_text().splitlines():
                word, n = line[1:-1].rsplit(",", 1)
                counts[word] = int(n)
    return elapsed, counts


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="20,000 lines, 1 round")
    args = ap.parse_args()
    if args.quick:
        args.lines, args.rounds = 20_000, 1
    tmp = Path(tempfile.mkdtemp(prefix="flott-bench-"))
    src = tmp / "input.txt"
    generate(src, args.lines)
    words = args.lines * 10
    times: dict[str, list[float]] = collections.defaultdict(list)
    expected: dict[str, int] | None = None
    for r in range(args.rounds):
        t, counts = bare_loop(src)
        times["bare loop (1 process)"].append(t)
        expected = counts
        for p in (1, 2):
            t, got = flott_job(src, tmp / f"out-{r}-{p}", p)
            if got != expected:
                print(f"flott p={p} produced wrong counts; run discarded", file=sys.stderr)
                return 1
            times[f"flott p={p}"].append(t)
    base = statistics.median(times["bare loop (1 process)"])
    print(f"\nWord count, {args.lines:,} lines / {words:,} words, {args.rounds} interleaved rounds\n")
    print("| runner | median s | min s | max s | words/s (median) | vs bare loop |")
    print("|---|---|---|---|---|---|")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(
            f"| {name} | {med:.2f} | {min(ts):.2f} | {max(ts):.2f} | {words / med:,.0f} | {base / med:.2f}× |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
