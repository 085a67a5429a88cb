"""``/applications/*``: Flink 2.3's applications, each one of flott's submitted jobs.

Flink 2.3 models the program a client submits as an application that runs jobs. flott runs
one job per submitted program (``POST /jobs``, ``/jars/:id/run``, ``/jars/:id/run-application``,
application mode), so an application here is exactly one job, under the job's id and name,
with the job's times; its state is the job's, named as Flink names application states
(``RESTARTING`` is still ``RUNNING``, ``INITIALIZING`` is ``CREATED``). Cancelling the
application cancels its job; its exceptions are its job's root exceptions.
"""

from __future__ import annotations

from flott.errors import JobAlreadyTerminalError, JobNotFoundError, RestNotFoundError
from flott.rest.handler.cluster.jobmanager_handlers import configuration_entries
from flott.rest.handler.handler import HandlerRequest, RestRoute
from flott.rest.handler.job.job_handlers import exception_name, overview_row, stack_trace
from flott.rest.messages.application import (
    ApplicationDetails,
    ApplicationDetailsInfo,
    ApplicationExceptionHistory,
    ApplicationExceptionInfo,
    ApplicationExceptionsInfoWithHistory,
    MultipleApplicationsDetails,
)
from flott.rest.messages.base import EmptyResponseBody
from flott.rest.messages.cluster import ConfigurationInfoEntry
from flott.runtime.messages.job import JobDetails as RuntimeJobDetails

APPLICATION_STATES = ("CREATED", "RUNNING", "FAILING", "FAILED", "CANCELLING", "CANCELED", "FINISHED")
_STATE_OF_JOB = {
    "INITIALIZING": "CREATED",
    "CREATED": "CREATED",
    "RUNNING": "RUNNING",
    "RESTARTING": "RUNNING",
    "SUSPENDED": "RUNNING",
    "RECONCILING": "RUNNING",
    "FAILING": "FAILING",
    "FAILED": "FAILED",
    "CANCELLING": "CANCELLING",
    "CANCELED": "CANCELED",
    "FINISHED": "FINISHED",
}
_FIRST_JOB_STATE = {"CREATED": ("INITIALIZING", "CREATED"), "RUNNING": ("RUNNING",)}


def application_state(job_status: str) -> str:
    return _STATE_OF_JOB.get(job_status, "RUNNING")


def _not_found(application_id: str) -> RestNotFoundError:
    return RestNotFoundError(f"Application {application_id} could not be found.")


def _row(d: RuntimeJobDetails) -> ApplicationDetails:
    return ApplicationDetails(
        id=d.job_id,
        name=d.job_name,
        status=application_state(d.status),
        start_time=d.start_time,
        end_time=d.end_time,
        duration=d.duration,
        jobs={d.status: 1},
    )


async def applications_overview(req: HandlerRequest) -> MultipleApplicationsDetails:
    details = await (await req.gateway()).request_multiple_job_details()
    return MultipleApplicationsDetails(applications=[_row(d) for d in details])


async def _job(req: HandlerRequest) -> RuntimeJobDetails:
    application_id = req.hex_id("applicationid")
    for d in await (await req.gateway()).request_multiple_job_details():
        if d.job_id == application_id:
            return d
    raise _not_found(application_id)


async def application_details(req: HandlerRequest) -> ApplicationDetailsInfo:
    d = await _job(req)
    try:
        info = await (await req.gateway()).request_job(d.job_id)
        reached = info.timestamps
    except JobNotFoundError:
        raise _not_found(d.job_id) from None
    timestamps = {}
    for state in APPLICATION_STATES:
        names = _FIRST_JOB_STATE.get(state, (state,))
        timestamps[state] = min((reached[n] for n in names if reached.get(n)), default=0)
    return ApplicationDetailsInfo(
        id=d.job_id,
        name=d.job_name,
        status=application_state(d.status),
        start_time=d.start_time,
        end_time=d.end_time,
        duration=d.duration,
        timestamps=timestamps,
        jobs=[overview_row(d)],
    )


async def cancel_application(req: HandlerRequest) -> EmptyResponseBody:
    application_id = req.hex_id("applicationid")
    gateway = await req.gateway()
    try:
        status = await gateway.request_job_status(application_id)
        if status in ("FINISHED", "FAILED", "CANCELED"):
            raise JobAlreadyTerminalError(
                "Application cancellation failed because the application has already reached another "
                f"terminal state ({application_state(status)})."
            )
        await gateway.cancel_job(application_id)
    except JobNotFoundError:
        raise _not_found(application_id) from None
    return EmptyResponseBody()


async def application_exceptions(req: HandlerRequest) -> ApplicationExceptionsInfoWithHistory:
    application_id = req.hex_id("applicationid")
    try:
        graph = await (await req.gateway()).request_execution_graph(application_id)
    except JobNotFoundError:
        raise _not_found(application_id) from None
    entries = [
        ApplicationExceptionInfo(
            exception_name=exception_name(f.error),
            stacktrace=stack_trace(f.error),
            timestamp=f.timestamp,
            job_id=graph.job_id,
        )
        for f in graph.exception_history
    ]
    history = ApplicationExceptionHistory(entries=entries)
    return ApplicationExceptionsInfoWithHistory(exception_history=history)


async def application_jobmanager_config(req: HandlerRequest) -> list[ConfigurationInfoEntry]:
    await _job(req)
    return configuration_entries(req)


_A = "/applications/{applicationid}"

ROUTES = [
    RestRoute(
        "GET",
        "/applications/overview",
        applications_overview,
        summary="Every application (in flott: every submitted job, as its own application).",
        response_type=MultipleApplicationsDetails,
        operation_id="getApplicationsOverview",
    ),
    RestRoute(
        "GET",
        _A,
        application_details,
        summary="An application: its state, times and jobs.",
        response_type=ApplicationDetailsInfo,
        operation_id="getApplicationDetails",
    ),
    RestRoute(
        "POST",
        f"{_A}/cancel",
        cancel_application,
        status=202,
        summary="Cancels the application (its job).",
        response_type=EmptyResponseBody,
        operation_id="cancelApplication",
    ),
    RestRoute(
        "GET",
        f"{_A}/exceptions",
        application_exceptions,
        summary="The application's exceptions (its job's root exceptions), newest first.",
        response_type=ApplicationExceptionsInfoWithHistory,
        operation_id="getApplicationExceptions",
    ),
    RestRoute(
        "GET",
        f"{_A}/jobmanager/config",
        application_jobmanager_config,
        summary="The configuration of the JobManager running the application.",
        response_type=list[ConfigurationInfoEntry],
        operation_id="getJobManagerApplicationConfiguration",
    ),
]
