"""Control plane at scale: many small jobs through one session cluster, flott beside Flink 2.3.

    python bench/many_jobs.py [--archived 1000] [--running 100] [--concurrency 8] [--rounds 3]
                              [--duration 10] [--no-peers] [--quick [--with-flink]]

One JobManager + one TaskManager (``--running`` + 4 slots) on loopback for each system: flott's
``flott jobmanager start`` / ``flott taskmanager start``, Flink's ``bin/jobmanager.sh`` /
``bin/taskmanager.sh start-foreground`` from the apache-flink wheel in bench/.venv-peers (as
bench/control_plane.py starts them). Each cluster gets, in this order:

1. one small job (so that the memory baseline includes what the first job loads), then
   ``--archived`` small bounded jobs over REST, ``--concurrency`` submissions in flight, each
   with its own job id, as a scheduler or a CI system would send them; they all finish and stay
   in the cluster's archive;
2. ``--running`` unbounded jobs that stay RUNNING (a number sequence → a ``map`` that sleeps
   1 s per record → a ``filter`` that keeps none → ``print()``), one slot each.

The small job is 10 numbers → ``map`` (+1) → ``filter`` that keeps none → ``print()``,
parallelism 1. flott: built once with PyFlink's API (Python functions) and sent as
``POST /jobs``. Flink: PyFlink jobs go through ``flink run -py``, a JVM start of 5-30 s per job
here, so Flink gets the same pipeline as a Java program (compiled here with javac against
flink-dist, uploaded once with ``POST /jars/upload``, run with ``POST /jars/:id/run``): Flink's
own REST submission path; its job runs Java functions, flott's Python ones.

Measured per system:

- submission throughput: jobs accepted per second (the submitting request answered) and jobs
  finished per second (from the first submission until all FINISHED);
- memory per job: the JobManager's RSS (Flink: the JobManager JVM's) after the first job and
  after the last of the ``--archived``, divided by their number (a JVM's RSS also moves with its
  heap sizing and garbage collection, so Flink's figure is rough);
- ``GET /overview`` and ``GET /jobs/overview`` with ``--archived`` + 1 jobs archived and
  ``--running`` running: requests/s and p99 latency (wrk, 2 threads, 16 connections,
  ``--duration`` s), ``--rounds`` rounds interleaved flott / Flink, and that the overview lists
  every job.

``--quick``: 50 archived jobs, 4 running, 1 round of 1 s, flott only unless ``--with-flink``.
``--no-peers``: flott only (e.g. ``--archived 10000 --no-peers``: Flink's jar runs take much
longer per job than flott's submissions).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import aiohttp
import msgspec
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import (
    fmt_mib,
    fmt_num,
    free_port,
    get_json,
    java_home,
    log,
    markdown_table,
    peer_available,
    ratio_cell,
    stop,
    summary,
    wait_until,
)
from control_plane import FlinkCluster, run_wrk

from flott.client.rest_cluster_client import RestClusterClient
from flott.configuration import Configuration
from flott.runtime.jobgraph import JobGraph, new_id

SMALL_SLOTS = 4
PATHS = ("/overview", "/jobs/overview")
FLINK_SOURCE = "ManyJobsBench.java"

FLINK_JOB = textwrap.dedent("""
    import org.apache.flink.api.common.functions.FilterFunction;
    import org.apache.flink.api.common.functions.MapFunction;
    import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

    public class ManyJobsBench {
        public static void main(String[] args) throws Exception {
            boolean running = args.length > 0 && args[0].equals("running");
            StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
            env.setParallelism(1);
            env.fromSequence(0, running ? Long.MAX_VALUE : 9)
                .map(new Step(running))
                .filter(new KeepNone())
                .print();
            env.execute(running ? "running job" : "small job");
        }

        public static class Step implements MapFunction<Long, Long> {
            private final boolean sleep;

            public Step(boolean sleep) {
                this.sleep = sleep;
            }

            @Override
            public Long map(Long x) throws Exception {
                if (sleep) {
                    Thread.sleep(1000);
                }
                return x + 1;
            }
        }

        public static class KeepNone implements FilterFunction<Long> {
            @Override
            public boolean filter(Long x) {
                return x < 0;
            }
        }
    }
""")


def _sleepy_step(x: int) -> int:
    time.sleep(1.0)
    return x + 1


def job_graphs() -> tuple[JobGraph, JobGraph]:
    """(the small bounded job, the unbounded running one), built as a PyFlink user builds them."""
    from flott.common import Types, WatermarkStrategy
    from flott.datastream import StreamExecutionEnvironment
    from flott.datastream.connectors import NumberSequenceSource

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_collection(list(range(10)), type_info=Types.INT()).map(
        lambda x: x + 1, output_type=Types.INT()
    ).filter(lambda x: x < 0).print()
    small = env.get_job_graph("small job")
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    source = NumberSequenceSource(0, 2**62)
    env.from_source(source, WatermarkStrategy.no_watermarks(), "sequence").map(
        _sleepy_step, output_type=Types.LONG()
    ).filter(lambda x: x < 0).print()
    return small, env.get_job_graph("running job")


class System:
    """One cluster under test: start, submit small and running jobs, the serving process."""

    name = ""
    base = ""
    procs: list[subprocess.Popen[bytes]]

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        for proc in reversed(self.procs):
            stop(proc, timeout=30, group=True)

    def serving_process(self) -> psutil.Process:
        return psutil.Process(self.procs[0].pid)

    async def submit(self, jobs: int, concurrency: int, running: bool) -> float:
        """Submit ``jobs`` jobs, ``concurrency`` at a time; seconds until all accepted."""
        raise NotImplementedError

    def first_failure(self) -> str:
        """The root exception of a failed job, for the error message."""
        jobs = get_json(self.base + "/jobs/overview", timeout=60)["jobs"]  # type: ignore[index]
        failed = [j["jid"] for j in jobs if j["state"] == "FAILED"]
        if not failed:
            return "none FAILED"
        info = get_json(f"{self.base}/jobs/{failed[0]}/exceptions", timeout=60)
        return str(info.get("root-exception") or info)[:1500]  # type: ignore[attr-defined]

    def statuses(self) -> list[str]:
        return [j["state"] for j in get_json(self.base + "/jobs/overview", timeout=60)["jobs"]]  # type: ignore[index]


class Flott(System):
    name = "flott"

    def __init__(self, workdir: Path, slots: int, keep: int, tree: str = "") -> None:
        self.workdir, self.slots, self.keep = workdir, slots, keep
        self.small, self.running = job_graphs()
        self.procs = []
        self.env: dict[str, str] | None = None
        if tree:  # another checkout's flott (--flott-before)
            self.name = f"flott ({Path(tree).name})"
            self.env = {**os.environ, "PYTHONPATH": str(Path(tree).resolve())}

    def start(self) -> None:
        exe = Path(sys.executable).parent / "flott"
        cli = [str(exe)] if exe.exists() else [sys.executable, "-m", "flott.cli.main"]
        rest, rpc = free_port(), free_port()
        conf = ["-D", f"rest.port={rest}", "-D", "rest.address=127.0.0.1"]
        conf += ["-D", f"jobmanager.rpc.port={rpc}", "-D", "jobmanager.rpc.address=127.0.0.1"]
        conf += ["-D", f"taskmanager.numberOfTaskSlots={self.slots}"]
        conf += ["-D", f"jobstore.max-capacity={self.keep}"]  # flott keeps 1,000 by default
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.procs = [
            subprocess.Popen(
                [*cli, role, "start", *(["-m", f"127.0.0.1:{rpc}"] if role == "taskmanager" else []), *conf],
                stdout=subprocess.DEVNULL,
                stderr=open(self.workdir / f"{role}.log", "ab"),
                start_new_session=True,
                env=self.env,
            )
            for role in ("jobmanager", "taskmanager")
        ]
        self.base = f"http://127.0.0.1:{rest}"
        wait_until(
            lambda: get_json(self.base + "/overview")["taskmanagers"] >= 1,  # type: ignore[index]
            60,
            "a flott TaskManager registered",
            interval=0.05,
        )

    async def submit(self, jobs: int, concurrency: int, running: bool) -> float:
        graph = self.running if running else self.small
        pending = [new_id() for _ in range(jobs)]
        async with RestClusterClient(Configuration(), self.base.removeprefix("http://")) as client:
            start = time.perf_counter()

            async def submitter() -> None:
                while pending:
                    job_id = pending.pop()
                    await client.submit_job(msgspec.structs.replace(graph, job_id=job_id))

            await asyncio.gather(*(submitter() for _ in range(concurrency)))
            return time.perf_counter() - start


class Flink(System):
    name = "Flink 2.3"

    def __init__(self, workdir: Path, slots: int) -> None:
        self.cluster = FlinkCluster(workdir)
        self.workdir, self.slots = workdir, slots
        self.procs = []
        self.jar_id = ""

    def start(self) -> None:
        cluster = self.cluster
        original = cluster.write_conf

        def write_conf() -> None:
            original()
            path = cluster.conf_dir / "config.yaml"
            text = path.read_text().replace(
                "taskmanager.numberOfTaskSlots: 1", f"taskmanager.numberOfTaskSlots: {self.slots}"
            )
            memory = "taskmanager.memory.process.size: "
            text = text.replace(f'{memory}"1280m"', f'{memory}"2048m"')  # room for the slots' tasks
            # a shared, busy machine: a TaskManager late with its heartbeat fails every job on it
            text += "heartbeat.timeout: 300000\n"
            text += "taskmanager.slot.timeout: 300 s\n"  # a slot whose deployment is slow is not freed
            path.write_text(text)

        cluster.write_conf = write_conf  # type: ignore[method-assign]
        jar = self.build_jar()
        cluster.start()
        self.procs, self.base = cluster.procs, cluster.base
        with open(jar, "rb") as f:
            answer = asyncio.run(self._upload(f.read()))
        self.jar_id = str(answer["filename"]).rsplit("/", 1)[-1]

    def stop(self) -> None:
        self.cluster.stop()

    def build_jar(self) -> Path:
        src = self.workdir / "src"
        src.mkdir(parents=True, exist_ok=True)
        (src / FLINK_SOURCE).write_text(FLINK_JOB)
        dist = next((self.cluster.home / "lib").glob("flink-dist-*.jar"))
        classes = src / "classes"
        subprocess.run(
            ["javac", "--release", "11", "-d", str(classes), "-cp", str(dist), str(src / FLINK_SOURCE)],
            check=True,
            capture_output=True,
        )
        jar = self.workdir / "many-jobs-bench.jar"
        subprocess.run(["jar", "cf", str(jar), "-C", str(classes), "."], check=True, capture_output=True)
        return jar

    async def _upload(self, data: bytes) -> dict[str, object]:
        form = aiohttp.FormData()
        form.add_field("jarfile", data, filename="bench.jar", content_type="application/x-java-archive")
        async with aiohttp.ClientSession() as http:
            async with http.post(self.base + "/jars/upload", data=form) as r:
                r.raise_for_status()
                return dict(await r.json())

    def serving_process(self) -> psutil.Process:
        root = psutil.Process(self.procs[0].pid)
        java = [p for p in [root, *root.children(recursive=True)] if "java" in p.name()]
        return java[0] if java else root

    async def submit(self, jobs: int, concurrency: int, running: bool) -> float:
        left = [0] * jobs
        body = {"entryClass": "ManyJobsBench", "programArgsList": ["running" if running else "small"]}
        url = f"{self.base}/jars/{self.jar_id}/run"
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=300)) as http:
            start = time.perf_counter()

            async def submitter() -> None:
                while left:
                    left.pop()
                    async with http.post(url, json=body) as r:
                        if r.status != 200:
                            raise RuntimeError(f"Flink /jars/run answered {r.status}: {await r.text()}")
                        await r.read()

            await asyncio.gather(*(submitter() for _ in range(concurrency)))
            return time.perf_counter() - start


def wait_states(system: System, finished: int, running: int, timeout: float) -> float:
    """Wait until ``finished`` jobs are FINISHED and ``running`` RUNNING; perf_counter() of that."""

    def check() -> bool:
        states = system.statuses()
        bad = [s for s in states if s in ("FAILED", "CANCELED")]
        if bad:
            first = system.first_failure()
            raise RuntimeError(f"{system.name}: {len(bad)} jobs {bad[0]}, the first: {first}")
        return states.count("FINISHED") >= finished and states.count("RUNNING") >= running

    try:
        return wait_until(check, timeout, f"{system.name}: {finished} jobs FINISHED, {running} RUNNING", 0.1)
    except TimeoutError as e:
        states = system.statuses()
        counts = {s: states.count(s) for s in sorted(set(states))}
        raise TimeoutError(f"{e}; the cluster lists {counts}") from None


def fill(system: System, archived: int, running: int, concurrency: int) -> dict[str, float]:
    """Start ``system`` and give it its jobs; what was measured on the way."""
    log(f"many_jobs: starting {system.name}")
    system.start()
    asyncio.run(system.submit(1, 1, running=False))
    wait_states(system, 1, 0, 120)
    proc = system.serving_process()
    rss_before = proc.memory_info().rss
    log(f"many_jobs: {system.name}: submitting {archived} small jobs, {concurrency} at a time")
    t0 = time.perf_counter()
    accepted = asyncio.run(system.submit(archived, concurrency, running=False))
    finished = wait_states(system, archived + 1, 0, 60 + archived) - t0
    rss_after = proc.memory_info().rss
    log(f"many_jobs: {system.name}: submitting {running} running jobs")
    asyncio.run(system.submit(running, concurrency, running=True))
    wait_states(system, archived + 1, running, 300 + 3 * running)
    listed = len(system.statuses())
    if listed != archived + 1 + running:
        raise RuntimeError(f"{system.name}: /jobs/overview lists {listed} jobs, not {archived + 1 + running}")
    return {
        "accepted/s": archived / accepted,
        "finished/s": archived / finished,
        "rss before": rss_before,
        "rss after": rss_after,
        "per job": (rss_after - rss_before) / archived,
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--archived", "--jobs", dest="archived", type=int, default=1000)
    parser.add_argument("--running", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per wrk run")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--with-flink", action="store_true", help="with --quick: Flink 2.3 too")
    parser.add_argument("--no-peers", action="store_true", help="flott only")
    parser.add_argument(
        "--flott-before",
        metavar="TREE",
        help="also a cluster of the flott package under TREE (e.g. `git archive <commit> flott` unpacked)",
    )
    args = parser.parse_args()
    if args.quick:
        args.archived, args.running, args.rounds, args.duration = 50, 4, 1, 1.0
    if not 1 <= args.archived <= 10_000 or not 0 <= args.running <= 200 or not 1 <= args.concurrency <= 64:
        parser.error("--archived must be 1..10000, --running 0..200, --concurrency 1..64 (bounded)")
    if shutil.which("wrk") is None:
        parser.error("wrk is not installed (bench/setup installs it)")
    flink_why = ""
    if args.no_peers:
        flink_why = "--no-peers"
    elif args.quick and not args.with_flink:
        flink_why = "left out by --quick"
    elif not (peer_available("pyflink") and java_home() is not None and shutil.which("javac")):
        flink_why = "bench/.venv-peers has no apache-flink, or there is no JDK (java, javac)"
    slots = args.running + SMALL_SLOTS
    workdir = Path(tempfile.mkdtemp(prefix="flott-many-jobs-"))
    systems: list[System] = [Flott(workdir / "flott", slots, args.archived + 1)]
    if args.flott_before:
        systems.append(Flott(workdir / "flott-before", slots, args.archived + 1, args.flott_before))
    if not flink_why:
        systems.append(Flink(workdir / "flink", slots))
    filled: dict[str, dict[str, float]] = {}
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    load: list[float] = []
    try:
        for s in list(systems):
            try:
                filled[s.name] = fill(s, args.archived, args.running, args.concurrency)
            except Exception as e:
                if not isinstance(s, Flink):
                    raise
                s.stop()
                systems.remove(s)
                flink_why = f"its cluster did not run the jobs: {str(e)[:300]}"
        sizes = {p: len(get_json_bytes(systems[0].base + p)) for p in PATHS}
        for s in systems:  # a JVM's first seconds of serving are its JIT's, not its steady state
            for p in PATHS:
                run_wrk(s.base + p, 2)
        for i in range(args.rounds):
            for p in PATHS:
                for s in systems:
                    log(f"many_jobs: wrk round {i + 1}/{args.rounds}: {s.name} GET {p}")
                    rps, _, p99 = run_wrk(s.base + p, args.duration)
                    results.setdefault((p, s.name), []).append((rps, p99))
                    load.append(psutil.getloadavg()[0])
    except BaseException:
        for s in systems:
            s.stop()
        log(f"many_jobs: failed; the clusters' logs are under {workdir}")
        raise
    for s in systems:
        s.stop()
    shutil.rmtree(workdir, ignore_errors=True)

    flink = "Flink 2.3" if not flink_why else None
    cols = [s.name for s in systems]
    rows: list[list[str]] = []

    def row(label: str, cell: Callable[[dict[str, float]], str]) -> None:
        rows.append([label, *(cell(filled[c]) for c in cols)])

    row(f"jobs submitted and finished ({args.concurrency} in flight), then kept running", lambda f: "")
    rows[-1][1:] = [f"{fmt_num(args.archived + 1)} + {args.running}"] * len(cols)
    row("submissions accepted per second", lambda f: fmt_num(f["accepted/s"], 1))
    row("jobs finished per second (first submission → all FINISHED)", lambda f: fmt_num(f["finished/s"], 1))
    row(
        "JobManager RSS after the first job → after the last",
        lambda f: f"{fmt_mib(f['rss before'])} → {fmt_mib(f['rss after'])}",
    )
    row("JobManager memory per archived job", lambda f: f"{f['per job'] / 1024:.1f} KiB")
    for p in PATHS:
        for label, k in (("requests/s (median of rounds)", 0), ("p99 ms (median of rounds)", 1)):
            cells = []
            for c in cols:
                rs = [r[k] for r in results[(p, c)]]
                med, lo, hi = summary(rs)
                show = fmt_num if k == 0 else (lambda x: f"{x:.2f}")
                cells.append(f"{show(med)} ({show(lo)}–{show(hi)})")
            rows.append([f"GET {p} ({sizes[p]:,} bytes from flott): {label}", *cells])
        if flink:
            ratio_cells = [
                ratio_cell([a[0] / b[0] for a, b in zip(results[(p, c)], results[(p, flink)], strict=True)])
                if c != flink
                else ""
                for c in cols
            ]
            rows.append([f"GET {p}: requests/s / Flink's, per round", *ratio_cells])
    print(
        f"\n### Many jobs on one session cluster (`bench/many_jobs.py --archived {args.archived} "
        f"--running {args.running}`; wrk -t2 -c16 -d{args.duration:g}s, {args.rounds} round(s); "
        f"load average during wrk {min(load):.1f}–{max(load):.1f})\n"
    )
    print(markdown_table(["measure", *cols], rows))
    if flink_why:
        print(f"\n- Flink 2.3 not measured: {flink_why}.")
    return 0


def get_json_bytes(url: str) -> bytes:
    from benchlib import http_get

    return http_get(url, timeout=60)


if __name__ == "__main__":
    sys.exit(main())
