"""One plain example per bug that schemathesis found in the REST endpoint and its OpenAPI document
(:mod:`tests.security.test_rest_fuzzing`), against the real endpoint on loopback."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from openapi_spec_validator import validate as validate_openapi_document

from flott.errors import RestRequestError
from flott.rest.handler.metrics import AGG_PARAM, SUBTASKS_PARAM, parse_ranges
from flott.rest.webmonitor.openapi import BASE64, openapi_document
from flott.rest.webmonitor.routes import all_routes
from tests.security.leaderless_endpoint import LeaderlessEndpoint, leaderless_endpoint

JOB = "0" * 32
VERTEX = "1" * 32


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LeaderlessEndpoint]:
    with leaderless_endpoint(tmp_path_factory.mktemp("upload")) as ep:
        yield ep


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [("PUT", "/v1/config", "GET"), ("TRACE", "/overview", "GET"), ("GET", f"/jobs/{JOB}/stop", "POST")],
)
def test_405_names_the_allowed_methods(
    endpoint: LeaderlessEndpoint, method: str, path: str, allowed: str
) -> None:
    """Was: 405 without an ``Allow`` header (RFC 9110 requires it)."""
    status, headers, body = endpoint.request(method, path)
    assert status == 405, body
    assert headers.get("allow") == allowed, headers
    assert f"allowed: {allowed}" in body["errors"][0]


@pytest.mark.parametrize(
    "path",
    [
        f"/v1/jobs/{JOB}/vertices/{VERTEX}/subtasks/%C2%B2",  # '²': isdigit() but not int() — was a 500
        f"/v1/jobs/{JOB}/vertices/{VERTEX}/subtasks/%D9%A1",  # Arabic-Indic 1: was read as subtask 1
        f"/v1/jobs/{JOB}/vertices/{VERTEX}/subtasks/2147483648",  # above a Java int
        f"/v1/jobs/{JOB}/vertices/{VERTEX}/subtasks/0/attempts/-1",
        f"/v1/jobs/{JOB}/checkpoints/details/%C2%B2",  # was a 500
        f"/v1/jobs/{JOB}/checkpoints/details/9223372036854775808",  # above a Java long
        f"/v1/jobs/{JOB}/exceptions?maxExceptions=2147483648",  # was accepted
        f"/v1/jobs/{JOB}/exceptions?maxExceptions=%C2%B2",
        f"/v1/jobs/{JOB}/accumulators?includeSerializedValue=null",  # was accepted and ignored
    ],
)
def test_malformed_numbers_and_booleans_are_400(endpoint: LeaderlessEndpoint, path: str) -> None:
    status, _, body = endpoint.request("GET", path)
    assert status == 400, (path, body)
    assert "could not parse parameters" in body["errors"][0], body


def test_well_formed_parameters_get_past_validation(endpoint: LeaderlessEndpoint) -> None:
    """The bounds above are not too tight: the largest legal values reach the cluster call (503)."""
    for path in (
        f"/v1/jobs/{JOB}/vertices/{VERTEX}/subtasks/2147483647",
        f"/v1/jobs/{JOB}/checkpoints/details/9223372036854775807",
        f"/v1/jobs/{JOB}/exceptions?maxExceptions=10",
        f"/v1/jobs/{JOB}/accumulators?includeSerializedValue=TRUE",
    ):
        status, _, body = endpoint.request("GET", path)
        assert status == 503, (path, body)


def test_subtask_ranges_take_ascii_digits_only() -> None:
    """Was: ``int()`` parsed '+1', '1_0' and other scripts' digits."""
    assert parse_ranges(" 1, 3-4 ,,", 10) == {1, 3, 4}
    assert parse_ranges("0-99999999999999999999", 3) == {0, 1, 2}
    for bad in ("+1", "1_0", "\u0661", "1-+2", "-", "1-2-3"):
        with pytest.raises(RestRequestError, match="subtasks must look like"):
            parse_ranges(bad, 10)
        assert not re.search(SUBTASKS_PARAM.schema["pattern"], bad), bad
    assert re.search(SUBTASKS_PARAM.schema["pattern"], " 1, 3-4 ,,")


def test_agg_pattern_matches_what_the_server_accepts() -> None:
    """Was: ``agg`` declared as any string, so schema-valid requests were refused."""
    pattern = AGG_PARAM.schema["pattern"]
    for ok in ("", "min", "MAX, sum", ",avg,,skew "):
        assert re.search(pattern, ok), ok
    for bad in ("median", "min max", "\x8e"):
        assert not re.search(pattern, bad), bad


def test_the_document_says_what_the_handlers_require() -> None:
    """Each was a schema-valid request the server refused (schemathesis: 'schema-valid request
    rejected') or a status the document did not declare."""
    doc = openapi_document(all_routes(), "http://127.0.0.1:8081")
    validate_openapi_document(doc)
    schemas, paths = doc["components"]["schemas"], doc["paths"]
    assert paths["/jobs/{jobid}/clientHeartbeat"]["patch"]["requestBody"]["required"] is True
    assert paths["/jobs/{jobid}/savepoints"]["post"]["requestBody"]["required"] is False
    disposal = schemas["SavepointDisposalRequest"]
    assert "savepoint-path" in disposal["required"]
    path_pattern = disposal["properties"]["savepoint-path"]["pattern"]
    assert re.search(path_pattern, "/savepoints/sp-1") and re.search(path_pattern, "file:///sp")
    for refused in ("", "  ", "relative/sp", "http://127.0.0.1/x", "/a::b"):
        assert not re.search(path_pattern, refused), refused
    trigger = schemas["SavepointTriggerRequestBody"]["properties"]["triggerId"]["anyOf"][0]
    assert trigger["pattern"] == "^[0-9a-f]{32}$"
    coordination = schemas["ClientCoordinationRequestBody"]["properties"]["serializedCoordinationRequest"]
    assert coordination["pattern"] == BASE64
    assert re.search(BASE64, "YWJj") and re.search(BASE64, "YQ==") and not re.search(BASE64, "YQ")
    assert schemas["CheckpointTriggerRequestBody"]["properties"]["checkpointType"]["enum"] == [
        "CONFIGURED",
        "FULL",
    ]
    assert {"jobGraphFileName", "executionPlanFileName"} == {
        req for alt in schemas["JobSubmitRequestBody"]["anyOf"] for req in alt["required"]
    }
    assert set(paths["/jars"]["get"]["responses"]) == {"200", "default"}
    subtask_checkpoints = paths["/jobs/{jobid}/checkpoints/details/{checkpointid}/subtasks/{vertexid}"]
    assert "501" in subtask_checkpoints["get"]["responses"]


def test_submission_without_graph_file_name_still_gets_flinks_message(endpoint: LeaderlessEndpoint) -> None:
    """The document now requires a graph file name; the server's own answer is unchanged."""
    boundary = "b0undary"
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="request"\r\n\r\n{{}}\r\n--{boundary}--\r\n'
    ).encode()
    status, _, answer = endpoint.request(
        "POST", "/v1/jobs", body, {"Content-Type": f"multipart/form-data; boundary={boundary}"}
    )
    assert status == 400 and "jobGraphFileName field must not be omitted" in answer["errors"][0], answer
