"""Every operation of Flink's REST spec, called on a real cluster; every answer checked against the spec.

``PLAN`` names, for each (method, path) of Flink's spec (plus the POST /jobs
supplement), what flott answers and why. A new operation in the spec fixture
fails ``test_plan_covers_the_spec`` until someone decides what flott does
with it. Summary of the plan:

* served with data (2xx, validated against the spec's response schema and
  checked for fields the spec does not know);
* 501 with a reason (per-subtask checkpoint details, resource requirements);
* 404 for status URLs polled with a trigger id nobody was given (savepoints,
  checkpoints, disposal, rescaling): Flink's "unknown trigger id".

Savepoints, stop, checkpoints, disposal and rescaling are triggered for real
(202/200): savepoints go to a temporary directory, the checkpoint details are
asked for a checkpoint the test took, and stop-with-savepoint targets a second
job so that the main one runs until the final cancel.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from openapi_spec_validator import validate as validate_openapi_document

from flott.rest.webmonitor.routes import all_routes
from flott.runtime.jobgraph import encode_job_graph
from tests.rest import spec
from tests.rest.conftest import RestCluster
from tests.rest.jobs import unbounded_job

NOTHING_TRIGGERED = "status of an operation nobody triggered under this id: Flink's unknown-trigger 404"
# Placeholder in request bodies, replaced by a temporary directory's file:// URI.
SAVEPOINT_DIR = "{savepointdir}"
NO_LOG_URL_PATTERN = "no historyserver.log.*.url-pattern: Flink registers no such route"
NO_RESCALE_HISTORY = "web.adaptive-scheduler.rescale-history.size is 0 (Flink's default): Flink's 404"


@dataclass(frozen=True)
class Case:
    status: int
    note: str = ""
    query: str = ""
    body: Any = None
    params: dict[str, str] = field(default_factory=dict)


PLAN: dict[tuple[str, str], Case] = {
    # cluster
    ("GET", "/config"): Case(200),
    ("GET", "/overview"): Case(200),
    ("DELETE", "/cluster"): Case(200, "the MiniCluster's Dispatcher has no shutdown hook: a no-op here"),
    ("GET", "/datasets"): Case(200, "flott keeps no cluster datasets: always empty"),
    ("DELETE", "/datasets/{datasetid}"): Case(202, "no such dataset: completes at once without failure"),
    ("GET", "/datasets/delete/{triggerid}"): Case(200, "polls the trigger of the DELETE above"),
    # jobmanager
    ("GET", "/jobmanager/config"): Case(200),
    ("GET", "/jobmanager/environment"): Case(200, "describes the Python runtime"),
    ("GET", "/jobmanager/logs"): Case(200, "the files of the JobManager's log directory"),
    ("GET", "/jobmanager/metrics"): Case(
        200, query="get=numRunningJobs,taskSlotsTotal,Status.Process.Memory.RSS"
    ),
    ("GET", "/jobmanager/thread-dump"): Case(200, "Python threads"),
    # jobs
    ("GET", "/jobs"): Case(200),
    ("POST", "/jobs"): Case(202, "sent as multipart by the test itself (see _submit)"),
    ("GET", "/jobs/overview"): Case(200),
    ("GET", "/jobs/metrics"): Case(200, query="get=uptime,numRestarts&agg=min,max,sum"),
    ("GET", "/jobs/{jobid}"): Case(200),
    ("PATCH", "/jobs/{jobid}"): Case(202, "cancels the job: run last", query="mode=cancel"),
    ("GET", "/jobs/{jobid}/accumulators"): Case(200, "no accumulators in flott: empty lists"),
    ("GET", "/jobs/{jobid}/checkpoints"): Case(200),
    ("POST", "/jobs/{jobid}/checkpoints"): Case(202, body={"checkpointType": "FULL"}),
    ("GET", "/jobs/{jobid}/checkpoints/config"): Case(200),
    ("GET", "/jobs/{jobid}/checkpoints/details/{checkpointid}"): Case(
        200, "a checkpoint the test triggered beforehand"
    ),
    ("GET", "/jobs/{jobid}/checkpoints/details/{checkpointid}/subtasks/{vertexid}"): Case(
        501, "no per-subtask checkpoint statistics yet"
    ),
    ("GET", "/jobs/{jobid}/checkpoints/{triggerid}"): Case(404, NOTHING_TRIGGERED),
    ("PATCH", "/jobs/{jobid}/clientHeartbeat"): Case(
        202, "recorded, not enforced", body={"expiredTimestamp": 4102444800000}
    ),
    ("GET", "/jobs/{jobid}/config"): Case(200),
    ("GET", "/jobs/{jobid}/exceptions"): Case(200, query="maxExceptions=10"),
    ("GET", "/jobs/{jobid}/execution-result"): Case(200, "IN_PROGRESS while running"),
    ("GET", "/jobs/{jobid}/jobmanager/config"): Case(200),
    ("GET", "/jobs/{jobid}/jobmanager/environment"): Case(200),
    ("GET", "/jobs/{jobid}/jobmanager/log-url"): Case(404, NO_LOG_URL_PATTERN),
    ("GET", "/jobs/{jobid}/metrics"): Case(200, query="get=uptime,numRestarts"),
    ("GET", "/jobs/{jobid}/plan"): Case(200),
    ("GET", "/jobs/{jobid}/rescales/config"): Case(404, "no adaptive scheduler: Flink's 404 for such a job"),
    ("GET", "/jobs/{jobid}/rescales/details/{rescaleuuid}"): Case(404, NO_RESCALE_HISTORY),
    ("GET", "/jobs/{jobid}/rescales/history"): Case(404, NO_RESCALE_HISTORY),
    ("GET", "/jobs/{jobid}/rescales/overview"): Case(404, NO_RESCALE_HISTORY),
    ("GET", "/jobs/{jobid}/rescales/summary"): Case(404, NO_RESCALE_HISTORY),
    ("PATCH", "/jobs/{jobid}/rescaling"): Case(
        200,
        "enabled in flott, unlike Flink (FLINK-12312): accepted; with no state.savepoints.dir here the "
        "operation then fails and the job runs on",
        query="parallelism=2",
    ),
    ("GET", "/jobs/{jobid}/rescaling/{triggerid}"): Case(404, NOTHING_TRIGGERED),
    ("GET", "/jobs/{jobid}/resource-requirements"): Case(200),
    ("PUT", "/jobs/{jobid}/resource-requirements"): Case(501, "needs the adaptive scheduler"),
    ("POST", "/jobs/{jobid}/savepoints"): Case(
        202,
        body={
            "target-directory": SAVEPOINT_DIR,
            "cancel-job": False,
            "formatType": "CANONICAL",
            "triggerId": None,
        },
    ),
    ("GET", "/jobs/{jobid}/savepoints/{triggerid}"): Case(404, NOTHING_TRIGGERED),
    ("GET", "/jobs/{jobid}/status"): Case(200),
    ("POST", "/jobs/{jobid}/stop"): Case(
        202,
        "sent to a second job (see test_every_spec_operation_answers_as_planned)",
        body={
            "targetDirectory": SAVEPOINT_DIR,
            "drain": False,
            "formatType": "CANONICAL",
            "triggerId": None,
        },
    ),
    ("GET", "/jobs/{jobid}/taskmanagers/{taskmanagerid}/log-url"): Case(404, NO_LOG_URL_PATTERN),
    # vertices
    ("GET", "/jobs/{jobid}/vertices/{vertexid}"): Case(200),
    ("GET", "/jobs/{jobid}/vertices/{vertexid}/accumulators"): Case(200, "no accumulators: empty"),
    ("GET", "/jobs/{jobid}/vertices/{vertexid}/backpressure"): Case(
        200, "each running subtask's last interval"
    ),
    ("GET", "/jobs/{jobid}/vertices/{vertexid}/flamegraph"): Case(200, "rest.flamegraph.enabled off: -2"),
    ("GET", "/jobs/{jobid}/vertices/{vertexid}/jm-operator-metrics"): Case(200, "no coordinators: empty"),
    ("GET", "/jobs/{jobid}/vertices/{vertexid}/metrics"): Case(
        200, query="get=0.numRecordsIn,1.numRecordsOut"
    ),
    ("GET", "/jobs/{jobid}/vertices/{vertexid}/subtasks/accumulators"): Case(200, "no accumulators: empty"),
    ("GET", "/jobs/{jobid}/vertices/{vertexid}/subtasks/metrics"): Case(
        200, query="get=numRecordsIn,busyTimeMsPerSecond&agg=min,max,avg,sum,skew&subtasks=0-1"
    ),
    ("GET", "/jobs/{jobid}/vertices/{vertexid}/subtasks/{subtaskindex}"): Case(200),
    ("GET", "/jobs/{jobid}/vertices/{vertexid}/subtasks/{subtaskindex}/attempts/{attempt}"): Case(200),
    (
        "GET",
        "/jobs/{jobid}/vertices/{vertexid}/subtasks/{subtaskindex}/attempts/{attempt}/accumulators",
    ): Case(200, "no accumulators: empty"),
    ("GET", "/jobs/{jobid}/vertices/{vertexid}/subtasks/{subtaskindex}/metrics"): Case(
        200, query="get=numRecordsIn"
    ),
    ("GET", "/jobs/{jobid}/vertices/{vertexid}/subtasktimes"): Case(200),
    ("GET", "/jobs/{jobid}/vertices/{vertexid}/taskmanagers"): Case(200),
    ("GET", "/jobs/{jobid}/vertices/{vertexid}/watermarks"): Case(
        200, "per subtask; Long.MIN_VALUE before any watermark"
    ),
    # savepoint disposal
    ("POST", "/savepoint-disposal"): Case(
        200,
        "accepted; the disposal itself fails later: no savepoint there",
        body={"savepoint-path": SAVEPOINT_DIR + "/no-such-savepoint"},
    ),
    ("GET", "/savepoint-disposal/{triggerid}"): Case(404, NOTHING_TRIGGERED),
    # taskmanagers
    ("GET", "/taskmanagers"): Case(200),
    ("GET", "/taskmanagers/metrics"): Case(200, query="get=Status.Process.Memory.RSS&agg=sum"),
    ("GET", "/taskmanagers/{taskmanagerid}"): Case(200),
    ("GET", "/taskmanagers/{taskmanagerid}/logs"): Case(200, "the TaskExecutor's log directory, over RPC"),
    ("GET", "/taskmanagers/{taskmanagerid}/metrics"): Case(200, query="get=Status.Process.Memory.RSS"),
    ("GET", "/taskmanagers/{taskmanagerid}/thread-dump"): Case(200, "its Python threads, over RPC"),
    # jars: Python programs (tests/rest/test_jar_routes.py runs them); here none was uploaded
    ("GET", "/jars"): Case(200, "no program uploaded: an empty list"),
    ("POST", "/jars/upload"): Case(400, "a JSON body where one multipart file part is expected"),
    ("DELETE", "/jars/{jarid}"): Case(400, "no such upload: Flink's 400"),
    ("POST", "/jars/{jarid}/plan"): Case(400, "no such upload: Flink's 400"),
    ("POST", "/jars/{jarid}/run"): Case(400, "no such upload: Flink's 400"),
    ("POST", "/jars/{jarid}/run-application"): Case(400, "no such upload: Flink's 400"),
    # applications
    # applications: in flott each job is one (the main job's id; a random one for cancel, which
    # would end the main job early)
    ("GET", "/applications/overview"): Case(200),
    ("GET", "/applications/{applicationid}"): Case(200, "the main job as an application"),
    ("POST", "/applications/{applicationid}/cancel"): Case(404, "no such application: Flink's 404"),
    ("GET", "/applications/{applicationid}/exceptions"): Case(200, "the main job's (none)"),
    ("GET", "/applications/{applicationid}/jobmanager/config"): Case(200),
}


def test_plan_covers_the_spec() -> None:
    ops = set(spec.operations())
    assert set(PLAN) == ops, f"not planned: {sorted(ops - set(PLAN))}; not in spec: {sorted(set(PLAN) - ops)}"
    served = {(r.method, r.path) for r in all_routes()}
    assert ops <= served, f"spec operations without a route: {sorted(ops - served)}"
    served_with_data = [op for op, case in PLAN.items() if case.status < 300]
    assert len(served_with_data) >= 45, "what is served with data is the bulk of the API"


def _fill(path: str, ids: dict[str, str]) -> str:
    for name, value in ids.items():
        path = path.replace("{" + name + "}", value)
    assert "{" not in path, path
    return path


async def _submit(rc: RestCluster) -> str:
    """POST /jobs as Flink's client sends it: a 'request' attribute plus the graph file."""
    graph = unbounded_job("spec-conformance", parallelism=2, rate=2000)
    form = aiohttp.FormData()
    form.add_field(
        "request",
        json.dumps({"jobGraphFileName": "graph.bin", "jobJarFileNames": [], "jobArtifactFileNames": []}),
        content_type="text/plain; charset=UTF-8",
    )
    form.add_field(
        "file_0", encode_job_graph(graph), filename="graph.bin", content_type="application/octet-stream"
    )
    status, body = await rc.call("POST", "/v1/jobs", data=form)
    assert status == 202, body
    _check(("POST", "/jobs"), status, body)
    assert body == {"jobUrl": f"/jobs/{graph.job_id}"}
    return graph.job_id


def _check(op: tuple[str, str], status: int, body: Any) -> None:
    method, path = op
    expected = PLAN[op].status
    assert status == expected, f"{method} {path}: {status} {body}"
    if status >= 300:
        spec.validate(body, spec.ERROR_SCHEMA)
        assert not body["errors"][0].startswith("Not found:"), f"{method} {path} has no route: {body}"
        return
    schema = spec.response_schema(method, path, status)
    if schema is None:
        assert body == {}, f"{method} {path}: a body-less success answers {{}}, got {body}"
        return
    spec.validate(body, schema)
    assert spec.unknown_fields(body, schema) == [], f"{method} {path}: fields not in the spec"


async def _wait_running(rc: RestCluster, job_id: str) -> None:
    for _ in range(100):
        if await rc.client().get_job_status(job_id) == "RUNNING":
            return
        await asyncio.sleep(0.1)
    pytest.fail(f"job {job_id} never reached RUNNING")


async def test_every_spec_operation_answers_as_planned(rest_cluster: RestCluster, tmp_path: Path) -> None:
    rc = rest_cluster
    job_id = await _submit(rc)
    graph = await rc.cluster.dispatcher_gateway().request_execution_graph(job_id)
    vertex_id = graph.vertices[1].id
    for _ in range(100):  # wait until both subtasks of the consumer reported IO metrics
        g = await rc.cluster.dispatcher_gateway().request_execution_graph(job_id)
        if all(ex.metrics_reported and ex.records_in > 0 for ex in g.vertices[1].subtasks):
            break
        await asyncio.sleep(0.1)
    else:
        pytest.fail("the running job never reported metrics")
    checkpoint_id = await rc.client().trigger_checkpoint(job_id)
    # stop-with-savepoint ends its job: it gets one of its own, so the main job runs to the end.
    job_to_stop = await rc.client().submit_job(unbounded_job("to-stop", parallelism=1, rate=100))
    await _wait_running(rc, job_to_stop)
    savepoint_dir = tmp_path.as_uri()
    status, tms = await rc.call("GET", "/v1/taskmanagers")
    ids = {
        "jobid": job_id,
        "vertexid": vertex_id,
        "subtaskindex": "0",
        "attempt": "0",
        "taskmanagerid": tms["taskmanagers"][0]["id"],
        "checkpointid": str(checkpoint_id),
        "rescaleuuid": secrets.token_hex(16),
        "applicationid": job_id,
        "jarid": "job.jar",
        "datasetid": secrets.token_hex(16),
        "triggerid": secrets.token_hex(16),
    }
    # The dataset deletion is polled after its trigger; cancelling the job comes last.
    first, last = ("DELETE", "/datasets/{datasetid}"), ("PATCH", "/jobs/{jobid}")
    order = sorted(PLAN, key=lambda op: (op != first, op == last, op[1], op[0]))
    dataset_trigger = None
    for op in order:
        method, path = op
        case = PLAN[op]
        if op == ("POST", "/jobs"):
            continue  # done by _submit
        filled = _fill(path, {**ids, "jobid": job_to_stop} if op == ("POST", "/jobs/{jobid}/stop") else ids)
        if op == ("POST", "/applications/{applicationid}/cancel"):
            filled = _fill(path, {"applicationid": secrets.token_hex(16)})
        if op == ("GET", "/datasets/delete/{triggerid}"):
            assert dataset_trigger is not None
            filled = f"/datasets/delete/{dataset_trigger}"
        body = case.body
        if isinstance(body, dict):
            body = {
                k: v.replace(SAVEPOINT_DIR, savepoint_dir) if isinstance(v, str) else v
                for k, v in body.items()
            }
        if op == ("PUT", "/jobs/{jobid}/resource-requirements"):
            _, body = await rc.call("GET", f"/v1/jobs/{job_id}/resource-requirements")
        url = f"/v1{filled}" + (f"?{case.query}" if case.query else "")
        # As Flink's CLI does: a JSON body on every request ({} on GETs) and Connection: close.
        data = json.dumps(body if body is not None else {}).encode()
        headers = {"Content-Type": "application/json; charset=UTF-8", "Connection": "close"}
        status, answer = await rc.call(method, url, data=data, headers=headers)
        _check(op, status, answer)
        if op == ("DELETE", "/datasets/{datasetid}"):
            dataset_trigger = answer["request-id"]
    status, result = await rc.call("GET", f"/v1/jobs/{job_id}/execution-result")
    for _ in range(100):
        if result["status"]["id"] == "COMPLETED":
            break
        await asyncio.sleep(0.1)
        status, result = await rc.call("GET", f"/v1/jobs/{job_id}/execution-result")
    _check(("GET", "/jobs/{jobid}/execution-result"), status, result)
    assert result["job-execution-result"]["application-status"] == "CANCELED"


async def test_views_of_running_job_carry_real_data(rest_cluster: RestCluster) -> None:
    rc = rest_cluster
    job_id = await rc.client().submit_job(unbounded_job("views", parallelism=2, rate=2000))
    try:
        gateway = rc.cluster.dispatcher_gateway()
        for _ in range(100):
            g = await gateway.request_execution_graph(job_id)
            if all(ex.metrics_reported and ex.records_in > 0 for ex in g.vertices[1].subtasks):
                break
            await asyncio.sleep(0.1)
        vertex = g.vertices[1]
        _, details = await rc.call("GET", f"/jobs/{job_id}")  # unversioned path, as the web UI sends
        assert details["state"] == "RUNNING"
        assert [v["id"] for v in details["vertices"]] == [v.id for v in g.vertices]
        assert details["vertices"][1]["tasks"]["RUNNING"] == 2
        assert details["vertices"][1]["metrics"]["read-records"] > 0
        assert details["status-counts"]["RUNNING"] == 2
        assert details["plan"]["nodes"][1]["inputs"][0]["ship_strategy"] == "HASH"
        _, metrics = await rc.call("GET", f"/v1/jobs/{job_id}/vertices/{vertex.id}/metrics")
        ids = {m["id"] for m in metrics}
        assert {"0.numRecordsIn", "1.numRecordsIn", "0.backPressuredTimeMsPerSecond"} <= ids
        assert all("value" not in m for m in metrics), "without ?get= only the ids are listed"
        _, values = await rc.call(
            "GET", f"/v1/jobs/{job_id}/vertices/{vertex.id}/subtasks/metrics?get=numRecordsIn&agg=sum"
        )
        assert values[0]["id"] == "numRecordsIn" and values[0]["sum"] > 0 and set(values[0]) == {"id", "sum"}
        _, bp = await rc.call("GET", f"/v1/jobs/{job_id}/vertices/{vertex.id}/backpressure")
        assert bp["status"] == "ok" and len(bp["subtasks"]) == 2
        _, tm = await rc.call("GET", f"/v1/taskmanagers/{vertex.subtasks[0].resource_id}")
        assert any(s["jobId"] == job_id for s in tm["allocatedSlots"])
        _, overview = await rc.call("GET", "/v1/overview")
        assert (
            overview["jobs-running"] == 1 and overview["taskmanagers"] == 2 and overview["slots-total"] == 4
        )
    finally:
        await rc.client().cancel_job(job_id)


async def test_openapi_document_describes_every_route(rest_cluster: RestCluster) -> None:
    status, doc = await rest_cluster.call("GET", "/v1/openapi.json")
    assert status == 200
    validate_openapi_document(doc)
    documented = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    assert {(r.method, r.path) for r in rest_cluster.endpoint.routes} <= documented
    assert set(spec.operations()) <= documented
