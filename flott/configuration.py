"""Cluster configuration: Flink's key names where the concept is the same.

A configuration is a flat ``dict[str, str]`` (as in Flink's config.yaml, nested
YAML maps are flattened with dots), layered: defaults < config file < ``-D``.

The config file is found as Flink finds its ``config.yaml``: in the directory the
command names (``--configDir``), else in ``$FLOTT_CONF_DIR``, else in ``$FLINK_CONF_DIR``
(so a Flink installation's own file serves flott too); with none of them, there is no
file and the defaults apply. A named directory without a ``config.yaml`` is an error,
not an empty configuration.
Typed getters parse durations (``10 s``, ``500ms``, ``1 min``) and sizes and
raise ConfigurationError naming the key for bad values.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flott.errors import ConfigurationError


@dataclass(frozen=True)
class ConfigOption:
    key: str
    default: str
    description: str
    integer: bool = False
    """Read with ``get_int``: a value that is no integer is refused when the configuration loads."""


_OPTIONS = [
    ConfigOption("rest.address", "127.0.0.1", "Address clients use to reach the REST endpoint."),
    ConfigOption("rest.bind-address", "127.0.0.1", "Address the REST server binds to."),
    ConfigOption("rest.port", "8081", "REST port (0 = any free port).", integer=True),
    ConfigOption(
        "rest.retry.max-attempts", "20", "Client retries while the cluster is not reachable.", integer=True
    ),
    ConfigOption("rest.retry.delay", "3000 ms", "Delay between client retries."),
    ConfigOption("jobmanager.rpc.address", "127.0.0.1", "Address of the JobManager's RPC service."),
    ConfigOption(
        "jobmanager.rpc.port", "6123", "Port of the JobManager's RPC service (0 = any).", integer=True
    ),
    ConfigOption("jobmanager.bind-host", "127.0.0.1", "Address the JobManager's RPC service binds to."),
    ConfigOption("taskmanager.host", "127.0.0.1", "Address a TaskExecutor advertises."),
    ConfigOption("taskmanager.bind-host", "127.0.0.1", "Address a TaskExecutor binds to."),
    ConfigOption("taskmanager.numberOfTaskSlots", "1", "Slots per TaskExecutor.", integer=True),
    ConfigOption(
        "taskmanager.data.port", "0", "Data exchange port of a TaskExecutor (0 = any).", integer=True
    ),
    ConfigOption("taskmanager.rpc.port", "0", "RPC port of a TaskExecutor (0 = any).", integer=True),
    ConfigOption("parallelism.default", "1", "Parallelism of jobs that set none.", integer=True),
    ConfigOption("heartbeat.interval", "10000", "Heartbeat interval in ms."),
    ConfigOption("heartbeat.timeout", "50000", "Heartbeat timeout in ms."),
    ConfigOption(
        "taskmanager.registration.timeout",
        "5 min",
        "How long a TaskExecutor keeps trying to register with the ResourceManager before it exits.",
    ),
    ConfigOption(
        "metrics.fetcher.update-interval",
        "1000",
        "How long the REST endpoint reuses the metrics it fetched from the JobManager and the "
        "TaskManagers, ms. Flink's default is 10000; flott's is 1 s because one fetch is a single "
        "call answered from every process's registry (cheap), and rates and time shares should "
        "be fresh to the second for `flott run` and the dashboard.",
    ),
    ConfigOption("rest.flamegraph.enabled", "false", "Serve flame graphs (samples task threads on request)."),
    ConfigOption("rest.flamegraph.num-samples", "100", "Stack samples per flame graph.", integer=True),
    ConfigOption("rest.flamegraph.delay-between-samples", "50 ms", "Delay between two stack samples."),
    ConfigOption("rest.flamegraph.stack-depth", "100", "Frames kept per sampled stack.", integer=True),
    ConfigOption(
        "rest.flamegraph.refresh-interval", "1 min", "Age after which a flame graph is sampled again."
    ),
    ConfigOption("cluster.registration.initial-timeout", "100", "First delay between registrations, ms."),
    ConfigOption("cluster.registration.max-timeout", "30000", "Longest delay between registrations, ms."),
    ConfigOption("pekko.ask.timeout", "10 s", "Timeout of an RPC call."),
    ConfigOption("slot.request.timeout", "300000", "How long a job waits for slots, ms."),
    ConfigOption(
        "resourcemanager.taskmanager-timeout",
        "30000",
        "Workers started on demand (application mode): how long one may idle before it is released, ms.",
    ),
    ConfigOption(
        "resourcemanager.taskmanager-registration.timeout",
        "5 min",
        "Workers started on demand (application mode): how long a started one may take to register "
        "before it is released.",
    ),
    ConfigOption("jobstore.max-capacity", "1000", "Finished jobs kept for queries.", integer=True),
    ConfigOption("jobstore.expiration-time", "3600", "Seconds finished jobs are kept."),
    ConfigOption(
        "flott.job-logs.dir",
        "",
        "flott: where jobs' own logs (task output, status changes) are kept after the jobs end "
        "(any fsspec URL, or none; default: <high-availability.storageDir>/<cluster-id>/job-logs with "
        "ZooKeeper HA, else job-logs in the log directory; none in the embedded cluster).",
    ),
    ConfigOption(
        "flott.job-logs.max-bytes",
        "16777216",
        "flott: task output one job's log keeps, bytes (then a 'truncated' line; status lines go on).",
        integer=True,
    ),
    ConfigOption(
        "local.number-taskmanager",
        "0",
        "TaskExecutors of an embedded cluster (0 = one per core).",
        integer=True,
    ),
    ConfigOption("high-availability.type", "none", "none | zookeeper."),
    ConfigOption("high-availability.zookeeper.path.root", "/flott", "ZooKeeper root node of flott clusters."),
    ConfigOption("high-availability.cluster-id", "/default", "This cluster's node under the root."),
    ConfigOption(
        "high-availability.zookeeper.quorum", "127.0.0.1:2181", "ZooKeeper servers (host:port,...) for HA."
    ),
    ConfigOption(
        "high-availability.storageDir",
        "",
        "Where HA mode keeps job graphs, job files and finished jobs' results (any fsspec URL).",
    ),
    ConfigOption("high-availability.zookeeper.client.session-timeout", "60000", "Session timeout, ms."),
    ConfigOption("high-availability.zookeeper.client.connection-timeout", "15000", "Connect timeout, ms."),
    ConfigOption(
        "blob.server.port", "0", "Port of the BlobServer serving job artifacts (0 = any).", integer=True
    ),
    ConfigOption(
        "rest.server.max-content-length",
        "104857600",
        "Largest accepted REST request body, bytes.",
        integer=True,
    ),
    ConfigOption(
        "flott.admission.max-subtasks", "10000", "flott: most subtasks of all running jobs together."
    ),
    ConfigOption("flott.admission.max-vertices", "1000", "flott: most vertices (tasks) of one job."),
    ConfigOption("flott.admission.max-edges", "10000", "flott: most edges of one job."),
    ConfigOption(
        "flott.admission.refuse-unschedulable",
        "true",
        "flott: refuse a job needing more slots than a cluster that cannot start TaskManagers has.",
    ),
    ConfigOption(
        "flott.storage.allowed-schemes",
        "file",
        "flott: filesystem schemes clients may name for checkpoints/savepoints (file always; never "
        "http unless listed); the schemes of the configured snapshot directories are added.",
    ),
    ConfigOption(
        "flott.rest.header-timeout",
        "10 s",
        "flott: a connection's first request headers must arrive within this.",
    ),
    ConfigOption(
        "flott.rest.body-idle-timeout",
        "30 s",
        "flott: longest wait for the next bytes of a request body before answering 408.",
    ),
    ConfigOption(
        "flott.rest.max-connections-per-client",
        "512",
        "flott: connections one client address may hold open at a time.",
    ),
    ConfigOption(
        "flott.rest.allowed-hosts",
        "",
        "flott: host names browser requests may use besides IPs, localhost, this host and rest.address "
        "(* = any).",
    ),
    ConfigOption(
        "flott.rest.auth.tokens-file",
        "",
        "flott: REST authentication: a file of '<token> <role>' lines (roles read-only, operator); "
        "set, every REST request needs a bearer token (see flott.rest.authentication).",
    ),
    ConfigOption(
        "flott.rest.auth.tokens",
        "",
        "flott: REST authentication: '<token> <role>' entries inline, separated by , ; or newlines "
        "(also read from $FLOTT_REST_AUTH_TOKENS).",
    ),
    ConfigOption(
        "flott.rest.client.token",
        "",
        "flott: the bearer token clients (CLI, RestClusterClient) send, unless --token or "
        "$FLOTT_REST_TOKEN gives one.",
    ),
    ConfigOption(
        "web.submit.enable",
        "true",
        "Serve the /jars routes (upload, plan and run Python programs); false: they answer 404.",
    ),
    ConfigOption(
        "flott.rest.program.timeout",
        "60 s",
        "flott: /jars/:id/plan and /run: longest time the program's child process may take to plan its job.",
    ),
    ConfigOption(
        "flott.rest.program.memory",
        "2 gb",
        "flott: /jars/:id/plan and /run: address space the program's child process may use.",
    ),
    ConfigOption(
        "web.access-control-allow-origin",
        "",
        "Origins sent in Access-Control-Allow-Origin and allowed to change state (flott: none by default).",
    ),
    ConfigOption("security.ssl.rest.enabled", "false", "Serve the REST endpoint over HTTPS."),
    ConfigOption(
        "security.ssl.rest.authentication-enabled",
        "false",
        "REST: require client certificates signed by a CA of security.ssl.rest.truststore.",
    ),
    ConfigOption(
        "security.ssl.internal.enabled",
        "false",
        "Mutually authenticated TLS for RPC, data exchange and the BlobServer.",
    ),
    ConfigOption(
        "security.ssl.verify-hostname", "true", "REST clients check the server certificate's host name."
    ),
    ConfigOption(
        "security.ssl.internal.handshake-timeout",
        "-1",
        "Internal TLS handshake timeout, ms (-1: 60 s).",
        integer=True,
    ),
    ConfigOption(
        "cluster.services.shutdown-timeout",
        "30 s",
        "How long a process may take to stop after SIGTERM before it exits anyway.",
    ),
    ConfigOption(
        "application.result-retrieval-timeout",
        "60 s",
        "Application mode, attached: how long the cluster waits after its job ended for a client to "
        "fetch the result before it shuts down anyway.",
    ),
]

DEFAULTS: dict[str, str] = {o.key: o.default for o in _OPTIONS}
_INTEGER_KEYS = frozenset(o.key for o in _OPTIONS if o.integer)

# -- secrets ------------------------------------------------------------------------------------

FLINK_SENSITIVE_KEY_PARTS = (
    "password",
    "secret",
    "fs.azure.account.key",
    "apikey",
    "api-key",
    "auth-params",
    "service-key",
    "token",
    "basic-auth",
    "jaas.config",
    "http-headers",
)
"""Flink 2.3's GlobalConfiguration.SENSITIVE_KEYS: a key containing one of these (ignoring case)
has its value hidden wherever a configuration is shown."""

FLOTT_SENSITIVE_KEY_PARTS = (
    "passwd",
    "passphrase",
    "credential",
    "private-key",
    "private.key",
    "privatekey",
    "connection-string",
    "sas-key",
)
"""Obvious names Flink's list misses (``my.db.passwd``, ``fs.s3a.session.credential``, ...)."""

HIDDEN_CONTENT = "******"
"""What is shown instead of a secret (Flink's GlobalConfiguration.HIDDEN_CONTENT)."""


def is_sensitive(key: str) -> bool:
    """Whether ``key``'s value is a secret: Flink's rule, with flott's extra names."""
    k = key.lower()
    return any(p in k for p in FLINK_SENSITIVE_KEY_PARTS) or any(p in k for p in FLOTT_SENSITIVE_KEY_PARTS)


def masked(values: Mapping[str, str]) -> dict[str, str]:
    """``values`` with every secret replaced by :data:`HIDDEN_CONTENT` (for anything shown)."""
    return {k: HIDDEN_CONTENT if is_sensitive(k) else v for k, v in values.items()}


SECRET_CONFIG_ENV = "FLOTT_SECRET_CONFIG"
"""Environment variable carrying sensitive configuration entries (a JSON object) to a child process
flott starts: any user of the machine can read every process's command line (``ps``), while a
process's environment is readable by its owner only."""


SERVER_CREDENTIAL_PREFIX = "flott.rest.auth."
"""The REST endpoint's own credentials (:mod:`flott.rest.authentication`): the JobManager's alone."""
SERVER_CREDENTIAL_ENV = "FLOTT_REST_AUTH_TOKENS"
CLIENT_CREDENTIAL_ENV = "FLOTT_REST_TOKEN"
FLINK_CLIENT_HEADERS_ENV = "FLINK_REST_CLIENT_HEADERS"
_NOT_INHERITED = frozenset(
    {SECRET_CONFIG_ENV, SERVER_CREDENTIAL_ENV, CLIENT_CREDENTIAL_ENV, FLINK_CLIENT_HEADERS_ENV}
)


def split_secrets(values: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """``values`` as (plain entries, secrets), for a child process (a TaskExecutor, an application's
    program): the REST endpoint's credentials (``flott.rest.auth.*``) are in neither, since no child
    serves REST and user code runs in them."""
    values = {k: v for k, v in values.items() if not k.startswith(SERVER_CREDENTIAL_PREFIX)}
    plain = {k: v for k, v in values.items() if not is_sensitive(k)}
    return plain, {k: v for k, v in values.items() if is_sensitive(k)}


def secrets_environment(secrets: Mapping[str, str], env: Mapping[str, str]) -> dict[str, str]:
    """``env`` for a child process, carrying ``secrets`` in :data:`SECRET_CONFIG_ENV`. REST tokens
    in the environment (the endpoint's :data:`SERVER_CREDENTIAL_ENV`, a client's
    :data:`CLIENT_CREDENTIAL_ENV`, Flink's :data:`FLINK_CLIENT_HEADERS_ENV`) are not inherited: a
    parent that means to hand one over says so (``secrets``, or the variable set on the result)."""
    import json

    out = {k: v for k, v in env.items() if k not in _NOT_INHERITED}
    if secrets:
        out[SECRET_CONFIG_ENV] = json.dumps(dict(secrets))
    return out


def take_secrets_from_environment() -> dict[str, str]:
    """The secrets a parent passed in :data:`SECRET_CONFIG_ENV`; the variable is removed, so that
    processes and job code started from here do not inherit it."""
    import json

    raw = os.environ.pop(SECRET_CONFIG_ENV, "")
    if not raw:
        return {}
    try:
        values = json.loads(raw)
    except ValueError:
        raise ConfigurationError(f"{SECRET_CONFIG_ENV} is not a JSON object") from None
    if not isinstance(values, dict):
        raise ConfigurationError(f"{SECRET_CONFIG_ENV} is not a JSON object")
    return {str(k): str(v) for k, v in values.items()}


def shown_value(key: str, value: str) -> str:
    """``value`` as an error message or log line may show it: hidden when ``key`` is a secret."""
    return HIDDEN_CONTENT if is_sensitive(key) else value


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Zµ]*)\s*$")
_UNIT_NS: dict[str, int] = {
    label: ns
    for ns, labels in (
        (1, ("ns", "nano", "nanos", "nanosecond", "nanoseconds")),
        (1_000, ("µs", "us", "micro", "micros", "microsecond", "microseconds")),
        (1_000_000, ("", "ms", "milli", "millis", "millisecond", "milliseconds")),
        (1_000_000_000, ("s", "sec", "secs", "second", "seconds")),
        (60_000_000_000, ("m", "min", "mins", "minute", "minutes")),
        (3_600_000_000_000, ("h", "hour", "hours")),
        (86_400_000_000_000, ("d", "day", "days")),
    )
    for label in labels
}
"""Flink's duration units (TimeUtils): a bare number is milliseconds, labels are case-insensitive."""


def _duration_ns(key: str, raw: str, *, integral: bool) -> int:
    m = _DURATION.match(raw)
    unit = m.group(2).lower() if m else ""
    if m is None or unit not in _UNIT_NS or (integral and "." in m.group(1)):
        raise ConfigurationError(
            f"Could not parse value {shown_value(key, raw)!r} for key {key!r} as a duration "
            "(a number and a unit: ns, us, ms, s, min, h or d; a bare number is milliseconds)"
        )
    if integral:
        return int(m.group(1)) * _UNIT_NS[unit]
    return int(float(m.group(1)) * _UNIT_NS[unit])


def parse_duration_ms(key: str, value: str) -> int:
    """Flink's duration syntax (``100``, ``100 ms``, ``5 s``, ``1 min``, ``1 h``, ``2 d``) in
    milliseconds, the one parser every duration-typed key goes through; ``-1`` stays -1
    (Flink's "disabled" for some keys). Sub-millisecond values round down."""
    if value.strip() == "-1":
        return -1
    return _duration_ns(key, value, integral=True) // 1_000_000


_SIZE = re.compile(r"^\s*(\d+)\s*([a-zA-Z]*)\s*$")
_SIZE_UNITS = {
    "": 1, "b": 1, "bytes": 1,
    "k": 1 << 10, "kb": 1 << 10, "kibibytes": 1 << 10,
    "m": 1 << 20, "mb": 1 << 20, "mebibytes": 1 << 20,
    "g": 1 << 30, "gb": 1 << 30, "gibibytes": 1 << 30,
    "t": 1 << 40, "tb": 1 << 40, "tebibytes": 1 << 40,
}  # fmt: skip


def parse_memory_size(key: str, value: str) -> int:
    """Flink's MemorySize syntax (``64mb``, ``1 gb``, ``4096``) in bytes."""
    match = _SIZE.match(value)
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in _SIZE_UNITS:
        raise ConfigurationError(f"Could not parse value '{value}' for key '{key}' as a memory size")
    return int(match.group(1)) * _SIZE_UNITS[unit]


def flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in data.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(flatten(v, key + "."))
        elif isinstance(v, bool):
            out[key] = "true" if v else "false"
        elif isinstance(v, list):
            out[key] = ";".join(str(x) for x in v)
        elif v is None:
            continue
        else:
            out[key] = str(v)
    return out


CONFIG_FILE_NAME = "config.yaml"
CONF_DIR_ENV = "FLOTT_CONF_DIR"
FLINK_CONF_DIR_ENV = "FLINK_CONF_DIR"


def find_config_file(conf_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """``config.yaml`` in ``conf_dir``, ``$FLOTT_CONF_DIR`` or ``$FLINK_CONF_DIR`` (first one given)."""
    if conf_dir is not None:
        where, source = Path(conf_dir), "--configDir"
    else:
        for var in (CONF_DIR_ENV, FLINK_CONF_DIR_ENV):
            value = os.environ.get(var, "").strip()
            if value:
                where, source = Path(value), f"${var}"
                break
        else:
            return None
    where = where.expanduser()
    if where.is_file():
        raise ConfigurationError(
            f"{source} names a file ({where}); it takes the directory that holds {CONFIG_FILE_NAME}"
        )
    if not where.is_dir():
        raise ConfigurationError(f"{source}: the configuration directory {where} does not exist")
    path = where / CONFIG_FILE_NAME
    if not path.is_file():
        raise ConfigurationError(f"{source}: the configuration directory {where} holds no {CONFIG_FILE_NAME}")
    return path


class Configuration:
    """Layered string configuration with typed getters."""

    def __init__(self, values: Mapping[str, str] | None = None) -> None:
        self._values: dict[str, str] = dict(values or {})

    @classmethod
    def load(
        cls, path: str | os.PathLike[str] | None = None, dynamic: Mapping[str, str] | None = None
    ) -> Configuration:
        values: dict[str, str] = {}
        if path is not None:
            import yaml

            p = Path(path)
            try:
                data = yaml.safe_load(p.read_text()) or {}
            except OSError as e:
                raise ConfigurationError(f"cannot read config file {p}: {e.strerror}") from None
            except yaml.YAMLError as e:
                raise ConfigurationError(f"config file {p} is not valid YAML: {e}") from None
            if not isinstance(data, Mapping):
                raise ConfigurationError(f"config file {p} must hold a YAML mapping of keys to values")
            values.update(flatten(data))
        values.update(dynamic or {})
        config = cls(values)
        for key in _INTEGER_KEYS & values.keys():
            config.get_int(key)
        return config

    @classmethod
    def load_default(
        cls, conf_dir: str | os.PathLike[str] | None = None, dynamic: Mapping[str, str] | None = None
    ) -> Configuration:
        """The configuration a command starts from: the config file :func:`find_config_file`
        finds (if any), overridden by ``dynamic`` (``-D``)."""
        return cls.load(find_config_file(conf_dir), dynamic)

    @staticmethod
    def parse_dynamic(items: list[str] | tuple[str, ...]) -> dict[str, str]:
        out: dict[str, str] = {}
        for item in items:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise ConfigurationError(f"-D expects key=value, got {item!r}")
            out[key.strip()] = value.strip()
        return out

    def to_dict(self) -> dict[str, str]:
        return dict(self._values)

    def with_overrides(self, values: Mapping[str, str]) -> Configuration:
        merged = dict(self._values)
        merged.update(values)
        return Configuration(merged)

    def contains(self, key: str) -> bool:
        return key in self._values

    def get(self, key: str, default: str | None = None) -> str:
        if key in self._values:
            return self._values[key]
        if default is not None:
            return default
        if key in DEFAULTS:
            return DEFAULTS[key]
        raise ConfigurationError(f"no value for configuration key {key!r}")

    def set(self, key: str, value: str) -> None:
        self._values[key] = value

    def get_int(self, key: str, default: int | None = None) -> int:
        raw = self.get(key, None if default is None else str(default))
        try:
            return int(raw)
        except ValueError:
            raise ConfigurationError(f"{key}: expected an integer, got {shown_value(key, raw)!r}") from None

    def get_bool(self, key: str, default: bool | None = None) -> bool:
        raw = self.get(key, None if default is None else str(default)).lower()
        if raw in ("true", "1", "yes"):
            return True
        if raw in ("false", "0", "no"):
            return False
        raise ConfigurationError(f"{key}: expected true or false, got {shown_value(key, raw)!r}")

    def get_seconds(self, key: str, default: str | None = None) -> float:
        """A duration in seconds; a bare number means milliseconds (as Flink's ms-typed keys)."""
        return _duration_ns(key, self.get(key, default), integral=False) / 1e9


def merged_job_config(cluster: Mapping[str, str], job: Mapping[str, str]) -> dict[str, str]:
    """The job's effective configuration: the cluster's, overridden by the job's own keys."""
    return {**cluster, **job}
