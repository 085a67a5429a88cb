"""A cluster spread over three hosts (network namespaces, see :mod:`tests.deploy.netns`).

Host A runs the JobManager, hosts B (1 slot) and C (2 slots) a standalone TaskManager each; every
process binds to and advertises its host's own address (``jobmanager.rpc.address``,
``jobmanager.bind-host``, ``rest.address``, ``rest.bind-address``, ``taskmanager.host``,
``taskmanager.bind-host``, fixed RPC, data and BlobServer ports: each host has its own port
space). The job's Python module goes to the TaskManagers through the BlobServer on A (the
hosts share a filesystem, but the module is on no TaskManager's path). A keyed, checkpointed,
exactly-once counting job runs across B and C (records cross between them directly), then
B's cable is pulled mid-run: the JobManager notices by missing heartbeats, the job restarts
from its latest checkpoint on C's two slots and still ends with every update exactly once.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.deploy.netns import Host, Network, network, unavailable_reason
from tests.e2e.conftest import assert_exactly_once, read_output_lines

KEYS = 7
N = 40_000

JOB = """
import sys
from flott.common import Types
from flott.common.restart_strategy import RestartStrategies
from flott.common.serialization import Encoder
from flott.common.watermark_strategy import WatermarkStrategy
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.connectors.file_sink import FileSink
from flott.datastream.connectors.number_seq import NumberSequenceSource

from flott_multi_host_helper import pair  # shipped with --pyFiles through the BlobServer on host A

out, checkpoints, n = sys.argv[1], sys.argv[2], int(sys.argv[3])

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(2)
env.set_max_parallelism(64)
env.enable_checkpointing(300)
env.get_checkpoint_config().set_checkpoint_storage_dir(checkpoints)
env.set_restart_strategy(RestartStrategies.fixed_delay_restart(20, 500))
(
    env.from_source(NumberSequenceSource(0, n - 1), WatermarkStrategy.no_watermarks(), "numbers")
    .uid("numbers")
    .map(pair, output_type=Types.TUPLE([Types.LONG(), Types.LONG()]))
    .uid("pairs")
    .key_by(lambda t: t[0])
    .reduce(lambda a, b: (a[0], a[1] + b[1]))
    .uid("counts")
    .sink_to(FileSink.for_row_format(out, Encoder.simple_string_encoder()).build())
    .uid("files")
)
env.execute("across hosts")
"""

HELPER = """
import time

def pair(x):
    if x % 20 == 0:
        time.sleep(0.005)  # about 5 s per subtask: long enough to lose a host mid-way
    return (x % 7, 1)
"""

COMMON = ["-D", "heartbeat.interval=500", "-D", "heartbeat.timeout=4000", "-D", "pekko.ask.timeout=5 s"]
FLOTT = [sys.executable, "-m", "flott.cli.main"]


@pytest.fixture
def hosts() -> Any:
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(f"no network namespaces: {reason}")
    with network(["a", "b", "c"]) as net:
        yield net


def _wait(what: str, check: Callable[[], Any], timeout_s: float, logs: list[Path]) -> Any:
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except OSError as e:
            last = e
        else:
            if last:
                return last
        time.sleep(0.2)
    raise AssertionError(f"{what} within {timeout_s:.0f} s (last: {last!r})\n{_tails(logs)}")


def _tails(logs: list[Path]) -> str:
    out = []
    for log in logs:
        if log.exists():
            lines = log.read_text(errors="replace").splitlines()[-25:]
            out.append(f"--- {log.name}\n" + "\n".join(lines))
    return "\n".join(out)


def _hosts_of_tasks(a: Host, base: str, job_id: str) -> set[str]:
    """The hosts (addresses) the job's current subtask attempts are deployed on."""
    job = a.get_json(f"{base}/jobs/{job_id}")
    found: set[str] = set()
    for vertex in job["vertices"]:
        tms = a.get_json(f"{base}/jobs/{job_id}/vertices/{vertex['id']}/taskmanagers")
        for tm in tms["taskmanagers"]:
            if tm["status"] in ("RUNNING", "DEPLOYING", "INITIALIZING", "FINISHED"):
                found.add(tm["endpoint"].rsplit(":", 1)[0])
    return found


def test_keyed_job_across_hosts_survives_losing_a_host(hosts: Network, tmp_path: Path) -> None:
    a, b, c = hosts["a"], hosts["b"], hosts["c"]
    logs = [tmp_path / "jobmanager-a.log", tmp_path / "taskmanager-b.log", tmp_path / "taskmanager-c.log"]
    hosts["a"].popen(
        [
            *FLOTT, "jobmanager", "start",
            "-D", f"jobmanager.rpc.address={a.address}", "-D", f"jobmanager.bind-host={a.address}",
            "-D", "jobmanager.rpc.port=6123", "-D", "blob.server.port=6124",
            "-D", f"rest.address={a.address}", "-D", f"rest.bind-address={a.address}", "-D", "rest.port=8081",
            *COMMON,
        ],
        log=logs[0],
    )  # fmt: skip
    base = f"http://{a.address}:8081"
    # a standalone TaskManager gives up when the JobManager is not there yet: start them after it
    _wait("the JobManager's REST endpoint answering", lambda: a.get_json(f"{base}/overview"), 60, logs)
    for host, slots, log in ((b, 1, logs[1]), (c, 2, logs[2])):
        host.popen(
            [
                *FLOTT, "taskmanager", "start", "-m", f"{a.address}:6123",
                "-D", f"taskmanager.host={host.address}", "-D", f"taskmanager.bind-host={host.address}",
                "-D", "taskmanager.rpc.port=6122", "-D", "taskmanager.data.port=6121",
                "-D", f"taskmanager.numberOfTaskSlots={slots}",
                *COMMON,
            ],
            log=log,
        )  # fmt: skip
    _wait(
        "both TaskManagers registered with their 3 slots",
        lambda: a.get_json(f"{base}/overview")["slots-total"] == 3,
        60,
        logs,
    )

    script, out, chk = tmp_path / "job.py", tmp_path / "out", tmp_path / "chk"
    script.write_text(JOB)
    helper = tmp_path / "lib" / "flott_multi_host_helper.py"
    helper.parent.mkdir()
    helper.write_text(HELPER)
    submitted = a.run(
        [*FLOTT, "run", "-m", f"{a.address}:8081", "-d", "--pyFiles", str(helper), str(script), str(out),
         chk.as_uri(), str(N)],
        90,
    )  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr + _tails(logs)
    job_id = submitted.stdout.strip().split()[-1]

    def status() -> str:
        return str(a.get_json(f"{base}/jobs/{job_id}/status")["status"])

    placed = _wait(
        "the job running on both TaskManager hosts",
        lambda: status() == "RUNNING" and _hosts_of_tasks(a, base, job_id) == {b.address, c.address},
        60,
        logs,
    )
    assert placed
    _wait("a checkpoint committed output", lambda: out.exists() and read_output_lines(out), 60, logs)

    hosts.cut(b)
    cut_at = time.monotonic()
    assert status() in ("RUNNING", "RESTARTING"), "the job ended before host B was cut: make it longer"

    on_c = {c.address}
    _wait("the job restarted on host C alone", lambda: _hosts_of_tasks(a, base, job_id) == on_c, 60, logs)
    recovered_s = time.monotonic() - cut_at
    ended = ("FINISHED", "FAILED", "CANCELED")
    final = _wait("the job ended", lambda: status() in ended and status(), 90, logs)
    assert final == "FINISHED", _tails(logs)
    overview = a.get_json(f"{base}/overview")
    assert overview["taskmanagers"] == 1, "host B's TaskManager should be gone (no heartbeats)"
    assert_exactly_once(out, N)
    print(f"redeployed on host C {recovered_s:.1f} s after host B was cut")
