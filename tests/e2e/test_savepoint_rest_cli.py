"""Savepoints end to end on a real session cluster (``flott cluster start``: a JobManager and two
TaskManager processes), operated the way a user does: ``flott run``, ``flott savepoint``,
``flott savepoint inspect``, ``flott stop``, ``flott run -s``, ``flott savepoint --dispose``, plus
RestClusterClient (checkpoint, rescale, cancel-with-savepoint) and an embedded job's JobClient.

These need the runtime's checkpointing (the Dispatcher's savepoint operations); until the Dispatcher
has ``trigger_savepoint`` they are skipped, and they run as soon as it has.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flott.client.rest_cluster_client import SyncRestClusterClient
from flott.runtime.dispatcher.dispatcher import Dispatcher
from tests.cli.test_session_cluster import REPO, cluster, flott, get_json, run_dir  # noqa: F401

pytestmark = pytest.mark.skipif(
    not hasattr(Dispatcher, "trigger_savepoint"),
    reason="the Dispatcher has no savepoint operations yet (runtime checkpointing not landed)",
)

STREAMING_COUNTS = str(REPO / "examples" / "streaming_counts.py")


def wait_until(what: str, check: Callable[[], bool], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def state(address: str, job_id: str) -> str:
    return str(get_json(f"http://{address}/jobs/{job_id}")["state"])


def records_flowing(address: str, job_id: str) -> bool:
    details = get_json(f"http://{address}/jobs/{job_id}")
    return details["state"] == "RUNNING" and details["vertices"][-1]["metrics"]["read-records"] > 0


def submit(address: str, *args: str) -> str:
    run = flott("run", "-m", address, "-d", *args)
    assert run.returncode == 0, run.stderr
    job_id = run.stdout.strip().split()[-1]
    assert re.fullmatch(r"[0-9a-f]{32}", job_id), run.stdout
    wait_until("records to flow", lambda: records_flowing(address, job_id))
    return job_id


def completed_path(output: str) -> str:
    match = re.search(r"^Savepoint completed\. Path: (\S+)$", output, re.MULTILINE)
    assert match, output
    return match.group(1)


def local(path: str) -> Path:
    return Path(re.sub(r"^file:(//)?", "", path))


def checkpoints(address: str, job_id: str) -> dict[str, Any]:
    return get_json(f"http://{address}/jobs/{job_id}/checkpoints")


def test_savepoint_inspect_stop_resume_dispose_with_the_cli(
    cluster: tuple[str, list[str]],  # noqa: F811
    tmp_path: Path,
) -> None:
    address, _ = cluster
    target = tmp_path / "savepoints"
    job_id = submit(address, STREAMING_COUNTS, "--rate", "500")

    taken = flott("savepoint", "-m", address, job_id, str(target))
    assert taken.returncode == 0, taken.stdout + taken.stderr
    assert taken.stdout.startswith(f"Triggering savepoint for job {job_id}.\nWaiting for response...\n")
    first = completed_path(taken.stdout)
    assert local(first).parent == target and local(first).name.startswith(f"savepoint-{job_id[:6]}-")
    assert (local(first) / "_metadata").is_file()
    assert state(address, job_id) == "RUNNING", "a savepoint does not stop the job"
    assert checkpoints(address, job_id)["latest"]["savepoint"]["external_path"] == first

    inspected = flott("savepoint", "inspect", first)
    assert inspected.returncode == 0, inspected.stderr
    count_row = next(line for line in inspected.stdout.splitlines() if line.startswith("count-per-user "))
    assert re.search(r"\b[1-9]\d*/128\b", count_row), inspected.stdout
    assert re.search(r"count-per-user\s+\S+\s+keyed \w+\s+[1-8] keys", inspected.stdout), inspected.stdout

    stopped = flott("stop", "-m", address, "--savepointPath", str(target), job_id)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert stopped.stdout.startswith(f'Suspending job "{job_id}" with a CANONICAL savepoint.')
    final = completed_path(stopped.stdout)
    assert final != first and (local(final) / "_metadata").is_file()
    wait_until("the stopped job to be FINISHED", lambda: state(address, job_id) == "FINISHED")

    resumed = submit(address, "-s", final, STREAMING_COUNTS, "--rate", "500")
    restored = checkpoints(address, resumed)
    assert restored["counts"]["restored"] == 1, restored
    assert restored["latest"]["restored"]["external_path"] == final
    assert restored["latest"]["restored"]["is_savepoint"] is True

    refused = flott("run", "-m", address, "-d", "-s", str(tmp_path / "nothing-here"), STREAMING_COUNTS)
    assert refused.returncode != 0 and "nothing-here" in refused.stdout + refused.stderr

    cancelled = flott("cancel", "-m", address, resumed)
    assert cancelled.returncode == 0, cancelled.stderr
    wait_until("the resumed job to be CANCELED", lambda: state(address, resumed) == "CANCELED")

    disposed = flott("savepoint", "-m", address, "--dispose", first)
    assert disposed.returncode == 0, disposed.stdout + disposed.stderr
    assert f"Savepoint '{first}' disposed." in disposed.stdout
    assert not local(first).exists() and local(final).exists()
    again = flott("savepoint", "-m", address, "--dispose", first)
    assert again.returncode == 1 and "does not exist" in again.stderr and "Traceback" not in again.stderr


def test_checkpoint_rescale_and_cancel_with_savepoint_through_the_client(
    cluster: tuple[str, list[str]],  # noqa: F811
    tmp_path: Path,
) -> None:
    address, _ = cluster
    default_dir = f"file://{tmp_path / 'default'}"
    job_id = submit(
        address,
        "-D",
        f"execution.checkpointing.savepoint-dir={default_dir}",
        STREAMING_COUNTS,
        "--rate",
        "500",
    )
    with SyncRestClusterClient(address=address) as client:
        checkpoint_id = client.trigger_checkpoint(job_id)
        assert checkpoint_id >= 1
        details = get_json(f"http://{address}/jobs/{job_id}/checkpoints/details/{checkpoint_id}")
        assert details["id"] == checkpoint_id and details["status"] == "COMPLETED"

        checkpointed = flott("checkpoint", "-m", address, job_id)
        assert checkpointed.returncode == 0, checkpointed.stdout + checkpointed.stderr
        assert f"for job {job_id} completed." in checkpointed.stdout

        client.rescale_job(job_id, 1, timeout_s=90)
        wait_until("the rescaled job to run", lambda: records_flowing(address, job_id))
        vertices = get_json(f"http://{address}/jobs/{job_id}")["vertices"]
        assert {v["parallelism"] for v in vertices} == {1}, vertices

        path = client.cancel_with_savepoint(job_id)
        assert path.startswith(default_dir), (path, default_dir)
        assert (local(path) / "_metadata").is_file()
        wait_until("the job to be CANCELED", lambda: state(address, job_id) == "CANCELED")
        client.dispose_savepoint(path)
        assert not local(path).exists()


def test_stop_with_drain_over_plain_rest(
    cluster: tuple[str, list[str]],  # noqa: F811
    tmp_path: Path,
) -> None:
    """What Flink's CLI sends for ``flink stop --drain -p DIR``, byte for byte, and its answers."""
    address, _ = cluster
    job_id = submit(address, STREAMING_COUNTS, "--rate", "500")
    body = (
        f'{{"targetDirectory": "file://{tmp_path}", "drain": true, "formatType": "CANONICAL", '
        '"triggerId": null}'
    )
    request = urllib.request.Request(
        f"http://{address}/v1/jobs/{job_id}/stop",
        data=body.encode(),
        method="POST",
        headers={"Content-Type": "application/json; charset=UTF-8", "Connection": "close"},
    )
    with urllib.request.urlopen(request, timeout=10) as resp:
        assert resp.status == 202
        trigger = json.loads(resp.read())["request-id"]
    status_url = f"http://{address}/v1/jobs/{job_id}/savepoints/{trigger}"
    wait_until("stop-with-savepoint", lambda: get_json(status_url)["status"]["id"] == "COMPLETED", 60)
    answer = get_json(status_url)
    assert set(answer["operation"]) == {"location"}, answer
    assert answer["operation"]["location"].startswith(f"file://{tmp_path}/savepoint-{job_id[:6]}-")
    wait_until("the drained job to be FINISHED", lambda: state(address, job_id) == "FINISHED")


def test_embedded_job_client_savepoints(tmp_path: Path, embedded: Any) -> None:
    """PyFlink's JobClient.trigger_savepoint / stop_with_savepoint on an embedded cluster."""
    from flott.common import Types, WatermarkStrategy
    from flott.datastream import StreamExecutionEnvironment
    from flott.datastream.connectors.datagen import DataGeneratorSource, RateLimiterStrategy

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    source = DataGeneratorSource(lambda i: (i % 5, 1), None, RateLimiterStrategy.per_second(300),
                                 Types.TUPLE([Types.INT(), Types.INT()]))  # fmt: skip
    (
        env.from_source(source, WatermarkStrategy.no_watermarks(), "numbers")
        .uid("numbers")
        .key_by(lambda t: t[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
        .uid("sums")
        .add_sink(_discard())
        .uid("discard")
    )
    client = env.execute_async("embedded-savepoints")
    deadline = time.monotonic() + 30
    while client.get_job_status().result(timeout=10).name != "RUNNING":
        assert time.monotonic() < deadline
        time.sleep(0.1)
    time.sleep(1.0)
    path = client.trigger_savepoint(str(tmp_path)).result(timeout=60)
    assert (local(path) / "_metadata").is_file()
    final = client.stop_with_savepoint(False, str(tmp_path)).result(timeout=60)
    assert final != path and (local(final) / "_metadata").is_file()
    assert client.get_job_status().result(timeout=10).name == "FINISHED"


def _discard() -> Any:
    class Discard:  # defined inside: cloudpickle ships it by value to the TaskExecutors
        def invoke(self, value: Any, context: Any) -> None:
            pass

    return Discard()
