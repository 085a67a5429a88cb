"""Python UDF throughput: word count on flott beside bare loops, Bytewax and PyFlink.

    python bench/word_count.py [--quick] [--lines 1000000] [--pyflink-lines N] [--rounds 3]
                               [--no-peers] [--only flott,bare,...] [--summary FILE]

The input is generated with a fixed seed (a Zipf-like vocabulary of 10,000
words, 10 words per line). Every runner calls the same Python functions
(wc_functions.split, pair, key, add: flat_map -> map -> key_by -> reduce):

- bare loop, 1 process: the per-record loop around those functions, the per-core limit;
- bare loop, 2 processes: the file split by byte ranges, dicts merged (the 2-core limit);
- flott p=1 and p=2 (BATCH mode, embedded cluster);
- bare streaming loop, 1 process: the same loop writing every running count as a sink
  line ``(word,n)`` (what a STREAMING job writes: the yardstick of the STREAMING rows);
- flott p=1 and p=2 STREAMING: every update goes to the FileSink, as in PyFlink;
- Bytewax 0.21 with 1 and 2 processes (flat_map -> map -> key_on -> reduce_final);
- PyFlink 2.3 DataStream p=1 and p=2 (local MiniCluster, BATCH mode), on a smaller
  input because its Python path is two orders of magnitude slower; flott p=2 runs
  on that input too so the ratio compares like with like.

Each runner runs in its own process (wc_runner.py), the peers from
bench/.venv-peers. Runs are interleaved (every runner once per round, in the
same order, for ``--rounds`` rounds); each run's output is checked against the
bare loop's counts before its time counts. Ratios are taken within a round and
then summarised (median and range). Peak RSS of every process of a run
(JobManager, TaskExecutors, workers, JVMs) is sampled with psutil every 100 ms.

``--quick``: 10,000 lines, 1 round, no PyFlink rows unless ``--only pyflink`` asks for
them (30 lines, p=1): starting PyFlink's MiniCluster alone takes 20-60 s on this
2-core machine. ``--summary FILE`` appends this benchmark's rows of bench/run's summary
table to FILE (JSON lines, see bench/summary.py).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from benchlib import (  # noqa: E402
    PEERS_PY,
    RssSampler,
    add_summary,
    fmt_mib,
    fmt_num,
    java_home,
    log,
    markdown_table,
    peer_available,
    ratio_cell,
    summary,
)
from wc_functions import bare_count, generate, read_counts  # noqa: E402

RUNNER = HERE / "wc_runner.py"


@dataclass
class Runner:
    name: str
    system: str
    parallelism: int
    input: str  # "main" or "small"
    python: str
    streaming: bool = False
    """Output is every running count (checked by each word's largest; yardstick: the bare streaming loop)."""
    cpu: list[float] = field(default_factory=list)
    """CPU seconds (user + system) of the run's processes that were waited for (getrusage of children)."""
    times: list[float | None] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    rss: dict[str, list[int]] = field(default_factory=dict)  # role -> peak per run (max over processes)
    procs: dict[str, int] = field(default_factory=dict)  # role -> processes seen in a run


def _label(system: str):  # type: ignore[no-untyped-def]
    def label(p, depth: int) -> str | None:  # type: ignore[no-untyped-def]
        try:
            cmd = " ".join(p.cmdline())
        except Exception:
            return None
        if "multiprocessing.resource_tracker" in cmd or "forkserver" in cmd:
            return None
        if system == "flott":
            if depth == 0:
                return "JobManager (embedded, in the client process)"
            if "flott.runtime.taskexecutor" in cmd:
                return "TaskExecutor"
            return None
        if system == "pyflink":
            if "java" in p.name():
                return "MiniCluster JVM (JobManager + TaskManager)"
            if depth == 0:
                return "client process (runs the Python UDF worker, loopback mode)"
            if "beam_boot" in cmd:
                return "Python worker boot process"
            return None
        if system == "bytewax":
            return "worker process" if depth == 1 else None
        return "driver" if depth == 0 else "worker process"

    return label


def run_once(
    r: Runner, inputs: dict[str, Path], expected: dict[str, dict[str, int]], tmp: Path, i: int
) -> None:
    out = tmp / f"out-{r.system}-{r.parallelism}-{r.input}-{i}"
    system = f"{r.system}-streaming" if r.streaming else r.system
    cmd = [r.python, str(RUNNER), system, "--input", str(inputs[r.input]), "--out", str(out)]
    cmd += ["--parallelism", str(r.parallelism)]
    env = None
    if r.system == "pyflink" and java_home():
        import os

        env = dict(os.environ, JAVA_HOME=java_home() or "")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(tmp), env=env
    )
    with RssSampler(proc.pid, _label(r.system)) as sampler:
        try:
            stdout, stderr = proc.communicate(timeout=1800)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
            stderr += "\n(timed out after 1800 s)"
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    r.cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    try:
        if proc.returncode != 0:
            raise RuntimeError(f"exit {proc.returncode}: {stderr.strip().splitlines()[-3:]}")
        elapsed = float(json.loads(stdout.strip().splitlines()[-1])["elapsed"])
        got = read_counts(out, updates=r.streaming)
        if got != expected[r.input]:
            missing = len(set(expected[r.input]) - set(got))
            wrong = sum(1 for k, v in got.items() if expected[r.input].get(k) != v)
            raise RuntimeError(f"wrong counts ({missing} words missing, {wrong} wrong); run discarded")
        r.times.append(elapsed)
    except Exception as e:  # the row says so; other rows go on
        r.times.append(None)
        r.failures.append(str(e))
        log(f"{r.name}: {e}")
    for role, peaks in sampler.by_label().items():
        r.rss.setdefault(role, []).append(max(peaks))
        r.procs[role] = max(r.procs.get(role, 0), len(peaks))
    shutil.rmtree(out, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--pyflink-lines", type=int, default=2_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--quick",
        action="store_true",
        help="10,000 lines, 1 round; PyFlink only with --only pyflink (30, p=1)",
    )
    ap.add_argument("--no-peers", action="store_true", help="bare loops and flott only")
    ap.add_argument(
        "--only",
        default="",
        help="comma-separated systems: bare,flott,bytewax,pyflink,streaming (the STREAMING rows)",
    )
    ap.add_argument("--summary", help="append this benchmark's summary-table rows to this file (JSON lines)")
    args = ap.parse_args()
    if args.quick:
        args.lines, args.pyflink_lines, args.rounds = 10_000, 30, 1
    args.pyflink_lines = min(args.pyflink_lines, args.lines)
    only = set(filter(None, args.only.split(",")))
    main_py = sys.executable
    notes: list[str] = []

    runners = [
        Runner("bare loop, 1 process", "bare", 1, "main", main_py),
        Runner("bare loop, 2 processes", "bare", 2, "main", main_py),
        Runner("flott p=1", "flott", 1, "main", main_py),
        Runner("flott p=2", "flott", 2, "main", main_py),
        Runner("bare streaming loop, 1 process", "bare", 1, "main", main_py, streaming=True),
        Runner("flott p=1 STREAMING", "flott", 1, "main", main_py, streaming=True),
        Runner("flott p=2 STREAMING", "flott", 2, "main", main_py, streaming=True),
    ]
    if not args.no_peers and peer_available("bytewax"):
        runners += [
            Runner("Bytewax 0.21, 1 process", "bytewax", 1, "main", str(PEERS_PY)),
            Runner("Bytewax 0.21, 2 processes", "bytewax", 2, "main", str(PEERS_PY)),
        ]
    elif not args.no_peers:
        notes.append("Bytewax rows skipped: bench/.venv-peers has no bytewax (run bench/setup).")
    pyflink_left_out = args.quick and not only
    if pyflink_left_out and not args.no_peers:
        notes.append(
            "--quick: PyFlink rows left out (starting its MiniCluster takes 20-60 s here; "
            "`--quick --only pyflink` runs them)."
        )
    elif not args.no_peers and peer_available("pyflink") and java_home():
        if args.pyflink_lines != args.lines:
            runners.append(Runner("flott p=2 (PyFlink's input)", "flott", 2, "small", main_py))
        pf = "main" if args.pyflink_lines == args.lines else "small"
        runners += [
            Runner("PyFlink 2.3 p=1", "pyflink", 1, pf, str(PEERS_PY)),
        ]
        if not args.quick:
            runners.append(Runner("PyFlink 2.3 p=2", "pyflink", 2, pf, str(PEERS_PY)))
    elif not args.no_peers:
        notes.append(
            "PyFlink rows skipped: bench/.venv-peers has no pyflink or there is no Java (run bench/setup)."
        )
    if args.no_peers:
        notes.append("Peers skipped (--no-peers).")
    if only:
        runners = [
            r
            for r in runners
            if r.system in only
            or ("streaming" in only and r.streaming)
            or r.name.startswith(("bare loop, 1", "bare streaming"))
        ]

    tmp = Path(tempfile.mkdtemp(prefix="flott-bench-wc-"))
    try:
        inputs = {"main": tmp / "input.txt", "small": tmp / "input-small.txt"}
        generate(inputs["main"], args.lines)
        generate(inputs["small"], args.pyflink_lines)
        expected = {}
        for k, path in inputs.items():
            expected[k] = {w: v[1] for w, v in bare_count(str(path)).items()}
        started = time.monotonic()
        for i in range(args.rounds):
            for r in runners:
                log(f"word count round {i + 1}/{args.rounds}: {r.name}")
                run_once(r, inputs, expected, tmp, i)
        total = time.monotonic() - started
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    words = {"main": args.lines * 10, "small": args.pyflink_lines * 10}
    base = runners[0]
    base_streaming = next(r for r in runners if r.system == "bare" and r.streaming)
    flott2 = next((r for r in runners if r.name == "flott p=2"), None)
    flott2_small = next((r for r in runners if r.input == "small" and r.system == "flott"), None)

    def per_round(a: Runner, b: Runner | None) -> list[float]:
        """Throughput of a over throughput of b, round by round (rounds where both ran)."""
        if b is None:
            return []
        out = []
        for ta, tb in zip(a.times, b.times, strict=False):
            if ta and tb:
                out.append((words[a.input] / ta) / (words[b.input] / tb))
        return out

    rows = []
    for r in runners:
        ok = [t for t in r.times if t is not None]
        if not ok:
            rows.append([r.name, f"{words[r.input]:,}", "failed", "", "", "", "", "", ""])
            continue
        med, lo, hi = summary(ok)
        ref = flott2_small if r.system == "pyflink" and flott2_small else flott2
        vs_flott = (
            "" if r.system in ("flott",) or ref is None or r.streaming else ratio_cell(per_round(ref, r))
        )
        rows.append(
            [
                r.name,
                f"{words[r.input]:,}",
                f"{med:.2f}",
                f"{lo:.2f} / {hi:.2f}",
                fmt_num(words[r.input] / med),
                ratio_cell(per_round(r, base_streaming if r.streaming else base)),
                vs_flott,
                f"{summary(r.cpu)[0]:.2f}",
                f"{len(ok)}/{len(r.times)}",
            ]
        )
    print(
        f"\n### Python UDF throughput: word count ({args.rounds} interleaved round(s), "
        f"{total:.0f} s in all)\n"
    )
    print(
        markdown_table(
            [
                "runner",
                "input words",
                "median s",
                "min / max s",
                "words/s (median)",
                "vs bare 1 process (STREAMING rows: vs the bare streaming loop)",
                "flott p=2 vs this",
                "CPU s, all processes (median)",
                "runs ok",
            ],
            rows,
        )
    )
    print(
        "\nTimes cover the job from start to end (flott and PyFlink: `env.execute()`, which "
        "starts the embedded cluster's workers; Bytewax: spawning its worker processes until they "
        "exit; bare: reading, counting, merging). STREAMING rows write every running count and are "
        "compared with the bare streaming loop, which writes the same lines. CPU s: user + system "
        "time of every process of the run (getrusage of children), the figure load does not skew. "
        "Ratios are throughput ratios taken within a round "
        "(median, and range over rounds). PyFlink rows use a smaller input; "
        "'flott p=2 vs this' compares them with flott p=2 on that same input."
    )
    for r in runners:
        if r.failures:
            notes.append(f"{r.name}: {len(r.failures)} failed run(s): {r.failures[0][:300]}")
    if notes:
        print()
        for n in notes:
            print(f"- {n}")

    mem_rows = []
    for r in runners:
        for role, peaks in r.rss.items():
            med, lo, hi = summary(peaks)
            mem_rows.append(
                [r.name, role, r.procs[role], f"{med / 2**20:.0f}", f"{lo / 2**20:.0f} / {hi / 2**20:.0f}"]
            )
    print("\n### Memory: peak RSS during the word count (psutil, sampled every 100 ms)\n")
    print(
        markdown_table(
            [
                "runner",
                "process",
                "processes",
                "peak RSS MiB (median over runs, largest process)",
                "min / max",
            ],
            mem_rows,
        )
    )
    if args.summary:
        summary_rows(args.summary, runners, words, per_round, notes, pyflink_left_out, args.no_peers)
    bad = [r.name for r in runners if r.system in ("bare", "flott") and r.failures]
    return 1 if bad else 0


def summary_rows(
    path: str,
    runners: list[Runner],
    words: dict[str, int],
    per_round: Callable[[Runner, Runner | None], list[float]],
    notes: list[str],
    pyflink_left_out: bool,
    no_peers: bool,
) -> None:
    """This benchmark's rows of the summary table (bench/summary.py)."""

    def find(name: str) -> Runner | None:
        return next((r for r in runners if r.name == name and any(r.times)), None)

    def rate(r: Runner) -> str:
        return f"{fmt_num(words[r.input] / summary([t for t in r.times if t])[0])} words/s"

    def fastest(system: str) -> Runner | None:
        """The peer's configuration with the highest median throughput (flott is compared with its best)."""
        ran = [r for r in runners if r.system == system and any(r.times)]
        return min(ran, key=lambda r: summary([t for t in r.times if t])[0], default=None)

    def why(system: str) -> str:
        if no_peers:
            return "--no-peers"
        if system == "pyflink" and pyflink_left_out:
            return "left out by --quick (PyFlink's start takes 20-60 s)"
        failed = [r for r in runners if r.system == system and r.failures]
        if failed:
            return f"{failed[0].name}: failed"
        return "not run (bench/.venv-peers missing, or --only)"

    flott2 = find("flott p=2")
    bare = find("bare loop, 1 process")
    lines = f"{words['main'] // 10:,} lines"
    flott2s = find("flott p=2 STREAMING")
    bares = find("bare streaming loop, 1 process")
    measure = f"word count STREAMING ({lines}), flott p=2 vs bare streaming loop 1 process (throughput)"
    if flott2s and bares:
        add_summary(
            path,
            "wc_streaming_bare",
            measure,
            f"{rate(flott2s)} (p=2)",
            f"{rate(bares)} (bare streaming loop)",
            per_round(flott2s, bares),
        )
    else:
        add_summary(path, "wc_streaming_bare", measure, note="flott p=2 STREAMING or the bare loop failed")
    if flott2 and bare:
        add_summary(
            path,
            "wc_bare",
            f"word count ({lines}), flott p=2 vs bare loop 1 process (throughput)",
            f"{rate(flott2)} (p=2)",
            f"{rate(bare)} (bare loop)",
            per_round(flott2, bare),
        )
    else:
        add_summary(
            path,
            "wc_bare",
            f"word count ({lines}), flott p=2 vs bare loop 1 process (throughput)",
            note="flott p=2 or the bare loop failed",
        )
    bw = fastest("bytewax")
    measure = f"word count ({lines}), flott p=2 vs Bytewax 0.21 (its faster configuration)"
    if flott2 and bw:
        add_summary(
            path,
            "wc_bytewax",
            measure,
            f"{rate(flott2)} (p=2)",
            f"{rate(bw)} ({bw.name})",
            per_round(flott2, bw),
        )
    else:
        add_summary(path, "wc_bytewax", measure, note=why("bytewax"))
    pf = fastest("pyflink")
    small = next((r for r in runners if r.input == "small" and r.system == "flott" and any(r.times)), None)
    ref = small if small else flott2
    measure = "word count, flott p=2 vs PyFlink 2.3 (its faster parallelism; PyFlink's smaller input)"
    if pf and ref:
        measure = (
            f"word count ({words[pf.input] // 10:,} lines, PyFlink's input), flott p=2 vs PyFlink 2.3 "
            "(its faster parallelism)"
        )
        add_summary(
            path, "wc_pyflink", measure, f"{rate(ref)} (p=2)", f"{rate(pf)} ({pf.name})", per_round(ref, pf)
        )
    else:
        add_summary(path, "wc_pyflink", measure, note=why("pyflink"))

    def total_rss(r: Runner) -> tuple[float, str]:
        """Sum over a run's processes of their peak (each role: its largest process times its count)."""
        parts = [(role, summary(peaks)[0], r.procs[role]) for role, peaks in r.rss.items()]
        text = " + ".join(
            f"{n} × {fmt_mib(v)} {role.split(' (')[0]}" if n > 1 else f"{fmt_mib(v)} {role.split(' (')[0]}"
            for role, v, n in parts
        )
        return sum(v * n for _, v, n in parts), text

    bw2 = find("Bytewax 0.21, 2 processes")
    measure = "peak RSS during the word count, all processes: flott p=2 vs Bytewax 2 processes"
    if flott2 and flott2.rss:
        mine, text = total_rss(flott2)
        if bw2 and bw2.rss:
            theirs, their_text = total_rss(bw2)
            add_summary(path, "rss_wc", measure, text, their_text, [mine / theirs])
        else:
            add_summary(path, "rss_wc", measure, text, note=why("bytewax"))
    else:
        add_summary(path, "rss_wc", measure, note="flott p=2 failed")


if __name__ == "__main__":
    sys.exit(main())
