"""Messages of ``/applications/*`` (Flink 2.3's application management).

In flott an application is one submitted job (``POST /jobs``, ``/jars/:id/run``,
``/jars/:id/run-application``, application mode), under the job's id and name.
"""

from __future__ import annotations

import msgspec

from flott.rest.messages.base import ResponseBody
from flott.rest.messages.job import JobDetails


class ApplicationDetails(ResponseBody, frozen=True, kw_only=True):
    """One row of ``GET /applications/overview``: ``jobs`` counts the application's jobs by status."""

    id: str
    name: str
    status: str
    start_time: int = msgspec.field(name="start-time")
    end_time: int = msgspec.field(name="end-time")
    duration: int
    jobs: dict[str, int]


class MultipleApplicationsDetails(ResponseBody, frozen=True, kw_only=True):
    applications: list[ApplicationDetails]


class ApplicationDetailsInfo(ResponseBody, frozen=True, kw_only=True):
    """``GET /applications/:applicationid``: ``timestamps`` has every ApplicationState (0 = not reached)."""

    id: str
    name: str
    status: str
    start_time: int = msgspec.field(name="start-time")
    end_time: int = msgspec.field(name="end-time")
    duration: int
    timestamps: dict[str, int]
    jobs: list[JobDetails]


class ApplicationExceptionInfo(ResponseBody, frozen=True, kw_only=True):
    exception_name: str = msgspec.field(name="exceptionName")
    stacktrace: str
    timestamp: int
    job_id: str = msgspec.field(name="jobId")


class ApplicationExceptionHistory(ResponseBody, frozen=True, kw_only=True):
    entries: list[ApplicationExceptionInfo]


class ApplicationExceptionsInfoWithHistory(ResponseBody, frozen=True, kw_only=True):
    exception_history: ApplicationExceptionHistory = msgspec.field(name="exceptionHistory")
