"""CPU seconds of one job run under two flott checkouts, interleaved: does a change cost the data path?

On a machine shared with other work, wall-clock times say little; the CPU seconds a job's
processes use (the client with its embedded JobManager and every TaskExecutor it starts, read
from ``RUSAGE_CHILDREN``) are much steadier. This runs ``bench/wc_runner.py`` (the word count of
``bench/word_count.py``) with ``PYTHONPATH`` pointing at each checkout in turn, round after round,
and prints the CPU seconds per side (median, min-max).

Run: ``python bench/cpu_ab.py --before /path/to/old/checkout [--after .] [--mode flott|flott-streaming,...]
[--parallelism 2] [--lines 300000] [--rounds 3]``. Mode ``window`` is the windowed count of
``bench/window_bench.py`` (its flott run, ``--window-records`` records, 100 keys), started from each
checkout's own copy of that script (it puts its checkout on its TaskExecutors' ``PYTHONPATH``).
Compile both checkouts first (``python -m compileall -q <checkout>/flott``) when
``PYTHONDONTWRITEBYTECODE`` is set, or the larger tree pays for compiling its sources in every run.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from wc_functions import generate  # noqa: E402


def cpu_of_run(
    checkout: Path, mode: str, parallelism: int, src: Path, out: Path, window_records: int = 1_000_000
) -> float:
    shutil.rmtree(out, ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    if mode == "window":
        cmd = [sys.executable, str(checkout / "bench" / "window_bench.py"), "--run", "flott",
               "--records", str(window_records), "--keys", "100", "--parallelism", str(parallelism),
               "--out", str(out)]
    else:
        cmd = [sys.executable, str(HERE / "wc_runner.py"), mode, "--input", str(src), "--out", str(out),
               "--parallelism", str(parallelism)]
    run = subprocess.run(
        cmd,
        env=dict(os.environ, PYTHONPATH=str(checkout)),
        capture_output=True,
        text=True,
        cwd=out.parent,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode != 0:
        raise SystemExit(f"{checkout}: the job failed:\n{run.stderr[-2000:]}")
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--after", type=Path, default=HERE.parent)
    modes = ["flott", "flott-streaming", "flott-untyped", "flott-streaming-untyped", "window"]
    ap.add_argument(
        "--mode",
        default="flott",
        help=f"one of {', '.join(modes)}, or several separated by commas (interleaved in every round)",
    )
    ap.add_argument("--parallelism", type=int, default=2)
    ap.add_argument("--lines", type=int, default=300_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--window-records", type=int, default=1_000_000, help="records of mode window")
    args = ap.parse_args()
    chosen = args.mode.split(",")
    unknown = sorted(set(chosen) - set(modes))
    if unknown:
        ap.error(f"unknown mode(s): {', '.join(unknown)}")
    sides = {"before": args.before.resolve(), "after": args.after.resolve()}
    cpu: dict[tuple[str, str], list[float]] = {(side, mode): [] for mode in chosen for side in sides}
    with tempfile.TemporaryDirectory(prefix="flott-cpu-ab-") as tmp:
        src = Path(tmp) / "input.txt"
        generate(src, args.lines)
        for round_no in range(args.rounds):
            order = list(sides.items())
            if round_no % 2:  # alternate which side runs first: the machine's load drifts
                order.reverse()
            for mode in chosen:
                for side, checkout in order:
                    out = Path(tmp) / f"{side}-{mode}"
                    cpu[(side, mode)].append(cpu_of_run(
                        checkout, mode, args.parallelism, src, out, args.window_records
                    ))
    for mode in chosen:
        size = f"{args.window_records:,} records" if mode == "window" else f"{args.lines * 10:,} words"
        print(f"| {mode} p={args.parallelism}, {size} | CPU s median | min–max |")
        print("|---|---|---|")
        for side in sides:
            values = cpu[(side, mode)]
            spread = f"{min(values):.2f}–{max(values):.2f}"
            print(f"| {side} ({sides[side]}) | {statistics.median(values):.2f} | {spread} |")

if __name__ == "__main__":
    main()
