"""Wrong requests get Flink's error body and the right status, never a 500, and the cluster keeps serving."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from flott.runtime.jobgraph import encode_job_graph
from tests.rest import spec
from tests.rest.conftest import RestCluster, make_config, start_rest_cluster
from tests.rest.jobs import bounded_job, unbounded_job

REQUEST = {"jobGraphFileName": "graph.bin", "jobJarFileNames": [], "jobArtifactFileNames": []}


def submission(
    request: Any,
    files: dict[str, bytes],
    request_type: str = "text/plain; charset=UTF-8",
) -> aiohttp.FormData:
    form = aiohttp.FormData()
    if request is not None:
        form.add_field(
            "request", request if isinstance(request, str) else json.dumps(request), content_type=request_type
        )
    for i, (name, data) in enumerate(files.items()):
        form.add_field(f"file_{i}", data, filename=name, content_type="application/octet-stream")
    return form


async def expect_error(
    rc: RestCluster, status: int, contains: str, method: str, path: str, **kwargs: Any
) -> list[str]:
    got, body = await rc.call(method, path, **kwargs)
    assert got == status, (got, body)
    spec.validate(body, spec.ERROR_SCHEMA)
    text = " ".join(body["errors"])
    assert contains in text, text
    assert "Traceback" not in text and "Internal server error" not in text
    return body["errors"]


def leftover_uploads(rc: RestCluster) -> list[Path]:
    root = rc.endpoint._upload_root
    assert root is not None
    return [p for p in root.rglob("*") if p.is_file()]


async def test_bad_submissions_get_flink_errors_and_the_cluster_keeps_serving(
    rest_cluster: RestCluster,
) -> None:
    rc = rest_cluster
    good = bounded_job("good")
    graph = encode_job_graph(good)
    await expect_error(rc, 400, "multipart/form-data", "POST", "/v1/jobs", json=REQUEST)
    await expect_error(
        rc,
        400,
        "Malformed multipart",
        "POST",
        "/v1/jobs",
        data=b"--xx\r\ngarbage\r\n",
        headers={"Content-Type": "multipart/form-data; boundary=xx"},
    )
    await expect_error(
        rc,
        400,
        "Malformed multipart",
        "POST",
        "/v1/jobs",
        data=b'--xx\r\nContent-Disposition: form-data; name="request"\r\n\r\n{"jobGr',
        headers={"Content-Type": "multipart/form-data; boundary=xx"},
    )
    await expect_error(
        rc,
        400,
        "attribute 'request' is missing",
        "POST",
        "/v1/jobs",
        data=submission(None, {"graph.bin": graph}),
    )
    await expect_error(
        rc,
        400,
        "Request did not match expected format JobSubmitRequestBody",
        "POST",
        "/v1/jobs",
        data=submission({**REQUEST, "surprise": 1}, {"graph.bin": graph}),
    )
    await expect_error(
        rc,
        400,
        "Request did not match expected format JobSubmitRequestBody",
        "POST",
        "/v1/jobs",
        data=submission("{not json", {"graph.bin": graph}),
    )
    await expect_error(
        rc,
        400,
        "The jobGraphFileName field must not be omitted or be null.",
        "POST",
        "/v1/jobs",
        data=submission({"jobJarFileNames": []}, {"graph.bin": graph}),
    )
    await expect_error(
        rc,
        400,
        "does not match the number of files",
        "POST",
        "/v1/jobs",
        data=submission(REQUEST, {"graph.bin": graph, "extra.py": b"x = 1"}),
    )
    await expect_error(
        rc, 400, "does not match the number of files", "POST", "/v1/jobs", data=submission(REQUEST, {})
    )
    await expect_error(
        rc,
        400,
        "'graph.bin' named in the request was not uploaded",
        "POST",
        "/v1/jobs",
        data=submission(REQUEST, {"other.bin": graph}),
    )
    await expect_error(
        rc,
        400,
        "Unknown form attribute 'color'",
        "POST",
        "/v1/jobs",
        data=_with_attribute(submission(REQUEST, {"graph.bin": graph}), "color", "blue"),
    )
    await expect_error(
        rc,
        400,
        "not a flott JobGraph",
        "POST",
        "/v1/jobs",
        data=submission(REQUEST, {"graph.bin": os.urandom(2048)}),
    )
    await expect_error(
        rc,
        400,
        "Java-serialised Flink JobGraph",
        "POST",
        "/v1/jobs",
        data=submission(REQUEST, {"graph.bin": b"\xac\xed\x00\x05sr\x00\x30org.apache.flink"}),
    )
    for evil in ("../../../tmp/evil.bin", "..", "a\\..\\b.bin", "x\x01.bin"):
        request = {**REQUEST, "jobArtifactFileNames": [{"entryName": "e.py", "fileName": evil}]}
        await expect_error(
            rc,
            400,
            "Illegal file name",
            "POST",
            "/v1/jobs",
            data=submission(request, {"graph.bin": graph, "ok.py": b"x"}),
        )
    request = {**REQUEST, "jobArtifactFileNames": [{"entryName": "../../escape.py", "fileName": "ok.py"}]}
    await expect_error(
        rc,
        400,
        "Illegal file name",
        "POST",
        "/v1/jobs",
        data=submission(request, {"graph.bin": graph, "ok.py": b"x"}),
    )
    assert leftover_uploads(rc) == [], "every rejected upload is removed"
    assert not await asyncio.to_thread(os.path.exists, "/tmp/evil.bin")

    async with rc.client() as client:
        running = await client.submit_job(unbounded_job("running"))
        await expect_error(
            rc,
            409,
            "DuplicateJobSubmissionError",
            "POST",
            "/v1/jobs",
            data=submission(REQUEST, {"graph.bin": _same_id(running)}),
        )
        assert await client.get_job_status(running) == "RUNNING", (
            "the duplicate did not disturb the running job"
        )
        assert await client.submit_job(good) == good.job_id
        assert (await client.wait_for_job_result(good.job_id, timeout_s=30)).status == "FINISHED"
        await client.cancel_job(running)


def _same_id(job_id: str) -> bytes:
    """A different JobGraph carrying an existing job's id."""
    import msgspec

    other = bounded_job("impostor")
    return encode_job_graph(msgspec.structs.replace(other, job_id=job_id))


def _with_attribute(form: aiohttp.FormData, name: str, value: str) -> aiohttp.FormData:
    form.add_field(name, value)
    return form


async def test_unknown_and_malformed_ids(rest_cluster: RestCluster) -> None:
    rc = rest_cluster
    unknown = "0123456789abcdef" * 2
    await expect_error(rc, 404, "JobNotFoundError", "GET", f"/v1/jobs/{unknown}")
    await expect_error(rc, 404, "JobNotFoundError", "GET", f"/v1/jobs/{unknown}/status")
    await expect_error(rc, 404, "JobNotFoundError", "GET", f"/v1/jobs/{unknown}/execution-result")
    await expect_error(rc, 404, "JobNotFoundError", "PATCH", f"/v1/jobs/{unknown}?mode=cancel", data=b"{}")
    await expect_error(
        rc,
        404,
        "JobNotFoundError",
        "POST",
        f"/v1/jobs/{unknown}/savepoints",
        json={"target-directory": "/tmp/sp"},
    )
    await expect_error(
        rc, 400, "jobid must be a 32-character hexadecimal", "GET", "/v1/jobs/not-a-job/status"
    )
    await expect_error(rc, 400, "jobid must be a 32-character hexadecimal", "GET", f"/jobs/{unknown.upper()}")
    await expect_error(rc, 404, "Not found: /v1/nothing/here?x=1", "GET", "/v1/nothing/here?x=1")
    errors = await expect_error(rc, 404, "Not found: /x", "GET", "/x")
    assert errors == ["Not found: /x"]
    await expect_error(rc, 405, "allowed: GET, PATCH", "DELETE", f"/v1/jobs/{unknown}")
    await expect_error(
        rc,
        400,
        "Request did not match expected format SavepointTriggerRequestBody",
        "POST",
        f"/v1/jobs/{unknown}/savepoints",
        json={"target-directory": "/tmp", "cancel-job": None},
    )
    await expect_error(
        rc,
        400,
        "Property [target-directory] must be provided",
        "POST",
        f"/v1/jobs/{unknown}/savepoints",
        json={},
    )
    await expect_error(
        rc,
        400,
        "Request did not match expected format",
        "POST",
        f"/v1/jobs/{unknown}/stop",
        data=b'{"drain": tru',
        headers={"Content-Type": "application/json"},
    )
    await expect_error(
        rc,
        308,
        'termination mode "stop" has been removed',
        "PATCH",
        f"/v1/jobs/{unknown}?mode=stop",
        allow_redirects=False,
    )
    await expect_error(rc, 400, "mode must be 'cancel'", "PATCH", f"/v1/jobs/{unknown}?mode=pause")
    await expect_error(
        rc,
        400,
        "subtaskindex must be a non-negative integer",
        "GET",
        f"/v1/jobs/{unknown}/vertices/{unknown}/subtasks/-1",
    )
    await expect_error(rc, 400, "agg must be among", "GET", "/v1/jobs/metrics?get=uptime&agg=median")
    status, jobs = await rc.call("GET", "/v1/jobs/overview")
    assert status == 200 and jobs == {"jobs": []}


async def test_oversized_upload_is_413_with_the_limit(no_leftover_processes: None) -> None:
    limit = 256 * 1024
    cluster, endpoint = await start_rest_cluster(
        make_config(**{"rest.server.max-content-length": str(limit)}), num_task_managers=1
    )
    try:
        async with aiohttp.ClientSession() as http:
            rc = RestCluster(cluster, endpoint, make_config(), http)

            async def chunks() -> Any:
                for _ in range(16):
                    yield os.urandom(64 * 1024)

            for data in (os.urandom(4 * limit), chunks()):  # with a content length, and chunked
                form = submission(
                    {**REQUEST, "jobArtifactFileNames": [{"entryName": "big", "fileName": "big"}]},
                    {"graph.bin": encode_job_graph(bounded_job("small"))},
                )
                form.add_field("file_1", data, filename="big")
                await expect_error(
                    rc, 413, f"maximum content length of {limit} bytes", "POST", "/v1/jobs", data=form
                )
            assert leftover_uploads(rc) == []
            await expect_error(
                rc,
                413,
                f"{limit} bytes",
                "POST",
                f"/v1/jobs/{'0' * 32}/savepoints",
                data=b"{" + b" " * (2 * limit) + b"}",
                headers={"Content-Type": "application/json"},
            )
            async with rc.client() as client:
                job_id = await client.submit_job(bounded_job("after-413"))
                assert (await client.wait_for_job_result(job_id, timeout_s=30)).status == "FINISHED"
    finally:
        await endpoint.stop()
        await cluster.close()


async def _raw_http(port: int, request: bytes) -> tuple[int, dict[str, str], Any]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), 30)  # Connection: close → read to EOF
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    if headers.get("transfer-encoding") == "chunked":
        body = _dechunk(body)
    return int(lines[0].split()[1]), headers, json.loads(body)


def _dechunk(data: bytes) -> bytes:
    out = b""
    while data:
        size_line, _, rest = data.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            break
        out += rest[:size]
        data = rest[size + 2 :]
    return out


def _chunked(payload: bytes, size: int = 1000) -> bytes:
    parts = [
        b"%x\r\n%s\r\n" % (len(payload[i : i + size]), payload[i : i + size])
        for i in range(0, len(payload), size)
    ]
    return b"".join(parts) + b"0\r\n\r\n"


async def test_flink_cli_wire_quirks(rest_cluster: RestCluster) -> None:
    """Exactly what Flink 2.3's CLI sends (FLINK-CLI-WIRE.md): a GET with a {} body and connection: close,
    and a chunked multipart submission naming the plan ``executionPlanFileName``."""
    port = rest_cluster.endpoint.port
    status, headers, body = await _raw_http(
        port,
        (
            b"GET /v1/jobs/overview HTTP/1.1\r\nhost: 127.0.0.1:%d\r\nconnection: close\r\n"
            b"content-type: application/json; charset=UTF-8\r\ncontent-length: 2\r\n\r\n{}"
        )
        % port,
    )
    assert status == 200 and body == {"jobs": []}
    assert headers["content-type"] == "application/json; charset=UTF-8"
    assert "access-control-allow-origin" not in headers  # flott: CORS off unless configured

    graph = bounded_job("cli-wire")
    plan_name = f"flink-executionPlan-{graph.job_id}1234567890.bin".encode()
    request_json = json.dumps(
        {"executionPlanFileName": plan_name.decode(), "jobJarFileNames": [], "jobArtifactFileNames": []}
    ).encode()
    plan = encode_job_graph(graph)
    boundary = b"1e4c2a92fd4f994d"
    multipart = (
        b"--" + boundary + b'\r\ncontent-disposition: form-data; name="request"\r\n'
        b"content-length: %d\r\ncontent-type: text/plain; charset=UTF-8\r\n\r\n"
        % len(request_json)
        + request_json
        + b"\r\n--"
        + boundary
        + b'\r\ncontent-disposition: form-data; name="file_0"; filename="'
        + plan_name
        + b'"\r\ncontent-length: %d\r\ncontent-type: application/octet-stream\r\n'
        b"content-transfer-encoding: binary\r\n\r\n" % len(plan) + plan + b"\r\n--" + boundary + b"--\r\n"
    )
    status, _, body = await _raw_http(
        port,
        (
            b"POST /v1/jobs HTTP/1.1\r\nhost: 127.0.0.1:%d\r\nconnection: close\r\n"
            b"content-type: multipart/form-data; boundary="
            % port
            + boundary
            + b"\r\ntransfer-encoding: chunked\r\n\r\n"
            + _chunked(multipart)
        ),
    )
    assert status == 202 and body == {"jobUrl": f"/jobs/{graph.job_id}"}
    async with rest_cluster.client() as client:
        assert (await client.wait_for_job_result(graph.job_id, timeout_s=30)).status == "FINISHED"


async def test_dataset_deletion_follows_the_async_operation_pattern(rest_cluster: RestCluster) -> None:
    rc = rest_cluster
    status, trigger = await rc.call("DELETE", f"/v1/datasets/{'ab' * 16}")
    assert status == 202 and set(trigger) == {"request-id"}
    for _ in range(50):
        status, result = await rc.call("GET", f"/v1/datasets/delete/{trigger['request-id']}")
        if result["status"]["id"] == "COMPLETED":
            break
        assert result == {"status": {"id": "IN_PROGRESS"}, "operation": None}
        await asyncio.sleep(0.05)
    assert status == 200 and result == {"status": {"id": "COMPLETED"}, "operation": {}}
    await expect_error(rc, 404, "Operation not found under key", "GET", f"/v1/datasets/delete/{'cd' * 16}")


@pytest.mark.parametrize("prefix", ["", "/v1"])
async def test_versioned_and_unversioned_paths(rest_cluster: RestCluster, prefix: str) -> None:
    status, body = await rest_cluster.call("GET", f"{prefix}/config")
    assert status == 200 and body["flink-revision"].startswith("flott-")
