"""Chaos on a ZooKeeper-HA session cluster of real processes, for ``tests/chaos`` and ``bench/chaos.py``.

The cluster is :class:`tests.highavailability.ha_cluster.HaCluster` (two ``flott jobmanager start``,
two ``flott taskmanager start``) on a private :class:`ZooKeeperServer` (this run pauses and restarts
it, so it cannot share the suite's). While it runs:

* the **main job** (``tests/highavailability/counting_job.py``: numbers keyed by ``n % 7``, a running
  count per key into a transactional FileSink, a checkpoint every 200 ms, 1 ms per record) runs in
  rounds: when one round finishes its output is checked exactly (every key's updates ``1..count``
  each exactly once) and the next round is submitted;
* a **client** thread submits small jobs through ``POST /jobs`` (bounded ones that finish, unbounded
  ones it later cancels with ``PATCH /jobs/:id``) at whichever JobManager is alive, and keeps a
  ledger of what the cluster acknowledged;
* **faults** are injected one at a time, in an order drawn from a seeded ``random.Random`` (the seed
  is printed so a failure can be replayed; the client's timing is not replayable), each followed by
  a wait until the cluster is healthy again: a leader with every live TaskManager registered and the
  main job running with a checkpoint completed after the fault. The suite's mode injects the first
  five of :data:`FAULTS`; ``bench/chaos.py`` adds the rest: a TaskExecutor partitioned with a network
  namespace (:mod:`tests.chaos.network_namespace`), a full checkpoint disk (a tmpfs the run mounts),
  the leader paused until the standby leads, and the leader, a TaskExecutor and ZooKeeper at once.

:meth:`ChaosRun.finish` checks the end state (output exact, every acknowledged job finished, cancelled
or still running, the cluster answers a new job); :meth:`ChaosRun.close` stops every process this run
started by PID (paused ones are continued first) and unmounts what it mounted, also after a failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
import psutil

from tests.chaos.network_namespace import Namespace
from tests.highavailability.ha_cluster import (
    REPO,
    HaCluster,
    JobManager,
    all_tasks_running,
    checkpoint_stats,
    exactly_once_problems,
    http,
)
from tests.highavailability.zookeeper_server import ZooKeeperServer, find_classpath
from tests.rest.jobs import bounded_job, unbounded_job
from tests.security.conftest import submission_form

SESSION_TIMEOUT_MS = 3000
HEARTBEAT_TIMEOUT_MS = 4000
TERMINAL = ("FINISHED", "FAILED", "CANCELED")
SMALL_JOB_RESTARTS = {
    "restart-strategy.type": "fixed-delay",
    "restart-strategy.fixed-delay.attempts": "1000",
    "restart-strategy.fixed-delay.delay": "500 ms",
}

FAULTS = (
    "kill TaskExecutor",
    "pause TaskExecutor",
    "kill leading JobManager",
    "restart ZooKeeper",
    "ZooKeeper blip",
    "partition TaskExecutor",
    "fill checkpoint disk",
    "pause leading JobManager",
    "everything at once",
)
DEFAULT_FAULTS = FAULTS[:5]
"""What the suite's bounded mode injects (each once, in a seeded order); the long mode adds the rest."""


class ChaosFailure(AssertionError):
    """The cluster did not survive a fault (or the end state is wrong)."""


@dataclass
class SmallJob:
    job_id: str
    kind: str  # "bounded" | "unbounded"
    cancel_acknowledged: bool = False


@dataclass
class MainRound:
    job_id: str
    out: Path
    n: int


@dataclass
class FaultRecord:
    kind: str
    started: float
    recovered_after: float | None = None
    error: str | None = None
    note: str = ""
    main_job_restarted: bool = False


@dataclass
class Tally:
    injected: int = 0
    survived: int = 0
    recovery: list[float] = field(default_factory=list)
    restarts: int = 0
    failures: list[str] = field(default_factory=list)


class SmallJobClient(threading.Thread):
    """Submits and cancels small jobs through REST until stopped; what was acknowledged is kept."""

    def __init__(self, run: ChaosRun, rng: random.Random, max_unbounded: int = 2) -> None:
        super().__init__(name="chaos-client", daemon=True)
        self.run_ = run
        self.rng = rng
        self.max_unbounded = max_unbounded
        self.jobs: list[SmallJob] = []
        self.refused: list[str] = []
        self.unanswered = 0
        self.stopping = threading.Event()
        self.lock = threading.Lock()

    def run(self) -> None:
        while not self.stopping.wait(self.rng.uniform(1.0, 3.0)):
            try:
                self.step()
            except Exception as e:  # never let the client die silently: the ledger notes it
                self.refused.append(f"client error {e!r}")

    def _url(self) -> str | None:
        alive = [jm for jm in self.run_.c.jobmanagers if jm.alive()]
        return self.rng.choice(alive).url if alive else None

    def step(self) -> None:
        url = self._url()
        if url is None:
            return
        with self.lock:
            running = [j for j in self.jobs if j.kind == "unbounded" and not j.cancel_acknowledged]
        roll = self.rng.random()
        if roll < 0.35 and running:
            job = self.rng.choice(running)
            try:
                status, _ = http("PATCH", f"{url}/jobs/{job.job_id}?mode=cancel")
            except OSError:
                self.unanswered += 1
                return
            if status == 202:
                with self.lock:
                    job.cancel_acknowledged = True
        elif roll < 0.65 and len(running) < self.max_unbounded:
            self._submit(url, "unbounded")
        else:
            self._submit(url, "bounded")

    def _submit(self, url: str, kind: str) -> None:
        name = f"chaos-{kind}-{len(self.jobs)}"
        graph = bounded_job(name, n=200) if kind == "bounded" else unbounded_job(name, parallelism=1, rate=50)
        graph = msgspec.structs.replace(graph, config={**graph.config, **SMALL_JOB_RESTARTS})
        try:
            status, body = asyncio.run(_post_job(url, graph))
        except (TimeoutError, OSError, aiohttp.ClientError):
            self.unanswered += 1  # not acknowledged: the cluster owes nothing for it
            return
        if status == 202:
            with self.lock:
                self.jobs.append(SmallJob(body["jobUrl"].rsplit("/", 1)[1], kind))
        else:
            self.refused.append(f"{status} {body}")


async def _post_job(url: str, graph: Any) -> tuple[int, Any]:
    timeout = aiohttp.ClientTimeout(total=20)
    async with (
        aiohttp.ClientSession(timeout=timeout) as session,
        session.post(f"{url}/v1/jobs", data=submission_form(graph)) as resp,
    ):
        return resp.status, await resp.json(content_type=None)


class ChaosRun:
    """One chaos run: start, inject faults, finish, close (also when something fails)."""

    def __init__(
        self,
        workdir: Path,
        seed: int,
        round_records: int = 30000,
        log: Callable[[str], None] = print,
        task_managers: int = 2,
        disk_mb: int = 0,
        partition: bool = False,
    ) -> None:
        classpath = find_classpath()
        if classpath is None:
            raise RuntimeError("ZooKeeper is not installed (apt-get install zookeeper)")
        self.workdir = workdir
        self.seed = seed
        self.rng = random.Random(seed)
        self.round_records = round_records
        self.log = log
        self.task_managers = task_managers
        self.started = time.monotonic()
        (workdir / "zk").mkdir(parents=True, exist_ok=True)
        self.zk = ZooKeeperServer(workdir / "zk", classpath)
        self.cluster: HaCluster | None = None
        self.client: SmallJobClient | None = None
        self.rounds: list[MainRound] = []
        self.records: list[FaultRecord] = []
        self.paused: set[int] = set()
        self.disk_mb = disk_mb
        self.disk: Path | None = None
        self.filler: Path | None = None
        self.mounted = False
        self.net: Namespace | None = Namespace() if partition else None
        self.in_namespace: set[int] = set()
        """pids of the TaskExecutors running in the network namespace"""
        self.dead_ids: set[str] = set()
        """TaskManager ids of killed TaskExecutors: a registration of one is stale"""

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        self.log(f"chaos seed {self.seed} (replay with FLOTT_CHAOS_SEED={self.seed})")
        self.zk.start()
        if self.disk_mb:
            self.disk = self.workdir / "checkpoint-disk"
            self.disk.mkdir()
            subprocess.run(
                ["mount", "-t", "tmpfs", "-o", f"size={self.disk_mb}m", "tmpfs", str(self.disk)], check=True
            )
            self.mounted = True
        extra = {"heartbeat.timeout": str(HEARTBEAT_TIMEOUT_MS)}
        if self.net is not None:
            # every process advertises the host side of the veth pair, which the namespace reaches
            self.net.create(self.zk.port)
            extra.update(self.net.host_config())
        self.cluster = HaCluster(
            self.zk.hosts, self.workdir / "cluster", "/flott-chaos", SESSION_TIMEOUT_MS, extra=extra
        )
        c = self.cluster
        c.start_leader_and_standby()
        for _ in range(self.task_managers - 2):
            c.start_taskmanager()
        if self.net is not None:
            self.start_namespaced_task_manager()
        c.wait_ready(len(self.live_task_managers()), timeout=120)
        self.submit_round()
        self.client = SmallJobClient(self, random.Random(self.seed + 1))
        self.client.start()
        self.wait_healthy("start", since_checkpoint=0)

    def close(self) -> list[str]:
        """Stops everything this run started, by PID; safe to call after any failure. Returns the
        processes SIGTERM did not stop within 20 s (they are SIGKILLed)."""
        stubborn: list[str] = []
        if self.client is not None:
            self.client.stopping.set()
            self.client.join(30)
        with contextlib.suppress(ProcessLookupError):
            if self.zk.proc is not None:
                os.kill(self.zk.proc.pid, signal.SIGCONT)
        if self.cluster is not None:
            c = self.cluster
            procs = [*c.taskmanagers, *(jm.proc for jm in c.jobmanagers)]
            for proc in procs:
                if proc.poll() is None:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(proc.pid, signal.SIGCONT)
                        os.kill(proc.pid, signal.SIGTERM)
            deadline = time.monotonic() + 20
            for proc in procs:
                try:
                    proc.wait(max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    stubborn.append(f"pid {proc.pid} {str(proc.args)[:160]}")
            c.close()  # SIGKILLs what is left, closes the log files and the test's ZooKeeper client
        self.zk.stop()
        if self.net is not None:
            self.net.delete()
        if self.filler is not None:
            with contextlib.suppress(OSError):
                self.filler.unlink()
        if self.mounted and self.disk is not None:
            subprocess.run(["umount", str(self.disk)], check=False)
            self.mounted = False
        return stubborn

    # -- state ---------------------------------------------------------------------------------

    @property
    def c(self) -> HaCluster:
        assert self.cluster is not None
        return self.cluster

    def live_task_managers(self) -> list[subprocess.Popen[bytes]]:
        return [p for p in self.c.taskmanagers if p.poll() is None]

    def main(self) -> MainRound:
        return self.rounds[-1]

    def checkpoint_dir(self, i: int) -> str:
        base = self.disk if self.disk is not None else self.workdir
        return (base / f"chk-{i}").as_uri()

    def submit_round(self) -> MainRound:
        i = len(self.rounds)
        out = self.workdir / f"out-{i}"
        for attempt in range(5):
            leader = self.c.wait_leader(60)
            run = self.c.submit(leader, str(out), self.checkpoint_dir(i), str(self.round_records), "1")
            if run.returncode == 0:
                r = MainRound(self.c.job_id_of(run), out, self.round_records)
                self.rounds.append(r)
                self.log(f"main job round {i}: {r.job_id}")
                return r
            self.log(f"main job round {i} not submitted (attempt {attempt}): {run.stderr[-500:]}")
            time.sleep(2)
        raise ChaosFailure(f"the main job could not be submitted\n{self.c.logs()}")

    def registered_task_managers(self, leader: JobManager) -> dict[int, str]:
        """pid -> TaskManager id of every registered TaskManager that is one of our live processes
        (matched by the RPC port it listens on)."""
        try:
            status, body = http("GET", f"{leader.url}/taskmanagers", timeout=3)
        except OSError:
            return {}
        if status != 200:
            return {}
        by_port = {int(tm["path"].rsplit(":", 1)[1]): str(tm["id"]) for tm in body["taskmanagers"]}
        # one namespaced TaskExecutor at a time: its registration is the one at the namespace's address
        out: dict[int, str] = {}
        for proc in self.live_task_managers():
            if proc.pid in self.in_namespace:  # its sockets are not in this namespace's tables
                assert self.net is not None
                ours = [
                    str(tm["id"])
                    for tm in body["taskmanagers"]
                    if tm["path"].startswith(self.net.ns_ip + ":") and tm["id"] not in self.dead_ids
                ]
                if ours:  # a registration of a killed one is stale
                    out[proc.pid] = ours[0]
                continue
            with contextlib.suppress(psutil.Error):
                for conn in psutil.Process(proc.pid).net_connections(kind="tcp"):
                    if conn.status == psutil.CONN_LISTEN and conn.laddr.port in by_port:
                        out[proc.pid] = by_port[conn.laddr.port]
        if len(by_port) > len(out):  # a registration of a process that is gone
            out.update({-i - 1: tm for i, tm in enumerate(sorted(set(by_port.values()) - set(out.values())))})
        return out

    def main_job_task_managers(self) -> list[subprocess.Popen[bytes]]:
        """The live TaskExecutors running a task of the main job."""
        leader = self.c.wait_leader(30)
        ids: set[str] = set()
        status, body = self.c.job(leader, self.main().job_id)
        if status == 200:
            for v in body["vertices"]:
                code, vertex = http("GET", f"{leader.url}/jobs/{self.main().job_id}/vertices/{v['id']}")
                if code == 200:
                    ids.update(str(st["taskmanager-id"]) for st in vertex["subtasks"])
        registered = self.registered_task_managers(leader)
        return [p for p in self.live_task_managers() if registered.get(p.pid) in ids]

    def victim(self) -> subprocess.Popen[bytes]:
        """A TaskExecutor to hit: one running the main job (the fault must reach it), else any."""
        hosting = self.main_job_task_managers()
        return self.rng.choice(hosting or self.live_task_managers())

    def latest_checkpoint(self, leader: JobManager, job_id: str) -> int:
        body = checkpoint_stats(leader, job_id)
        latest = (body.get("latest") or {}).get("completed") if body else None
        return int(latest["id"]) if latest else 0

    def health(self, since_checkpoint: int) -> str | None:
        """None when healthy, else what is missing."""
        leader = self.c.leader()
        if leader is None:
            return "no leader"
        try:
            status, overview = http("GET", f"{leader.url}/overview", timeout=3)
        except OSError as e:
            return f"leader REST: {e}"
        if status != 200:
            return f"leader /overview {status}"
        registered = self.registered_task_managers(leader)
        live = {p.pid for p in self.live_task_managers()}
        if overview["taskmanagers"] != len(live) or set(registered) != live:
            count = overview["taskmanagers"]
            return f"TaskManagers registered {sorted(registered)} (of {count}), live {sorted(live)}"
        main = self.main()
        state = self.c.job_state(leader, main.job_id)
        if state == "FINISHED":
            return None
        if state in ("FAILED", "CANCELED"):
            raise ChaosFailure(f"main job {main.job_id} ended {state}\n{self.c.logs()}")
        if not all_tasks_running(self.c, leader, main.job_id):
            return f"main job {state}, not every task RUNNING"
        latest = self.latest_checkpoint(leader, main.job_id)
        if latest <= since_checkpoint:
            return f"no checkpoint after {since_checkpoint} yet"
        return None

    def wait_healthy(self, what: str, since_checkpoint: int, timeout: float = 150.0) -> float:
        start = time.monotonic()
        last: str | None = "?"
        while time.monotonic() - start < timeout:
            last = self.health(since_checkpoint)
            if last is None:
                return time.monotonic() - start
            time.sleep(0.2)
        raise ChaosFailure(f"not healthy {timeout:.0f}s after {what}: {last}\n{self.c.logs()}")

    def current_checkpoint(self) -> int:
        leader = self.c.wait_leader(60)
        return self.latest_checkpoint(leader, self.main().job_id)

    def next_round_if_finished(self) -> None:
        leader = self.c.wait_leader(60)
        main = self.main()
        if self.c.job_state(leader, main.job_id) == "FINISHED":
            self.check_round(main)
            self.submit_round()
            self.wait_healthy("a new round", since_checkpoint=0)

    def check_round(self, r: MainRound) -> None:
        problems = exactly_once_problems(r.out, r.n)
        if problems:
            raise ChaosFailure(f"main job {r.job_id} output not exact: {problems}")

    # -- faults --------------------------------------------------------------------------------

    def inject(self, kind: str) -> FaultRecord:
        """Inject one fault and wait until the cluster is healthy again."""
        self.next_round_if_finished()
        self.wait_healthy(f"before {kind}", since_checkpoint=0)
        before = self.current_checkpoint()
        leader = self.c.wait_leader(30)
        fingerprint = self._fingerprint(leader, self.main().job_id)
        record = FaultRecord(kind, time.monotonic() - self.started)
        self.records.append(record)
        self.log(f"[{record.started:6.1f}s] {kind}")
        try:
            record.note = FAULT_ACTIONS[kind](self) or ""
            self.wait_healthy(kind, since_checkpoint=before)
        except ChaosFailure as e:
            record.error = str(e).splitlines()[0]
            self.log(f"         NOT SURVIVED: {record.error}")
            raise
        record.recovered_after = time.monotonic() - self.started - record.started
        leader = self.c.wait_leader(30)
        record.main_job_restarted = self._fingerprint(leader, self.main().job_id) != fingerprint
        record.note += ", main job restarted" if record.main_job_restarted else ", main job untouched"
        self.log(f"         healthy after {record.recovered_after:.1f}s: {record.note}")
        return record

    def _kill_task_executor(self) -> str:
        victim = self.victim()
        dead = self.registered_task_managers(self.c.wait_leader(30)).get(victim.pid)
        if dead is None:
            raise ChaosFailure(f"TaskExecutor {victim.pid} is not registered before the fault")
        self.dead_ids.add(dead)
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(10)
        if victim.pid in self.in_namespace:
            self.in_namespace.discard(victim.pid)
            self.start_namespaced_task_manager()
            return f"pid {victim.pid} (in the namespace)"
        self.c.start_taskmanager()
        return f"pid {victim.pid}"

    def start_namespaced_task_manager(self) -> subprocess.Popen[bytes]:
        """A TaskExecutor inside the network namespace: it reaches the cluster (and ZooKeeper,
        through a forwarder) only over the veth pair the partition cuts."""
        assert self.net is not None
        c = self.c
        log = c.workdir / f"taskmanager-{len(c.taskmanagers)}-netns.log"
        f = log.open("ab")
        c._logs.append(f)
        proc = subprocess.Popen(
            ["ip", "netns", "exec", self.net.name, sys.executable, "-m", "flott.cli.main", "-v",
             "taskmanager", "start", *c._dynamic(self.net.namespace_config())],
            stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=REPO,
            env=dict(os.environ, PYTHONUNBUFFERED="1"), start_new_session=True,
        )  # fmt: skip
        c.taskmanagers.append(proc)
        self.in_namespace.add(proc.pid)
        return proc

    def _partition_task_executor(self) -> str:
        """Cut the veth pair of the namespaced TaskExecutor for longer than the heartbeat timeout
        (and the ZooKeeper session timeout): the cluster writes it off; once healed it has to find
        its way back."""
        assert self.net is not None
        hosting = {p.pid for p in self.main_job_task_managers()}
        [victim] = [p for p in self.live_task_managers() if p.pid in self.in_namespace]
        cut = HEARTBEAT_TIMEOUT_MS / 1000 + self.rng.uniform(1.0, 4.0)
        self.net.set_link(up=False)
        try:
            time.sleep(cut)
        finally:
            self.net.set_link(up=True)
        where = "running main-job tasks" if victim.pid in hosting else "no main-job task on it"
        return f"pid {victim.pid} cut off {cut:.1f}s ({where})"

    def _pause_task_executor(self) -> str:
        victim = self.victim()
        pause = HEARTBEAT_TIMEOUT_MS / 1000 + self.rng.uniform(1.0, 3.0)
        os.kill(victim.pid, signal.SIGSTOP)
        self.paused.add(victim.pid)
        try:
            time.sleep(pause)
        finally:
            os.kill(victim.pid, signal.SIGCONT)
            self.paused.discard(victim.pid)
        return f"pid {victim.pid} for {pause:.1f}s"

    def _kill_leader(self) -> str:
        leader = self.c.wait_leader(60)
        self.c.kill(leader)
        self.c.start_jobmanager()
        self.c.wait_leader(60, other_than=leader)
        return f"{leader.name}"

    def _pause_leader(self) -> str:
        """SIGSTOP the leading JobManager until the standby leads (its ZooKeeper session expired)
        and a little longer: continued, the old leader must find out it lost leadership and act as
        a standby, its JobMasters fenced off (the output stays exact)."""
        leader = self.c.wait_leader(60)
        os.kill(leader.proc.pid, signal.SIGSTOP)
        self.paused.add(leader.proc.pid)
        stopped = time.monotonic()
        try:
            self.c.wait_leader(60, other_than=leader)
            time.sleep(self.rng.uniform(0.5, 2.0))
        finally:
            os.kill(leader.proc.pid, signal.SIGCONT)
            self.paused.discard(leader.proc.pid)
        return f"{leader.name} paused {time.monotonic() - stopped:.1f}s"

    def _everything_at_once(self) -> str:
        """SIGKILL the leader and a TaskExecutor while ZooKeeper is down, then bring all three
        back: recovery with no part of the cluster that knew the job still running."""
        leader = self.c.wait_leader(60)
        victim = self.victim()
        dead = self.registered_task_managers(leader).get(victim.pid)
        if dead is not None:
            self.dead_ids.add(dead)
        self.zk.stop()
        os.kill(leader.proc.pid, signal.SIGKILL)
        os.kill(victim.pid, signal.SIGKILL)
        leader.proc.wait(10)
        victim.wait(10)
        time.sleep(self.rng.uniform(0.5, 2.0))
        self.zk.start(port=self.zk.port)
        self.c.start_jobmanager()
        if victim.pid in self.in_namespace:
            self.in_namespace.discard(victim.pid)
            self.start_namespaced_task_manager()
        else:
            self.c.start_taskmanager()
        return f"{leader.name}, TaskExecutor pid {victim.pid}, ZooKeeper"

    def _restart_zookeeper(self) -> str:
        """Stop ZooKeeper (SIGTERM or SIGKILL, drawn) and start it again on its port and data."""
        how = self.rng.choice(("SIGTERM", "SIGKILL"))
        proc = self.zk.proc
        if how == "SIGKILL" and proc is not None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
        self.zk.stop()
        down = self.rng.uniform(0.5, 2.0)
        time.sleep(down)
        self.zk.start(port=self.zk.port)
        return f"{how}, down {down:.1f}s"

    def _zookeeper_blip(self) -> str:
        """SIGSTOP ZooKeeper for a quarter to half the session timeout: nobody's session expires
        and no connection stays suspended past the leader's suspension bound (a quarter of the
        session timeout after kazoo declares the connection suspended, itself at least a third of
        it after the last contact), so no leader may change and no job may restart."""
        assert self.zk.proc is not None
        jobs = self._running_jobs()
        sessions = self._leader_sessions()
        pause = SESSION_TIMEOUT_MS / 1000 * self.rng.uniform(0.25, 0.5)
        os.kill(self.zk.proc.pid, signal.SIGSTOP)
        try:
            time.sleep(pause)
        finally:
            os.kill(self.zk.proc.pid, signal.SIGCONT)
        time.sleep(HEARTBEAT_TIMEOUT_MS / 1000)  # anything the blip broke has shown by now
        after_sessions = self._leader_sessions()
        if after_sessions != sessions:
            raise ChaosFailure(
                f"a ZooKeeper blip of {pause:.2f}s changed leaders: {sessions} -> {after_sessions}"
            )
        leader = self.c.wait_leader(10)
        for job_id, before in jobs.items():
            after = self._fingerprint(leader, job_id)
            if after is not None and after != before and not self._ended_cleanly(leader, job_id):
                raise ChaosFailure(
                    f"a ZooKeeper blip of {pause:.2f}s restarted job {job_id}: {before} -> {after}"
                    f"\n{self.c.logs()}"
                )
        return f"{pause:.2f}s, {len(jobs)} running jobs untouched"

    def _running_jobs(self) -> dict[str, Any]:
        leader = self.c.wait_leader(10)
        status, body = http("GET", f"{leader.url}/jobs/overview")
        assert status == 200, body
        out = {}
        for j in body["jobs"]:
            if j["state"] == "RUNNING":
                fp = self._fingerprint(leader, j["jid"])
                if fp is not None:
                    out[j["jid"]] = fp
        return out

    def _fingerprint(self, leader: JobManager, job_id: str) -> Any:
        """What changes when a job restarts or its JobMaster is replaced: the RESTARTING and
        RUNNING timestamps and every vertex's start time."""
        status, body = self.c.job(leader, job_id)
        if status != 200:
            return None
        return (
            body["start-time"],
            body["timestamps"].get("RESTARTING"),
            body["timestamps"].get("RUNNING"),
            tuple(v["start-time"] for v in body["vertices"]),
        )

    def _ended_cleanly(self, leader: JobManager, job_id: str) -> bool:
        """A job that finished or was cancelled (by the client) during the blip changed honestly."""
        return self.c.job_state(leader, job_id) in ("FINISHED", "CANCELED", "CANCELLING")

    def _leader_sessions(self) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for component in ("dispatcher", "resource_manager", "rest_server"):
            info = self.c.leader_info(component)
            out[component] = info[1] if info else None
        return out

    def _fill_disk(self) -> str:
        assert self.disk is not None
        leader = self.c.wait_leader(10)
        failed_before = (checkpoint_stats(leader, self.main().job_id).get("counts") or {}).get("failed", 0)
        before = self.latest_checkpoint(leader, self.main().job_id)
        self.filler = self.disk / "filler"
        with self.filler.open("wb") as f:
            chunk = b"\0" * (1 << 20)
            try:
                while True:
                    f.write(chunk)
                    f.flush()
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
        full = self.rng.uniform(4.0, 8.0)
        time.sleep(full)
        leader = self.c.wait_leader(30)
        stats = checkpoint_stats(leader, self.main().job_id)
        failed = (stats.get("counts") or {}).get("failed", 0)
        latest = self.latest_checkpoint(leader, self.main().job_id)
        self.filler.unlink()
        self.filler = None
        return f"full {full:.1f}s: checkpoints {before}->{latest}, failed {failed_before}->{failed}"

    # -- the end -------------------------------------------------------------------------------

    def finish(self, timeout: float = 240.0) -> dict[str, int]:
        """Stop the client, let the main job finish, check everything; a summary of the ledger."""
        assert self.client is not None
        self.client.stopping.set()
        self.client.join(60)
        self.wait_healthy("the end of the chaos", since_checkpoint=0)
        leader = self.c.wait_leader(60)
        main = self.main()
        self.c.wait_state(leader, main.job_id, TERMINAL, timeout=timeout)
        leader = self.c.wait_leader(60)
        for r in self.rounds:
            state = self.c.job_state(leader, r.job_id)
            if state != "FINISHED":
                raise ChaosFailure(f"main job {r.job_id} is {state}\n{self.c.logs()}")
            self.check_round(r)
        summary = {"main rounds": len(self.rounds), "bounded": 0, "unbounded": 0, "cancelled": 0}
        for job in self.client.jobs:
            summary[job.kind] += 1
            status, body = self.c.job(leader, job.job_id)
            if status != 200:
                raise ChaosFailure(f"acknowledged job {job} lost: {status} {body}\n{self.c.logs()}")
            if job.kind == "bounded":
                self.c.wait_state(leader, job.job_id, TERMINAL, timeout=120)
                state = self.c.job_state(leader, job.job_id)
                if state != "FINISHED":
                    raise ChaosFailure(f"bounded job {job.job_id} ended {state}\n{self.c.logs()}")
                continue
            state = str(body["state"])
            if state == "FAILED":
                raise ChaosFailure(f"unbounded job {job.job_id} FAILED\n{self.c.logs()}")
            if state not in TERMINAL:  # running (or recovered after its cancel was acknowledged)
                code, _ = http("PATCH", f"{leader.url}/jobs/{job.job_id}?mode=cancel")
                if code != 202:
                    raise ChaosFailure(f"cancelling {job.job_id} answered {code}")
            self.c.wait_state(leader, job.job_id, TERMINAL, timeout=120)
            state = str(self.c.job_state(leader, job.job_id))
            if state != "CANCELED":
                raise ChaosFailure(f"unbounded job {job.job_id} ended {state}\n{self.c.logs()}")
            summary["cancelled"] += 1
        # the cluster still answers and runs a new job
        graph = bounded_job("chaos-after", n=100)
        status, body = asyncio.run(_post_job(leader.url, graph))
        if status != 202:
            raise ChaosFailure(f"a job after the chaos was refused: {status} {body}")
        after_id = body["jobUrl"].rsplit("/", 1)[1]
        self.c.wait_state(leader, after_id, TERMINAL, timeout=120)
        if self.c.job_state(leader, after_id) != "FINISHED":
            raise ChaosFailure(f"the job after the chaos did not finish\n{self.c.logs()}")
        summary["refused"] = len(self.client.refused)
        for reason in self.client.refused:
            self.log(f"refused: {reason[:300]}")
        summary["unanswered"] = self.client.unanswered
        return summary

    def tally(self) -> dict[str, Tally]:
        out = {kind: Tally() for kind in FAULTS}
        for r in self.records:
            t = out[r.kind]
            t.injected += 1
            if r.error is None and r.recovered_after is not None:
                t.survived += 1
                t.recovery.append(r.recovered_after)
                t.restarts += r.main_job_restarted
            elif r.error is not None:
                t.failures.append(r.error)
        return out


FAULT_ACTIONS: dict[str, Callable[[ChaosRun], str]] = {
    "kill TaskExecutor": ChaosRun._kill_task_executor,
    "pause TaskExecutor": ChaosRun._pause_task_executor,
    "kill leading JobManager": ChaosRun._kill_leader,
    "restart ZooKeeper": ChaosRun._restart_zookeeper,
    "ZooKeeper blip": ChaosRun._zookeeper_blip,
    "fill checkpoint disk": ChaosRun._fill_disk,
    "partition TaskExecutor": ChaosRun._partition_task_executor,
    "pause leading JobManager": ChaosRun._pause_leader,
    "everything at once": ChaosRun._everything_at_once,
}


def chaos_seed() -> int:
    """``FLOTT_CHAOS_SEED`` when set (to replay a run), else a fresh one."""
    value = os.environ.get("FLOTT_CHAOS_SEED")
    return int(value) if value else random.SystemRandom().randrange(1 << 31)


def tally_table(tally: dict[str, Tally], known_failures: set[str] | None = None) -> str:
    rows = [
        "| fault | injected | survived | main job restarted | mean s to healthy | max s to healthy |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for kind, t in tally.items():
        if not t.injected:
            continue
        mean = f"{sum(t.recovery) / len(t.recovery):.1f}" if t.recovery else "-"
        worst = f"{max(t.recovery):.1f}" if t.recovery else "-"
        mark = " (known failure)" if known_failures and kind in known_failures else ""
        rows.append(f"| {kind}{mark} | {t.injected} | {t.survived} | {t.restarts} | {mean} | {worst} |")
    return "\n".join(rows)


__all__ = [
    "DEFAULT_FAULTS",
    "FAULTS",
    "ChaosFailure",
    "ChaosRun",
    "chaos_seed",
    "tally_table",
]
