"""Control plane at scale: many small jobs through one flott session cluster.

    python bench/many_jobs.py [--jobs 1000] [--concurrency 8] [--quick]

One JobManager + one TaskManager (4 slots) on loopback, started as ``flott jobmanager start`` and
``flott taskmanager start``. A small bounded job (10 numbers → a Python ``map`` → a ``filter``
that keeps none → ``print()``, parallelism 1) is built once with PyFlink's API and submitted
``--jobs`` times over REST (``POST /jobs``, each with its own job id), ``--concurrency``
submissions in flight at a time, as a scheduler or a CI system would. Measured:

- submission throughput: jobs accepted per second (``POST /jobs`` answered), and jobs finished
  per second (all of them FINISHED, from the first submission);
- what the cluster keeps per job: the JobManager's RSS before the first and after the last job,
  divided by the number of jobs (the archived job, its execution graph and its metrics);
- ``GET /jobs/overview`` with every job archived: requests/s and p99 latency (wrk, 2 threads,
  16 connections), and that it lists every job.

No Flink rows: Flink's REST API runs only jar jobs (``/jars/:id/run``), and a PyFlink job goes
through ``flink run -py``, a JVM start of 5-30 s per job here, so 1,000 PyFlink jobs would take
hours. ``--quick``: 50 jobs, 1 s of wrk. ``--summary FILE`` appends this benchmark's rows of
bench/run's summary table to FILE.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import fmt_mib, fmt_num, free_port, get_json, log, markdown_table, stop, wait_until

from flott.client.rest_cluster_client import RestClusterClient
from flott.configuration import Configuration
from flott.runtime.jobgraph import JobGraph, new_id

SLOTS = 4


def small_job_graph() -> JobGraph:
    """The job every submission runs, built as a PyFlink user builds it."""
    from flott.common import Types
    from flott.datastream import StreamExecutionEnvironment

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_collection(list(range(10)), type_info=Types.INT()).map(
        lambda x: x + 1, output_type=Types.INT()
    ).filter(lambda x: x < 0).print()
    return env.get_job_graph("small job")


def start_cluster(workdir: Path) -> tuple[list[subprocess.Popen[bytes]], int]:
    exe = Path(sys.executable).parent / "flott"
    cli = [str(exe)] if exe.exists() else [sys.executable, "-m", "flott.cli.main"]
    rest, rpc = free_port(), free_port()
    conf = ["-D", f"rest.port={rest}", "-D", "rest.address=127.0.0.1"]
    conf += ["-D", f"jobmanager.rpc.port={rpc}", "-D", "jobmanager.rpc.address=127.0.0.1"]
    conf += ["-D", f"taskmanager.numberOfTaskSlots={SLOTS}"]
    procs = [
        subprocess.Popen(
            [*cli, role, "start", *(["-m", f"127.0.0.1:{rpc}"] if role == "taskmanager" else []), *conf],
            stdout=subprocess.DEVNULL,
            stderr=open(workdir / f"{role}.log", "ab"),
            start_new_session=True,
        )
        for role in ("jobmanager", "taskmanager")
    ]
    return procs, rest


async def submit_all(
    address: str, graph: JobGraph, jobs: int, concurrency: int
) -> tuple[float, float, list[str]]:
    """Submit ``jobs`` copies of ``graph``; (seconds until all accepted, until all finished, ids)."""
    ids = [new_id() for _ in range(jobs)]
    pending = asyncio.Queue[str]()
    for job_id in ids:
        pending.put_nowait(job_id)
    async with RestClusterClient(Configuration(), address) as client:
        start = time.perf_counter()

        async def submitter() -> None:
            while not pending.empty():
                job_id = pending.get_nowait()
                await client.submit_job(msgspec.structs.replace(graph, job_id=job_id))

        await asyncio.gather(*(submitter() for _ in range(concurrency)))
        accepted = time.perf_counter() - start
        while True:
            listed = await client.list_jobs()
            done = sum(j.status == "FINISHED" for j in listed)
            failed = [j for j in listed if j.status in ("FAILED", "CANCELED")]
            if failed:
                raise RuntimeError(f"{len(failed)} jobs did not finish, e.g. {failed[0]}")
            if done >= jobs:
                break
            await asyncio.sleep(0.05)
        return accepted, time.perf_counter() - start, ids


def wrk_overview(url: str, duration: float) -> tuple[float, float]:
    """requests/s and p99 latency in ms of GET ``url`` (wrk -t2 -c16 --latency)."""
    out = subprocess.run(
        ["wrk", "-t2", "-c16", f"-d{max(1, round(duration))}s", "--latency", url],
        capture_output=True,
        text=True,
        timeout=duration + 60,
        check=True,
    ).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    value, unit = re.search(r"99%\s+([\d.]+)(us|ms|s)", out).groups()  # type: ignore[union-attr]
    return rps, float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-peers", action="store_true", help="accepted for bench/run: no peers here")
    args = parser.parse_args()
    jobs = 50 if args.quick else args.jobs
    wrk_s = 1.0 if args.quick else 10.0
    if not 1 <= jobs <= 10_000 or not 1 <= args.concurrency <= 64:
        parser.error("--jobs must be 1..10000 and --concurrency 1..64 (the benchmark is bounded)")

    workdir = Path(tempfile.mkdtemp(prefix="flott-many-jobs-"))
    procs, rest = start_cluster(workdir)
    address = f"127.0.0.1:{rest}"
    try:
        wait_until(
            lambda: get_json(f"http://{address}/overview")["taskmanagers"] >= 1,  # type: ignore[index]
            60,
            "a TaskManager registered",
            interval=0.05,
        )
        graph = small_job_graph()
        # One job first, so the RSS baseline includes what the first job loads (user code, caches).
        asyncio.run(submit_all(address, graph, 1, 1))
        jm = psutil.Process(procs[0].pid)
        rss_before = jm.memory_info().rss
        log(f"many_jobs: submitting {jobs} jobs, {args.concurrency} at a time")
        accepted_s, finished_s, ids = asyncio.run(submit_all(address, graph, jobs, args.concurrency))
        rss_after = jm.memory_info().rss
        overview = get_json(f"http://{address}/jobs/overview")
        listed = {j["jid"] for j in overview["jobs"]}  # type: ignore[index]
        missing = [i for i in ids if i not in listed]
        if missing:
            raise RuntimeError(f"/jobs/overview lists {len(missing)} of the submitted jobs as unknown")
        have_wrk = shutil.which("wrk") is not None
        rps, p99 = wrk_overview(f"http://{address}/jobs/overview", wrk_s) if have_wrk else (float("nan"),) * 2
    finally:
        for proc in reversed(procs):
            stop(proc, group=True)
        shutil.rmtree(workdir, ignore_errors=True)

    per_job = (rss_after - rss_before) / jobs
    rows = [
        ["jobs submitted (one session cluster, 1 JobManager + 1 TaskManager of 4 slots)", fmt_num(jobs)],
        [f"submissions accepted per second ({args.concurrency} in flight)", fmt_num(jobs / accepted_s, 1)],
        ["jobs finished per second (first submission → all FINISHED)", fmt_num(jobs / finished_s, 1)],
        ["JobManager RSS before → after", f"{fmt_mib(rss_before)} → {fmt_mib(rss_after)}"],
        ["JobManager memory per archived job", f"{per_job / 1024:.1f} KiB"],
        [f"GET /jobs/overview with {jobs + 1} jobs archived: requests/s (wrk -c16)", fmt_num(rps)],
        ["GET /jobs/overview: p99 latency", f"{p99:.2f} ms"],
    ]
    print(f"### Many jobs on one session cluster (`bench/many_jobs.py{' --quick' if args.quick else ''}`)\n")
    print(markdown_table(["measure", "flott"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
