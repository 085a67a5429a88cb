"""RestClusterClient against a real endpoint (and against fake servers for the retry rules)."""

from __future__ import annotations

import asyncio
import glob
import os
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from flott.client.pipeline_executor import use_executor
from flott.client.rest_cluster_client import RestClusterClient, RestExecutor
from flott.common.job_client import describe_failure
from flott.datastream import StreamExecutionEnvironment
from flott.errors import (
    JobAlreadyTerminalError,
    JobNotFoundError,
    JobSubmissionError,
    LeadershipLostError,
    RestRequestError,
    RpcConnectionError,
    UserCodeError,
)
from flott.rest.errors import RestNotFoundError
from flott.rest.webmonitor.rest_server_endpoint import RestServerEndpoint
from flott.runtime.rpc.service import error_from_wire
from tests.rest.conftest import RestCluster, free_port, make_config, start_rest_cluster
from tests.rest.jobs import bounded_job, failing_job, unbounded_job


def graph_temp_files(job_id: str) -> list[str]:
    return glob.glob(os.path.join(tempfile.gettempdir(), f"flott-jobgraph-{job_id}*"))


async def test_submission_with_python_file_artifact(rest_cluster: RestCluster, tmp_path: Path) -> None:
    helper = tmp_path / "helper.py"
    helper.write_text("FACTOR = 3\n")
    package = tmp_path / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("X = 1\n")
    graph = bounded_job("with-artifacts", python_files=(str(helper), str(package), "s3://bucket/remote.py"))
    async with rest_cluster.client() as client:
        assert await client.submit_job(graph) == graph.job_id
        assert graph_temp_files(graph.job_id) == [], "the temporary JobGraph file is deleted"
        result = await client.wait_for_job_result(graph.job_id, timeout_s=30)
    assert result.status == "FINISHED"
    artifacts = await rest_cluster.cluster.dispatcher_gateway().request_job_artifacts(graph.job_id)
    by_name = {a.entry_name: a for a in artifacts}
    assert set(by_name) == {"helper.py", "mypkg.zip"}, "local files uploaded, the s3:// one only referenced"
    stored = Path(by_name["helper.py"].path)
    assert by_name["helper.py"].size == 11
    assert stored.is_relative_to(rest_cluster.endpoint._upload_root)  # type: ignore[arg-type]
    assert not await asyncio.to_thread(stored.exists), "the upload is removed once the BlobServer has it"


async def test_job_lifecycle_through_the_client(rest_cluster: RestCluster) -> None:
    async with rest_cluster.client() as client:
        version = await client.check_rest_api_version()
        assert version.flink_revision.startswith("flott-")
        job_id = await client.submit_job(unbounded_job("lifecycle"))
        assert await client.get_job_status(job_id) == "RUNNING"
        assert [j.job_id for j in await client.list_jobs()] == [job_id]
        info = await client.request_job(job_id)
        assert info.status == "RUNNING" and len(info.vertices) == 2
        assert await client.request_job_result(job_id, 0.2) is None, "still running"
        overview = await client.get_cluster_overview()
        assert overview.jobs_running == 1 and overview.taskmanagers == 2
        assert len(await client.list_task_managers()) == 2
        await client.cancel_job(job_id)
        result = await client.wait_for_job_result(job_id, timeout_s=30)
        assert result.status == "CANCELED"
        await client.cancel_job(job_id)  # cancelling a cancelled job succeeds (Flink: 202)
        done = await client.submit_job(bounded_job("done"))
        assert (await client.wait_for_job_result(done, timeout_s=30)).status == "FINISHED"
        with pytest.raises(JobAlreadyTerminalError):
            await client.cancel_job(done)  # a FINISHED job cannot be cancelled: 409
        with pytest.raises(JobNotFoundError):
            await client.get_job_status("0" * 32)
        with pytest.raises(RestRequestError):
            await client.get_job_status("not-a-job-id")
        await client.shutdown_cluster()


async def test_failed_job_result_carries_the_user_error(rest_cluster: RestCluster) -> None:
    async with rest_cluster.client() as client:
        job_id = await client.submit_job(failing_job())
        result = await client.wait_for_job_result(job_id, timeout_s=30)
    assert result.status == "FAILED" and result.failure is not None
    cause = error_from_wire(result.failure)
    assert isinstance(cause, UserCodeError) and cause.exception_type == "ZeroDivisionError"
    assert "x // (x - 3)" in cause.traceback, "the worker's traceback survives the REST round trip"
    assert "ZeroDivisionError" in str(describe_failure("failing", job_id, result))
    status, exceptions = await rest_cluster.call("GET", f"/v1/jobs/{job_id}/exceptions")
    assert status == 200
    [entry] = exceptions["exceptionHistory"]["entries"]
    assert entry["exceptionName"] == "ZeroDivisionError" and "x // (x - 3)" in entry["stacktrace"]


async def test_env_execute_through_rest_executor(rest_cluster: RestCluster) -> None:
    def run() -> int:
        env = StreamExecutionEnvironment.get_execution_environment()
        env.set_parallelism(2)
        env.from_collection(list(range(100))).map(lambda x: x + 1).add_sink(_Discard())
        with use_executor(RestExecutor(rest_cluster.config, rest_cluster.address)):
            return env.execute("via-rest").get_net_runtime()  # type: ignore[no-any-return]

    assert await asyncio.to_thread(run) >= 0
    [job] = await rest_cluster.client().list_jobs()
    assert job.job_name == "via-rest" and job.status == "FINISHED"


class _Discard:
    def invoke(self, value: object, context: object) -> None:
        pass


async def test_submission_succeeds_once_the_server_comes_up(no_leftover_processes: None) -> None:
    port = free_port()
    config = make_config(
        **{"rest.port": str(port), "rest.retry.max-attempts": "600", "rest.retry.delay": "100 ms"}
    )
    graph = bounded_job("late-server")
    client = RestClusterClient(config, f"127.0.0.1:{port}")
    submission = asyncio.create_task(client.submit_job(graph))
    await asyncio.sleep(0.5)
    assert not submission.done(), "connection refused is retried"
    cluster, endpoint = await start_rest_cluster(config)
    try:
        assert endpoint.port == port
        assert await asyncio.wait_for(submission, 30) == graph.job_id
        assert (await client.wait_for_job_result(graph.job_id, timeout_s=30)).status == "FINISHED"
        assert graph_temp_files(graph.job_id) == []
    finally:
        await client.close()
        await endpoint.stop()
        await cluster.close()


async def test_submission_to_a_dead_address_fails_after_the_configured_attempts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    port = free_port()
    config = make_config(**{"rest.retry.max-attempts": "3", "rest.retry.delay": "150 ms"})
    graph = bounded_job("nobody-home")
    start = time.monotonic()
    async with RestClusterClient(config, f"127.0.0.1:{port}") as client:
        with pytest.raises(JobSubmissionError) as info:
            await client.submit_job(graph)
    elapsed = time.monotonic() - start
    said = [r.getMessage() for r in caplog.records if "retrying" in r.getMessage()]
    assert len(said) == 1, "the first refused connection is said at once, and once"
    assert f"127.0.0.1:{port}" in said[0] and "retrying 3 more time(s), 0.15 s apart" in said[0]
    assert isinstance(info.value.cause, RpcConnectionError)
    assert graph.job_id in str(info.value) and f"127.0.0.1:{port}" in str(info.value)
    assert 0.45 <= elapsed < 5, "3 retries 150 ms apart after the first attempt"
    assert graph_temp_files(graph.job_id) == [], "deleted although the submission failed"


@pytest.fixture
async def fake_server() -> AsyncIterator[tuple[str, list[str], dict[str, int]]]:
    """An HTTP server answering every request with the status in ``answer['status']``; counts requests."""
    seen: list[str] = []
    answer = {"status": 503}

    async def handle(request: web.Request) -> web.Response:
        seen.append(f"{request.method} {request.path}")
        await request.read()
        return web.json_response({"errors": ["busy"]}, status=answer["status"])

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    yield f"{host}:{port}", seen, answer
    await runner.cleanup()


async def test_503_is_retried_and_404_is_not(fake_server: tuple[str, list[str], dict[str, int]]) -> None:
    address, seen, answer = fake_server
    config = make_config(**{"rest.retry.max-attempts": "3", "rest.retry.delay": "10 ms"})
    async with RestClusterClient(config, address) as client:
        graph = bounded_job("busy")
        with pytest.raises(JobSubmissionError) as info:
            await client.submit_job(graph)
        assert isinstance(info.value.cause, LeadershipLostError)
        # A submission starts with the version check (GET /config), so that is the request retried.
        assert seen == ["GET /v1/config"] * 4, "max-attempts=3 means 3 retries after the first attempt"
        seen.clear()
        answer["status"] = 404
        with pytest.raises(RestNotFoundError):
            await client.get_job_status(graph.job_id)
        assert seen == [f"GET /v1/jobs/{graph.job_id}/status"], "404 is final"


async def test_endpoint_without_leader_answers_503() -> None:
    endpoint = RestServerEndpoint(make_config(), lambda: None)
    await endpoint.start()
    try:
        async with RestClusterClient(
            make_config(**{"rest.retry.max-attempts": "0"}), f"127.0.0.1:{endpoint.port}"
        ) as client:
            with pytest.raises(LeadershipLostError, match="ongoing leader election"):
                await client.list_jobs()
    finally:
        await endpoint.stop()


async def test_sync_client_for_code_without_an_event_loop(rest_cluster: RestCluster) -> None:
    """Synchronous use: the same operations, called from a plain thread."""
    from flott.client.rest_cluster_client import SyncRestClusterClient

    def use_sync() -> tuple[int, list[str]]:
        with SyncRestClusterClient(address=rest_cluster.address) as client:
            overview = client.get_cluster_overview()
            return overview.taskmanagers, [j.job_id for j in client.list_jobs()]

    taskmanagers, jobs = await asyncio.to_thread(use_sync)
    assert taskmanagers == 2
    assert isinstance(jobs, list)
