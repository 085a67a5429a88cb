"""REST authentication and authorisation (beyond Flink): bearer tokens with a read-only and an
operator role, on a real session cluster, through raw HTTP, the CLI and RestClusterClient; the
route-role table covers every route the endpoint serves."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
import psutil
import pytest

from flott.client.rest_cluster_client import RestClusterClient
from flott.configuration import HIDDEN_CONTENT, Configuration, secrets_environment, split_secrets
from flott.errors import AuthenticationError, AuthorizationError, ConfigurationError, JobSubmissionError
from flott.rest import authentication
from flott.rest.authentication import (
    ROUTE_ROLES,
    RestAuthenticator,
    Role,
    client_headers,
    client_token,
    parse_tokens,
    required_role,
    warn_if_exposed,
    without_credentials,
)
from flott.rest.web import Dashboard
from flott.rest.webmonitor.rest_server_endpoint import RestServerEndpoint
from flott.rest.webmonitor.routes import all_routes
from tests.rest.jobs import bounded_job, unbounded_job
from tests.security.conftest import (
    REPO,
    SessionCluster,
    free_port,
    start_session_cluster,
    stop_session_cluster,
    submission_form,
)

OPERATOR = "op-" + "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6"
READER = "ro-" + "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
ENV_OPERATOR = "envop-" + "77aa88bb99cc00dd11ee22ff33aa44bb"
WRONG = "xx-" + "ffffffffffffffffffffffffffffffff"
ALL_TOKENS = (OPERATOR, READER, ENV_OPERATOR)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# -- the pure parts ----------------------------------------------------------------------------------


def test_tokens_file_format() -> None:
    text = f"# who may do what\n{OPERATOR} operator\n\n  {READER}   read-only  # the dashboard\n"
    assert parse_tokens(text, "tokens") == [(OPERATOR, Role.OPERATOR), (READER, Role.READ_ONLY)]
    inline = f"{OPERATOR} operator, {READER} read-only;\n"
    assert parse_tokens(inline, "k", inline=True) == [(OPERATOR, Role.OPERATOR), (READER, Role.READ_ONLY)]
    for bad, why in (
        (f"{OPERATOR} admin", "unknown role 'admin'"),
        (f"{OPERATOR}", "expected '<token> <role>'"),
        ("short operator", "16 to 512 characters"),
        (f"{OPERATOR}\x07 operator", "16 to 512 characters"),
    ):
        with pytest.raises(ConfigurationError, match=re.escape(why)) as e:
            parse_tokens(bad, "tokens")
        assert OPERATOR not in str(e.value) and "line 1" in str(e.value)  # never echoes a token
    with pytest.raises(ConfigurationError, match="two different roles"):
        RestAuthenticator([(OPERATOR, Role.OPERATOR), (OPERATOR, Role.READ_ONLY)])


def test_authenticator_roles_and_refusals() -> None:
    auth = RestAuthenticator([(OPERATOR, Role.OPERATOR), (READER, Role.READ_ONLY)])
    assert OPERATOR not in repr(auth)
    assert auth.role_of(bearer(OPERATOR)) is Role.OPERATOR
    assert auth.role_of({"Authorization": f"bearer  {READER} "}) is Role.READ_ONLY
    for headers in ({}, {"Authorization": f"Basic {READER}"}, {"Authorization": "Bearer"}, bearer(WRONG)):
        with pytest.raises(AuthenticationError) as e:
            auth.role_of(headers)
        assert e.value.http_status == 401
    auth.authorize("GET", "/jobs", bearer(READER), Role.READ_ONLY)
    auth.authorize("POST", "/jobs", bearer(OPERATOR), Role.OPERATOR)
    with pytest.raises(AuthorizationError, match="POST /jobs needs a token with the operator role") as f:
        auth.authorize("POST", "/jobs", bearer(READER), Role.OPERATOR)
    assert f.value.http_status == 403 and READER not in str(f.value)


def test_auth_is_off_unless_tokens_are_configured(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    assert RestAuthenticator.from_config(Configuration(), environ={}) is None
    empty = tmp_path / "empty"
    empty.write_text("# nobody yet\n")
    on = RestAuthenticator.from_config(Configuration({"flott.rest.auth.tokens-file": str(empty)}), environ={})
    assert on is not None  # an empty file still turns it on: nobody gets in
    with pytest.raises(AuthenticationError):
        on.role_of(bearer(OPERATOR))
    from_env = RestAuthenticator.from_config(
        Configuration(), environ={"FLOTT_REST_AUTH_TOKENS": f"{READER} read-only"}
    )
    assert from_env is not None and from_env.role_of(bearer(READER)) is Role.READ_ONLY
    shared = tmp_path / "shared"
    shared.write_text(f"{READER} read-only\n")
    shared.chmod(0o644)
    with caplog.at_level(logging.WARNING, logger="flott.rest.authentication"):
        RestAuthenticator.from_config(Configuration({"flott.rest.auth.tokens-file": str(shared)}), environ={})
    assert "can be read by other users (mode 644)" in caplog.text and READER not in caplog.text
    with pytest.raises(ConfigurationError, match="cannot read"):
        RestAuthenticator.from_config(
            Configuration({"flott.rest.auth.tokens-file": str(tmp_path / "missing")}), environ={}
        )


def test_client_token_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    config = Configuration({"flott.rest.client.token": READER})
    monkeypatch.delenv("FLOTT_REST_TOKEN", raising=False)
    assert client_token(Configuration()) is None
    assert client_token(config) == READER
    monkeypatch.setenv("FLOTT_REST_TOKEN", ENV_OPERATOR)
    assert client_token(config) == ENV_OPERATOR
    assert client_token(config, OPERATOR) == OPERATOR
    with pytest.raises(ConfigurationError, match="--token"):
        client_token(config, "has space in it, too short?")


def test_flinks_client_headers_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Flink's CLI sends the headers of $FLINK_REST_CLIENT_HEADERS (newline-separated name:value):
    the way to give it a token; flott's clients read it the same way."""
    monkeypatch.delenv("FLOTT_REST_TOKEN", raising=False)
    monkeypatch.setenv("FLINK_REST_CLIENT_HEADERS", f"Authorization:Bearer {READER}\nbroken\nX-A: 1:2")
    assert client_headers(Configuration()) == {"Authorization": f"Bearer {READER}", "X-A": "1:2"}
    assert client_headers(Configuration(), OPERATOR)["Authorization"] == f"Bearer {OPERATOR}"
    env = secrets_environment(
        {}, {"FLINK_REST_CLIENT_HEADERS": "Authorization:Bearer x", "FLOTT_REST_TOKEN": "y"}
    )
    assert env == {}  # neither is inherited by a child process


def test_server_credentials_never_go_to_a_child_process() -> None:
    values = {
        "flott.rest.auth.tokens": f"{OPERATOR} operator",
        "flott.rest.auth.tokens-file": "/etc/flott/tokens",
        "s3.secret-key": "k",
        "parallelism.default": "2",
    }
    plain, secrets = split_secrets(values)
    assert plain == {"parallelism.default": "2"} and secrets == {"s3.secret-key": "k"}
    env = secrets_environment({}, {"FLOTT_REST_AUTH_TOKENS": f"{OPERATOR} operator", "HOME": "/h"})
    assert env == {"HOME": "/h"}
    graph = bounded_job("creds")
    graph = msgspec.structs.replace(
        graph, config={**graph.config, "flott.rest.client.token": READER, "flott.rest.auth.tokens": "x"}
    )
    assert not {"flott.rest.client.token", "flott.rest.auth.tokens"} & set(without_credentials(graph).config)


def test_a_rest_endpoint_beyond_loopback_without_auth_warns(caplog: pytest.LogCaptureFixture) -> None:
    auth = RestAuthenticator([(OPERATOR, Role.OPERATOR)])
    with caplog.at_level(logging.WARNING, logger="flott.rest.authentication"):
        assert not warn_if_exposed(["127.0.0.1", "::1", "localhost"], None)
        assert not warn_if_exposed(["0.0.0.0"], auth)
        assert warn_if_exposed(["0.0.0.0"], None)
        assert warn_if_exposed(["127.0.0.1", "192.168.7.7"], None)
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 2 and "without authentication" in warnings[0] and "0.0.0.0" in warnings[0]


# -- every route has a role ---------------------------------------------------------------------------


def test_the_role_table_names_every_route() -> None:
    served = {(r.method, r.path) for r in all_routes()}
    missing = served - set(ROUTE_ROLES)
    assert not missing, f"routes without a role in flott.rest.authentication.ROUTE_ROLES: {sorted(missing)}"
    assert not set(ROUTE_ROLES) - served, "ROUTE_ROLES names routes nobody serves"
    for method, path in served:
        expected = Role.READ_ONLY if method == "GET" else Role.OPERATOR
        assert required_role(method, path) is expected, (method, path)
    assert required_role("POST", "/some/new/route") is Role.OPERATOR  # fail closed


def _concrete(path: str) -> str:
    """A URL for a route template (any value does: the token is checked before the parameters)."""
    return re.sub(r"{\w+}", "0" * 32, path)


async def test_every_route_in_the_router_is_behind_its_role() -> None:
    """Walks the endpoint's own aiohttp router: every route, under /v1 and unversioned, answers 401
    without a token and 403 to a read-only token where it changes something."""
    config = Configuration(
        {"rest.port": "0", "flott.rest.auth.tokens": f"{OPERATOR} operator, {READER} read-only"}
    )
    endpoint = RestServerEndpoint(config, lambda: None)  # no leader: an authorised request gets 503
    host, port = await endpoint.start()
    try:
        assert endpoint._runner is not None
        dashboard = {path for path, _ in Dashboard().routes()}
        routes = [
            (r.method, r.resource.canonical)
            for r in endpoint._runner.app.router.routes()
            if r.resource is not None
            and r.method != "HEAD"
            and r.resource.canonical not in dashboard
            and r.resource.canonical != "/"
        ]
        assert len(routes) == 2 * (len(all_routes()) + 1)  # every route and /openapi.json, twice
        async with aiohttp.ClientSession(f"http://{host}:{port}") as http:
            for method, template in routes:
                path = template.removeprefix("/v1")
                needed = (
                    authentication.OPENAPI_ROLE if path == "/openapi.json" else required_role(method, path)
                )
                url = _concrete(template)
                async with http.request(method, url) as resp:
                    assert resp.status == 401, (method, template)
                    assert "Access-Control-Allow-Origin" not in resp.headers  # CORS off by default
                    assert resp.headers["WWW-Authenticate"] == 'Bearer realm="flott"'
                    assert (await resp.json())["errors"][0].startswith("Unauthorized")
                async with http.request(method, url, headers=bearer(READER)) as resp:
                    if needed is Role.OPERATOR:
                        assert resp.status == 403, (method, template)
                        assert "operator role" in (await resp.json())["errors"][0]
                    else:
                        assert resp.status not in (401, 403), (method, template)
                async with http.request(method, url, headers=bearer(OPERATOR)) as resp:
                    assert resp.status not in (401, 403), (method, template)
            async with http.get("/no/such/route") as resp:  # unauthenticated: not even a 404
                assert resp.status == 401
            async with http.get("/no/such/route", headers=bearer(READER)) as resp:
                assert resp.status == 404
            async with http.get("/jobs", headers=bearer(WRONG)) as resp:
                assert resp.status == 401
                assert 'error="invalid_token"' in resp.headers["WWW-Authenticate"]
            async with http.get("/openapi.json", headers=bearer(READER)) as resp:
                doc = await resp.json()
            # The dashboard's own files hold no cluster data: a browser loads them without a token,
            # then the page asks for one and sends it with its REST calls.
            for page in ("/", "/index.html", "/web/api.js"):
                async with http.get(page) as resp:
                    assert resp.status == 200, page
            async with http.get("/overview") as resp:
                assert resp.status == 401
        assert doc["components"]["securitySchemes"]["bearerAuth"] == {"type": "http", "scheme": "bearer"}
        assert doc["security"] == [{"bearerAuth": []}]
        assert doc["paths"]["/jobs"]["post"]["x-flott-role"] == "operator"
        assert doc["paths"]["/jobs"]["get"]["x-flott-role"] == "read-only"
    finally:
        await endpoint.stop()


async def test_auth_off_keeps_the_endpoint_open() -> None:
    endpoint = RestServerEndpoint(Configuration({"rest.port": "0"}), lambda: None)
    host, port = await endpoint.start()
    try:
        async with aiohttp.ClientSession() as http, http.get(f"http://{host}:{port}/openapi.json") as resp:
            assert resp.status == 200
            assert "securitySchemes" not in (await resp.json())["components"]
    finally:
        await endpoint.stop()


# -- a session cluster with auth on -------------------------------------------------------------------


@pytest.fixture(scope="module")
def auth_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SessionCluster]:
    tmp = tmp_path_factory.mktemp("auth")
    tokens = tmp / "tokens"
    tokens.write_text(f"# flott REST tokens\n{OPERATOR} operator\n{READER} read-only\n")
    tokens.chmod(0o600)
    os.environ["FLOTT_REST_AUTH_TOKENS"] = f"{ENV_OPERATOR} operator"  # the JobManager inherits it
    try:
        overrides = {"flott.rest.auth.tokens-file": str(tokens)}
        cluster = start_session_cluster(tmp, 2, bearer(READER), **overrides)
    finally:
        del os.environ["FLOTT_REST_AUTH_TOKENS"]
    try:
        yield cluster
    finally:
        assert not stop_session_cluster(cluster)
        log = cluster.log()
        for token in ALL_TOKENS:
            assert token not in log


async def _raw(cluster: SessionCluster, method: str, path: str, token: str | None, **kw: Any) -> Any:
    headers = bearer(token) if token else {}
    async with (
        aiohttp.ClientSession() as http,
        http.request(method, cluster.base_url + path, headers=headers, **kw) as resp,
    ):
        return resp.status, dict(resp.headers), await resp.json(content_type=None)


def raw(cluster: SessionCluster, method: str, path: str, token: str | None = None, **kw: Any) -> Any:
    """One request as curl sends it; (status, headers, decoded body)."""
    return asyncio.run(_raw(cluster, method, path, token, **kw))


def test_raw_http_roles(auth_cluster: SessionCluster, tmp_path: Path) -> None:
    c = auth_cluster
    status, headers, body = raw(c, "GET", "/v1/overview")
    assert status == 401 and headers["WWW-Authenticate"] == 'Bearer realm="flott"'
    assert body == {"errors": [body["errors"][0]]} and "bearer token" in body["errors"][0]
    assert raw(c, "GET", "/v1/overview", WRONG)[0] == 401
    assert raw(c, "GET", "/jobs/overview", READER)[0] == 200
    assert raw(c, "GET", "/overview", ENV_OPERATOR)[0] == 200  # from $FLOTT_REST_AUTH_TOKENS

    # read-only: no submission, no cancel, savepoint, disposal, shutdown
    graph = unbounded_job("auth-roles", parallelism=1)
    status, _, body = raw(c, "POST", "/v1/jobs", READER, data=submission_form(graph))
    assert status == 403 and "operator role" in body["errors"][0]
    assert raw(c, "POST", "/v1/jobs", None, data=submission_form(graph))[0] == 401
    status, _, body = raw(c, "POST", "/v1/jobs", OPERATOR, data=submission_form(graph))
    assert status == 202, body
    job_id = graph.job_id
    c.wait_all_tasks_running(job_id)
    sp_dir = str(tmp_path / "sp")
    for method, path, payload in (
        ("POST", f"/jobs/{job_id}/savepoints", {"target-directory": sp_dir, "cancel-job": False}),
        ("POST", f"/jobs/{job_id}/stop", {"targetDirectory": sp_dir}),
        ("POST", f"/jobs/{job_id}/checkpoints", {}),
        ("PATCH", f"/jobs/{job_id}/rescaling?parallelism=1", None),
        ("POST", "/savepoint-disposal", {"savepoint-path": sp_dir}),
        ("PATCH", f"/jobs/{job_id}?mode=cancel", None),
        ("DELETE", "/cluster", None),
    ):
        assert raw(c, method, path, READER, json=payload)[0] == 403, path
        assert raw(c, method, path, None, json=payload)[0] == 401, path
    assert c.job_state(job_id) == "RUNNING"
    assert raw(c, "GET", f"/jobs/{job_id}", READER)[0] == 200

    # operator: savepoint, then cancel
    status, _, body = raw(
        c, "POST", f"/jobs/{job_id}/savepoints", OPERATOR, json={"target-directory": sp_dir}
    )
    assert status == 202, body
    trigger = body["request-id"]
    c.wait_for(
        "the savepoint",
        lambda: c.get(f"/jobs/{job_id}/savepoints/{trigger}")["status"]["id"] == "COMPLETED",
    )
    assert raw(c, "PATCH", f"/jobs/{job_id}?mode=cancel", OPERATOR)[0] == 202
    c.wait_job_state(job_id, "CANCELED")


async def test_rest_cluster_client_roles(
    auth_cluster: SessionCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FLOTT_REST_TOKEN", raising=False)
    c = auth_cluster
    config = Configuration({"rest.retry.max-attempts": "0"})
    async with RestClusterClient(config, c.base_url) as anonymous:
        with pytest.raises(AuthenticationError) as e:
            await anonymous.list_jobs()
        message = str(e.value)
        assert "\n" not in message and "--token" in message and "FLOTT_REST_TOKEN" in message
    graph = bounded_job("auth-client", n=10)
    async with RestClusterClient(config, c.base_url, token=READER) as reader:
        assert isinstance(await reader.list_jobs(), list)
        assert (await reader.get_cluster_overview()).taskmanagers == 2
        with pytest.raises(JobSubmissionError) as s:
            await reader.submit_job(graph)
        assert isinstance(s.value.cause, AuthorizationError) and "operator role" in str(s.value)
        with pytest.raises(AuthorizationError, match="use a token with the operator role"):
            await reader.shutdown_cluster()
        with pytest.raises(AuthorizationError):
            await reader.dispose_savepoint("/nowhere")
    monkeypatch.setenv("FLOTT_REST_TOKEN", OPERATOR)  # the environment variable is enough
    async with RestClusterClient(config, c.base_url) as operator:
        assert await operator.submit_job(graph) == graph.job_id
        result = await operator.wait_for_job_result(graph.job_id, 60)
        assert result.status == "FINISHED"


def test_no_token_in_any_view_or_process(auth_cluster: SessionCluster) -> None:
    c = auth_cluster
    run = _flott(
        "run",
        "-m",
        c.base_url,
        "-d",
        "-D",
        f"flott.rest.client.token={OPERATOR}",
        "-D",
        "x.plain=shown",
        str(REPO / "examples" / "streaming_counts.py"),
    )
    assert run.returncode == 0, run.stderr
    job_id = run.stdout.strip().split()[-1]
    c.wait_all_tasks_running(job_id)
    shown = {e["key"]: e["value"] for e in c.get("/jobmanager/config")}
    assert shown["flott.rest.auth.tokens-file"] == HIDDEN_CONTENT
    views = [
        shown,
        c.get(f"/jobs/{job_id}/config"),
        c.get(f"/jobs/{job_id}/jobmanager/config"),
        c.get("/jobmanager/environment"),
        *[c.get(f"/taskmanagers/{tm['id']}") for tm in c.get("/taskmanagers")["taskmanagers"]],
    ]
    text = json.dumps(views)
    user_config = c.get(f"/jobs/{job_id}/config")["execution-config"]["user-config"]
    assert user_config.get("x.plain") == "shown"  # -D keys travel with the job ...
    assert "flott.rest.client.token" not in user_config  # ... the token is taken out before the upload
    workers = c.task_executor_processes()
    assert len(workers) == 2
    jobmanager = psutil.Process(c.jobmanager.pid)
    for token in ALL_TOKENS:
        assert token not in text
        assert token not in " ".join(jobmanager.cmdline())
        for proc in workers:
            assert token not in " ".join(proc.cmdline())  # ps
            assert token not in json.dumps(proc.environ())  # not even in their environment
    for proc in workers:
        assert "flott.rest.auth" not in json.dumps(proc.environ()) + " ".join(proc.cmdline())
    assert _flott("cancel", "-m", c.base_url, "--token", OPERATOR, job_id).returncode == 0


def test_cli_roles(auth_cluster: SessionCluster, tmp_path: Path) -> None:
    c = auth_cluster
    example = str(REPO / "examples" / "streaming_counts.py")
    refused = _flott("list", "-m", c.base_url)
    assert refused.returncode == 1
    line = refused.stderr.strip()
    assert "\n" not in line and "Unauthorized" in line and "--token" in line and "(HTTP 401)" in line
    wrong = _flott("list", "-m", c.base_url, "--token", WRONG)
    assert wrong.returncode == 1 and "not valid" in wrong.stderr
    assert _flott("list", "-m", c.base_url, env={"FLOTT_REST_TOKEN": READER}).returncode == 0
    flinks_way = {"FLINK_REST_CLIENT_HEADERS": f"Authorization:Bearer {READER}"}
    assert _flott("list", "-m", c.base_url, env=flinks_way).returncode == 0

    no_run = _flott("run", "-m", c.base_url, "-d", "--token", READER, example)
    assert no_run.returncode == 1 and "operator role" in no_run.stderr, no_run.stderr
    assert "Traceback" not in no_run.stderr
    run = _flott("run", "-m", c.base_url, "-d", example, env={"FLOTT_REST_TOKEN": OPERATOR})
    assert run.returncode == 0, run.stderr
    job_id = run.stdout.strip().split()[-1]
    c.wait_all_tasks_running(job_id)
    listed = _flott("list", "-m", c.base_url, "--token", READER)
    assert listed.returncode == 0 and job_id in listed.stdout

    for command in (
        ["cancel", job_id],
        ["savepoint", job_id, str(tmp_path / "sp")],
        ["stop", "-p", str(tmp_path / "sp"), job_id],
        ["checkpoint", job_id],
        ["savepoint", "--dispose", str(tmp_path / "sp")],
    ):
        denied = _flott(command[0], "-m", c.base_url, "--token", READER, *command[1:])
        assert denied.returncode == 1, command
        assert "operator role" in denied.stderr and "(HTTP 403)" in denied.stderr, denied.stderr
    saved = _flott("savepoint", "-m", c.base_url, "--token", OPERATOR, job_id, str(tmp_path / "sp"))
    assert saved.returncode == 0 and "Savepoint completed" in saved.stdout, saved.stderr
    path = saved.stdout.split("Path: ", 1)[1].split()[0]
    cancel = _flott("cancel", "-m", c.base_url, "-D", f"flott.rest.client.token={OPERATOR}", job_id)
    assert cancel.returncode == 0, cancel.stderr
    disposed = _flott("savepoint", "-m", c.base_url, "--dispose", path, env={"FLOTT_REST_TOKEN": OPERATOR})
    assert disposed.returncode == 0, disposed.stderr


def test_cluster_start_and_stop_with_auth(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``flott cluster start`` waits for its JobManager with a read-only token of its own, handed
    over in the environment; the tokens configured still are the only ones a user knows."""
    monkeypatch.setenv("FLOTT_RUN_DIR", str(tmp_path / "run"))
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{READER} read-only\n{OPERATOR} operator\n")
    tokens.chmod(0o600)
    port = free_port()
    conf = ["-D", f"rest.port={port}", "-D", "jobmanager.rpc.port=0"]
    conf += ["-D", f"flott.rest.auth.tokens-file={tokens}"]
    started = _flott("cluster", "start", "--taskmanagers", "1", *conf)
    assert started.returncode == 0, started.stderr
    pid = int((tmp_path / "run" / f"cluster-{port}.pid").read_text())
    family = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    try:
        assert len(family) == 2
        handed = json.loads(family[0].environ()["FLOTT_SECRET_CONFIG"])["flott.rest.auth.tokens"]
        internal = handed.split()[0]
        assert handed == f"{internal} read-only"  # read-only: enough to wait, nothing more
        for proc in family:
            assert internal not in " ".join(proc.cmdline())
        assert internal not in json.dumps(family[1].environ())
        address = f"127.0.0.1:{port}"
        assert _flott("list", "-m", address).returncode == 1
        assert _flott("list", "-m", address, env={"FLOTT_REST_TOKEN": READER}).returncode == 0

        async def shut_down(token: str) -> None:
            async with RestClusterClient(Configuration(), address, token=token) as client:
                await client.shutdown_cluster()

        with pytest.raises(AuthorizationError):
            asyncio.run(shut_down(READER))
        assert all(p.is_running() for p in family)
        asyncio.run(shut_down(OPERATOR))  # DELETE /cluster with the operator role
        _, alive = psutil.wait_procs(family, timeout=30)
        assert not alive, "the cluster did not shut down"
    finally:
        stopped = _flott("cluster", "stop", *conf)
        _, alive = psutil.wait_procs(family, timeout=20)
        for p in alive:
            p.kill()
    assert stopped.returncode == 0 and not alive, stopped.stderr


def _flott(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("FLOTT_REST_TOKEN", "FLINK_REST_CLIENT_HEADERS")}
    base["PYTHONPATH"] = str(REPO) + (os.pathsep + base["PYTHONPATH"] if base.get("PYTHONPATH") else "")
    return subprocess.run(
        [sys.executable, "-m", "flott.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**base, **(env or {})},
    )


def test_application_mode_with_auth(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``flott run-application`` with REST authentication: the client waits with a read-only token
    of its own, the program child submits with the cluster's own operator token; neither is on a
    command line."""
    from tests.e2e.test_application_mode import JOB

    monkeypatch.setenv("FLOTT_RUN_DIR", str(tmp_path / "run"))
    script = tmp_path / "job.py"
    script.write_text(JOB)
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{READER} read-only\n")
    tokens.chmod(0o600)
    done = _flott(
        "run-application", "-D", f"flott.rest.auth.tokens-file={tokens}",
        str(script), str(tmp_path / "out"), "300",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"Job [0-9a-f]{32} FINISHED", done.stderr), done.stderr
