"""Savepoints, stop-with-savepoint, manual checkpoints, savepoint disposal, legacy rescaling.

These routes exist now with Flink's request validation (body format, target
directory, job existence), so Flink clients get Flink's 400/404 answers. The
operations themselves come with flott's checkpoints issue: until then a valid
trigger answers **501** with a message saying so, and every status URL answers
404 for its trigger id (nothing can have been triggered). Legacy rescaling
answers 503 exactly as Flink does (disabled there since FLINK-12312).

When checkpoints arrive, the triggers go to the Dispatcher through new gateway
methods and the status URLs read the Dispatcher's
:class:`~flott.rest.handler.async_operations.CompletedOperationCache`.
"""

from __future__ import annotations

from flott.errors import NotYetSupportedError, RestRequestError
from flott.rest.errors import RescalingDisabledError, RestNotFoundError
from flott.rest.handler.handler import HandlerRequest, QueryParam, RestRoute
from flott.rest.messages.common import AsynchronousOperationResult, TriggerResponse
from flott.rest.messages.job import (
    CheckpointTriggerRequestBody,
    SavepointDisposalRequest,
    SavepointTriggerRequestBody,
    StopWithSavepointRequestBody,
)

SAVEPOINT_DIR_KEYS = ("execution.checkpointing.savepoint-dir", "state.savepoints.dir")
CHECKPOINTS_ISSUE = "comes with flott's checkpoints issue and is not available yet"


def _default_savepoint_dir(req: HandlerRequest) -> str | None:
    for key in SAVEPOINT_DIR_KEYS:
        if req.config.contains(key):
            return req.config.get(key)
    return None


async def _require_job(req: HandlerRequest) -> str:
    job_id = req.job_id()
    await (await req.gateway()).request_job_status(job_id)  # JobNotFoundError → 404
    return job_id


def _unknown_trigger(req: HandlerRequest, scope: str) -> RestNotFoundError:
    return RestNotFoundError(
        f"Operation not found under key: {req.trigger_id()}"
        + (f" (job {scope})" if scope else "")
        + "; no such operation was triggered."
    )


async def trigger_savepoint(req: HandlerRequest) -> TriggerResponse:
    req.job_id()
    body = await req.body(SavepointTriggerRequestBody)
    if body.target_directory is None and _default_savepoint_dir(req) is None:
        raise RestRequestError(
            f"Config key [{SAVEPOINT_DIR_KEYS[0]}] is not set. Property [target-directory] must be provided."
        )
    job_id = await _require_job(req)
    what = "Cancel-with-savepoint" if body.cancel_job else "Triggering a savepoint"
    raise NotYetSupportedError(f"{what} (job {job_id}) {CHECKPOINTS_ISSUE}.")


async def savepoint_status(req: HandlerRequest) -> AsynchronousOperationResult:
    job_id = await _require_job(req)
    raise _unknown_trigger(req, job_id)


async def stop_with_savepoint(req: HandlerRequest) -> TriggerResponse:
    req.job_id()
    body = await req.body(StopWithSavepointRequestBody)
    if body.target_directory is None and _default_savepoint_dir(req) is None:
        raise RestRequestError(
            f"Config key [{SAVEPOINT_DIR_KEYS[0]}] is not set. Property [targetDirectory] must be provided."
        )
    job_id = await _require_job(req)
    raise NotYetSupportedError(
        f"Stop-with-savepoint (job {job_id}) {CHECKPOINTS_ISSUE}. "
        "To end the job without a savepoint, cancel it."
    )


async def trigger_checkpoint(req: HandlerRequest) -> TriggerResponse:
    req.job_id()
    await req.body(CheckpointTriggerRequestBody)
    job_id = await _require_job(req)
    raise NotYetSupportedError(f"Triggering a checkpoint (job {job_id}) {CHECKPOINTS_ISSUE}.")


async def checkpoint_status(req: HandlerRequest) -> AsynchronousOperationResult:
    job_id = await _require_job(req)
    raise _unknown_trigger(req, job_id)


async def checkpoint_statistics(req: HandlerRequest) -> None:
    job_id = await _require_job(req)
    raise NotYetSupportedError(f"Checkpoint statistics (job {job_id}): checkpointing {CHECKPOINTS_ISSUE}.")


async def dispose_savepoint(req: HandlerRequest) -> TriggerResponse:
    body = await req.body(SavepointDisposalRequest)
    if not body.savepoint_path:
        raise RestRequestError("Property [savepoint-path] must be provided.")
    raise NotYetSupportedError(f"Disposing a savepoint ({body.savepoint_path}) {CHECKPOINTS_ISSUE}.")


async def disposal_status(req: HandlerRequest) -> AsynchronousOperationResult:
    raise _unknown_trigger(req, "")


async def rescale(req: HandlerRequest) -> TriggerResponse:
    req.job_id()
    if req.query_int("parallelism") is None:
        raise RestRequestError(
            "Bad request, could not parse parameters: query parameter parallelism is required."
        )
    raise RescalingDisabledError("Rescaling is temporarily disabled. See FLINK-12312.")


async def rescaling_status(req: HandlerRequest) -> AsynchronousOperationResult:
    job_id = await _require_job(req)
    raise _unknown_trigger(req, job_id)


_J = "/jobs/{jobid}"
_NOTE = " (flott: 501 until the checkpoints issue)"

ROUTES = [
    RestRoute(
        "POST",
        f"{_J}/savepoints",
        trigger_savepoint,
        status=202,
        summary="Triggers a savepoint, optionally cancelling the job" + _NOTE,
        request_type=SavepointTriggerRequestBody,
        response_type=TriggerResponse,
        operation_id="triggerSavepoint",
    ),
    RestRoute(
        "GET",
        f"{_J}/savepoints/{{triggerid}}",
        savepoint_status,
        summary="Status of a savepoint or stop-with-savepoint operation.",
        response_type=AsynchronousOperationResult,
        operation_id="getSavepointStatus",
    ),
    RestRoute(
        "POST",
        f"{_J}/stop",
        stop_with_savepoint,
        status=202,
        summary="Stops a job with a savepoint; poll the savepoints status URL" + _NOTE,
        request_type=StopWithSavepointRequestBody,
        response_type=TriggerResponse,
        operation_id="stopJobWithSavepoint",
    ),
    RestRoute(
        "POST",
        f"{_J}/checkpoints",
        trigger_checkpoint,
        status=202,
        summary="Triggers a checkpoint" + _NOTE,
        request_type=CheckpointTriggerRequestBody,
        response_type=TriggerResponse,
        operation_id="triggerCheckpoint",
    ),
    RestRoute(
        "GET",
        f"{_J}/checkpoints/{{triggerid}}",
        checkpoint_status,
        summary="Status of a checkpoint trigger.",
        response_type=AsynchronousOperationResult,
        operation_id="getCheckpointStatus",
    ),
    RestRoute(
        "GET",
        f"{_J}/checkpoints",
        checkpoint_statistics,
        summary="Checkpoint statistics" + _NOTE,
        operation_id="getCheckpointingStatistics",
    ),
    RestRoute(
        "GET",
        f"{_J}/checkpoints/config",
        checkpoint_statistics,
        summary="Checkpointing configuration" + _NOTE,
        operation_id="getCheckpointConfig",
    ),
    RestRoute(
        "GET",
        f"{_J}/checkpoints/details/{{checkpointid}}",
        checkpoint_statistics,
        summary="One checkpoint's statistics" + _NOTE,
        operation_id="getCheckpointStatisticDetails",
    ),
    RestRoute(
        "GET",
        f"{_J}/checkpoints/details/{{checkpointid}}/subtasks/{{vertexid}}",
        checkpoint_statistics,
        summary="Per-subtask checkpoint statistics" + _NOTE,
        operation_id="getTaskCheckpointStatistics",
    ),
    RestRoute(
        "POST",
        "/savepoint-disposal",
        dispose_savepoint,
        status=200,
        summary="Triggers the disposal of a savepoint (200, not 202, as in Flink)" + _NOTE,
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
        summary="Legacy rescaling: disabled (503), as in Flink (FLINK-12312).",
        response_type=TriggerResponse,
        operation_id="rescaleJob",
        query=(
            QueryParam(
                "parallelism", "The new parallelism.", {"type": "integer", "format": "int32"}, required=True
            ),
        ),
    ),
    RestRoute(
        "GET",
        f"{_J}/rescaling/{{triggerid}}",
        rescaling_status,
        summary="Status of a legacy rescaling operation.",
        response_type=AsynchronousOperationResult,
        operation_id="getRescalingStatus",
    ),
]
