"""flott's one error tree.

Every error flott raises on purpose is a :class:`FlottError`. Foreign errors
(socket errors, msgspec decode errors, kazoo errors ...) are translated into
this tree at the one boundary where they enter flott; user exceptions raised
inside a task travel as :class:`UserCodeError` with the user's type, message and
the worker's traceback. Each class carries the HTTP status the REST endpoint
answers with, so the mapping lives here and nowhere else (``flott.rest.errors``
only formats the answer). Every class of the tree is defined in this module,
registered by name as it is defined (``__init_subclass__``), so that an error
crossing the wire (:class:`WireError`, :func:`error_to_wire`,
:func:`error_from_wire`, also here) comes back in any process as its own class
with its own status; other modules re-export the ones they own by topic
(``flott.runtime.checkpoint.errors``, ``flott.rest.errors``)::

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
    │   ├── TableError                      400  a table program flott cannot plan (TableException)
    │   └── SqlParseError                   400  SQL that does not parse (Flink's SqlParserException)
    ├── RestRequestError                    400  malformed REST request (the REST layer's own)
    │   ├── PayloadTooLargeError            413
    │   ├── RequestBodyTimeoutError         408  the body stopped arriving (flott.rest.body-idle-timeout)
    │   ├── AuthenticationError             401  REST auth is on and no valid bearer token was sent
    │   │   └── InvalidTokenError           401  a token the endpoint does not know
    │   ├── AuthorizationError              403  the token's role may not use this route
    │   ├── LogFileNotFoundError            404  no such log file (or a name leading out of the log dir)
    │   ├── RestNotFoundError               404  no such route or trigger id
    │   ├── RestMethodNotAllowedError       405  the path exists, not with this method
    │   ├── TerminationModeRemovedError     308  PATCH /jobs/:id?mode=stop (Flink's redirect hint)
    │   └── RestForbiddenError              403  a browser request from a foreign Origin / unknown Host
    ├── ClusterError                        500  the cluster itself is in trouble
    │   ├── RpcError                        500  a remote call failed
    │   │   ├── RpcConnectionError          503  the peer cannot be reached
    │   │   ├── RpcTimeoutError             504  the peer did not answer in time
    │   │   ├── UnknownRpcMethodError       500
    │   │   └── FencingTokenError           409  call carried a stale leader token
    │   ├── LeadershipLostError             503
    │   │   └── NoLeaderError               503  no Dispatcher leader known to this REST endpoint
    │   ├── OperationCacheClosedError       503  shutting down: no new async operations
    │   ├── NoResourceAvailableError        500  not enough slots in time
    │   ├── TaskExecutorLostError           500  a worker process died / stopped heartbeating
    │   ├── SlotAllocationError             500  a slot asked of a TaskExecutor is taken or not there
    │   ├── DataExchangeError               500  a data channel between tasks broke
    │   └── HighAvailabilityError           500  ZooKeeper / HA storage failed or refused
    ├── JobError                            500  something about one job
    │   ├── JobNotFoundError                404
    │   ├── DuplicateJobSubmissionError     409
    │   ├── JobNotTerminalError             409  result asked before the job ended
    │   ├── JobAlreadyTerminalError         409  e.g. cancel of a FINISHED job
    │   ├── JobInitializingError            409  the job has no JobMaster yet (savepoint asked while
    │   │                                        it initializes); retry
    │   ├── OperationNotFoundError          404  status of an async operation never triggered
    │   ├── OperatorNotFoundError           404  a coordination request for an operator the job lacks
    │   ├── JobExecutionError               500  the job ended FAILED (cause attached)
    │   ├── JobCancellationError            500  the job ended CANCELED while waiting for it
    │   ├── JobSubmissionError              500  client side: submission did not go through
    │   ├── JobArtifactError                500  a job's Python files/requirements cannot be stored,
    │   │                                        fetched, verified or installed
    │   ├── OperationFailedError            500  client side: an async operation (savepoint ...) failed
    │   └── NotYetSupportedError            501  a Flink capability flott has not built yet
    ├── CheckpointError                     500  something about a checkpoint or savepoint
    │   ├── CheckpointTriggerError          409  could not be triggered (job not running ...)
    │   ├── CheckpointFailureLimitExceededError  500  more consecutive failures than tolerated
    │   ├── SnapshotFormatError             400  a snapshot directory cannot be read
    │   ├── RestoreError                    400  a snapshot cannot be restored the way asked
    │   ├── IllegalStoragePathError         400  a path flott will not touch (scheme, relative ...)
    │   └── CheckpointCancelledError        500  a task's checkpoint writer was told to stop
    ├── IllegalStateTransitionError         500  a state machine was asked for an illegal move
    │   ├── IllegalJobTransitionError       500  the Dispatcher's job lifecycle (dispatcher/job_lifecycle.py)
    │   ├── IllegalCheckpointTransitionError     500  the CheckpointCoordinator's own
    │   └── IllegalBarrierTransitionError   500  a task's barrier handler (barrier twice, after the end)
    ├── TaskCancelledError                  500  raised inside a task thread to unwind it
    └── UserCodeError                       500  the user's function raised (type, message, traceback)
"""

from __future__ import annotations

import traceback as traceback_module
from typing import ClassVar

import msgspec

_REGISTRY: dict[str, type[FlottError]] = {}
"""Every class of the tree by name, filled as each is defined (``__init_subclass__``)."""


class FlottError(Exception):
    """Root of every error flott raises on purpose."""

    http_status: ClassVar[int] = 500

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.__name__.startswith("_"):
            _REGISTRY[cls.__name__] = cls

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


class TableError(InvalidProgramError):
    """Flink's ``org.apache.flink.table.api.TableException``: a table program that cannot be planned
    (e.g. an updating table converted to an insert-only DataStream); the message starts with that
    Java name, as PyFlink's error text does."""


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


class InvalidTokenError(AuthenticationError):
    """A bearer token the endpoint does not know (RFC 6750's ``invalid_token``)."""


class AuthorizationError(RestRequestError):
    """A valid token whose role does not cover the route (a read-only token on a mutating route)."""

    http_status = 403


class LogFileNotFoundError(RestRequestError):
    """A log or stdout file asked for over REST is not there, or its name leads out of the log
    directory (Flink answers both with "This file does not exist in ... log dir.")."""

    http_status = 404


class RestNotFoundError(RestRequestError):
    """No such route, or no such trigger id (Flink: NOT_FOUND from the router or UnknownOperationKey)."""

    http_status = 404


class RestMethodNotAllowedError(RestRequestError):
    """The path exists, not with this method: the answer's ``Allow`` header lists the methods it has
    (RFC 9110 requires the header on every 405)."""

    http_status = 405

    def __init__(self, message: str = "", allowed: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.allowed = allowed


class TerminationModeRemovedError(RestRequestError):
    """``PATCH /jobs/:id?mode=stop``: Flink answers 308 PERMANENT_REDIRECT with this hint."""

    http_status = 308


class RestForbiddenError(RestRequestError):
    """A browser request the endpoint refuses (foreign Origin, unknown Host)."""

    http_status = 403


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


LEADER_ELECTION_MESSAGE = "Service temporarily unavailable due to an ongoing leader election. Please refresh."
"""Flink's text of the 503 a REST endpoint without a known leader answers."""


class NoLeaderError(LeadershipLostError):
    """No Dispatcher leader is known to this REST endpoint: 503, clients retry."""

    def __init__(self, message: str = LEADER_ELECTION_MESSAGE) -> None:
        super().__init__(message)


class OperationCacheClosedError(ClusterError):
    """The Dispatcher or REST endpoint is shutting down and accepts no new operations."""

    http_status = 503


class NoResourceAvailableError(ClusterError):
    pass


class TaskExecutorLostError(ClusterError):
    pass


class SlotAllocationError(ClusterError):
    """A TaskExecutor refused a slot request: the slot is held by another allocation, or it has no
    such slot (the ResourceManager's view was stale)."""


class DataExchangeError(ClusterError):
    pass


class HighAvailabilityError(ClusterError):
    """The HA services (ZooKeeper, the HA storage directory) failed or refused: leader information
    not published, a job graph locked or modified concurrently, an HA setting that cannot work."""


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


class JobInitializingError(JobError):
    """The job is submitted but its JobMaster is not running yet (the savepoint it starts from is
    being read, it is being persisted, its ExecutionGraph built): savepoints and checkpoints cannot
    be triggered until it runs."""

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


class OperationFailedError(JobError):
    """An asynchronous job operation (savepoint, stop-with-savepoint, checkpoint, savepoint disposal,
    rescaling) completed with a failure. ``cause`` is the cluster's error, rebuilt."""

    def __init__(self, message: str, cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.cause = cause
        if cause is not None:
            self.__cause__ = cause


class NotYetSupportedError(JobError, NotImplementedError):
    """A Flink capability that flott has not built yet; the message names it."""

    http_status = 501


class CheckpointError(FlottError):
    """Something about a checkpoint or savepoint."""


class CheckpointTriggerError(CheckpointError):
    """A checkpoint or savepoint could not be triggered (job not running, coordinator shut down)."""

    http_status = 409


class CheckpointFailureLimitExceededError(CheckpointError):
    """More consecutive checkpoints failed than ``execution.checkpointing.tolerable-failed-checkpoints``."""


class SnapshotFormatError(CheckpointError):
    """A checkpoint/savepoint directory cannot be read: missing or corrupt ``_metadata`` or state file,
    unknown format version. Restore must refuse to start the job with this error."""

    http_status = 400


class RestoreError(CheckpointError):
    """A snapshot cannot be restored the way asked (parallelism above max parallelism, ...)."""

    http_status = 400


class IllegalStoragePathError(CheckpointError):
    """A checkpoint/savepoint path from a client that flott will not touch: a filesystem scheme
    outside ``flott.storage.allowed-schemes`` (``http://``: the JobManager or a TaskExecutor would
    send requests wherever a client points it), a relative path (it would resolve against some
    process's working directory), or a disposal outside the savepoint locations."""

    http_status = 400


class CheckpointCancelledError(CheckpointError):
    """The asynchronous part of a task's checkpoint saw its cancellation flag (the checkpoint was
    aborted, or the task is cancelled or failing): the writer stops and deletes what it wrote."""


class IllegalStateTransitionError(FlottError):
    pass


class IllegalJobTransitionError(IllegalStateTransitionError):
    """The Dispatcher's job lifecycle was asked for a move its state does not allow (a JobMaster
    reported terminal for a job that has none, a rescale of a job that is not running, ...)."""


class IllegalCheckpointTransitionError(IllegalStateTransitionError):
    """The CheckpointCoordinator was asked for a move its state does not allow
    (an ack from a task outside the checkpoint's plan, an ack for a checkpoint id never issued,
    a trigger after shutdown, ...)."""


class IllegalBarrierTransitionError(IllegalStateTransitionError):
    """A task's barrier handler saw a barrier its state does not allow: a second barrier of the
    pending checkpoint from one channel, a barrier from a channel that already ended, input for
    an unaligned checkpoint's channel state after that state was closed. The exchange broke its
    contract (a channel is FIFO and delivers each barrier once), so the task fails."""


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
    """The error class of this tree named ``name`` (for errors crossing the wire), or None."""
    return _REGISTRY.get(name)


# --------------------------------------------------------------------------- the wire


class WireError(msgspec.Struct):
    """An error as it crosses the wire (type name from the flott error tree, message, details)."""

    type: str
    message: str
    traceback: str = ""
    exception_type: str = ""
    exception_message: str = ""
    task_name: str = ""
    cause: WireError | None = None


def error_to_wire(err: BaseException) -> WireError:
    """``err`` as it travels; an error outside the tree (a bug) travels as an RpcError with its traceback."""
    cause = getattr(err, "cause", None)
    wire_cause = error_to_wire(cause) if isinstance(cause, BaseException) else None
    if isinstance(err, UserCodeError):
        return WireError(
            type="UserCodeError",
            message=err.message,
            traceback=err.traceback,
            exception_type=err.exception_type,
            exception_message=err.exception_message,
            task_name=err.task_name,
            cause=wire_cause,
        )
    if isinstance(err, FlottError):
        # a private subclass (a module's own refinement) travels as its nearest public class
        public = next(c for c in type(err).__mro__ if c.__name__ in _REGISTRY)
        return WireError(type=public.__name__, message=err.message, cause=wire_cause)
    return WireError(
        type="RpcError",
        message=f"{type(err).__name__}: {err}",
        traceback="".join(traceback_module.format_exception(err)),
    )


def error_from_wire(w: WireError) -> FlottError:
    """The error ``w`` describes, as its own class of this tree (so also with its HTTP status)."""
    cause = error_from_wire(w.cause) if w.cause is not None else None
    if w.type == "UserCodeError":
        return UserCodeError(w.exception_type, w.exception_message, w.traceback, w.task_name)
    cls = error_class_by_name(w.type) or RpcError
    err: FlottError
    if issubclass(cls, JobExecutionError | OperationFailedError):
        err = cls(w.message, cause)
    else:
        try:
            err = cls(w.message)
        except TypeError:
            err = RpcError(w.message)
        if cause is not None:
            err.__cause__ = cause
    return err


_REGISTRY[FlottError.__name__] = FlottError
