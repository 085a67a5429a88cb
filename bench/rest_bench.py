"""REST throughput: flott's REST endpoint beside Flink 2.3's and a bare aiohttp server.

    python bench/rest_bench.py [--quick] [--rounds 3] [--duration 10] [--no-peers]
    python bench/rest_bench.py --rest-only [--quick] [--rounds 3] [--duration 10] [--no-peers] [--asyncio]
                               [--summary FILE]

Without ``--rest-only`` this is bench/control_plane.py's old command line: it runs
that benchmark, whose REST rows (``GET /overview`` and ``GET /jobs/overview`` with
wrk, one job running, beside a bare aiohttp server returning flott's very JSON)
are among its tables.

``--rest-only`` measures just those rows, without the control plane's
start/submit/cancel rounds: it starts each session cluster once (flott; Flink 2.3
when bench/.venv-peers has it), submits control_plane.py's job, starts the bare
aiohttp server with flott's JSON bytes, then runs wrk (2 threads, 16 connections)
interleaved flott / Flink / bare, ``--rounds`` times per path. Besides
requests/s and p99 it reports the CPU time the serving process spent per request
(the JobManager process, the JobManager JVM, the bare server; psutil, user +
system over the wrk run divided by the requests served): on a shared machine that
figure moves much less with the neighbours' load than requests/s does.
flott's processes run on uvloop's event loop (flott/runtime/entrypoint/event_loop.py);
``--asyncio`` adds a second flott cluster on asyncio's standard loop
(``FLOTT_EVENT_LOOP=asyncio``), to show what uvloop gives.
``--quick``: 1 round, 1 s per wrk run, without Flink unless ``--with-flink``.
``--summary FILE`` appends the requests/s ratios flott / Flink to FILE (bench/run's summary
table, see bench/summary.py).

The bare server is started in a session of its own, as both clusters' processes
are: where the kernel groups CPU time by session (``sched_autogroup_enabled``,
the default on desktop kernels and on this machine), a server in the same
session as wrk is scheduled differently; measured here on a busy machine, the
same bare server answered 25-30 % more requests/s from wrk's session than from
its own.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from control_plane import main  # the default command line: the whole control-plane benchmark

PATHS = ("/overview", "/jobs/overview")
BARE = "bare aiohttp (flott's JSON)"


def _cpu_seconds(pids: list[int]) -> float:
    import psutil

    total = 0.0
    for pid in pids:
        try:
            t = psutil.Process(pid).cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += t.user + t.system
    return total


def _serving_pids(root: int, java: bool) -> list[int]:
    """The process that answers HTTP: the JVM under Flink's launcher script, else ``root`` itself."""
    import psutil

    if not java:
        return [root]
    proc = psutil.Process(root)
    return [p.pid for p in [proc, *proc.children(recursive=True)] if "java" in p.name()] or [root]


def rest_only(args: argparse.Namespace) -> int:
    from benchlib import (
        add_summary,
        fmt_num,
        free_port,
        http_get,
        java_home,
        log,
        markdown_table,
        peer_available,
        ratio_cell,
        stop,
        summary,
        wait_until,
    )
    from control_plane import BARE_SERVER, Cluster, FlinkCluster, FlottCluster, run_wrk

    if shutil.which("wrk") is None:
        print("REST throughput not measured: wrk is not installed (bench/setup installs it).")
        return 0
    notes: list[str] = []
    flink_why = ""  # why there are no Flink rows
    if args.no_peers:
        flink_why = "--no-peers"
    elif args.quick and not args.with_flink:
        flink_why = "left out by --quick (its cluster start and `run -d` take about a minute here)"
    elif not (peer_available("pyflink") and java_home() is not None):
        flink_why = "bench/.venv-peers has no apache-flink or there is no Java (bench/setup)"
    with_flink = not flink_why
    if flink_why and not args.no_peers:
        notes.append(f"Flink 2.3 rows not measured: {flink_why}.")
    tmp = Path(tempfile.mkdtemp(prefix="flott-bench-rest-"))
    clusters: list[Cluster] = [FlottCluster(tmp / "flott")]
    if args.asyncio:
        standard = FlottCluster(tmp / "flott-asyncio")
        standard.name = "flott, asyncio's loop"
        standard._cli = ["env", "FLOTT_EVENT_LOOP=asyncio", *standard._cli]
        clusters.append(standard)
    if with_flink:
        clusters.append(FlinkCluster(tmp / "flink"))
    bare = None
    results: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    started = time.monotonic()
    try:
        targets: list[tuple[str, str, list[int]]] = []
        for c in clusters:
            log(f"starting {c.name} and submitting the job")
            c.start()
            c.submit()
            java = isinstance(c, FlinkCluster)
            targets.append((c.name, c.base, _serving_pids(c.procs[0].pid, java=java)))
        files = []
        for p in PATHS:
            f = tmp / (p.strip("/").replace("/", "_") + ".json")
            f.write_bytes(http_get(clusters[0].base + p))
            files += [p, str(f)]
        bare_port = free_port()
        bare = subprocess.Popen(
            [sys.executable, "-c", BARE_SERVER, str(bare_port), *files],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # like the clusters' processes (see the module's docstring)
        )
        wait_until(lambda: http_get(f"http://127.0.0.1:{bare_port}/overview"), 30, "the bare server")
        targets.append((BARE, f"http://127.0.0.1:{bare_port}", [bare.pid]))
        for i in range(args.rounds):
            for p in PATHS:
                for name, base, pids in targets:
                    log(f"wrk round {i + 1}/{args.rounds}: {name} GET {p}")
                    cpu0, t0 = _cpu_seconds(pids), time.monotonic()
                    rps, _, p99 = run_wrk(base + p, args.duration)
                    cpu, wall = _cpu_seconds(pids) - cpu0, time.monotonic() - t0
                    # wrk's figure is over its own run; the CPU counter also saw its start and end
                    requests = rps * min(wall, max(1, round(args.duration)))
                    results.setdefault((p, name), []).append((rps, p99, cpu / requests * 1e6))
    finally:
        stop(bare)
        for c in clusters:
            c.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    flink = clusters[-1].name if with_flink else None
    rows = []
    for p in PATHS:
        for name, _, _ in targets:
            rs = results[(p, name)]
            rps, lo, hi = summary([r[0] for r in rs])
            ratios = []
            if flink and name != flink:
                ratios = [a[0] / b[0] for a, b in zip(rs, results[(p, flink)], strict=False)]
            rows.append(
                [
                    f"GET {p}",
                    name,
                    fmt_num(rps),
                    f"{fmt_num(lo)} / {fmt_num(hi)}",
                    f"{summary([r[1] for r in rs])[0]:.2f}",
                    f"{summary([r[2] for r in rs])[0]:.0f}",
                    ratio_cell(ratios) if ratios else "",
                ]
            )
    print(
        f"\n### REST throughput: wrk -t2 -c16 -d{args.duration:g}s, one job running, "
        f"{args.rounds} interleaved round(s), {time.monotonic() - started:.0f} s in all\n"
    )
    print(
        markdown_table(
            [
                "request",
                "server",
                "requests/s (median)",
                "min / max",
                "p99 ms (median)",
                "server CPU µs / request (median)",
                "requests/s vs Flink",
            ],
            rows,
        )
    )
    if notes:
        print()
        for n in notes:
            print(f"- {n}")
    for p, key in (("/overview", "rest_only_overview"), ("/jobs/overview", "rest_only_jobs_overview")):
        mine, theirs = results[(p, "flott")], results.get((p, flink or ""), [])
        add_summary(
            args.summary,
            key,
            f"REST GET {p} requests/s, vs Flink 2.3 (rest_bench.py --rest-only, wrk -c16)",
            f"{fmt_num(summary([r[0] for r in mine])[0])} req/s",
            f"{fmt_num(summary([r[0] for r in theirs])[0])} req/s" if theirs else "",
            [a[0] / b[0] for a, b in zip(mine, theirs, strict=False)],
            "" if theirs else f"Flink 2.3: {flink_why}",
        )
    return 0


if __name__ == "__main__":
    if "--rest-only" not in sys.argv:
        sys.exit(main())
    ap = argparse.ArgumentParser()
    ap.add_argument("--rest-only", action="store_true", required=True)
    ap.add_argument("--duration", type=float, default=10.0, help="seconds per wrk run")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--quick", action="store_true", help="1 round, 1 s per wrk run, flott and the bare server"
    )
    ap.add_argument("--with-flink", action="store_true", help="with --quick: Flink 2.3 too")
    ap.add_argument("--no-peers", action="store_true", help="flott and the bare server only")
    ap.add_argument(
        "--asyncio", action="store_true", help="also flott with its processes on asyncio's standard loop"
    )
    ap.add_argument("--summary", help="append the summary-table rows to this file (JSON lines)")
    parsed = ap.parse_args()
    if parsed.quick:
        parsed.duration, parsed.rounds = 1.0, 1
    sys.exit(rest_only(parsed))
