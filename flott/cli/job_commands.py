"""``flott list|cancel``: operate jobs of a running cluster over its REST API.

Each command is one plain HTTP request (``GET /v1/jobs/overview``,
``PATCH /v1/jobs/:id?mode=cancel``) on :mod:`http.client`, with the retry
policy of :class:`~flott.client.rest_cluster_client.RestClusterClient`
(a failed connection or a 503 is retried ``rest.retry.max-attempts`` times,
``rest.retry.delay`` apart), and a plain-text table. Neither aiohttp nor rich
nor the REST server's modules are imported: the CLI's start-up is most of its
wall time.
"""

from __future__ import annotations

import datetime
import http.client
import json
import time
from typing import Any
from urllib.parse import urlparse

import click

from flott.configuration import Configuration
from flott.errors import FlottError, UserCodeError, error_class_by_name

_RUNNING = {"RUNNING", "RESTARTING", "FAILING", "CANCELLING"}
_SCHEDULED = {"CREATED", "INITIALIZING", "RECONCILING"}
_REST_API_VERSION = "v1"  # flott.rest.version.REST_API_VERSION, not imported to keep the CLI light


class _Endpoint:
    """Where the cluster's REST API is, and how patiently to ask it (RestClusterClient's policy)."""

    def __init__(self, config: Configuration, address: str | None) -> None:
        if address is None:
            address = f"{config.get('rest.address')}:{config.get('rest.port')}"
        address = address.strip().rstrip("/")
        if "://" not in address:
            address = f"http://{address}"
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

    def request(self, method: str, path: str) -> Any:
        """One REST call: the decoded 2xx body; a ClickException with the server's error otherwise."""
        target = f"{self.prefix}/{_REST_API_VERSION}{path}"
        last = ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(self.retry_delay_s)
            conn_cls = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
            conn = conn_cls(self.host, self.port, timeout=self.connect_timeout_s)
            try:
                try:
                    conn.connect()
                except OSError as e:
                    last = f"cannot connect to the REST endpoint at {self.base_url}: {e}"
                    continue
                if conn.sock is not None:
                    conn.sock.settimeout(self.read_timeout_s)
                try:
                    conn.request(method, target, headers={"Accept": "application/json"})
                    resp = conn.getresponse()
                    payload = resp.read()
                except (OSError, http.client.HTTPException) as e:
                    last = (
                        f"connection to the REST endpoint at {self.base_url} failed during {method} "
                        f"{path}: {e or type(e).__name__}"
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
    config: Configuration, address: str | None, running: bool, scheduled: bool, show_all: bool
) -> int:
    try:
        body = _Endpoint(config, address).request("GET", "/jobs/overview")
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


def cancel_job(config: Configuration, address: str | None, job_id: str) -> int:
    try:
        _Endpoint(config, address).request("PATCH", f"/jobs/{job_id}?mode=cancel")
    except FlottError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"Cancelled job {job_id}.")
    return 0
