"""flott's one error tree.

Every error flott raises on purpose is a :class:`FlottError`. Foreign errors
(socket errors, msgspec decode errors, kazoo errors ...) are translated into
this tree at the one boundary where they enter flott; user exceptions raised
inside a task travel as :class:`UserCodeError` with the user's type, message and
the worker's traceback. Each class carries the HTTP status the REST endpoint
answers with, so the mapping lives here and nowhere else::

    FlottError                              500
    ├── ConfigurationError                  400  bad config key or value
    │   └── TlsHandshakeError               400  client side: a TLS peer's certificate was not trusted,
    │                                            or ours was refused (retrying cannot help)
    ├── InvalidJobGraphError                400  a JobGraph that cannot be run
    │   └── JobAdmissionError               400  refused at submission: over a cluster limit or
    │                                            needs slots this cluster can never give it
    ├── InvalidProgramError                 400  the program itself is wrong (plan time; also a ValueError)
    │   ├── TableValidationError            400  a Table API / SQL program that does not validate
    │   │                                        (Flink's ValidationException, with line and column)
    │   └── SqlParseError                   400  SQL that does not parse (Flink's SqlParserException)
    ├── RestRequestError                    400  malformed REST request (the REST layer's own)
    │   ├── PayloadTooLargeError            413
    │   ├── RequestBodyTimeoutError         408  the body stopped arriving (flott.rest.body-idle-timeout)
    │   ├── AuthenticationError             401  REST auth is on and no valid bearer token was sent
    │   ├── AuthorizationError              403  the token's role may not use this route
    │   └── LogFileNotFoundError            404  no such log file (or a name leading out of the log dir)
    ├── ClusterError                        500  the cluster itself is in trouble
    │   ├── RpcError                        500  a remote call failed
    │   │   ├── RpcConnectionError          503  the peer cannot be reached
    │   │   ├── RpcTimeoutError             504  the peer did not answer in time
    │   │   ├── UnknownRpcMethodError       500
    │   │   └── FencingTokenError           409  call carried a stale leader token
    │   ├── LeadershipLostError             503
    │   ├── OperationCacheClosedError       503  shutting down: no new async operations
    │   ├── NoResourceAvailableError        500  not enough slots in time
    │   ├── TaskExecutorLostError           500  a worker process died / stopped heartbeating
    │   └── DataExchangeError               500  a data channel between tasks broke
    ├── JobError                            500  something about one job
    │   ├── JobNotFoundError                404
    │   ├── DuplicateJobSubmissionError     409
    │   ├── JobNotTerminalError             409  result asked before the job ended
    │   ├── JobAlreadyTerminalError         409  e.g. cancel of a FINISHED job
    │   ├── OperationNotFoundError          404  status of an async operation never triggered
    │   ├── OperatorNotFoundError           404  a coordination request for an operator the job lacks
    │   ├── JobExecutionError               500  the job ended FAILED (cause attached)
    │   ├── JobCancellationError            500  the job ended CANCELED while waiting for it
    │   ├── JobSubmissionError              500  client side: submission did not go through
    │   ├── JobArtifactError                500  a job's Python files/requirements cannot be stored,
    │   │                                        fetched, verified or installed
    │   └── NotYetSupportedError            501  a Flink capability flott has not built yet
    ├── IllegalStateTransitionError         500  a state machine was asked for an illegal move
    ├── TaskCancelledError                  500  raised inside a task thread to unwind it
    └── UserCodeError                       500  the user's function raised (type, message, traceback)
"""

from __future__ import annotations

from typing import ClassVar


class FlottError(Exception):
    """Root of every error flott raises on purpose."""

    http_status: ClassVar[int] = 500

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ConfigurationError(FlottError):
    http_status = 400


class TlsHandshakeError(ConfigurationError):
    """A TLS handshake failed on a certificate (``security.ssl.*``): a configuration to fix, not a
    connection to retry."""


class InvalidJobGraphError(FlottError):
    http_status = 400


class JobAdmissionError(InvalidJobGraphError):
    """A job (or a rescale) the cluster refuses before touching anything: it is above a limit
    (max parallelism, subtasks, vertices, edges) or needs more slots than a cluster that cannot
    start TaskExecutors will ever have. The message names the limit and its configuration key."""


class InvalidProgramError(FlottError, ValueError):
    """Flink's InvalidProgramException: e.g. elements that do not fit their declared type."""

    http_status = 400


class TableValidationError(InvalidProgramError):
    """Flink's ``org.apache.flink.table.api.ValidationException``: the message starts with that Java name,
    as PyFlink's error text does, so a user grepping for it finds it on both."""


class SqlParseError(InvalidProgramError):
    """Flink's ``SqlParserException``: SQL that does not parse, with the line and column."""


class RestRequestError(FlottError):
    http_status = 400


class PayloadTooLargeError(RestRequestError):
    http_status = 413


class RequestBodyTimeoutError(RestRequestError):
    """A request whose body stopped arriving: no byte within ``flott.rest.body-idle-timeout``.
    Without it, a client that sends headers and then trickles (or withholds) the body holds a
    handler, its buffers and a connection for as long as it likes."""

    http_status = 408


class AuthenticationError(RestRequestError):
    """No bearer token, or one the endpoint does not know (:mod:`flott.rest.authentication`)."""

    http_status = 401


class AuthorizationError(RestRequestError):
    """A valid token whose role does not cover the route (a read-only token on a mutating route)."""

    http_status = 403


class LogFileNotFoundError(RestRequestError):
    """A log or stdout file asked for over REST is not there, or its name leads out of the log
    directory (Flink answers both with "This file does not exist in ... log dir.")."""

    http_status = 404


class ClusterError(FlottError):
    http_status = 500


class RpcError(ClusterError):
    pass


class RpcConnectionError(RpcError):
    http_status = 503


class RpcTimeoutError(RpcError):
    http_status = 504


class UnknownRpcMethodError(RpcError):
    pass


class FencingTokenError(RpcError):
    http_status = 409


class LeadershipLostError(ClusterError):
    http_status = 503


class OperationCacheClosedError(ClusterError):
    """The Dispatcher or REST endpoint is shutting down and accepts no new operations."""

    http_status = 503


class NoResourceAvailableError(ClusterError):
    pass


class TaskExecutorLostError(ClusterError):
    pass


class DataExchangeError(ClusterError):
    pass


class JobError(FlottError):
    pass


class JobNotFoundError(JobError):
    http_status = 404


class DuplicateJobSubmissionError(JobError):
    http_status = 409


class JobNotTerminalError(JobError):
    http_status = 409


class JobAlreadyTerminalError(JobError):
    http_status = 409


class OperationNotFoundError(JobError):
    """No savepoint/stop/checkpoint/disposal/rescale operation under this trigger id (or it expired)."""

    http_status = 404


class OperatorNotFoundError(JobError):
    """A request for an operator (by id) that the job does not have."""

    http_status = 404


class JobExecutionError(JobError):
    """The job ended FAILED. ``cause`` is the root failure (often a UserCodeError)."""

    def __init__(self, message: str, cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.cause = cause
        if cause is not None:
            self.__cause__ = cause


class JobCancellationError(JobError):
    pass


class JobSubmissionError(JobError):
    def __init__(self, message: str, cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.cause = cause
        if cause is not None:
            self.__cause__ = cause


class JobArtifactError(JobError):
    """A job's shipped Python files or requirements could not be stored, fetched, verified or installed.

    Raised by the BlobServer/BlobCache and by a TaskExecutor preparing a job's
    Python environment; it fails the task (and so the job) with the cause
    instead of leaving it waiting for files that will never arrive.
    """


class NotYetSupportedError(JobError, NotImplementedError):
    """A Flink capability that flott has not built yet; the message names it."""

    http_status = 501


class IllegalStateTransitionError(FlottError):
    pass


class TaskCancelledError(FlottError):
    pass


class UserCodeError(FlottError):
    """The user's function raised. Carries what the user needs to find the bug.

    The original exception object may not be importable on the JobManager side
    (it never unpickles user code), so only type name, message and the worker's
    formatted traceback travel.
    """

    def __init__(
        self,
        exception_type: str,
        exception_message: str,
        traceback: str = "",
        task_name: str = "",
    ) -> None:
        where = f" in task '{task_name}'" if task_name else ""
        super().__init__(f"{exception_type}: {exception_message}{where}")
        self.exception_type = exception_type
        self.exception_message = exception_message
        self.traceback = traceback
        self.task_name = task_name


def error_class_by_name(name: str) -> type[FlottError] | None:
    """Find an error class of this tree by its class name (for errors crossing the wire).

    Subclasses defined in other modules (``runtime/checkpoint/errors.py``, ``rest/errors.py``)
    exist only once those modules are imported, which may be after this one: a name not known
    yet walks the tree again instead of falling back to a generic class (a forwarded 409 must
    stay a 409).
    """
    cls = _REGISTRY.get(name)
    if cls is None:
        import importlib

        for module in _SUBCLASS_MODULES:
            importlib.import_module(module)
        _REGISTRY.update(_collect(FlottError))
        cls = _REGISTRY.get(name)
    return cls


_SUBCLASS_MODULES = ("flott.runtime.checkpoint.errors", "flott.rest.errors", "flott.client.cluster_client")
"""Modules that extend the tree; imported on a lookup miss so that every name is known."""


def _collect(cls: type[FlottError]) -> dict[str, type[FlottError]]:
    out = {cls.__name__: cls}
    for sub in cls.__subclasses__():
        out.update(_collect(sub))
    return out


_REGISTRY: dict[str, type[FlottError]] = _collect(FlottError)
