"""The savepoint, stop, checkpoint, disposal and rescaling routes: Flink's validation answers, Flink's
response shapes, and RestClusterClient's trigger-then-poll methods.

The validation answers (400s, 404 for unknown jobs and trigger ids) are checked on a real cluster
without any savepoint being taken. The trigger/poll shapes and the client are checked against a
scripted Dispatcher (:class:`FakeDispatcher`) behind the real REST endpoint, so they do not depend on
the runtime's checkpointing; tests/e2e/test_savepoint_rest_cli.py does the same on a real job.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import secrets
import shutil
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import aiohttp
import msgspec
import pytest

from flott.client.cluster_client import OperationFailedError
from flott.client.rest_cluster_client import RestClusterClient, SyncRestClusterClient
from flott.configuration import Configuration
from flott.errors import (
    ClusterError,
    JobExecutionError,
    JobNotFoundError,
    OperationNotFoundError,
    RestRequestError,
    RpcTimeoutError,
    UserCodeError,
)
from flott.rest.serialized_throwable import from_serialized_throwable, to_serialized_throwable
from flott.rest.webmonitor.rest_server_endpoint import RestServerEndpoint
from flott.runtime.gateways.dispatcher_gateway import DispatcherGateway
from flott.runtime.messages.job import OperationStatus
from flott.runtime.rpc.service import error_from_wire, error_to_wire
from tests.rest import spec
from tests.rest.conftest import RestCluster
from tests.rest.jobs import bounded_job

REPO = Path(__file__).resolve().parents[2]
UNKNOWN_JOB = "0123456789abcdef" * 2
SAVEPOINT_DIR_KEY = "execution.checkpointing.savepoint-dir"


async def expect(rc: Any, status: int, contains: str, method: str, path: str, body: Any = None) -> Any:
    data = json.dumps(body if body is not None else {}).encode()
    headers = {"Content-Type": "application/json; charset=UTF-8"}
    got, answer = await rc.call(method, path, data=data, headers=headers)
    assert got == status, (method, path, got, answer)
    if status >= 300:
        spec.validate(answer, spec.ERROR_SCHEMA)
        text = " ".join(answer["errors"])
        assert contains in text, text
        assert "Traceback" not in text and "Internal server error" not in text
    return answer


# -- validation on a real cluster ------------------------------------------------------------------


async def test_flink_validation_answers_without_any_savepoint(rest_cluster: RestCluster) -> None:
    rc = rest_cluster
    j = f"/v1/jobs/{UNKNOWN_JOB}"
    # malformed bodies and ids: 400 before anything else
    await expect(rc, 400, "SavepointTriggerRequestBody", "POST", f"{j}/savepoints", {"cancel-job": "yes"})
    await expect(rc, 400, "SavepointTriggerRequestBody", "POST", f"{j}/savepoints", {"targetDirectory": "/x"})
    await expect(
        rc, 400, "formatType", "POST", f"{j}/savepoints", {"target-directory": "/x", "formatType": "ZIP"}
    )
    await expect(
        rc, 400, "triggerId must be a 32-character", "POST", f"{j}/savepoints",
        {"target-directory": "/x", "triggerId": "not-hex"},
    )  # fmt: skip
    await expect(rc, 400, "StopWithSavepointRequestBody", "POST", f"{j}/stop", {"drain": "yes"})
    await expect(rc, 400, "CheckpointTriggerRequestBody", "POST", f"{j}/checkpoints", {"checkpointType": "X"})
    await expect(rc, 400, "FLINK-33723", "POST", f"{j}/checkpoints", {"checkpointType": "INCREMENTAL"})
    await expect(rc, 400, "SavepointDisposalRequest", "POST", "/v1/savepoint-disposal", {"path": "/x"})
    await expect(rc, 400, "Property [savepoint-path] must be provided", "POST", "/v1/savepoint-disposal", {})
    await expect(rc, 400, "triggerid must be a 32-character", "GET", f"{j}/savepoints/abc")
    await expect(rc, 400, "triggerid must be a 32-character", "GET", "/v1/savepoint-disposal/abc")
    await expect(rc, 400, "checkpointid must be a non-negative integer", "GET", f"{j}/checkpoints/details/x")
    await expect(rc, 400, "parallelism is required", "PATCH", f"{j}/rescaling")
    await expect(rc, 400, "parallelism must be an integer", "PATCH", f"{j}/rescaling?parallelism=two")
    await expect(rc, 400, "must be a positive integer", "PATCH", f"{j}/rescaling?parallelism=0")
    # no target directory and no default: Flink's 400, whether or not the job exists
    await expect(rc, 400, "Property [target-directory] must be provided", "POST", f"{j}/savepoints", {})
    await expect(rc, 400, "Property [targetDirectory] must be provided", "POST", f"{j}/stop", {})
    await expect(
        rc, 400, f"Config key [{SAVEPOINT_DIR_KEY}] is not set", "POST", f"{j}/savepoints",
        {"target-directory": "  "},
    )  # fmt: skip
    # unknown job: 404
    for method, path, body in [
        ("POST", f"{j}/savepoints", {"target-directory": "/tmp/sp"}),
        ("POST", f"{j}/savepoints", {"target-directory": "/tmp/sp", "cancel-job": True}),
        ("POST", f"{j}/stop", {"targetDirectory": "/tmp/sp", "drain": True}),
        ("POST", f"{j}/checkpoints", {"checkpointType": "FULL"}),
        ("GET", f"{j}/checkpoints", None),
        ("GET", f"{j}/checkpoints/config", None),
        ("GET", f"{j}/checkpoints/details/1", None),
        ("GET", f"{j}/checkpoints/details/1/subtasks/{UNKNOWN_JOB}", None),
        ("PATCH", f"{j}/rescaling?parallelism=2", None),
    ]:
        await expect(rc, 404, "JobNotFoundError", method, path, body)
    # unknown trigger ids: 404
    trigger = secrets.token_hex(16)
    for path in (f"{j}/savepoints/{trigger}", f"{j}/checkpoints/{trigger}", f"{j}/rescaling/{trigger}"):
        await expect(rc, 404, "", "GET", path)
    await expect(rc, 404, trigger, "GET", f"/v1/savepoint-disposal/{trigger}")


async def test_unknown_trigger_of_a_known_job_is_404(rest_cluster: RestCluster) -> None:
    async with rest_cluster.client() as client:
        job_id = await client.submit_job(bounded_job("known"))
        assert (await client.wait_for_job_result(job_id, timeout_s=30)).status == "FINISHED"
        trigger = secrets.token_hex(16)
        for kind in ("savepoints", "checkpoints", "rescaling"):
            await expect(rest_cluster, 404, trigger, "GET", f"/v1/jobs/{job_id}/{kind}/{trigger}")
        with pytest.raises((OperationNotFoundError, RestRequestError)):
            await client.get_savepoint_status(job_id, trigger)
        with pytest.raises(JobNotFoundError):
            await client.trigger_savepoint(UNKNOWN_JOB, "/tmp/sp")
        with pytest.raises(RestRequestError, match="Property \\[target-directory\\] must be provided"):
            await client.trigger_savepoint(job_id)


async def test_the_cluster_default_directory_satisfies_validation(rest_cluster: RestCluster) -> None:
    """With a default savepoint directory configured, a trigger without one passes validation."""
    config = rest_cluster.config.with_overrides({"state.savepoints.dir": "/tmp/flott-default-sp"})
    endpoint = RestServerEndpoint(config, rest_cluster.cluster.dispatcher_gateway)
    await endpoint.start()
    try:
        other = RestCluster(rest_cluster.cluster, endpoint, config, rest_cluster.http)
        j = f"/v1/jobs/{UNKNOWN_JOB}"
        await expect(other, 404, "JobNotFoundError", "POST", f"{j}/savepoints", {})
        await expect(other, 404, "JobNotFoundError", "POST", f"{j}/stop", {"drain": False})
    finally:
        await endpoint.stop()


# -- shapes and client against a scripted Dispatcher ---------------------------------------------


@dataclass
class _Op:
    polls_left: int
    final: OperationStatus


@dataclass
class FakeDispatcher:
    """The Dispatcher's savepoint surface, scripted: every operation answers IN_PROGRESS ``polls``
    times, then completes. A directory or path containing ``fail`` makes it fail; ``never`` keeps it
    running."""

    jobs: dict[str, dict[str, str]]
    polls: int = 2
    calls: list[tuple[Any, ...]] = field(default_factory=list)
    ops: dict[tuple[str, str], _Op] = field(default_factory=dict)

    async def submit_job(self, job_graph: Any) -> None:
        raise NotImplementedError

    def _job(self, job_id: str) -> dict[str, str]:
        if job_id not in self.jobs:
            raise JobNotFoundError(f"Job {job_id} not found")
        return self.jobs[job_id]

    def _start(self, scope: str, trigger_id: str | None, what: str, final: OperationStatus) -> str:
        tid = trigger_id or secrets.token_hex(16)
        polls = 10**9 if "never" in what else self.polls
        if "fail" in what:
            final = OperationStatus(
                "COMPLETED", failure=error_to_wire(ClusterError(f"{what}: the disk is full"))
            )
        self.ops.setdefault((scope, tid), _Op(polls, final))
        return tid

    def _status(self, scope: str, trigger_id: str) -> OperationStatus:
        op = self.ops.get((scope, trigger_id))
        if op is None:
            raise OperationNotFoundError(f"Operation not found under key: {trigger_id}")
        if op.polls_left > 0:
            op.polls_left -= 1
            return OperationStatus("IN_PROGRESS")
        return op.final

    async def request_job_status(self, job_id: str) -> str:
        self._job(job_id)
        return "RUNNING"

    async def request_execution_graph(self, job_id: str) -> Any:
        return SimpleNamespace(job_config=self._job(job_id))

    async def trigger_savepoint(
        self, job_id: str, target_directory: str | None, cancel_job: bool, trigger_id: str | None = None
    ) -> str:
        self._job(job_id)
        self.calls.append(("savepoint", job_id, target_directory, cancel_job, trigger_id))
        location = f"{target_directory}/savepoint-{job_id[:6]}-{secrets.token_hex(6)}"
        return self._start(job_id, trigger_id, str(target_directory), OperationStatus("COMPLETED", location))

    async def stop_with_savepoint(
        self, job_id: str, target_directory: str | None, drain: bool, trigger_id: str | None = None
    ) -> str:
        self._job(job_id)
        self.calls.append(("stop", job_id, target_directory, drain, trigger_id))
        location = f"{target_directory}/savepoint-{job_id[:6]}-{secrets.token_hex(6)}"
        return self._start(job_id, trigger_id, str(target_directory), OperationStatus("COMPLETED", location))

    async def trigger_checkpoint(self, job_id: str, trigger_id: str | None = None) -> str:
        self._job(job_id)
        self.calls.append(("checkpoint", job_id, trigger_id))
        return self._start(job_id, trigger_id, "", OperationStatus("COMPLETED", checkpoint_id=7))

    async def rescale_job(self, job_id: str, parallelism: int, trigger_id: str | None = None) -> str:
        self._job(job_id)
        self.calls.append(("rescale", job_id, parallelism))
        return self._start(job_id, trigger_id, "", OperationStatus("COMPLETED", location="/sp/x"))

    async def get_job_operation_status(self, job_id: str, trigger_id: str) -> OperationStatus:
        self._job(job_id)
        return self._status(job_id, trigger_id)

    async def dispose_savepoint(self, savepoint_path: str, trigger_id: str | None = None) -> str:
        self.calls.append(("dispose", savepoint_path))
        return self._start("", trigger_id, savepoint_path, OperationStatus("COMPLETED"))

    async def get_disposal_status(self, trigger_id: str) -> OperationStatus:
        return self._status("", trigger_id)

    async def request_checkpoint_statistics(self, job_id: str) -> dict[str, Any]:
        self._job(job_id)
        completed = {"className": "completed", "id": 3, "status": "COMPLETED", "is_savepoint": False,
                     "checkpoint_type": "CHECKPOINT", "trigger_timestamp": 1, "latest_ack_timestamp": 2,
                     "state_size": 10, "checkpointed_size": 10, "end_to_end_duration": 1,
                     "alignment_buffered": 0, "processed_data": 0, "persisted_data": 0, "num_subtasks": 2,
                     "num_acknowledged_subtasks": 2, "tasks": {}, "external_path": "/cp/chk-3",
                     "discarded": False}  # fmt: skip
        return {"counts": {"restored": 0, "total": 1, "in_progress": 0, "completed": 1, "failed": 0},
                "latest": {"completed": completed}, "history": [completed]}  # fmt: skip

    async def request_checkpoint_config(self, job_id: str) -> dict[str, Any]:
        self._job(job_id)
        return {"mode": "exactly_once", "interval": 1000, "timeout": 600000}


@dataclass
class FakeCluster:
    dispatcher: FakeDispatcher
    endpoint: RestServerEndpoint
    config: Configuration
    http: aiohttp.ClientSession
    job_id: str
    job_with_default: str

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.endpoint.port}"

    async def call(self, method: str, path: str, **kwargs: Any) -> tuple[int, Any]:
        async with self.http.request(method, f"http://{self.address}{path}", **kwargs) as resp:
            return resp.status, await resp.json(content_type=None)

    def client(self, **overrides: str) -> RestClusterClient:
        return RestClusterClient(self.config.with_overrides(overrides), self.address)


FAKE_CONFIG = {
    "rest.port": "0",
    "rest.address": "127.0.0.1",
    "rest.bind-address": "127.0.0.1",
    "rest.retry.max-attempts": "1",
    "rest.retry.delay": "50 ms",
}


@pytest.fixture
async def fake_cluster() -> AsyncIterator[FakeCluster]:
    job_id, job_with_default = secrets.token_hex(16), secrets.token_hex(16)
    dispatcher = FakeDispatcher({job_id: {}, job_with_default: {SAVEPOINT_DIR_KEY: "/job/default"}})
    config = Configuration(FAKE_CONFIG)
    endpoint = RestServerEndpoint(config, cast(DispatcherGateway, dispatcher))  # the routes it serves
    await endpoint.start()
    try:
        async with aiohttp.ClientSession() as http:
            yield FakeCluster(dispatcher, endpoint, config, http, job_id, job_with_default)
    finally:
        await endpoint.stop()


async def _poll(fc: FakeCluster, path: str) -> list[Any]:
    seen = []
    for _ in range(20):
        status, body = await fc.call("GET", path)
        assert status == 200, body
        seen.append(body)
        if body["status"]["id"] == "COMPLETED":
            schema = spec.response_schema("GET", _template(path), 200)
            assert schema is not None
            spec.validate(body, schema)
            assert spec.unknown_fields(body, schema) == []
            return seen
        # The captured Flink wire: the operation key is there, null (the fixture spec cannot say so).
        assert body == {"status": {"id": "IN_PROGRESS"}, "operation": None}
    raise AssertionError(f"never completed: {seen}")


def _template(path: str) -> str:
    parts = path.removeprefix("/v1").split("/")
    names = {"jobs": "{jobid}", "savepoints": "{triggerid}", "checkpoints": "{triggerid}",
             "rescaling": "{triggerid}", "savepoint-disposal": "{triggerid}"}  # fmt: skip
    return "/".join(names[parts[i - 1]] if i and parts[i - 1] in names else p for i, p in enumerate(parts))


async def test_trigger_and_poll_in_flinks_shapes(fake_cluster: FakeCluster) -> None:
    fc, job = fake_cluster, fake_cluster.job_id
    # savepoint: 202 {request-id}; IN_PROGRESS with operation null, then COMPLETED {location}
    status, trig = await fc.call("POST", f"/v1/jobs/{job}/savepoints", json={"target-directory": "/sp"})
    assert status == 202 and list(trig) == ["request-id"] and len(trig["request-id"]) == 32
    seen = await _poll(fc, f"/v1/jobs/{job}/savepoints/{trig['request-id']}")
    assert seen[0] == {"status": {"id": "IN_PROGRESS"}, "operation": None}
    assert set(seen[-1]["operation"]) == {"location"}, "no failure-cause key on success, as Flink writes it"
    assert seen[-1]["operation"]["location"].startswith(f"/sp/savepoint-{job[:6]}-")
    assert fc.dispatcher.calls[-1] == ("savepoint", job, "/sp", False, None)
    # a client-chosen trigger id is passed on; the Dispatcher's cache makes a repeat one operation (H1)
    tid = secrets.token_hex(16)
    body = {"target-directory": "/sp", "cancel-job": True, "formatType": "NATIVE", "triggerId": tid}
    for _ in range(2):
        status, trig = await fc.call("POST", f"/v1/jobs/{job}/savepoints", json=body)
        assert status == 202 and trig == {"request-id": tid}
    assert [c[4] for c in fc.dispatcher.calls[-2:]] == [tid, tid], "the client's id goes to the Dispatcher"
    # stop: polled on the savepoints URL
    status, trig = await fc.call(
        "POST", f"/v1/jobs/{job}/stop", json={"targetDirectory": "/sp", "drain": True}
    )
    assert status == 202
    seen = await _poll(fc, f"/v1/jobs/{job}/savepoints/{trig['request-id']}")
    assert set(seen[-1]["operation"]) == {"location"}
    assert fc.dispatcher.calls[-1] == ("stop", job, "/sp", True, None)
    # checkpoint: {"checkpointId"}
    status, trig = await fc.call("POST", f"/v1/jobs/{job}/checkpoints", json={"checkpointType": "FULL"})
    assert status == 202
    seen = await _poll(fc, f"/v1/jobs/{job}/checkpoints/{trig['request-id']}")
    assert seen[-1] == {"status": {"id": "COMPLETED"}, "operation": {"checkpointId": 7}}
    # disposal: 200 (not 202), then COMPLETED with operation {}
    status, trig = await fc.call("POST", "/v1/savepoint-disposal", json={"savepoint-path": "/sp/savepoint-1"})
    assert status == 200
    seen = await _poll(fc, f"/v1/savepoint-disposal/{trig['request-id']}")
    assert seen[-1] == {"status": {"id": "COMPLETED"}, "operation": {}}
    # rescaling: 200, then COMPLETED with operation {}
    status, trig = await fc.call("PATCH", f"/v1/jobs/{job}/rescaling?parallelism=3")
    assert status == 200
    seen = await _poll(fc, f"/v1/jobs/{job}/rescaling/{trig['request-id']}")
    assert seen[-1] == {"status": {"id": "COMPLETED"}, "operation": {}}
    assert fc.dispatcher.calls[-1] == ("rescale", job, 3)


async def test_failures_are_completed_with_a_failure_cause(fake_cluster: FakeCluster) -> None:
    fc, job = fake_cluster, fake_cluster.job_id
    _, trig = await fc.call("POST", f"/v1/jobs/{job}/savepoints", json={"target-directory": "/fail"})
    final = (await _poll(fc, f"/v1/jobs/{job}/savepoints/{trig['request-id']}"))[-1]
    cause = final["operation"]["failure-cause"]
    assert set(final["operation"]) == {"failure-cause"}
    assert cause["class"] == "flott.errors.ClusterError" and "the disk is full" in cause["stack-trace"]
    _, trig = await fc.call("POST", "/v1/savepoint-disposal", json={"savepoint-path": "/fail/sp"})
    final = (await _poll(fc, f"/v1/savepoint-disposal/{trig['request-id']}"))[-1]
    assert "the disk is full" in final["operation"]["failure-cause"]["stack-trace"]


async def test_default_directories_job_before_cluster(fake_cluster: FakeCluster) -> None:
    fc = fake_cluster
    status, _ = await fc.call("POST", f"/v1/jobs/{fc.job_with_default}/savepoints", json={})
    assert status == 202
    assert fc.dispatcher.calls[-1][2] == "/job/default", "the job's own default directory"
    await expect(fc, 400, "Property [targetDirectory]", "POST", f"/v1/jobs/{fc.job_id}/stop", {})
    config = fc.config.with_overrides({SAVEPOINT_DIR_KEY: "/cluster/default"})
    endpoint = RestServerEndpoint(config, cast(DispatcherGateway, fc.dispatcher))
    await endpoint.start()
    try:
        other = FakeCluster(fc.dispatcher, endpoint, config, fc.http, fc.job_id, fc.job_with_default)
        assert (await other.call("POST", f"/v1/jobs/{fc.job_id}/stop", json={}))[0] == 202
        assert fc.dispatcher.calls[-1][2] == "/cluster/default"
        assert (await other.call("POST", f"/v1/jobs/{fc.job_with_default}/stop", json={}))[0] == 202
        assert fc.dispatcher.calls[-1][2] == "/job/default", "the job's default wins over the cluster's"
    finally:
        await endpoint.stop()


async def test_statistics_config_and_details(fake_cluster: FakeCluster) -> None:
    fc, job = fake_cluster, fake_cluster.job_id
    status, stats = await fc.call("GET", f"/v1/jobs/{job}/checkpoints")
    assert status == 200 and stats["counts"]["completed"] == 1
    status, conf = await fc.call("GET", f"/v1/jobs/{job}/checkpoints/config")
    assert status == 200 and conf["mode"] == "exactly_once"
    status, details = await fc.call("GET", f"/v1/jobs/{job}/checkpoints/details/3")
    assert status == 200 and details["id"] == 3 and details["external_path"] == "/cp/chk-3"
    await expect(fc, 404, "Could not find checkpointing statistics for checkpoint 4", "GET",
                 f"/v1/jobs/{job}/checkpoints/details/4")  # fmt: skip
    await expect(fc, 501, "Per-subtask checkpoint statistics", "GET",
                 f"/v1/jobs/{job}/checkpoints/details/3/subtasks/{job}")  # fmt: skip


async def test_openapi_documents_the_result_shapes(fake_cluster: FakeCluster) -> None:
    status, doc = await fake_cluster.call("GET", "/v1/openapi.json")
    assert status == 200
    ok = doc["paths"]["/jobs/{jobid}/savepoints/{triggerid}"]["get"]["responses"]["200"]
    ref = ok["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    operation = doc["components"]["schemas"][ref]["properties"]["operation"]
    assert "SavepointInfo" in json.dumps(operation)
    summaries = json.dumps(doc["paths"])
    assert "501 until" not in summaries and "checkpoints issue" not in summaries


async def test_client_operations(fake_cluster: FakeCluster) -> None:
    fc, job = fake_cluster, fake_cluster.job_id
    async with fc.client() as client:
        path = await client.trigger_savepoint(job, "/sp")
        assert path.startswith(f"/sp/savepoint-{job[:6]}-")
        kind, _, directory, cancel, trigger_id = fc.dispatcher.calls[-1]
        assert (kind, directory, cancel) == ("savepoint", "/sp", False)
        assert trigger_id is not None and len(trigger_id) == 32, "the client picks the trigger id"
        assert (await client.cancel_with_savepoint(job, "/sp")).startswith("/sp/")
        assert fc.dispatcher.calls[-1][3] is True
        assert (await client.stop_with_savepoint(job, True, "/sp")).startswith("/sp/")
        assert fc.dispatcher.calls[-1][:4] == ("stop", job, "/sp", True)
        assert (await client.stop_with_savepoint(fc.job_with_default)).startswith("/job/default/")
        assert await client.trigger_checkpoint(job) == 7
        await client.dispose_savepoint("/sp/savepoint-x")
        assert fc.dispatcher.calls[-1] == ("dispose", "/sp/savepoint-x")
        await client.rescale_job(job, 4)
        assert fc.dispatcher.calls[-1] == ("rescale", job, 4)
        trigger = await client.trigger_detached_savepoint(job, "/sp")
        assert (await client.get_savepoint_status(job, trigger)).status == "IN_PROGRESS"
        assert (await client.get_checkpoint_statistics(job))["counts"]["completed"] == 1
        assert (await client.get_checkpoint_config(job))["interval"] == 1000

        with pytest.raises(
            OperationFailedError, match=r"Savepoint of job .* failed: .*the disk is full"
        ) as e:
            await client.trigger_savepoint(job, "/fail")
        assert isinstance(e.value.cause, ClusterError)
        with pytest.raises(OperationFailedError, match="Disposal of savepoint /fail failed"):
            await client.dispose_savepoint("/fail")
        with pytest.raises(
            RpcTimeoutError, match=r"did not complete within 0.3s \(trigger id [0-9a-f]{32}\)"
        ):
            await client.trigger_savepoint(job, "/never", timeout_s=0.3)
        with pytest.raises(JobNotFoundError):
            await client.stop_with_savepoint(UNKNOWN_JOB, False, "/sp")
        with pytest.raises(OperationNotFoundError):
            await client.get_disposal_status(secrets.token_hex(16))
    assert fc.client(**{"client.timeout": "2 min"}).operation_timeout_s == 120


async def test_sync_client_operations(fake_cluster: FakeCluster) -> None:
    def use() -> tuple[str, int]:
        with SyncRestClusterClient(fake_cluster.config, fake_cluster.address) as client:
            return client.trigger_savepoint(fake_cluster.job_id, "/sp"), client.trigger_checkpoint(
                fake_cluster.job_id
            )

    path, checkpoint_id = await asyncio.to_thread(use)
    assert path.startswith("/sp/") and checkpoint_id == 7


# -- failure causes Flink's Java client can read ---------------------------------------------------

PYFLINK = Path(
    os.environ.get("FLOTT_PYFLINK_DIR")
    or REPO / "bench" / ".venv-peers" / "lib" / "python3.11" / "site-packages" / "pyflink"
)
_JAVA_CHECK = """
import java.nio.file.*;
import org.apache.flink.util.*;
public class Check {
  public static void main(String[] a) throws Exception {
    SerializedThrowable t = (SerializedThrowable) InstantiationUtil.deserializeObject(
        Files.readAllBytes(Paths.get(a[0])), ClassLoader.getSystemClassLoader());
    System.out.println(t);
    System.out.println(t.getFullStringifiedStackTrace().length());
    System.out.println(t.deserializeError(ClassLoader.getSystemClassLoader()) == t);
  }
}
"""


def _failure() -> JobExecutionError:
    cause = UserCodeError("ZeroDivisionError", "division by zero", "Traceback ...\n" * 6000, "Map (1/2)")
    return JobExecutionError("Job failed: ünïcödé \x00 😀", cause)


def test_failure_cause_is_a_java_serialized_throwable_carrying_the_flott_error() -> None:
    st = to_serialized_throwable(_failure())
    raw = base64.b64decode(st.serialized_throwable)
    assert raw.startswith(b"\xac\xed\x00\x05\x73\x72") and b"org.apache.flink.util.SerializedThrowable" in raw
    assert st.class_name == "flott.errors.JobExecutionError"
    assert st.stack_trace.startswith("flott.errors.JobExecutionError: Job failed")
    assert "Caused by: flott.errors.UserCodeError" in st.stack_trace
    rebuilt = error_from_wire(from_serialized_throwable(msgspec.to_builtins(st)))
    assert isinstance(rebuilt, JobExecutionError) and rebuilt.message == "Job failed: ünïcödé \x00 😀"
    assert isinstance(rebuilt.cause, UserCodeError) and rebuilt.cause.exception_type == "ZeroDivisionError"
    assert rebuilt.cause.traceback.count("Traceback ...") == 6000
    # the format flott wrote before (bare msgpack) and Flink's own text still read
    old_format = base64.b64encode(msgspec.msgpack.encode(error_to_wire(ClusterError("old")))).decode()
    legacy = {"class": "x", "stack-trace": "x: y", "serialized-throwable": old_format}
    assert error_from_wire(from_serialized_throwable(legacy)).message == "old"
    java_only = {"class": "java.io.IOException", "stack-trace": "java.io.IOException: disk\n\tat X",
                 "serialized-throwable": base64.b64encode(b"\xac\xed\x00\x05junk").decode()}  # fmt: skip
    assert from_serialized_throwable(java_only).message == "java.io.IOException: disk"


@pytest.mark.skipif(
    not (PYFLINK / "lib").is_dir() or shutil.which("java") is None,
    reason="Flink's jars are not installed (bench/setup, or FLOTT_PYFLINK_DIR=<pyflink dir>)",
)
def test_flinks_java_client_reads_the_failure_cause(tmp_path: Path) -> None:
    (tmp_path / "st.bin").write_bytes(
        base64.b64decode(to_serialized_throwable(_failure()).serialized_throwable)
    )
    (tmp_path / "Check.java").write_text(_JAVA_CHECK)
    jar = next((PYFLINK / "lib").glob("flink-dist-*.jar"))
    out = subprocess.run(
        ["java", "-cp", str(jar), "Check.java", "st.bin"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[-3] == "flott.errors.JobExecutionError: Job failed: ünïcödé \x00 😀"
    assert int(lines[-2]) > 65535, "a long stack trace (Java's long string form)"
    assert lines[-1] == "true", "Flink falls back to the SerializedThrowable itself"
