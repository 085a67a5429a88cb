"""JobManager failover time with ZooKeeper HA: SIGKILL the leader, time until the job runs again.

    python bench/failover_bench.py [--quick] [--rounds 3] [--session-timeout 3000] [--no-peers]
                                   [--summary FILE]

flott: a private ZooKeeper (Debian's package, tickTime 200 ms), two ``flott jobmanager
start`` and two ``flott taskmanager start`` processes with ``high-availability.type:
zookeeper``. The job is ``tests/highavailability/counting_job.py`` (numbers -> map, 1 ms per
record -> keyBy -> running count -> map -> transactional FileSink; parallelism 2, a checkpoint
every 200 ms); each task attempt writes the wall-clock time of its first record to a probe
directory. Once the job has completed two checkpoints the leader gets SIGKILL, and from that
instant the bench measures (polling every 10 ms):

- **new leader**: the standby's address is published in ZooKeeper (the dead leader's session
  has to expire first: this is the ZooKeeper session timeout, rounded up to the server's tick);
- **job RUNNING**: ``GET /jobs/:id`` on the new leader says RUNNING (job recovered and scheduling);
- **all tasks RUNNING**: every vertex RUNNING (TaskExecutors re-registered, tasks deployed and
  restored from the latest checkpoint);
- **first record in / out**: the first record of a new task attempt at the map after the source
  / just before the sink (the probe files);
- **new output committed**: the new leader completed its first checkpoint, on which the sink
  commits what the new attempt wrote.

With ``bench/.venv-peers`` (bench/setup) and Java, the same job on Flink 2.3 (PyFlink, the import
prefix swapped) on a standalone cluster with ZooKeeper HA (two JobManagers, one TaskManager with
two slots) is measured the same way, unless ``--no-peers`` or ``--quick`` (one flott round only,
about 15 s; one Flink round, three JVMs and a ``flink run -py``, took 2.7 min on the 2-core machine).
Rounds are interleaved: flott, Flink, flott, Flink, ... ``--summary FILE`` appends this benchmark's
row of bench/run's summary table to FILE (JSON lines, see bench/summary.py).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

from benchlib import (  # noqa: E402
    PEERS_PY,
    add_summary,
    flink_home,
    free_port,
    java_home,
    markdown_table,
    peer_available,
    ratio_cell,
)

from tests.highavailability.ha_cluster import (  # noqa: E402
    JOB_SCRIPT,
    HaCluster,
    all_tasks_running,
    checkpoint_stats,
    http,
)
from tests.highavailability.zookeeper_server import ZooKeeperServer, find_classpath  # noqa: E402

METRICS = [
    "new leader",
    "job RUNNING",
    "all tasks RUNNING",
    "first record in",
    "first record out",
    "new output committed",
]
POLL_S = 0.01


def probe_times(probe: Path, kind: str, after: float) -> float | None:
    times = []
    for p in probe.glob(f"first-{kind}-*"):
        if p.name.endswith(".tmp"):
            continue
        try:
            t = float(p.read_text())
        except (OSError, ValueError):
            continue
        if t > after:
            times.append(t)
    return min(times) - after if times else None


def measure(
    is_leader_elected: Any,
    job_running: Any,
    tasks_running: Any,
    committed: Any,
    probe: Path,
    kill_wall: float,
    timeout: float = 120.0,
) -> dict[str, float]:
    """Poll every condition from the kill on; seconds since the kill for each metric."""
    t0 = time.monotonic()
    found: dict[str, float] = {}
    checks = {
        "new leader": is_leader_elected,
        "job RUNNING": job_running,
        "all tasks RUNNING": tasks_running,
        "new output committed": committed,
    }
    while len(found) < len(METRICS) and time.monotonic() - t0 < timeout:
        now = time.monotonic() - t0
        for name, check in checks.items():
            if name not in found:
                try:
                    if check():
                        found[name] = now
                except Exception:
                    pass
        for name, kind in (("first record in", "in"), ("first record out", "out")):
            if name not in found:
                t = probe_times(probe, kind, kill_wall)
                if t is not None:
                    found[name] = t
        time.sleep(POLL_S)
    missing = [m for m in METRICS if m not in found]
    if missing:
        raise RuntimeError(f"not observed within {timeout}s: {missing}")
    return found


# -- flott -------------------------------------------------------------------------------------


def flott_round(zk: ZooKeeperServer, workdir: Path, session_timeout_ms: int) -> dict[str, float]:
    c = HaCluster(zk.hosts, workdir / "cluster", f"/bench-{uuid.uuid4().hex[:8]}", session_timeout_ms)
    try:
        for _ in range(2):
            c.start_jobmanager()
        for _ in range(2):
            c.start_taskmanager()
        leader = c.wait_ready(2)
        probe = workdir / "probe"
        probe.mkdir(parents=True)
        run = c.submit(
            leader, str(workdir / "out"), (workdir / "chk").as_uri(), "10000000", "1", "2", str(probe)
        )
        if run.returncode != 0:
            raise RuntimeError(f"submission failed: {run.stderr[-800:]}")
        job_id = c.job_id_of(run)
        deadline = time.monotonic() + 120
        while checkpoint_stats(leader, job_id).get("counts", {}).get("completed", 0) < 2:
            if time.monotonic() > deadline:
                raise RuntimeError(f"no checkpoints\n{c.logs()}")
            time.sleep(0.05)
        standby = next(jm for jm in c.jobmanagers if jm is not leader)
        kill_wall = time.time()
        c.kill(leader)
        result = measure(
            lambda: c.leader() is standby,
            lambda: c.job_state(standby, job_id) == "RUNNING",
            lambda: all_tasks_running(c, standby, job_id),
            lambda: checkpoint_stats(standby, job_id)["counts"]["completed"] >= 1,
            probe,
            kill_wall,
        )
        http("PATCH", f"{standby.url}/jobs/{job_id}?mode=cancel")
        return result
    finally:
        c.close()


# -- Flink 2.3 ---------------------------------------------------------------------------------


def pyflink_job(target: Path) -> None:
    src = JOB_SCRIPT.read_text()
    src = src.replace(
        "from flott.datastream.connectors.file_sink import",
        "from pyflink.datastream.connectors.file_system import",
    )
    src = src.replace("flott.", "pyflink.")
    replacements = {  # PyFlink 2.3 takes a Configuration object; Flink has no batch-size key
        '    env.configure({"taskmanager.network.batch-size": "50"})\n': "",
        "    env.get_checkpoint_config().set_checkpoint_storage_dir(checkpoints)\n": (
            "    from pyflink.common import Configuration\n"
            "    conf = Configuration()\n"
            '    conf.set_string("execution.checkpointing.dir", checkpoints)\n'
            '    conf.set_string("restart-strategy.type", "fixed-delay")\n'
            '    conf.set_string("restart-strategy.fixed-delay.attempts", "50")\n'
            '    conf.set_string("restart-strategy.fixed-delay.delay", "200 ms")\n'
            "    env.configure(conf)\n"
        ),
        "    env.set_restart_strategy(RestartStrategies.fixed_delay_restart(50, 200))\n": "",
        "from pyflink.common.restart_strategy import RestartStrategies\n": "",
    }
    for old, new in replacements.items():
        if old not in src:
            raise RuntimeError(f"{JOB_SCRIPT.name} changed: cannot derive the PyFlink job ({old.strip()})")
        src = src.replace(old, new)
    target.write_text(src)


class FlinkHa:
    """Two JobManagers and one TaskManager (2 slots) of the apache-flink wheel, ZooKeeper HA."""

    def __init__(self, zk: ZooKeeperServer, workdir: Path, session_timeout_ms: int) -> None:
        self.zk = zk
        self.workdir = workdir
        self.home = flink_home()
        self.session_timeout_ms = session_timeout_ms
        self.cluster_id = f"/bench-{uuid.uuid4().hex[:8]}"
        self.procs: list[subprocess.Popen[bytes]] = []
        self.rest_ports: list[int] = []
        self.env = dict(
            os.environ,
            FLINK_HOME=str(self.home),
            PYFLINK_CLIENT_EXECUTABLE=str(PEERS_PY),
            PATH=f"{PEERS_PY.parent}:{os.environ.get('PATH', '')}",
        )
        if java_home():
            self.env["JAVA_HOME"] = java_home() or ""

    def _conf_dir(self, name: str, rest_port: int) -> Path:
        conf_dir = self.workdir / name / "conf"
        conf_dir.mkdir(parents=True)
        for f in (self.home / "conf").iterdir():
            if f.name != "config.yaml":
                shutil.copy(f, conf_dir / f.name)
        original = (self.home / "conf" / "config.yaml").read_text()
        m = re.search(r"^\s*all:\s*(--add-exports.*)$", original, re.M)
        tmp = self.workdir / name / "tmp"
        tmp.mkdir(parents=True)
        conf: dict[str, Any] = {
            "env.java.opts.all": m.group(1).strip() if m else "",
            "high-availability.type": "zookeeper",
            "high-availability.zookeeper.quorum": self.zk.hosts,
            "high-availability.zookeeper.path.root": "/flink",
            "high-availability.cluster-id": self.cluster_id,
            "high-availability.storageDir": (self.workdir / "ha").as_uri(),
            "high-availability.zookeeper.client.session-timeout": self.session_timeout_ms,
            "high-availability.zookeeper.client.connection-timeout": 5000,
            "heartbeat.interval": 500,
            "heartbeat.timeout": 5000,
            "jobmanager.bind-host": "127.0.0.1",
            "jobmanager.rpc.address": "127.0.0.1",
            "jobmanager.rpc.port": free_port(),
            "jobmanager.memory.process.size": "1024m",
            "taskmanager.bind-host": "127.0.0.1",
            "taskmanager.host": "127.0.0.1",
            "taskmanager.numberOfTaskSlots": 2,
            "taskmanager.memory.process.size": "1600m",
            "blob.server.port": free_port(),
            "rest.address": "127.0.0.1",
            "rest.bind-address": "127.0.0.1",
            "rest.port": rest_port,
            "io.tmp.dirs": str(tmp),
            "web.tmpdir": str(tmp / "web"),
            "python.executable": str(PEERS_PY),
            "python.client.executable": str(PEERS_PY),
            "restart-strategy.type": "fixed-delay",
        }
        (conf_dir / "config.yaml").write_text(
            "".join(f"{k}: {json.dumps(v) if isinstance(v, str) else v}\n" for k, v in conf.items())
        )
        return conf_dir

    def _start(self, name: str, script: str, rest_port: int) -> subprocess.Popen[bytes]:
        conf = self._conf_dir(name, rest_port)
        log_dir = self.workdir / name / "log"
        log_dir.mkdir()
        env = dict(self.env, FLINK_CONF_DIR=str(conf), FLINK_LOG_DIR=str(log_dir))
        proc = subprocess.Popen(
            [str(self.home / "bin" / script), "start-foreground"],
            env=env,
            stdout=open(log_dir / "out", "ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.procs.append(proc)
        return proc

    def start(self) -> None:
        for i in range(2):
            port = free_port()
            self.rest_ports.append(port)
            self._start(f"jm{i}", "jobmanager.sh", port)
        self._start("tm", "taskmanager.sh", free_port())

    def leader_rest(self) -> int | None:
        from kazoo.client import KazooClient

        client = KazooClient(self.zk.hosts, timeout=4.0)
        client.start(10)
        try:
            data, _ = client.get(f"/flink{self.cluster_id}/leader/rest_server/connection_info")
        except Exception:
            return None
        finally:
            client.stop()
            client.close()
        for port in self.rest_ports:
            if f":{port}".encode() in data:
                return port
        return None

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, 15)
        for proc in self.procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.wait(5)


def flink_round(zk: ZooKeeperServer, workdir: Path, session_timeout_ms: int) -> dict[str, float]:
    cluster = FlinkHa(zk, workdir, session_timeout_ms)
    try:
        cluster.start()
        deadline = time.monotonic() + 180
        leader_port = None
        while time.monotonic() < deadline:
            leader_port = cluster.leader_rest()
            if leader_port is not None:
                try:
                    status, body = http("GET", f"http://127.0.0.1:{leader_port}/overview", timeout=2)
                    if status == 200 and body["taskmanagers"] >= 1:
                        break
                except OSError:
                    pass
            time.sleep(0.2)
        else:
            raise RuntimeError("the Flink cluster did not come up")
        assert leader_port is not None
        job_file = workdir / "job.py"
        pyflink_job(job_file)
        probe = workdir / "probe"
        probe.mkdir()
        run = subprocess.run(
            [str(cluster.home / "bin" / "flink"), "run", "-m", f"127.0.0.1:{leader_port}", "-d",
             "-py", str(job_file), str(workdir / "out"), (workdir / "chk").as_uri(), "10000000", "1", "2",
             str(probe)],
            capture_output=True, text=True, env=cluster.env, timeout=300,
        )  # fmt: skip
        m = re.search(r"JobID ([0-9a-f]{32})", run.stdout + run.stderr)
        if m is None:
            raise RuntimeError(f"Flink submission failed: {(run.stdout + run.stderr)[-1500:]}")
        job_id = m.group(1)
        base = f"http://127.0.0.1:{leader_port}"
        deadline = time.monotonic() + 180
        while True:
            status, body = http("GET", f"{base}/jobs/{job_id}/checkpoints")
            if status == 200 and body["counts"]["completed"] >= 2:
                break
            if time.monotonic() > deadline:
                raise RuntimeError("Flink: no checkpoints")
            time.sleep(0.05)
        standby_port = next(p for p in cluster.rest_ports if p != leader_port)
        standby = f"http://127.0.0.1:{standby_port}"
        victim = cluster.procs[cluster.rest_ports.index(leader_port)]
        kill_wall = time.time()
        os.killpg(victim.pid, 9)

        def job(path: str = "") -> Any:
            status, body = http("GET", f"{standby}/jobs/{job_id}{path}", timeout=2)
            return body if status == 200 else None

        def tasks_running() -> bool:
            d = job()
            return (
                bool(d) and d["state"] == "RUNNING" and all(v["status"] == "RUNNING" for v in d["vertices"])
            )

        def committed() -> bool:
            d = job("/checkpoints")
            if not d:
                return False
            latest = d["latest"]["completed"]
            return bool(latest) and latest["latest_ack_timestamp"] / 1000 > kill_wall

        result = measure(
            lambda: cluster.leader_rest() == standby_port,
            lambda: (job() or {}).get("state") == "RUNNING",
            tasks_running,
            committed,
            probe,
            kill_wall,
            timeout=180,
        )
        http("PATCH", f"{standby}/jobs/{job_id}?mode=cancel")
        return result
    finally:
        cluster.stop()


# -- main --------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--session-timeout", type=int, default=3000, help="ZooKeeper session timeout, ms")
    ap.add_argument("--no-peers", action="store_true", help="flott only")
    ap.add_argument("--quick", action="store_true", help="1 round, flott only (Flink skipped)")
    ap.add_argument("--summary", help="append this benchmark's summary-table row to this file (JSON lines)")
    args = ap.parse_args()
    if args.quick:
        args.rounds = 1
    classpath = find_classpath()
    if classpath is None:
        print("ZooKeeper is not installed (apt-get install zookeeper)", file=sys.stderr)
        return 1
    tmp = Path(tempfile.mkdtemp(prefix="flott-bench-failover-"))
    (tmp / "zk").mkdir()
    zk = ZooKeeperServer(tmp / "zk", classpath)
    zk.start()
    with_flink = not (args.no_peers or args.quick) and peer_available("pyflink") and java_home() is not None
    results: dict[str, list[dict[str, float]]] = {"flott": []}
    flink_rounds: dict[int, dict[str, float]] = {}  # round -> Flink's result, where it succeeded
    notes = []
    flink_why = ""
    if args.no_peers:
        flink_why = "--no-peers"
    elif args.quick:
        flink_why = "left out by --quick (one Flink round takes minutes)"
        notes.append("--quick: Flink 2.3 skipped (one Flink round takes minutes; run without --quick).")
    elif not with_flink:
        flink_why = "bench/.venv-peers has no apache-flink or there is no Java"
        notes.append("Flink rows skipped: bench/.venv-peers has no apache-flink or there is no Java.")
    if with_flink:
        results["Flink 2.3"] = []
    try:
        for r in range(args.rounds):  # interleaved: the ratios are taken within a round
            print(f"flott round {r + 1}/{args.rounds} ...", file=sys.stderr, flush=True)
            results["flott"].append(flott_round(zk, tmp / f"flott-{r}", args.session_timeout))
            if with_flink:
                print(f"Flink round {r + 1}/{args.rounds} ...", file=sys.stderr, flush=True)
                try:
                    flink_rounds[r] = flink_round(zk, tmp / f"flink-{r}", args.session_timeout)
                    results["Flink 2.3"].append(flink_rounds[r])
                except Exception as e:
                    notes.append(f"Flink round {r + 1} failed: {e}")
                    print(notes[-1], file=sys.stderr)
    finally:
        zk.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    print(
        f"### Failover after SIGKILL of the leading JobManager ({args.rounds} round(s)"
        f"{', flott and Flink interleaved' if with_flink else ''}; median [min-max] s)\n"
    )
    print(
        f"ZooKeeper session timeout {args.session_timeout} ms (server tickTime 200 ms); heartbeat interval "
        f"500 ms, timeout 5000 ms; checkpoint interval 200 ms; flott revokes a leader whose ZooKeeper "
        f"connection stays suspended for {args.session_timeout / 4:.0f} ms (a quarter of the session "
        "timeout). Seconds from the SIGKILL.\n"
    )
    headers = ["from SIGKILL of the leader to", *results]
    if flink_rounds:
        headers.append("flott / Flink (within a round)")
    rows = []
    for metric in METRICS:
        row = [metric]
        for runs in results.values():
            values = [r[metric] for r in runs]
            if values:
                row.append(f"{statistics.median(values):.2f} [{min(values):.2f}-{max(values):.2f}]")
            else:
                row.append("-")
        if flink_rounds:
            row.append(
                ratio_cell(
                    [results["flott"][r][metric] / x[metric] for r, x in flink_rounds.items() if x[metric]]
                )
            )
        rows.append(row)
    print(markdown_table(headers, rows))
    for note in notes:
        print(f"\n{note}")
    if args.summary:
        mine = [x["job RUNNING"] for x in results["flott"]]
        theirs = [x["job RUNNING"] for x in flink_rounds.values()]
        ratios = [results["flott"][r]["job RUNNING"] / x["job RUNNING"] for r, x in flink_rounds.items()]
        add_summary(
            args.summary,
            "fo_job_running",
            f"failover: SIGKILL of the leader → job RUNNING, vs Flink 2.3 (ZooKeeper session timeout "
            f"{args.session_timeout} ms)",
            f"{statistics.median(mine):.2f} s",
            f"{statistics.median(theirs):.2f} s" if theirs else "",
            ratios,
            "" if ratios else (f"Flink 2.3: {flink_why}" if flink_why else "every Flink round failed"),
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
