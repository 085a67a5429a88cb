"""Messages of the cluster-wide endpoints (``/config``, ``/overview``, ``/jobmanager/*``, ``/datasets``)."""

from __future__ import annotations

import msgspec

from flott.rest.messages.base import ResponseBody


class Features(ResponseBody, frozen=True, kw_only=True):
    web_submit: bool = msgspec.field(name="web-submit")
    web_cancel: bool = msgspec.field(name="web-cancel")
    web_rescale: bool = msgspec.field(name="web-rescale")
    web_history: bool = msgspec.field(name="web-history")


class DashboardConfiguration(ResponseBody, frozen=True, kw_only=True):
    """``GET /config``: what the web UI (and flott's client version check) reads first."""

    refresh_interval: int = msgspec.field(name="refresh-interval")
    timezone_name: str = msgspec.field(name="timezone-name")
    timezone_offset: int = msgspec.field(name="timezone-offset")
    flink_version: str = msgspec.field(name="flink-version")
    flink_revision: str = msgspec.field(name="flink-revision")
    features: Features


class ClusterOverviewWithVersion(ResponseBody, frozen=True, kw_only=True):
    """``GET /overview``."""

    taskmanagers: int
    slots_total: int = msgspec.field(name="slots-total")
    slots_available: int = msgspec.field(name="slots-available")
    slots_free_and_blocked: int = msgspec.field(default=0, name="slots-free-and-blocked")
    taskmanagers_blocked: int = msgspec.field(default=0, name="taskmanagers-blocked")
    jobs_running: int = msgspec.field(name="jobs-running")
    jobs_finished: int = msgspec.field(name="jobs-finished")
    jobs_cancelled: int = msgspec.field(name="jobs-cancelled")
    jobs_failed: int = msgspec.field(name="jobs-failed")
    flink_version: str = msgspec.field(name="flink-version")
    flink_commit: str = msgspec.field(name="flink-commit")


class ConfigurationInfoEntry(ResponseBody, frozen=True, kw_only=True):
    """One ``{key, value}`` of ``GET /jobmanager/config`` (secrets masked)."""

    key: str
    value: str


class JVMInfo(ResponseBody, frozen=True, kw_only=True):
    """Flink's name; flott describes the Python runtime of the JobManager here."""

    version: str
    arch: str
    options: list[str]


class EnvironmentInfo(ResponseBody, frozen=True, kw_only=True):
    """``GET /jobmanager/environment``: interpreter, platform and ``sys.path`` (Flink: JVM and classpath)."""

    jvm: JVMInfo
    classpath: list[str]


class ThreadInfo(ResponseBody, frozen=True, kw_only=True):
    thread_name: str = msgspec.field(name="threadName")
    stringified_thread_info: str = msgspec.field(name="stringifiedThreadInfo")


class ThreadDumpInfo(ResponseBody, frozen=True, kw_only=True):
    """``GET /jobmanager/thread-dump``: every Python thread's stack."""

    thread_infos: list[ThreadInfo] = msgspec.field(name="threadInfos")


class LogInfo(ResponseBody, frozen=True, kw_only=True):
    name: str
    size: int
    mtime: int


class LogListInfo(ResponseBody, frozen=True, kw_only=True):
    """``GET /jobmanager/logs``."""

    logs: list[LogInfo]


class ClusterDataSetEntry(ResponseBody, frozen=True, kw_only=True):
    id: str
    is_complete: bool = msgspec.field(name="isComplete")


class ClusterDataSetListResponseBody(ResponseBody, frozen=True, kw_only=True):
    """``GET /datasets``: cached intermediate results (flott keeps none, so always empty)."""

    data_sets: list[ClusterDataSetEntry] = msgspec.field(name="dataSets")
