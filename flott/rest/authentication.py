"""Who may use the REST API: bearer tokens with two roles (flott's; Flink's REST API has no auth).

Flink protects its REST endpoint with mutual TLS at most; anyone who reaches the port may submit
a job, that is run code on the cluster. flott adds bearer tokens (RFC 6750), checked before a
request reaches its handler. Two roles:

* ``read-only``: every GET (overviews, job details, metrics, configuration views, logs list);
* ``operator``: everything ``read-only`` may, plus every route that changes something: submit,
  cancel, stop, savepoint, checkpoint, rescale, dispose, coordination requests, client
  heartbeats, cluster shutdown, and the jar routes (upload, plan and run a program).

Which route needs which role is :data:`ROUTE_ROLES`, one table keyed by method and path as the
route registry (:mod:`flott.rest.webmonitor.routes`) names them; a route missing from it needs the
operator role (fail closed), and a test walks every route the endpoint serves to make sure none
is missing. ``/openapi.json`` and URLs no route matches need ``read-only`` (an unauthenticated
client learns nothing, not even which paths exist).

**Server configuration** (the JobManager's; all three may be combined, their tokens add up):

* ``flott.rest.auth.tokens-file``: a file with one ``<token> <role>`` per line (``#`` starts a
  comment, blank lines are skipped). Read once when the REST endpoint starts. A file readable by
  group or others gets a warning.
* ``flott.rest.auth.tokens``: the same entries inline, separated by ``,``, ``;`` or newlines
  (a secret: masked like every ``*token*`` key, handed to a child process in its environment).
* the environment variable ``FLOTT_REST_AUTH_TOKENS``: the same inline format.

Authentication is on as soon as one of them is configured (an empty file still turns it on, and
then every request is refused), off otherwise, as in Flink; a REST endpoint bound to an address
other than loopback without it logs one warning. A token is 16 to 512 characters of RFC 6750's
token alphabet (letters, digits, ``-._~+/`` and trailing ``=``); ``openssl rand -hex 32`` makes
one. Only SHA-256 digests of the tokens are kept in memory, compared in constant time
(:func:`hmac.compare_digest`, against every known digest); a token is never logged, never put in
an answer, and the server's token keys (``flott.rest.auth.*``) are never handed to a
TaskExecutor or an application's program (:func:`flott.configuration.split_secrets`).

**Answers:** no token, another scheme than Bearer, or an unknown token: 401 with Flink's error
body and ``WWW-Authenticate: Bearer realm="flott"``; a valid token whose role does not cover the
route: 403.

**Clients** (the CLI, :class:`~flott.client.rest_cluster_client.RestClusterClient`) send the
token given by ``--token`` (CLI) or the constructor, else ``$FLOTT_REST_TOKEN``, else the
configuration key ``flott.rest.client.token`` (:func:`client_token`). Flink's own CLI has no
token option but sends the headers of ``$FLINK_REST_CLIENT_HEADERS``; set it to
``Authorization:Bearer <token>`` (flott's clients honour it too, :func:`client_headers`).
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import ipaddress
import logging
import os
import re
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from flott.configuration import (
    CLIENT_CREDENTIAL_ENV,
    FLINK_CLIENT_HEADERS_ENV,
    SERVER_CREDENTIAL_ENV,
    SERVER_CREDENTIAL_PREFIX,
    Configuration,
)
from flott.errors import AuthenticationError, AuthorizationError, ConfigurationError, InvalidTokenError

if TYPE_CHECKING:
    from flott.runtime.jobgraph import JobGraph

log = logging.getLogger(__name__)

TOKENS_FILE_KEY = "flott.rest.auth.tokens-file"
TOKENS_KEY = "flott.rest.auth.tokens"
TOKENS_ENV = SERVER_CREDENTIAL_ENV
CLIENT_TOKEN_KEY = "flott.rest.client.token"
CLIENT_TOKEN_ENV = CLIENT_CREDENTIAL_ENV
REALM = "flott"

_TOKEN = re.compile(r"^[A-Za-z0-9\-._~+/]+=*$")
_MIN_TOKEN, _MAX_TOKEN = 16, 512


class Role(enum.IntEnum):
    """A token's role; a higher role may do everything a lower one may."""

    PUBLIC = 0
    """No token needed: only the dashboard's static files (code, no cluster data), so that a browser
    can load the page that then asks for a token and sends it with every REST call."""
    READ_ONLY = 1
    OPERATOR = 2

    @property
    def label(self) -> str:
        return {Role.PUBLIC: "public", Role.READ_ONLY: "read-only"}.get(self, "operator")


_ROLE_NAMES = {"read-only": Role.READ_ONLY, "operator": Role.OPERATOR}

# -- the route-role table ------------------------------------------------------------------------

_READ_ONLY_PATHS = (
    "/applications/overview",
    "/applications/{applicationid}",
    "/applications/{applicationid}/exceptions",
    "/applications/{applicationid}/jobmanager/config",
    "/config",
    "/datasets",
    "/datasets/delete/{triggerid}",
    "/jars",
    "/jobmanager/config",
    "/jobmanager/environment",
    "/jobmanager/log",
    "/jobmanager/logs",
    "/jobmanager/logs/{filename}",
    "/jobmanager/stdout",
    "/jobmanager/metrics",
    "/jobmanager/thread-dump",
    "/jobs",
    "/jobs/metrics",
    "/jobs/overview",
    "/jobs/{jobid}",
    "/jobs/{jobid}/accumulators",
    "/jobs/{jobid}/checkpoints",
    "/jobs/{jobid}/checkpoints/config",
    "/jobs/{jobid}/checkpoints/details/{checkpointid}",
    "/jobs/{jobid}/checkpoints/details/{checkpointid}/subtasks/{vertexid}",
    "/jobs/{jobid}/checkpoints/{triggerid}",
    "/jobs/{jobid}/config",
    "/jobs/{jobid}/exceptions",
    "/jobs/{jobid}/execution-result",
    "/jobs/{jobid}/jobmanager/config",
    "/jobs/{jobid}/jobmanager/environment",
    "/jobs/{jobid}/jobmanager/log-url",
    "/jobs/{jobid}/logs",
    "/jobs/{jobid}/metrics",
    "/jobs/{jobid}/plan",
    "/jobs/{jobid}/rescales/config",
    "/jobs/{jobid}/rescales/details/{rescaleuuid}",
    "/jobs/{jobid}/rescales/history",
    "/jobs/{jobid}/rescales/overview",
    "/jobs/{jobid}/rescales/summary",
    "/jobs/{jobid}/rescaling/{triggerid}",
    "/jobs/{jobid}/resource-requirements",
    "/jobs/{jobid}/savepoints/{triggerid}",
    "/jobs/{jobid}/status",
    "/jobs/{jobid}/taskmanagers/{taskmanagerid}/log-url",
    "/jobs/{jobid}/vertices/{vertexid}",
    "/jobs/{jobid}/vertices/{vertexid}/accumulators",
    "/jobs/{jobid}/vertices/{vertexid}/backpressure",
    "/jobs/{jobid}/vertices/{vertexid}/flamegraph",
    "/jobs/{jobid}/vertices/{vertexid}/jm-operator-metrics",
    "/jobs/{jobid}/vertices/{vertexid}/metrics",
    "/jobs/{jobid}/vertices/{vertexid}/subtasks/accumulators",
    "/jobs/{jobid}/vertices/{vertexid}/subtasks/metrics",
    "/jobs/{jobid}/vertices/{vertexid}/subtasks/{subtaskindex}",
    "/jobs/{jobid}/vertices/{vertexid}/subtasks/{subtaskindex}/attempts/{attempt}",
    "/jobs/{jobid}/vertices/{vertexid}/subtasks/{subtaskindex}/attempts/{attempt}/accumulators",
    "/jobs/{jobid}/vertices/{vertexid}/subtasks/{subtaskindex}/metrics",
    "/jobs/{jobid}/vertices/{vertexid}/subtasktimes",
    "/jobs/{jobid}/vertices/{vertexid}/taskmanagers",
    "/jobs/{jobid}/vertices/{vertexid}/watermarks",
    "/overview",
    "/savepoint-disposal/{triggerid}",
    "/taskmanagers",
    "/taskmanagers/metrics",
    "/taskmanagers/{taskmanagerid}",
    "/taskmanagers/{taskmanagerid}/log",
    "/taskmanagers/{taskmanagerid}/logs",
    "/taskmanagers/{taskmanagerid}/logs/{filename}",
    "/taskmanagers/{taskmanagerid}/stdout",
    "/taskmanagers/{taskmanagerid}/metrics",
    "/taskmanagers/{taskmanagerid}/thread-dump",
)
_OPERATOR_ROUTES = (
    ("POST", "/applications/{applicationid}/cancel"),
    ("DELETE", "/cluster"),
    ("DELETE", "/datasets/{datasetid}"),
    ("POST", "/jars/upload"),
    ("DELETE", "/jars/{jarid}"),
    ("POST", "/jars/{jarid}/plan"),  # runs the jar's main() in Flink
    ("POST", "/jars/{jarid}/run"),
    ("POST", "/jars/{jarid}/run-application"),
    ("POST", "/jobs"),
    ("PATCH", "/jobs/{jobid}"),
    ("POST", "/jobs/{jobid}/checkpoints"),
    ("PATCH", "/jobs/{jobid}/clientHeartbeat"),
    ("POST", "/jobs/{jobid}/coordinators/{operatorid}"),
    ("PATCH", "/jobs/{jobid}/rescaling"),
    ("PUT", "/jobs/{jobid}/resource-requirements"),
    ("POST", "/jobs/{jobid}/savepoints"),
    ("POST", "/jobs/{jobid}/stop"),
    ("POST", "/savepoint-disposal"),
)

ROUTE_ROLES: Mapping[tuple[str, str], Role] = {
    **{("GET", p): Role.READ_ONLY for p in _READ_ONLY_PATHS},
    **{route: Role.OPERATOR for route in _OPERATOR_ROUTES},
}
"""The role each route (method, path as in the route registry) needs: the one table."""

OPENAPI_ROLE = Role.READ_ONLY
DASHBOARD_ROLE = Role.PUBLIC
UNMATCHED_ROLE = Role.READ_ONLY
"""What a URL no route serves needs before the endpoint says 404/405."""


def required_role(method: str, path: str) -> Role:
    """The role ``method path`` needs; a route the table does not name needs the operator role."""
    return ROUTE_ROLES.get((method.upper(), path), Role.OPERATOR)


# -- tokens ----------------------------------------------------------------------------------------


def _digest(token: str | bytes) -> bytes:
    return hashlib.sha256(token.encode() if isinstance(token, str) else token).digest()


def check_token_syntax(token: str, where: str) -> None:
    """Refuse a token that is not a bearer token of sensible length; the message never shows it."""
    if not _MIN_TOKEN <= len(token) <= _MAX_TOKEN or not _TOKEN.match(token):
        raise ConfigurationError(
            f"{where}: a token must be {_MIN_TOKEN} to {_MAX_TOKEN} characters of letters, digits and "
            f"-._~+/ (optionally ending in =); e.g. 'openssl rand -hex 32' makes one"
        )


def parse_tokens(text: str, source: str, *, inline: bool = False) -> list[tuple[str, Role]]:
    """The ``<token> <role>`` entries of ``text`` (lines; inline also ``,``/``;``-separated)."""
    entries = re.split(r"[\n,;]", text) if inline else text.splitlines()
    out: list[tuple[str, Role]] = []
    for number, raw in enumerate(entries, 1):
        line = raw.split("#", 1)[0].strip() if not inline else raw.strip()
        if not line:
            continue
        where = f"{source}, entry {number}" if inline else f"{source}, line {number}"
        parts = line.split()
        if len(parts) != 2:
            raise ConfigurationError(f"{where}: expected '<token> <role>' (role: read-only or operator)")
        token, role_name = parts
        role = _ROLE_NAMES.get(role_name.lower())
        if role is None:
            raise ConfigurationError(
                f"{where}: unknown role {role_name!r}; the roles are read-only and operator"
            )
        check_token_syntax(token, where)
        out.append((token, role))
    return out


class RestAuthenticator:
    """The tokens an endpoint accepts (as digests) and the check each request goes through."""

    def __init__(self, entries: list[tuple[str, Role]]) -> None:
        roles: dict[bytes, Role] = {}
        for token, role in entries:
            d = _digest(token)
            if roles.get(d, role) != role:
                raise ConfigurationError("REST authentication: one token is given two different roles")
            roles[d] = role
        self._entries: tuple[tuple[bytes, Role], ...] = tuple(roles.items())

    def __repr__(self) -> str:  # never the digests either
        return f"RestAuthenticator({len(self._entries)} tokens)"

    def add_token(self, token: str, role: Role) -> None:
        """Accept one more token (the cluster's own, for the processes it starts)."""
        check_token_syntax(token, "REST authentication")
        self._entries = (*self._entries, (_digest(token), role))

    @classmethod
    def from_config(
        cls, config: Configuration, environ: Mapping[str, str] | None = None
    ) -> RestAuthenticator | None:
        """The authenticator the configuration asks for, or None when authentication is off."""
        env = os.environ if environ is None else environ
        entries: list[tuple[str, Role]] = []
        configured = False
        path = config.get(TOKENS_FILE_KEY, "").strip()
        if path:
            configured = True
            entries += _read_tokens_file(Path(path).expanduser())
        inline = config.get(TOKENS_KEY, "")
        if inline.strip():
            configured = True
            entries += parse_tokens(inline, TOKENS_KEY, inline=True)
        from_env = env.get(TOKENS_ENV, "")
        if from_env.strip():
            configured = True
            entries += parse_tokens(from_env, f"${TOKENS_ENV}", inline=True)
        return cls(entries) if configured else None

    def role_of(self, headers: Mapping[str, str]) -> Role:
        """The role of the request's bearer token; AuthenticationError without a valid one."""
        value = headers.get("Authorization")
        if value is None:
            raise AuthenticationError(
                "Unauthorized: this REST endpoint requires a bearer token (header 'Authorization: "
                "Bearer <token>') and the request carried none."
            )
        scheme, _, token = value.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise AuthenticationError(
                "Unauthorized: this REST endpoint takes bearer tokens only (header 'Authorization: "
                "Bearer <token>')."
            )
        presented = _digest(token.strip().encode("utf-8", "surrogateescape"))
        found: Role | None = None
        for digest, role in self._entries:  # every entry, so the time says nothing about which matched
            if hmac.compare_digest(digest, presented):
                found = role
        if found is None:
            raise InvalidTokenError("Unauthorized: the bearer token is not valid for this REST endpoint.")
        return found

    def authorize(self, method: str, path: str, headers: Mapping[str, str], needed: Role) -> None:
        """Raise AuthenticationError (401) or AuthorizationError (403) unless the request may go on."""
        if needed is Role.PUBLIC:
            return
        role = self.role_of(headers)
        if role < needed:
            log.info("REST %s %s refused: a %s token, %s needed", method, path, role.label, needed.label)
            raise AuthorizationError(
                f"Forbidden: {method} {path} needs a token with the {needed.label} role; the token "
                f"sent has the {role.label} role."
            )


def www_authenticate(err: AuthenticationError) -> str:
    """The ``WWW-Authenticate`` value answering ``err`` (RFC 6750 section 3)."""
    if isinstance(err, InvalidTokenError):
        return f'Bearer realm="{REALM}", error="invalid_token"'
    return f'Bearer realm="{REALM}"'


def _read_tokens_file(path: Path) -> list[tuple[str, Role]]:
    try:
        text = path.read_text(encoding="utf-8")
        mode = path.stat().st_mode
    except OSError as e:
        raise ConfigurationError(f"{TOKENS_FILE_KEY}: cannot read {path}: {e.strerror or e}") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        log.warning(
            "%s: %s can be read by other users (mode %o); make it private (chmod 600)",
            TOKENS_FILE_KEY,
            path,
            stat.S_IMODE(mode),
        )
    return parse_tokens(text, str(path))


def warn_if_exposed(addresses: list[str], authenticator: RestAuthenticator | None) -> bool:
    """Log one warning when the endpoint listens beyond loopback without authentication."""
    if authenticator is not None:
        return False
    exposed = [a for a in addresses if not _is_loopback(a)]
    if not exposed:
        return False
    log.warning(
        "the REST endpoint listens on %s without authentication: anyone who reaches it can submit "
        "jobs (run code) and cancel them; set %s (or %s / $%s), or bind rest.bind-address to loopback",
        ", ".join(exposed),
        TOKENS_FILE_KEY,
        TOKENS_KEY,
        TOKENS_ENV,
    )
    return True


def _is_loopback(address: str) -> bool:
    if address.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip("[]").split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def auth_configured(config: Configuration, environ: Mapping[str, str] | None = None) -> bool:
    """Whether a JobManager with ``config`` (and this environment) will require tokens."""
    env = os.environ if environ is None else environ
    values = (config.get(TOKENS_FILE_KEY, ""), config.get(TOKENS_KEY, ""), env.get(TOKENS_ENV, ""))
    return any(v.strip() for v in values)


def new_internal_token() -> str:
    """A fresh token for a process a flott command starts and then talks to (``flott cluster start``
    waits for its JobManager with one); it lives as long as that process, in memory only."""
    return secrets.token_urlsafe(32)


def handed_over_tokens(
    config: Configuration, internal: str, role: Role, environ: Mapping[str, str] | None = None
) -> str:
    """The :data:`TOKENS_KEY` value for a JobManager this process starts: the configured inline
    tokens, those of ``$FLOTT_REST_AUTH_TOKENS`` (a child does not inherit that variable) and
    ``internal`` with ``role``. Handed over as a secret (environment), never on a command line."""
    env = os.environ if environ is None else environ
    parts = [config.get(TOKENS_KEY, "").strip(), env.get(TOKENS_ENV, "").strip(), f"{internal} {role.label}"]
    return "\n".join(p for p in parts if p)


# -- clients ---------------------------------------------------------------------------------------


def client_token(config: Configuration, explicit: str | None = None) -> str | None:
    """The token a client sends: ``explicit`` (``--token``), else ``$FLOTT_REST_TOKEN``, else
    ``flott.rest.client.token``; None for none. A malformed one is a ConfigurationError."""
    for token, where in (
        (explicit, "--token"),
        (os.environ.get(CLIENT_TOKEN_ENV), f"${CLIENT_TOKEN_ENV}"),
        (config.get(CLIENT_TOKEN_KEY, ""), CLIENT_TOKEN_KEY),
    ):
        if token and token.strip():
            check_token_syntax(token.strip(), where)
            return token.strip()
    return None


def is_credential_key(key: str) -> bool:
    """A key holding a REST token (the client's, or the server's ``flott.rest.auth.*``)."""
    return key == CLIENT_TOKEN_KEY or key.startswith(SERVER_CREDENTIAL_PREFIX)


def without_credentials(job_graph: JobGraph) -> JobGraph:
    """``job_graph`` without REST token keys in its configuration: a job's configuration goes to
    the TaskExecutors and into the JobManager's job views, a client's token has no business there."""
    if not any(is_credential_key(k) for k in job_graph.config):
        return job_graph
    import msgspec

    config = {k: v for k, v in job_graph.config.items() if not is_credential_key(k)}
    return msgspec.structs.replace(job_graph, config=config)


def authorization_header(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


FLINK_HEADERS_ENV = FLINK_CLIENT_HEADERS_ENV
"""Flink's client reads extra HTTP headers from this variable (ConfigConstants.FLINK_REST_CLIENT_HEADERS),
newline-separated ``name:value``; so ``FLINK_REST_CLIENT_HEADERS='Authorization:Bearer <token>'`` lets
Flink's own CLI talk to a flott cluster with authentication, and flott's clients read it too."""


def client_headers(config: Configuration, explicit_token: str | None = None) -> dict[str, str]:
    """The headers every request of a client carries: those of ``$FLINK_REST_CLIENT_HEADERS`` (as
    Flink's RestClusterClient; a line without ``:`` is skipped with a log line, as there), then
    ``Authorization: Bearer`` of :func:`client_token` when there is one."""
    headers: dict[str, str] = {}
    for line in os.environ.get(FLINK_HEADERS_ENV, "").splitlines():
        if not line.strip():
            continue
        name, sep, value = line.partition(":")
        if not sep or not name.strip():
            log.info("skipped a malformed header in $%s (expected name:value lines)", FLINK_HEADERS_ENV)
            continue
        headers[name.strip()] = value.strip()
    token = client_token(config, explicit_token)
    if token is not None:
        headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
        headers.update(authorization_header(token))
    return headers


CLIENT_HINT_401 = (
    f"give the cluster's token with --token, ${CLIENT_TOKEN_ENV} or the configuration key {CLIENT_TOKEN_KEY}"
)
CLIENT_HINT_403 = "use a token with the operator role for this command"


def client_auth_message(status: int, server_message: str) -> str:
    """What a client prints for a 401/403: the server's reason and what to do about it."""
    hint = CLIENT_HINT_401 if status == 401 else CLIENT_HINT_403
    return f"{server_message.rstrip('.')}: {hint} (HTTP {status})"
