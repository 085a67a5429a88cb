"""Savepoints, stop-with-savepoint, manual checkpoints, checkpoint statistics, disposal, rescaling.

Every trigger goes to the Dispatcher through its gateway and answers Flink's
``{"request-id": ...}`` at once; the Dispatcher runs the operation and keeps
its outcome in its operation cache (as Flink's DispatcherCachedOperationsHandler
does), and the status URLs read it from there:

=======================================  ====================================  =================
trigger                                  status URL                            ``operation``
=======================================  ====================================  =================
``POST /jobs/:id/savepoints``      202   ``GET /jobs/:id/savepoints/:tid``     ``{"location"}``
``POST /jobs/:id/stop``            202   ``GET /jobs/:id/savepoints/:tid``     ``{"location"}``
``POST /jobs/:id/checkpoints``     202   ``GET /jobs/:id/checkpoints/:tid``    ``{"checkpointId"}``
``POST /savepoint-disposal``       200   ``GET /savepoint-disposal/:tid``      ``{}``
``PATCH /jobs/:id/rescaling``      200   ``GET /jobs/:id/rescaling/:tid``      ``{}``
=======================================  ====================================  =================

A failed operation is still ``COMPLETED`` (HTTP 200) with the failure in
``failure-cause`` (``failureCause`` for checkpoints, as in Flink); an unknown
trigger id is a 404. A client may choose the trigger id (``triggerId`` in the
body): the same id again does not start a second operation (Flink: H1).

Validation is Flink's: a malformed body or trigger id is a 400; a savepoint or
stop without a target directory is a 400 unless a default is configured. flott
also takes the job's own default (``execution.checkpointing.savepoint-dir`` in
the job's configuration, ``env.set_default_savepoint_directory``) before the
cluster's, which is the directory Flink's JobMaster would choose; the resolved
directory is what the Dispatcher gets. ``formatType`` NATIVE is accepted and
written like CANONICAL: flott's snapshot files do not depend on the state
backend. ``checkpointType`` INCREMENTAL is refused as in Flink (FLINK-33723);
flott's checkpoints are always full.

Rescaling differs from Flink on purpose: Flink disabled ``PATCH /jobs/:id/rescaling``
(503, FLINK-12312); flott serves it as one operation (stop-with-savepoint into
the default savepoint directory, then a restart from it with every vertex at
the new parallelism, capped by its max parallelism). Per-subtask checkpoint
statistics are not collected: that route answers 501.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from flott.errors import JobNotFoundError, NotYetSupportedError, RestRequestError
from flott.rest.errors import RestNotFoundError
from flott.rest.handler.handler import HandlerRequest, QueryParam, RestRoute
from flott.rest.messages.common import (
    AsynchronousOperationInfo,
    AsynchronousOperationResult,
    CheckpointInfo,
    CheckpointOperationResult,
    QueueStatus,
    SavepointInfo,
    SavepointOperationResult,
    TriggerResponse,
)
from flott.rest.messages.job import (
    CheckpointTriggerRequestBody,
    SavepointDisposalRequest,
    SavepointTriggerRequestBody,
    StopWithSavepointRequestBody,
)
from flott.rest.serialized_throwable import to_serialized_throwable
from flott.runtime.messages.job import OperationStatus

SAVEPOINT_DIR_KEYS = ("execution.checkpointing.savepoint-dir", "state.savepoints.dir")
_HEX32 = re.compile(r"^[0-9a-f]{32}$")
_INT32_MAX = 2**31 - 1
_IN_PROGRESS = QueueStatus(id="IN_PROGRESS")
_COMPLETED = QueueStatus(id="COMPLETED")


# -- helpers -----------------------------------------------------------------------------------


def _savepoint_dir_in(values: Mapping[str, str]) -> str | None:
    for key in SAVEPOINT_DIR_KEYS:
        value = values.get(key)
        if value and value.strip():
            return value.strip()
    return None


async def _target_directory(req: HandlerRequest, job_id: str, requested: str | None, prop: str) -> str:
    """The request's directory, else the job's default, else the cluster's; 400 if there is none."""
    if requested is not None and requested.strip():
        return requested.strip()
    try:
        graph = await (await req.gateway()).request_execution_graph(job_id)
        job_default = _savepoint_dir_in(graph.job_config)
    except JobNotFoundError:
        job_default = None  # Flink answers the missing directory before looking at the job
    default = job_default or _savepoint_dir_in(req.config.to_dict())
    if default is None:
        raise RestRequestError(
            f"Config key [{SAVEPOINT_DIR_KEYS[0]}] is not set. Property [{prop}] must be provided."
        )
    return default


def _client_trigger_id(trigger_id: str | None) -> str | None:
    if trigger_id is not None and not _HEX32.match(trigger_id):
        raise RestRequestError(
            "Bad request, could not parse parameters: triggerId must be a 32-character hexadecimal "
            f"string, got {trigger_id!r}."
        )
    return trigger_id


def _failure(status: OperationStatus) -> Any:
    return to_serialized_throwable(status.failure) if status.failure is not None else None


def _savepoint_result(status: OperationStatus) -> SavepointOperationResult:
    if status.status != "COMPLETED":
        return SavepointOperationResult(status=_IN_PROGRESS, operation=None)
    if status.failure is not None:
        return SavepointOperationResult(
            status=_COMPLETED, operation=SavepointInfo(failure_cause=_failure(status))
        )
    return SavepointOperationResult(status=_COMPLETED, operation=SavepointInfo(location=status.location))


def _checkpoint_result(status: OperationStatus) -> CheckpointOperationResult:
    if status.status != "COMPLETED":
        return CheckpointOperationResult(status=_IN_PROGRESS, operation=None)
    if status.failure is not None:
        return CheckpointOperationResult(
            status=_COMPLETED, operation=CheckpointInfo(failure_cause=_failure(status))
        )
    return CheckpointOperationResult(
        status=_COMPLETED, operation=CheckpointInfo(checkpoint_id=status.checkpoint_id)
    )


def _plain_result(status: OperationStatus) -> AsynchronousOperationResult:
    if status.status != "COMPLETED":
        return AsynchronousOperationResult(status=_IN_PROGRESS, operation=None)
    return AsynchronousOperationResult(
        status=_COMPLETED, operation=AsynchronousOperationInfo(failure_cause=_failure(status))
    )


# -- savepoints and stop -----------------------------------------------------------------------


async def trigger_savepoint(req: HandlerRequest) -> TriggerResponse:
    job_id = req.job_id()
    body = await req.body(SavepointTriggerRequestBody)
    trigger_id = _client_trigger_id(body.trigger_id)
    target = await _target_directory(req, job_id, body.target_directory, "target-directory")
    gateway = await req.gateway()
    request_id = await gateway.trigger_savepoint(job_id, target, body.cancel_job, trigger_id)
    return TriggerResponse(request_id=request_id)


async def savepoint_status(req: HandlerRequest) -> SavepointOperationResult:
    job_id, trigger_id = req.job_id(), req.trigger_id()
    status = await (await req.gateway()).get_job_operation_status(job_id, trigger_id)
    return _savepoint_result(status)


async def stop_with_savepoint(req: HandlerRequest) -> TriggerResponse:
    job_id = req.job_id()
    body = await req.body(StopWithSavepointRequestBody)
    trigger_id = _client_trigger_id(body.trigger_id)
    target = await _target_directory(req, job_id, body.target_directory, "targetDirectory")
    gateway = await req.gateway()
    request_id = await gateway.stop_with_savepoint(job_id, target, body.drain, trigger_id)
    return TriggerResponse(request_id=request_id)


# -- checkpoints -------------------------------------------------------------------------------


async def trigger_checkpoint(req: HandlerRequest) -> TriggerResponse:
    job_id = req.job_id()
    body = await req.body(CheckpointTriggerRequestBody)
    trigger_id = _client_trigger_id(body.trigger_id)
    if body.checkpoint_type == "INCREMENTAL":
        raise RestRequestError(
            "Triggering an incremental checkpoint explicitly is not supported (see FLINK-33723); "
            "use CONFIGURED or FULL."
        )
    request_id = await (await req.gateway()).trigger_checkpoint(job_id, trigger_id)
    return TriggerResponse(request_id=request_id)


async def checkpoint_status(req: HandlerRequest) -> CheckpointOperationResult:
    job_id, trigger_id = req.job_id(), req.trigger_id()
    status = await (await req.gateway()).get_job_operation_status(job_id, trigger_id)
    return _checkpoint_result(status)


async def checkpoint_statistics(req: HandlerRequest) -> dict[str, Any]:
    """Flink's CheckpointingStatistics, as the JobMaster's statistics tracker writes it."""
    return await (await req.gateway()).request_checkpoint_statistics(req.job_id())


async def checkpoint_config(req: HandlerRequest) -> dict[str, Any]:
    """Flink's CheckpointConfigInfo of the job."""
    return await (await req.gateway()).request_checkpoint_config(req.job_id())


def _find_checkpoint(stats: Mapping[str, Any], checkpoint_id: int) -> dict[str, Any] | None:
    latest = stats.get("latest") or {}
    candidates = [
        *(stats.get("history") or []),
        *(latest.get(k) for k in ("completed", "savepoint", "failed")),
    ]
    for entry in candidates:
        if isinstance(entry, dict) and entry.get("id") == checkpoint_id:
            return entry
    return None


async def checkpoint_details(req: HandlerRequest) -> dict[str, Any]:
    """One checkpoint's statistics, from the statistics history (the last few checkpoints and the latest
    completed, savepoint and failed one); older checkpoints are a 404, as in Flink."""
    job_id = req.job_id()
    checkpoint_id = req.int_param("checkpointid")
    stats = await (await req.gateway()).request_checkpoint_statistics(job_id)
    entry = _find_checkpoint(stats, checkpoint_id)
    if entry is None:
        raise RestNotFoundError(f"Could not find checkpointing statistics for checkpoint {checkpoint_id}.")
    return entry


async def checkpoint_subtask_details(req: HandlerRequest) -> None:
    job_id = req.job_id()
    await (await req.gateway()).request_job_status(job_id)  # JobNotFoundError → 404
    raise NotYetSupportedError(
        "Per-subtask checkpoint statistics are not collected by flott; "
        f"GET /jobs/{job_id}/checkpoints/details/{req.int_param('checkpointid')} has the per-task totals."
    )


# -- disposal ----------------------------------------------------------------------------------


async def dispose_savepoint(req: HandlerRequest) -> TriggerResponse:
    body = await req.body(SavepointDisposalRequest)
    path = (body.savepoint_path or "").strip()
    if not path:
        raise RestRequestError("Property [savepoint-path] must be provided.")
    request_id = await (await req.gateway()).dispose_savepoint(path, None)
    return TriggerResponse(request_id=request_id)


async def disposal_status(req: HandlerRequest) -> AsynchronousOperationResult:
    trigger_id = req.trigger_id()
    return _plain_result(await (await req.gateway()).get_disposal_status(trigger_id))


# -- rescaling ---------------------------------------------------------------------------------


async def rescale(req: HandlerRequest) -> TriggerResponse:
    job_id = req.job_id()
    parallelism = req.query_int("parallelism")
    if parallelism is None:
        raise RestRequestError(
            "Bad request, could not parse parameters: query parameter parallelism is required."
        )
    if not 1 <= parallelism <= _INT32_MAX:
        # Flink's parameter is a Java int: anything else could not be parsed. The Dispatcher then
        # checks it against the job's max parallelism and the slots, before it touches the job.
        raise RestRequestError(
            "Bad request, could not parse parameters: query parameter parallelism must be a positive "
            f"integer of at most {_INT32_MAX}, got {parallelism}."
        )
    request_id = await (await req.gateway()).rescale_job(job_id, parallelism, None)
    return TriggerResponse(request_id=request_id)


async def rescaling_status(req: HandlerRequest) -> AsynchronousOperationResult:
    job_id, trigger_id = req.job_id(), req.trigger_id()
    return _plain_result(await (await req.gateway()).get_job_operation_status(job_id, trigger_id))


_J = "/jobs/{jobid}"

ROUTES = [
    RestRoute(
        "POST",
        f"{_J}/savepoints",
        trigger_savepoint,
        status=202,
        summary="Triggers a savepoint, optionally cancelling the job afterwards (cancel-job); poll "
        "the savepoints status URL with the request-id.",
        request_type=SavepointTriggerRequestBody,
        response_type=TriggerResponse,
        operation_id="triggerSavepoint",
    ),
    RestRoute(
        "GET",
        f"{_J}/savepoints/{{triggerid}}",
        savepoint_status,
        summary="Status of a savepoint or stop-with-savepoint operation: the savepoint's location once "
        "COMPLETED, or its failure-cause.",
        response_type=SavepointOperationResult,
        operation_id="getSavepointStatus",
    ),
    RestRoute(
        "POST",
        f"{_J}/stop",
        stop_with_savepoint,
        status=202,
        summary="Stops the job with a savepoint (drain: end of event time first); the job ends FINISHED. "
        "Poll the savepoints status URL with the request-id.",
        request_type=StopWithSavepointRequestBody,
        response_type=TriggerResponse,
        operation_id="stopJobWithSavepoint",
    ),
    RestRoute(
        "POST",
        f"{_J}/checkpoints",
        trigger_checkpoint,
        status=202,
        summary="Triggers a checkpoint (CONFIGURED or FULL; INCREMENTAL is refused, FLINK-33723).",
        request_type=CheckpointTriggerRequestBody,
        response_type=TriggerResponse,
        operation_id="triggerCheckpoint",
    ),
    RestRoute(
        "GET",
        f"{_J}/checkpoints/{{triggerid}}",
        checkpoint_status,
        summary="Status of a checkpoint trigger: the checkpointId once COMPLETED, or its failureCause.",
        response_type=CheckpointOperationResult,
        operation_id="getCheckpointStatus",
    ),
    RestRoute(
        "GET",
        f"{_J}/checkpoints",
        checkpoint_statistics,
        summary="Checkpoint statistics: counts, summary, latest and history "
        "(Flink's CheckpointingStatistics).",
        operation_id="getCheckpointingStatistics",
    ),
    RestRoute(
        "GET",
        f"{_J}/checkpoints/config",
        checkpoint_config,
        summary="The job's checkpointing configuration (Flink's CheckpointConfigInfo).",
        operation_id="getCheckpointConfig",
    ),
    RestRoute(
        "GET",
        f"{_J}/checkpoints/details/{{checkpointid}}",
        checkpoint_details,
        summary="One checkpoint's statistics, for checkpoints still in the statistics history "
        "(404 otherwise).",
        operation_id="getCheckpointStatisticDetails",
    ),
    RestRoute(
        "GET",
        f"{_J}/checkpoints/details/{{checkpointid}}/subtasks/{{vertexid}}",
        checkpoint_subtask_details,
        summary="Per-subtask checkpoint statistics (flott: 501, not collected; the details route has "
        "per-task totals).",
        operation_id="getTaskCheckpointStatistics",
        extra_statuses=(501,),
    ),
    RestRoute(
        "POST",
        "/savepoint-disposal",
        dispose_savepoint,
        status=200,
        summary="Triggers the disposal of a savepoint: its metadata and state files are deleted (200, not "
        "202, as in Flink).",
        request_type=SavepointDisposalRequest,
        response_type=TriggerResponse,
        operation_id="triggerSavepointDisposal",
    ),
    RestRoute(
        "GET",
        "/savepoint-disposal/{triggerid}",
        disposal_status,
        summary="Status of a savepoint disposal.",
        response_type=AsynchronousOperationResult,
        operation_id="getSavepointDisposalStatus",
    ),
    RestRoute(
        "PATCH",
        f"{_J}/rescaling",
        rescale,
        status=200,
        summary="Rescales the job: a savepoint, then a restart from it with every vertex at the given "
        "parallelism (flott serves what Flink disabled in FLINK-12312).",
        response_type=TriggerResponse,
        operation_id="rescaleJob",
        query=(
            QueryParam(
                "parallelism",
                "Positive integer value that specifies the desired parallelism.",
                {"type": "integer", "format": "int32", "minimum": 1},
                required=True,
            ),
        ),
    ),
    RestRoute(
        "GET",
        f"{_J}/rescaling/{{triggerid}}",
        rescaling_status,
        summary="Status of a rescaling operation.",
        response_type=AsynchronousOperationResult,
        operation_id="getRescalingStatus",
    ),
]
