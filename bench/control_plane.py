"""Control plane: a flott session cluster beside a Flink 2.3 standalone session cluster.

    python bench/control_plane.py [--quick [--with-flink]] [--rounds 3] [--duration 10] [--no-peers]
                                  [--summary FILE]

Both clusters are 1 JobManager + 1 TaskManager (1 slot) on loopback, each
started as two foreground processes at the same moment (flott: ``flott
jobmanager start`` + ``flott taskmanager start -m``; Flink: the distribution's
``bin/jobmanager.sh start-foreground`` + ``bin/taskmanager.sh start-foreground``
from the apache-flink wheel in bench/.venv-peers, with its configuration in a
temporary conf dir: ports, tmp dirs, small memory sizes). Measured, interleaved
flott / Flink, ``--rounds`` times:

- cluster start → REST ready (``GET /overview`` answers) and → first TaskManager registered;
- CLI wall time: ``run -d`` of a small streaming job, ``list -m``, ``cancel -m`` (Flink:
  ``bin/flink``; flott: ``flott``);
- submit → job RUNNING and → all tasks RUNNING, from each cluster's own timestamps
  (``/jobs/:id`` ``timestamps``, ``/jobs/:id/vertices/:vid/subtasktimes``), counted from the
  job's first timestamp (received by the Dispatcher), and from the CLI's start;
- cancel → CANCELED (``timestamps`` CANCELLING → CANCELED);
- savepoint of small state (the stateful job below, running): ``POST /jobs/:id/savepoints``
  with a target directory under the run's tmp dir, then ``GET /jobs/:id/savepoints/:triggerid``
  every 20 ms; the time from the POST's answer (the trigger id) to the first poll that answers
  COMPLETED, and the savepoint's end-to-end duration in the cluster's own statistics
  (``/jobs/:id/checkpoints``); one savepoint per round, interleaved, of the same job;
- ``GET /overview`` and ``GET /jobs/overview`` with wrk (2 threads, 16 connections), with the
  stateful job running, beside a bare aiohttp server that returns flott's very JSON bytes (the ceiling of
  the HTTP stack flott is built on);
- peak RSS of each cluster process over the whole run (psutil).

The jobs (the same for both, PyFlink's API; parallelism 1): for the start/list/cancel cycle,
a FileSource watching an empty directory (unbounded, idle) → a Python ``filter`` →
``print()``. For the savepoints and the REST rows, a stateful one: the same source watching a
directory that holds a seed file of 1,000 lines → ``map`` to (first word, 1) → ``key_by`` →
``reduce`` (a running count: 100 keys of state) → ``filter`` → ``print()``, submitted once per
cluster after the rounds; the savepoints start once a vertex reports reading the 1,000 records
(``read-records`` in ``/jobs/:id``). Small state: the savepoint rows are about the savepoint
protocol's own cost (bench/checkpoint_bench.py writes 1 GB).
Without bench/.venv-peers (or with ``--no-peers``) only flott and the bare server run.

``--quick``: 1 round, 1 s per wrk run, and flott only: Flink's cluster start alone takes
25-35 s on this 2-core machine and each of its CLI commands 5-30 s (the tables say Flink was
left out). ``--quick --with-flink`` runs Flink's whole cycle too (about 2 minutes).
``--summary FILE`` appends this benchmark's rows of bench/run's summary table to FILE.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from benchlib import (  # noqa: E402
    PEERS_PY,
    RssSampler,
    add_summary,
    flink_home,
    fmt_mib,
    fmt_ms,
    fmt_num,
    free_port,
    get_json,
    http_get,
    java_home,
    log,
    markdown_table,
    peer_available,
    ratio_cell,
    request_json,
    stop,
    summary,
    wait_until,
)

JOB = textwrap.dedent("""
    import sys
    from {api}.common import Duration, Types, WatermarkStrategy
    from {api}.datastream import StreamExecutionEnvironment
    from {api}.datastream.connectors.file_system import FileSource, StreamFormat

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    source = (
        FileSource.for_record_stream_format(StreamFormat.text_line_format(), {watch!r})
        .monitor_continuously(Duration.of_seconds(1))
        .build()
    )
    lines = env.from_source(source, WatermarkStrategy.no_watermarks(), "watched files")
    lines.filter(lambda line: line.startswith("!")).print()
    env.execute("control-plane-bench")
""")

# The job of the savepoint rows and of the REST rows (one job running): the same source reading
# a seed file of SEED_LINES lines once, then a keyed running count (SEED_KEYS keys of state).
STATEFUL_JOB = textwrap.dedent("""
    from {api}.common import Duration, Types, WatermarkStrategy
    from {api}.datastream import StreamExecutionEnvironment
    from {api}.datastream.connectors.file_system import FileSource, StreamFormat

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    source = (
        FileSource.for_record_stream_format(StreamFormat.text_line_format(), {watch!r})
        .monitor_continuously(Duration.of_seconds(1))
        .build()
    )
    lines = env.from_source(source, WatermarkStrategy.no_watermarks(), "watched files")
    counts = (
        lines.map(
            lambda line: (line.split(" ")[0], 1), output_type=Types.TUPLE([Types.STRING(), Types.INT()])
        )
        .key_by(lambda pair: pair[0], key_type=Types.STRING())
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
    )
    counts.filter(lambda pair: pair[0].startswith("!")).print()
    env.execute("control-plane-bench-stateful")
""")
SEED_LINES, SEED_KEYS = 1000, 100

BARE_SERVER = textwrap.dedent("""
    import sys
    from aiohttp import web
    bodies = {path: open(file, "rb").read() for path, file in zip(sys.argv[2::2], sys.argv[3::2])}
    app = web.Application()
    for path, body in bodies.items():
        async def handler(request, body=body):
            return web.Response(body=body, content_type="application/json")
        app.router.add_get(path, handler)
    web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), access_log=None, print=None)
""")

_UNIT = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def run_wrk(url: str, duration: float, connections: int = 16) -> tuple[float, float, float]:
    """(requests/s, p50 ms, p99 ms) as wrk reports them."""
    out = subprocess.run(
        ["wrk", "-t2", f"-c{connections}", f"-d{max(1, round(duration))}s", "--latency", url],
        capture_output=True,
        text=True,
        check=True,
        timeout=duration + 60,
    ).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]

    def pct(p: str) -> float:
        m = re.search(rf"\s{p}%\s+([\d.]+)(us|ms|s)", out)
        assert m, out
        return float(m.group(1)) * _UNIT[m.group(2)]

    return rps, pct("50"), pct("99")


def timed(cmd: list[str], env: dict[str, str] | None = None, timeout: float = 180) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])}... exited {proc.returncode}: {proc.stderr[-800:]}")
    return elapsed, proc.stdout + proc.stderr


class _ProcessEnded(RuntimeError):
    """A cluster process ended before its REST endpoint answered."""


class Cluster:
    name = ""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.rest_port = 0
        self.procs: list[subprocess.Popen] = []  # type: ignore[type-arg]
        self.samplers: list[RssSampler] = []
        self.peaks: dict[str, int] = {}
        self.watch = workdir / "watched"
        self.watch.mkdir(parents=True, exist_ok=True)
        self.job_file = workdir / "job.py"
        self.stateful_watch = workdir / "watched-stateful"
        self.stateful_watch.mkdir(exist_ok=True)
        (self.stateful_watch / "seed.txt").write_text(
            "".join(f"key-{i % SEED_KEYS} {i}\n" for i in range(SEED_LINES))
        )
        self.stateful_job_file = workdir / "stateful_job.py"
        self.savepoint_sizes: list[int] = []

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.rest_port}"

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.rest_port}"

    # to implement
    def launch(self) -> None:
        raise NotImplementedError

    def cli(self, *args: str, job_file: Path | None = None) -> list[str]:
        raise NotImplementedError

    def cli_env(self) -> dict[str, str] | None:
        return None

    def labels(self) -> list[Callable[[object, int], str | None]]:
        raise NotImplementedError

    # common
    def start(self) -> tuple[float, float]:
        """Launch; seconds to REST ready and to the first TaskManager registered. A launch whose
        process ends before REST answers (a free port taken by another program between choosing
        and binding it) is tried once more; the second time its log is the error."""
        for attempt in range(2):
            t0 = time.perf_counter()
            self.launch()
            try:
                rest = wait_until(self._rest_up, 180, f"{self.name} REST", 0.01)
                break
            except _ProcessEnded:
                for proc in self.procs:
                    stop(proc)
                if attempt:
                    raise
        for proc, label in zip(self.procs, self.labels(), strict=True):
            sampler = RssSampler(proc.pid, label, interval=0.25)
            sampler.__enter__()
            self.samplers.append(sampler)
        tm = wait_until(
            lambda: get_json(self.base + "/overview", timeout=2)["taskmanagers"] >= 1,  # type: ignore[index]
            180,
            f"a {self.name} TaskManager",
            0.01,
        )
        return rest - t0, tm - t0

    def _rest_up(self) -> object:
        ended = [p for p in self.procs if p.poll() is not None]
        if ended:
            logs = "".join(f.read_text(errors="replace")[-2000:] for f in sorted(self.workdir.glob("*.log")))
            raise _ProcessEnded(f"{self.name}: a cluster process exited with {ended[0].returncode}:\n{logs}")
        return http_get(self.base + "/overview", timeout=2)

    def stop(self) -> None:
        for sampler in self.samplers:
            sampler.__exit__()
            for label, rss in sampler.by_label().items():
                self.peaks[label] = max(self.peaks.get(label, 0), max(rss))
        self.samplers = []
        for proc in reversed(self.procs):
            stop(proc, timeout=30, group=True)
        self.procs = []

    def submit(self, job_file: Path | None = None) -> tuple[str, dict[str, float]]:
        """``run -d`` (of JOB, or ``job_file``); returns the job id and the timings (s)."""
        wall_start = time.time()
        wall, out = timed(self.cli("run", "-d", job_file=job_file), self.cli_env(), timeout=300)
        m = re.search(r"JobID ([0-9a-f]{32})", out)
        if not m:
            raise RuntimeError(f"no JobID in the output of {self.name} run: {out[-500:]}")
        job = m.group(1)

        def all_running() -> bool:
            d = get_json(f"{self.base}/jobs/{job}", timeout=5)
            return d["state"] == "RUNNING" and all(  # type: ignore[index]
                v["tasks"].get("RUNNING", 0) == v["parallelism"]
                for v in d["vertices"]  # type: ignore[index]
            )

        wait_until(all_running, 180, f"{self.name} job {job} RUNNING", 0.02)
        d = get_json(f"{self.base}/jobs/{job}")
        ts = d["timestamps"]  # type: ignore[index]
        first = min(v for k, v in ts.items() if k in ("INITIALIZING", "CREATED") and v > 0)
        running = ts["RUNNING"]
        tasks_running = 0
        for v in d["vertices"]:  # type: ignore[index]
            st = get_json(f"{self.base}/jobs/{job}/vertices/{v['id']}/subtasktimes")
            for s in st["subtasks"]:  # type: ignore[index]
                tasks_running = max(tasks_running, s["timestamps"]["RUNNING"])
        return job, {
            "CLI run -d wall time": wall,
            "submit → job RUNNING": (running - first) / 1000,
            "submit → all tasks RUNNING": (tasks_running - first) / 1000,
            "CLI start → all tasks RUNNING": tasks_running / 1000 - wall_start,
        }

    def cancel(self, job: str) -> dict[str, float]:
        t0 = time.perf_counter()
        wall, _ = timed(self.cli("cancel", job), self.cli_env())
        wait_until(
            lambda: get_json(f"{self.base}/jobs/{job}")["state"] == "CANCELED",  # type: ignore[index]
            120,
            f"{self.name} job {job} CANCELED",
            0.01,
        )
        observed = time.perf_counter() - t0
        ts = get_json(f"{self.base}/jobs/{job}")["timestamps"]  # type: ignore[index]
        return {
            "CLI cancel wall time": wall,
            "cancel → CANCELED": (ts["CANCELED"] - ts["CANCELLING"]) / 1000,
            "CLI start → CANCELED seen": observed,
        }

    def list_wall(self) -> float:
        return timed(self.cli("list"), self.cli_env())[0]

    def wait_records_in(self, job: str, records: int, timeout: float = 60) -> bool:
        """Whether a vertex of ``job`` read ``records`` records within ``timeout`` s (REST metrics)."""

        def read() -> bool:
            d = get_json(f"{self.base}/jobs/{job}", timeout=5)
            return any(
                v.get("metrics", {}).get("read-records", 0) >= records
                for v in d["vertices"]  # type: ignore[index]
            )

        try:
            wait_until(read, timeout, f"{self.name} job {job} reading {records} records", 0.2)
        except TimeoutError:
            return False
        return True

    def savepoint(self, job: str) -> dict[str, float]:
        """A savepoint of the running job: from the trigger's answer to COMPLETED seen by polling."""
        target = self.workdir / "savepoints"
        answer = request_json(
            "POST",
            f"{self.base}/jobs/{job}/savepoints",
            {"target-directory": str(target), "cancel-job": False},
        )
        t0 = time.perf_counter()
        trigger = answer["request-id"]  # type: ignore[index]
        while True:
            status = get_json(f"{self.base}/jobs/{job}/savepoints/{trigger}", timeout=10)
            if status["status"]["id"] == "COMPLETED":  # type: ignore[index]
                break
            if time.perf_counter() - t0 > 120:
                raise TimeoutError(f"{self.name}: savepoint {trigger} not COMPLETED after 120 s")
            time.sleep(0.02)
        seen = time.perf_counter() - t0
        operation = status.get("operation") or {}  # type: ignore[attr-defined]
        if operation.get("failure-cause"):
            cause = json.dumps(operation["failure-cause"])[:500]
            raise RuntimeError(f"{self.name}: savepoint failed: {cause}")
        stats = get_json(f"{self.base}/jobs/{job}/checkpoints")
        latest = (stats.get("latest") or {}).get("savepoint") or {}  # type: ignore[attr-defined]
        out = {"savepoint trigger → COMPLETED seen": seen}
        if latest.get("end_to_end_duration") is not None:
            out["savepoint trigger → COMPLETED (cluster's statistics)"] = latest["end_to_end_duration"] / 1000
        self.savepoint_sizes.append(int(latest.get("state_size") or 0))
        return out


class FlottCluster(Cluster):
    name = "flott"

    def __init__(self, workdir: Path) -> None:
        super().__init__(workdir)
        self.job_file.write_text(JOB.format(api="flott", watch=str(self.watch)))
        self.stateful_job_file.write_text(STATEFUL_JOB.format(api="flott", watch=str(self.stateful_watch)))
        # The console script of the interpreter running this (a venv's bin/flott), not whatever
        # `flott` is first on PATH: a pyenv shim there adds ~0.1 s to every CLI call.
        exe = Path(sys.executable).parent / "flott"
        self._cli = [str(exe)] if exe.exists() else [sys.executable, "-m", "flott.cli.main"]

    def launch(self) -> None:
        self.rest_port, rpc = free_port(), free_port()
        conf = ["-D", f"rest.port={self.rest_port}", "-D", "rest.address=127.0.0.1"]
        conf += ["-D", f"jobmanager.rpc.port={rpc}", "-D", "jobmanager.rpc.address=127.0.0.1"]
        conf += ["-D", "taskmanager.numberOfTaskSlots=1"]
        jm = subprocess.Popen(
            [*self._cli, "jobmanager", "start", *conf],
            stdout=subprocess.DEVNULL,
            stderr=open(self.workdir / "jobmanager.log", "ab"),
            start_new_session=True,
        )
        tm = subprocess.Popen(
            [*self._cli, "taskmanager", "start", "-m", f"127.0.0.1:{rpc}", *conf],
            stdout=subprocess.DEVNULL,
            stderr=open(self.workdir / "taskmanager.log", "ab"),
            start_new_session=True,
        )
        self.procs = [jm, tm]

    def cli(self, *args: str, job_file: Path | None = None) -> list[str]:
        cmd, rest = args[0], list(args[1:])
        if cmd == "run":
            return [*self._cli, "run", "-m", self.address, *rest, str(job_file or self.job_file)]
        return [*self._cli, cmd, "-m", self.address, *rest]

    def labels(self) -> list[Callable[[object, int], str | None]]:
        return [
            lambda p, d: "JobManager" if d == 0 else "JobManager child",
            lambda p, d: "TaskManager" if d == 0 else "TaskManager child (task process)",
        ]


class FlinkCluster(Cluster):
    name = "Flink 2.3"

    def __init__(self, workdir: Path) -> None:
        super().__init__(workdir)
        self.home = flink_home()
        self.job_file.write_text(JOB.format(api="pyflink", watch=str(self.watch)))
        self.stateful_job_file.write_text(STATEFUL_JOB.format(api="pyflink", watch=str(self.stateful_watch)))
        self.conf_dir = workdir / "conf"
        self.conf_dir.mkdir(exist_ok=True)
        for f in (self.home / "conf").iterdir():
            if f.name != "config.yaml":
                shutil.copy(f, self.conf_dir / f.name)
        for d in ("log", "pid", "tmp"):
            (workdir / d).mkdir(exist_ok=True)
        self.env = dict(
            os.environ,
            FLINK_CONF_DIR=str(self.conf_dir),
            FLINK_LOG_DIR=str(workdir / "log"),
            FLINK_PID_DIR=str(workdir / "pid"),
            FLINK_HOME=str(self.home),
            PYFLINK_CLIENT_EXECUTABLE=str(PEERS_PY),
            PATH=f"{PEERS_PY.parent}:{os.environ.get('PATH', '')}",
        )
        if java_home():
            self.env["JAVA_HOME"] = java_home() or ""

    def write_conf(self) -> None:
        original = (self.home / "conf" / "config.yaml").read_text()
        m = re.search(r"^\s*all:\s*(--add-exports.*)$", original, re.M)
        java_opts = m.group(1).strip() if m else ""
        tmp = self.workdir / "tmp"
        conf = {
            "env.java.opts.all": java_opts,
            "jobmanager.bind-host": "127.0.0.1",
            "jobmanager.rpc.address": "127.0.0.1",
            "jobmanager.rpc.port": free_port(),
            "jobmanager.memory.process.size": "1024m",
            "jobmanager.execution.failover-strategy": "region",
            "taskmanager.bind-host": "127.0.0.1",
            "taskmanager.host": "127.0.0.1",
            "taskmanager.rpc.port": free_port(),
            "taskmanager.data.port": free_port(),
            "taskmanager.numberOfTaskSlots": 1,
            "taskmanager.memory.process.size": "1280m",
            "blob.server.port": free_port(),
            "rest.address": "127.0.0.1",
            "rest.bind-address": "127.0.0.1",
            "rest.port": self.rest_port,
            "parallelism.default": 1,
            "io.tmp.dirs": str(tmp),
            "web.tmpdir": str(tmp / "web"),
            "python.executable": str(PEERS_PY),
            "python.client.executable": str(PEERS_PY),
        }
        (self.conf_dir / "config.yaml").write_text(
            "".join(f"{k}: {json.dumps(v) if isinstance(v, str) else v}\n" for k, v in conf.items())
        )

    def launch(self) -> None:
        self.rest_port = free_port()
        self.write_conf()
        log_dir = self.workdir / "log"
        jm = subprocess.Popen(
            [str(self.home / "bin" / "jobmanager.sh"), "start-foreground"],
            env=self.env,
            stdout=open(log_dir / "jobmanager.out", "ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        tm = subprocess.Popen(
            [str(self.home / "bin" / "taskmanager.sh"), "start-foreground"],
            env=self.env,
            stdout=open(log_dir / "taskmanager.out", "ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.procs = [jm, tm]

    def cli(self, *args: str, job_file: Path | None = None) -> list[str]:
        cmd, rest = args[0], list(args[1:])
        flink = str(self.home / "bin" / "flink")
        if cmd == "run":
            return [flink, "run", "-m", self.address, *rest, "-py", str(job_file or self.job_file)]
        return [flink, cmd, "-m", self.address, *rest]

    def cli_env(self) -> dict[str, str] | None:
        return self.env

    def labels(self) -> list[Callable[[object, int], str | None]]:
        def jm(p, d):  # type: ignore[no-untyped-def]
            return "JobManager JVM" if "java" in p.name() else None

        def tm(p, d):  # type: ignore[no-untyped-def]
            if "java" in p.name():
                return "TaskManager JVM"
            return "TaskManager child (Python UDF worker)" if d > 0 else None

        return [jm, tm]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=float, default=10.0, help="seconds per wrk run")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="1 round, 1 s per wrk run, flott only")
    ap.add_argument("--with-flink", action="store_true", help="with --quick: Flink's whole cycle too")
    ap.add_argument("--full-cycle", action="store_true", help=argparse.SUPPRESS)  # the old --with-flink
    ap.add_argument("--no-peers", action="store_true", help="flott and the bare server only")
    ap.add_argument("--summary", help="append this benchmark's summary-table rows to this file (JSON lines)")
    args = ap.parse_args()
    if args.quick:
        args.duration, args.rounds = 1.0, 1
    have_wrk = shutil.which("wrk") is not None
    notes = []
    if not have_wrk:
        notes.append("REST throughput rows skipped: wrk is not installed (bench/setup installs it).")
    flink_why = ""  # why there are no Flink rows
    if args.no_peers:
        flink_why = "--no-peers"
    elif not (peer_available("pyflink") and java_home() is not None):
        flink_why = "bench/.venv-peers has no apache-flink or there is no Java (bench/setup)"
    elif args.quick and not (args.with_flink or args.full_cycle):
        flink_why = "left out by --quick (its cluster start takes 25-35 s here, each CLI command 5-30 s)"
    with_flink = not flink_why
    if flink_why and not args.no_peers:
        notes.append(f"Flink 2.3 rows not measured: {flink_why}; `--quick --with-flink` runs them.")
    notes.append(
        "Failover: bench/failover_bench.py; checkpoints and savepoints of large state: "
        "bench/checkpoint_bench.py."
    )

    tmp = Path(tempfile.mkdtemp(prefix="flott-bench-cp-"))
    clusters: list[Cluster] = [FlottCluster(tmp / "flott")]
    if with_flink:
        clusters.append(FlinkCluster(tmp / "flink"))
    metrics: dict[tuple[str, str], dict[int, float]] = {}  # (measure, system) -> round -> seconds
    wrk: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    targets: list[tuple[str, str]] = []
    bare = None

    def record(c: Cluster, i: int, values: dict[str, float]) -> None:
        for k, v in values.items():
            metrics.setdefault((k, c.name), {})[i] = v

    started = time.monotonic()
    try:
        # cluster start, then a submit / list / savepoint / cancel cycle, round by round, flott then Flink
        for i in range(args.rounds):
            for c in clusters:
                log(f"control plane round {i + 1}/{args.rounds}: {c.name}")
                rest, tm = c.start()
                record(c, i, {"cluster start → REST ready": rest, "cluster start → first TaskManager": tm})
                job, t = c.submit()
                record(c, i, t)
                record(c, i, {"CLI list wall time": c.list_wall()})
                record(c, i, c.cancel(job))
                if i < args.rounds - 1:
                    c.stop()
        # One stateful job running on each: savepoints (one per round, interleaved), REST throughput
        running = {}
        for c in clusters:
            log(f"{c.name}: the stateful job (savepoints, REST throughput)")
            running[c.name], _ = c.submit(c.stateful_job_file)
            if not c.wait_records_in(running[c.name], SEED_LINES):
                notes.append(
                    f"{c.name}: the stateful job had not reported reading its {SEED_LINES} seed records "
                    "after 60 s; its savepoints may hold less state."
                )
        for i in range(args.rounds):
            for c in clusters:
                log(f"savepoint round {i + 1}/{args.rounds}: {c.name}")
                try:
                    record(c, i, c.savepoint(running[c.name]))
                except Exception as e:  # the row says so; the benchmark goes on
                    notes.append(f"{c.name} round {i + 1}: savepoint: {e}")
                    log(notes[-1])
        if have_wrk:
            paths = ["/overview", "/jobs/overview"]
            flott = clusters[0]
            files = []
            for p in paths:
                f = tmp / (p.strip("/").replace("/", "_") + ".json")
                f.write_bytes(http_get(flott.base + p))
                files += [p, str(f)]
            bare_port = free_port()
            bare = subprocess.Popen(
                [sys.executable, "-c", BARE_SERVER, str(bare_port), *files],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            wait_until(lambda: http_get(f"http://127.0.0.1:{bare_port}/overview"), 30, "the bare server")
            targets = [(c.name, c.base) for c in clusters] + [
                ("bare aiohttp (flott's JSON)", f"http://127.0.0.1:{bare_port}")
            ]
            for i in range(args.rounds):
                for p in paths:
                    for name, base in targets:
                        log(f"wrk round {i + 1}/{args.rounds}: {name} GET {p}")
                        wrk.setdefault((p, name), []).append(run_wrk(base + p, args.duration))
    finally:
        stop(bare)
        for c in clusters:
            c.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    total = time.monotonic() - started

    names = [c.name for c in clusters]
    flink = names[1] if len(names) > 1 else None

    def time_ratios(metric: str) -> list[float]:
        """flott / Flink, round by round (rounds where both were measured)."""
        a, b = metrics.get((metric, "flott"), {}), metrics.get((metric, flink or ""), {})
        return [a[i] / b[i] for i in a if i in b and b[i] > 0]

    print(
        f"\n### Control plane: flott vs Flink 2.3 session cluster (1 JobManager + 1 TaskManager, "
        f"loopback; {args.rounds} interleaved round(s), {total:.0f} s in all)\n"
    )
    rows = []
    order = [
        "cluster start → REST ready",
        "cluster start → first TaskManager",
        "CLI list wall time",
        "CLI run -d wall time",
        "submit → job RUNNING",
        "submit → all tasks RUNNING",
        "CLI start → all tasks RUNNING",
        "savepoint trigger → COMPLETED seen",
        "savepoint trigger → COMPLETED (cluster's statistics)",
        "CLI cancel wall time",
        "cancel → CANCELED",
        "CLI start → CANCELED seen",
    ]
    for metric in order:
        for name in names:
            vals = list(metrics.get((metric, name), {}).values())
            if not vals:
                rows.append([metric, name, "not measured (see the notes)", "", ""])
                continue
            med, lo, hi = summary(vals)
            ratio = ratio_cell(time_ratios(metric)) if flink and name == "flott" else ""
            if not flink:
                ratio = "Flink 2.3 not measured"
            rows.append([metric, name, f"{med * 1000:,.0f}", f"{lo * 1000:,.0f} / {hi * 1000:,.0f}", ratio])
    print(markdown_table(["measure", "system", "median ms", "min / max ms", "flott / Flink (time)"], rows))
    print(
        "\nsubmit → … is counted from the job's first timestamp on the cluster (received by the "
        "Dispatcher) to the job's RUNNING timestamp and to the last subtask's RUNNING timestamp "
        "(`/jobs/:id/vertices/:vid/subtasktimes`); 'CLI start → …' from launching the CLI. "
        "CLI times include the interpreter's / JVM's start. Savepoint: `POST /jobs/:id/savepoints` "
        "(a target directory, the job keeps running), from its answer to the first "
        "`GET /jobs/:id/savepoints/:triggerid` (polled every 20 ms) answering COMPLETED; and the "
        "savepoint's end-to-end duration in `/jobs/:id/checkpoints`."
    )
    sizes = [f"{c.name} {max(c.savepoint_sizes):,} B" for c in clusters if c.savepoint_sizes]
    if sizes:
        notes.insert(0, "Savepoint state size (the clusters' statistics): " + ", ".join(sizes) + ".")
    if wrk:
        rows = []
        for p in ("/overview", "/jobs/overview"):
            for name, _ in targets:
                rs = wrk[(p, name)]
                rps, lo, hi = summary([r[0] for r in rs])
                ratio = ""
                if name == "flott" and flink:
                    ratio = ratio_cell([a[0] / b[0] for a, b in zip(rs, wrk[(p, flink)], strict=False)])
                if name == "flott" and not flink:
                    ratio = "Flink 2.3 not measured"
                rows.append(
                    [
                        f"GET {p}",
                        name,
                        fmt_num(rps),
                        f"{fmt_num(lo)} / {fmt_num(hi)}",
                        f"{summary([r[2] for r in rs])[0]:.2f}",
                        ratio,
                    ]
                )
        print(
            f"\n### REST throughput: wrk -t2 -c16 -d{args.duration:g}s, one job running, "
            f"{args.rounds} interleaved round(s)\n"
        )
        print(
            markdown_table(
                ["request", "server", "requests/s (median)", "min / max", "p99 ms (median)", "flott / Flink"],
                rows,
            )
        )
    mem = []
    for c in clusters:
        for label, rss in c.peaks.items():
            mem.append([c.name, label, f"{rss / 2**20:.0f}"])
    print("\n### Memory: peak RSS of the session clusters' processes during this benchmark\n")
    print(markdown_table(["system", "process", "peak RSS MiB"], mem))
    if notes:
        print()
        for n in notes:
            print(f"- {n}")
    if args.summary:
        summary_rows(args.summary, clusters, metrics, time_ratios, wrk, flink, flink_why, have_wrk)
    return 0


SUMMARY_TIMES = [  # (summary key, measure here, its label in the summary table)
    ("cp_start_rest", "cluster start → REST ready", "cluster start → REST ready"),
    ("cp_start_tm", "cluster start → first TaskManager", "cluster start → first TaskManager registered"),
    ("cp_cli_list", "CLI list wall time", "CLI `list` wall time"),
    ("cp_cli_cancel", "CLI cancel wall time", "CLI `cancel` wall time"),
    ("cp_submit_running", "submit → job RUNNING", "submit → job RUNNING (cluster's timestamps)"),
    ("cp_submit_tasks", "submit → all tasks RUNNING", "submit → all tasks RUNNING (cluster's timestamps)"),
    (
        "cp_savepoint",
        "savepoint trigger → COMPLETED seen",
        "savepoint of small state, trigger → COMPLETED (polled every 20 ms)",
    ),
]


def summary_rows(
    path: str,
    clusters: list[Cluster],
    metrics: dict[tuple[str, str], dict[int, float]],
    time_ratios: Callable[[str], list[float]],
    wrk: dict[tuple[str, str], list[tuple[float, float, float]]],
    flink: str | None,
    flink_why: str,
    have_wrk: bool,
) -> None:
    """This benchmark's rows of the summary table (bench/summary.py)."""

    def med(metric: str, name: str | None) -> str:
        vals = list(metrics.get((metric, name or ""), {}).values())
        return fmt_ms(summary(vals)[0]) if vals else ""

    why = f"Flink 2.3: {flink_why}" if flink_why else "not measured in every round (see the notes above)"
    for key, metric, label in SUMMARY_TIMES:
        ratios = time_ratios(metric) if flink else []
        add_summary(
            path,
            key,
            f"control plane: {label}, vs Flink 2.3",
            med(metric, "flott"),
            med(metric, flink),
            ratios,
            "" if ratios else why,
        )
    for p, key in (("/overview", "rest_overview"), ("/jobs/overview", "rest_jobs_overview")):
        measure = f"REST GET {p} requests/s, vs Flink 2.3 (control_plane.py, wrk -c16)"
        mine = wrk.get((p, "flott"), [])
        theirs = wrk.get((p, flink or ""), [])
        ratios = [a[0] / b[0] for a, b in zip(mine, theirs, strict=False)]
        add_summary(
            path,
            key,
            measure,
            f"{fmt_num(summary([r[0] for r in mine])[0])} req/s" if mine else "",
            f"{fmt_num(summary([r[0] for r in theirs])[0])} req/s" if theirs else "",
            ratios,
            "" if ratios else (why if have_wrk else "wrk is not installed"),
        )
    measure = "peak RSS, session cluster: JobManager + TaskManager processes, vs Flink 2.3"

    def total(c: Cluster) -> tuple[int, str]:
        return sum(c.peaks.values()), " + ".join(f"{fmt_mib(v)} {k}" for k, v in c.peaks.items())

    mine_rss, mine_text = total(clusters[0])
    if flink and clusters[1].peaks:
        theirs_rss, theirs_text = total(clusters[1])
        add_summary(path, "rss_cluster", measure, mine_text, theirs_text, [mine_rss / theirs_rss])
    else:
        add_summary(path, "rss_cluster", measure, mine_text, note=why)


if __name__ == "__main__":
    sys.exit(main())
