"""Messages shared by many endpoints: errors, async operations, serialized exceptions, metrics."""

from __future__ import annotations

from typing import Literal

import msgspec

from flott.rest.messages.base import ResponseBody


class ErrorResponseBody(ResponseBody, frozen=True, kw_only=True):
    """``{"errors": [...]}``: every non-2xx answer."""

    errors: list[str]


class SerializedThrowable(ResponseBody, frozen=True, kw_only=True, omit_defaults=True):
    """An exception on the wire, in the shape Flink's custom serializer writes.

    ``serialized_throwable`` is, in Flink, base64 of a Java-serialised
    exception. flott puts base64 of the msgpack-encoded flott WireError there:
    Java clients cannot rebuild either (they fall back to class + stack trace),
    flott's own client rebuilds the exact error, including a user function's
    type, message and worker traceback.
    """

    class_name: str = msgspec.field(name="class")
    stack_trace: str = msgspec.field(name="stack-trace")
    serialized_throwable: str = msgspec.field(name="serialized-throwable")


QueueStatusId = Literal["IN_PROGRESS", "COMPLETED"]


class QueueStatus(ResponseBody, frozen=True, kw_only=True):
    id: QueueStatusId


class TriggerResponse(ResponseBody, frozen=True, kw_only=True):
    """The answer to an async-operation trigger; poll the status URL with this id."""

    request_id: str = msgspec.field(name="request-id")


class AsynchronousOperationInfo(ResponseBody, frozen=True, kw_only=True, omit_defaults=True):
    """The outcome of a completed operation without a value; ``{}`` when it succeeded."""

    failure_cause: SerializedThrowable | None = msgspec.field(default=None, name="failure-cause")


class AsynchronousOperationResult(ResponseBody, frozen=True, kw_only=True):
    """``{"status": {"id": ...}, "operation": ...}``; ``operation`` is null while IN_PROGRESS.

    A failed operation is still COMPLETED (HTTP 200); the failure is inside ``operation``.
    Used for savepoint disposal, rescaling and dataset deletion (``operation`` is ``{}`` on success).
    """

    status: QueueStatus
    operation: AsynchronousOperationInfo | None = None


class SavepointInfo(ResponseBody, frozen=True, kw_only=True, omit_defaults=True):
    """The outcome of a savepoint or stop-with-savepoint: ``{"location"}`` or ``{"failure-cause"}``."""

    location: str | None = None
    failure_cause: SerializedThrowable | None = msgspec.field(default=None, name="failure-cause")


class SavepointOperationResult(ResponseBody, frozen=True, kw_only=True):
    """``GET /jobs/:id/savepoints/:triggerid`` (also polled for ``POST /jobs/:id/stop``)."""

    status: QueueStatus
    operation: SavepointInfo | None = None


class CheckpointInfo(ResponseBody, frozen=True, kw_only=True, omit_defaults=True):
    """The outcome of a manual checkpoint: ``{"checkpointId"}`` or ``{"failureCause"}`` (camelCase here)."""

    checkpoint_id: int | None = msgspec.field(default=None, name="checkpointId")
    failure_cause: SerializedThrowable | None = msgspec.field(default=None, name="failureCause")


class CheckpointOperationResult(ResponseBody, frozen=True, kw_only=True):
    """``GET /jobs/:id/checkpoints/:triggerid``."""

    status: QueueStatus
    operation: CheckpointInfo | None = None


class Metric(ResponseBody, frozen=True, kw_only=True, omit_defaults=True):
    """One metric of ``/…/metrics``: without ``?get=`` only ids are listed, with it their values."""

    id: str
    value: str | None = None


class AggregatedMetric(ResponseBody, frozen=True, kw_only=True, omit_defaults=True):
    """One metric aggregated over jobs, TaskManagers or subtasks (only the requested ``agg`` fields)."""

    id: str
    min: float | None = None
    max: float | None = None
    avg: float | None = None
    sum: float | None = None
    skew: float | None = None
