"""``flott list|cancel|stop|savepoint|checkpoint``: operate jobs of a running cluster over its REST API.

Each command is plain HTTP on :mod:`http.client` (``GET /v1/jobs/overview``,
``PATCH /v1/jobs/:id?mode=cancel`` ...), with the retry policy of
:class:`~flott.client.rest_cluster_client.RestClusterClient` (a failed
connection or a 503 is retried ``rest.retry.max-attempts`` times,
``rest.retry.delay`` apart), and plain-text output. Neither aiohttp nor rich
nor the REST server's modules are imported: the CLI's start-up is most of its
wall time.

Savepoints, stop-with-savepoint, cancel-with-savepoint, checkpoints and
disposal are Flink's asynchronous operations: the trigger answers a request
id, the status URL is polled until COMPLETED, at most ``client.timeout``
(Flink's key, default 60 s). The commands print what Flink's CLI prints
(``Savepoint completed. Path: <path>``). Triggers carry a trigger id chosen
here, so a retried trigger never starts a second savepoint.

Against a cluster with REST authentication every request carries the bearer token of
``--token``, ``$FLOTT_REST_TOKEN`` or ``flott.rest.client.token``
(:func:`flott.rest.authentication.client_token`); a 401 or 403 is one line saying what to do.
"""

from __future__ import annotations

import datetime
import http.client
import json
import re
import secrets
import ssl
import time
from typing import Any
from urllib.parse import urlparse

import click

from flott.configuration import Configuration
from flott.errors import ConfigurationError, FlottError, UserCodeError, error_class_by_name
from flott.rest.authentication import client_auth_message, client_headers
from flott.ssl_context import closed_without_answer_hint, describe_verification_error, rest_client_ssl

_RUNNING = {"RUNNING", "RESTARTING", "FAILING", "CANCELLING"}
_SCHEDULED = {"CREATED", "INITIALIZING", "RECONCILING"}
_REST_API_VERSION = "v1"  # flott.rest.version.REST_API_VERSION, not imported to keep the CLI light


class _Endpoint:
    """Where the cluster's REST API is, and how patiently to ask it (RestClusterClient's policy)."""

    def __init__(self, config: Configuration, address: str | None, token: str | None = None) -> None:
        try:
            self.auth_headers = client_headers(config, token)
        except ConfigurationError as e:
            raise click.ClickException(str(e)) from None
        if address is None:
            address = f"{config.get('rest.address')}:{config.get('rest.port')}"
        address = address.strip().rstrip("/")
        if "://" not in address:
            address = f"{'https' if config.get_bool('security.ssl.rest.enabled', False) else 'http'}://{address}"
        parsed = urlparse(address)
        if not parsed.hostname:
            raise click.ClickException(f"not a REST address (host:port or http://host:port): {address!r}")
        self.base_url = address
        self.https = parsed.scheme == "https"
        self.host = parsed.hostname
        self.port = parsed.port or (443 if self.https else 80)
        self.prefix = parsed.path.rstrip("/")
        self.max_retries = max(0, config.get_int("rest.retry.max-attempts"))
        self.retry_delay_s = config.get_seconds("rest.retry.delay")
        self.connect_timeout_s = config.get_seconds("rest.connection-timeout", "15 s")
        self.read_timeout_s = config.get_seconds("rest.idleness-timeout", "5 min")
        self._config = config

    def request(self, method: str, path: str, body: Any = None) -> Any:
        """One REST call: the decoded 2xx body; a ClickException with the server's error otherwise."""
        target = f"{self.prefix}/{_REST_API_VERSION}{path}"
        headers = {"Accept": "application/json", **self.auth_headers}
        payload_out: bytes | None = None
        if body is not None:
            payload_out = json.dumps(body).encode()
            headers["Content-Type"] = "application/json; charset=UTF-8"
        last = ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(self.retry_delay_s)
            conn = self._connection()
            try:
                try:
                    conn.connect()
                except ssl.SSLError as e:  # a certificate problem: retrying cannot help
                    raise click.ClickException(self._tls_failure(e)) from None
                except OSError as e:
                    last = f"cannot connect to the REST endpoint at {self.base_url}: {e}"
                    if attempt == 0 and self.max_retries:  # say so now, not after a minute of retries
                        click.echo(
                            f"{last}; retrying {self.max_retries} more time(s), {self.retry_delay_s:g} s "
                            "apart (rest.retry.max-attempts, rest.retry.delay)",
                            err=True,
                        )
                    continue
                if conn.sock is not None:
                    conn.sock.settimeout(self.read_timeout_s)
                try:
                    conn.request(method, target, body=payload_out, headers=headers)
                    resp = conn.getresponse()
                    payload = resp.read()
                except ssl.SSLError as e:  # TLS 1.3: a refused client certificate shows here
                    raise click.ClickException(self._tls_failure(e)) from None
                except (OSError, http.client.HTTPException) as e:
                    last = (
                        f"connection to the REST endpoint at {self.base_url} failed during {method} "
                        f"{path}: {e or type(e).__name__}{self._closed_hint(e)}"
                    )
                    continue
            finally:
                conn.close()
            if 200 <= resp.status < 300:
                try:
                    return json.loads(payload or b"{}")
                except ValueError as e:
                    raise click.ClickException(
                        f"unexpected answer to {method} {path} from {self.base_url}: {e}"
                    ) from None
            last = _error_message(resp.status, _error_strings(payload))
            if resp.status != 503:
                break
        raise click.ClickException(last)


    def _connection(self) -> http.client.HTTPConnection:
        if not self.https:
            return http.client.HTTPConnection(self.host, self.port, timeout=self.connect_timeout_s)
        try:
            context = rest_client_ssl(self._config)
        except FlottError as e:
            raise click.ClickException(str(e)) from None
        return http.client.HTTPSConnection(
            self.host, self.port, timeout=self.connect_timeout_s, context=context
        )

    def _closed_hint(self, error: BaseException) -> str:
        if not self.https or not isinstance(error, http.client.RemoteDisconnected | ConnectionResetError):
            return ""
        return closed_without_answer_hint(self.base_url)

    def _tls_failure(self, error: ssl.SSLError) -> str:
        return describe_verification_error(error, self.base_url)


def _error_strings(payload: bytes) -> list[str]:
    try:
        body = json.loads(payload)
    except ValueError:
        return [payload.decode("utf-8", "replace")[:500]] if payload else []
    errors = body.get("errors") if isinstance(body, dict) else None
    return [str(e) for e in errors] if isinstance(errors, list) else [str(body)[:500]]


def _error_message(status: int, errors: list[str]) -> str:
    """What RestClusterClient's error would say: ``<Class>: <message>`` of the tree gives the message."""
    first = errors[0] if errors else ""
    name, sep, message = first.partition(": ")
    cls = error_class_by_name(name) if sep else None
    if cls is not None and cls is not UserCodeError:
        try:
            return str(cls(message))
        except TypeError:
            pass
    text = "; ".join(errors) or f"HTTP {status}"
    if status in (401, 403):
        return client_auth_message(status, text)
    return f"{text} (HTTP {status})"


def _time(ms: int) -> str:
    if ms <= 0:
        return "-"
    return datetime.datetime.fromtimestamp(ms / 1000).strftime("%d.%m.%Y %H:%M:%S")


def _table(header: list[str], rows: list[list[str]], right: set[int]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        padded = (
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )
        return "  ".join(padded).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), rule, *(line(r) for r in rows)])


def list_jobs(
    config: Configuration,
    address: str | None,
    running: bool,
    scheduled: bool,
    show_all: bool,
    token: str | None = None,
) -> int:
    try:
        body = _Endpoint(config, address, token).request("GET", "/jobs/overview")
    except FlottError as e:
        raise click.ClickException(str(e)) from None
    jobs = body.get("jobs", []) if isinstance(body, dict) else []
    if not (running or scheduled or show_all):
        running = scheduled = True
    wanted = set()
    if running:
        wanted |= _RUNNING
    if scheduled:
        wanted |= _SCHEDULED
    selected = [j for j in jobs if show_all or j.get("state") in wanted]
    if not selected:
        what = "jobs" if show_all else "running or scheduled jobs"
        click.echo(f"No {what}.")
        return 0
    rows = [
        [
            str(j.get("jid", "")),
            str(j.get("name", "")),
            str(j.get("state", "")),
            _time(int(j.get("start-time", -1))),
            f"{max(int(j.get('duration', 0)), 0) / 1000:.1f}s",
        ]
        for j in selected
    ]
    click.echo(_table(["Job ID", "Name", "Status", "Start time", "Duration"], rows, right={4}))
    return 0


def cancel_job(config: Configuration, address: str | None, job_id: str, token: str | None = None) -> int:
    try:
        _Endpoint(config, address, token).request("PATCH", f"/jobs/{job_id}?mode=cancel")
    except FlottError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"Cancelled job {job_id}.")
    return 0


# -- savepoints, stop, checkpoints, disposal ------------------------------------------------------

_HEX32 = re.compile(r"^[0-9a-f]{32}$")


def _check_job_id(job_id: str) -> str:
    if not _HEX32.match(job_id):
        raise click.ClickException(
            f"The value for the Job ID is not a valid ID: {job_id!r} (32 hexadecimal characters expected)."
        )
    return job_id


def describe_failure_cause(cause: Any) -> str:
    """A REST ``failure-cause`` (Flink's SerializedThrowable JSON) as one readable line per cause."""
    if not isinstance(cause, dict):
        return str(cause)
    trace = str(cause.get("stack-trace") or cause.get("message") or cause.get("class") or "unknown cause")
    lines = trace.splitlines()
    picked = [lines[0]] + [ln.strip() for ln in lines[1:] if ln.strip().startswith("Caused by: ")]
    return "\n".join(ln.replace("flott.errors.", "") for ln in picked)


class _Operation:
    """One asynchronous operation on the cluster: trigger, then poll its status URL."""

    def __init__(self, config: Configuration, address: str | None, token: str | None) -> None:
        self.endpoint = _Endpoint(config, address, token)
        self.timeout_s = config.get_seconds("client.timeout", "60 s")

    def trigger(self, method: str, path: str, body: Any = None) -> str:
        try:
            answer = self.endpoint.request(method, path, body if body is not None else {})
        except FlottError as e:
            raise click.ClickException(str(e)) from None
        trigger_id = answer.get("request-id") if isinstance(answer, dict) else None
        if not isinstance(trigger_id, str):
            raise click.ClickException(f"unexpected answer to {method} {path}: {answer!r}")
        return trigger_id

    def wait(self, status_path: str, failed: str, trigger_id: str) -> dict[str, Any]:
        """The completed ``operation``; a ClickException saying ``failed`` and why otherwise."""
        deadline = time.monotonic() + self.timeout_s
        pause = 0.05
        while True:
            body = self.endpoint.request("GET", status_path)
            status = body.get("status", {}).get("id") if isinstance(body, dict) else None
            if status == "COMPLETED":
                operation = body.get("operation") or {}
                cause = operation.get("failure-cause") or operation.get("failureCause")
                if cause:
                    raise click.ClickException(f"{failed}\n{describe_failure_cause(cause)}")
                return dict(operation)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise click.ClickException(
                    f"{failed}\nNo answer within {self.timeout_s:g}s (client.timeout); the operation may "
                    f"still complete on the cluster (trigger id {trigger_id})."
                )
            time.sleep(min(pause, remaining))
            pause = min(pause * 2, 1.0)

    def savepoint(
        self,
        job_id: str,
        trigger_path: str,
        body: dict[str, Any],
        detached: bool,
        *,
        verb: str,
        detached_done: str,
        failed: str,
    ) -> dict[str, Any] | None:
        """Trigger a savepoint (``verb``: "savepoint" or "stop-with-savepoint") with Flink's messages.

        Detached: say the trigger id (``detached_done``) and return None; otherwise wait for the
        savepoint and return the completed operation (a ClickException saying ``failed`` if not).
        """
        if detached:
            click.echo(f"Triggering {verb} in detached mode for job {job_id}.")
            trigger_id = self.trigger("POST", trigger_path, body)
            click.echo(f"{detached_done}, triggerId: {trigger_id}")
            return None
        click.echo(f"Triggering {verb} for job {job_id}.")
        trigger_id = self.trigger("POST", trigger_path, body)
        click.echo("Waiting for response...")
        return self.wait(f"/jobs/{job_id}/savepoints/{trigger_id}", failed, trigger_id)


def trigger_savepoint(
    config: Configuration,
    address: str | None,
    job_id: str,
    target_directory: str | None,
    format_type: str,
    detached: bool,
    token: str | None = None,
) -> int:
    """``flott savepoint JOBID [DIR]`` (Flink: CliFrontend.savepoint)."""
    _check_job_id(job_id)
    op = _Operation(config, address, token)
    body = {
        "target-directory": target_directory,
        "cancel-job": False,
        "formatType": format_type,
        "triggerId": secrets.token_hex(16),
    }
    result = op.savepoint(
        job_id,
        f"/jobs/{job_id}/savepoints",
        body,
        detached,
        verb="savepoint",
        detached_done="Successfully trigger manual savepoint",
        failed=f"Triggering a savepoint for the job {job_id} failed.",
    )
    if result is None:
        return 0
    click.echo(f"Savepoint completed. Path: {result.get('location', '')}")
    click.echo("You can resume your program from this savepoint with the run command.")
    return 0


def dispose_savepoint(
    config: Configuration, address: str | None, savepoint_path: str, token: str | None = None
) -> int:
    """``flott savepoint --dispose PATH``: the cluster deletes the savepoint's files."""
    op = _Operation(config, address, token)
    click.echo(f"Disposing savepoint '{savepoint_path}'.")
    trigger_id = op.trigger("POST", "/savepoint-disposal", {"savepoint-path": savepoint_path})
    click.echo("Waiting for response...")
    op.wait(
        f"/savepoint-disposal/{trigger_id}", f"Disposing the savepoint '{savepoint_path}' failed.", trigger_id
    )
    click.echo(f"Savepoint '{savepoint_path}' disposed.")
    return 0


def stop_with_savepoint(
    config: Configuration,
    address: str | None,
    job_id: str,
    target_directory: str | None,
    drain: bool,
    format_type: str,
    detached: bool,
    token: str | None = None,
) -> int:
    """``flott stop [-p DIR] [-d] JOBID``: savepoint, then the job ends FINISHED (Flink: CliFrontend.stop)."""
    _check_job_id(job_id)
    op = _Operation(config, address, token)
    body = {
        "targetDirectory": target_directory,
        "drain": drain,
        "formatType": format_type,
        "triggerId": secrets.token_hex(16),
    }
    click.echo(f'{"Draining" if drain else "Suspending"} job "{job_id}" with a {format_type} savepoint.')
    result = op.savepoint(
        job_id,
        f"/jobs/{job_id}/stop",
        body,
        detached,
        verb="stop-with-savepoint",
        detached_done="Successfully trigger stop with savepoint",
        failed=f'Could not stop with a savepoint job "{job_id}".',
    )
    if result is None:
        return 0
    click.echo(f"Savepoint completed. Path: {result.get('location', '')}")
    return 0


def cancel_with_savepoint(
    config: Configuration,
    address: str | None,
    job_id: str,
    target_directory: str | None,
    format_type: str,
    token: str | None = None,
) -> int:
    """``flott cancel -s DIR JOBID``: savepoint, then cancel; the job ends CANCELED (deprecated in Flink)."""
    _check_job_id(job_id)
    op = _Operation(config, address, token)
    click.echo('DEPRECATION WARNING: Cancelling a job with savepoint is deprecated. Use "stop" instead.')
    where = f"to {target_directory}" if target_directory else "to default savepoint directory"
    click.echo(f"Cancelling job {job_id} with {format_type} savepoint {where}.")
    body = {
        "target-directory": target_directory,
        "cancel-job": True,
        "formatType": format_type,
        "triggerId": secrets.token_hex(16),
    }
    trigger_id = op.trigger("POST", f"/jobs/{job_id}/savepoints", body)
    result = op.wait(f"/jobs/{job_id}/savepoints/{trigger_id}", f"Could not cancel job {job_id}.", trigger_id)
    click.echo(f"Cancelled job {job_id}. Savepoint stored in {result.get('location', '')}.")
    return 0


def trigger_checkpoint(
    config: Configuration, address: str | None, job_id: str, full: bool, token: str | None = None
) -> int:
    """``flott checkpoint [--full] JOBID`` (Flink 1.19+: CliFrontend.checkpoint)."""
    _check_job_id(job_id)
    op = _Operation(config, address, token)
    checkpoint_type = "FULL" if full else "CONFIGURED"
    click.echo(f"Triggering checkpoint for job {job_id}.")
    body = {"checkpointType": checkpoint_type, "triggerId": secrets.token_hex(16)}
    trigger_id = op.trigger("POST", f"/jobs/{job_id}/checkpoints", body)
    click.echo("Waiting for response...")
    result = op.wait(
        f"/jobs/{job_id}/checkpoints/{trigger_id}",
        f"Triggering a checkpoint for the job {job_id} failed.",
        trigger_id,
    )
    click.echo(f"Checkpoint {result.get('checkpointId')} for job {job_id} completed.")
    click.echo("You can resume your program from this checkpoint with the run command.")
    return 0
