"""The JobManager's own views: configuration, metrics, environment, thread dump (logs:
:mod:`flott.rest.handler.cluster.log_handlers`).

The JobManager is a Python process: ``/jobmanager/environment`` describes the
interpreter where Flink describes the JVM, the thread dump lists Python
threads, and the process metrics come from the process table (psutil), named
``Status.Process.*`` because they are not Flink's JVM metrics.
"""

from __future__ import annotations

import os
import platform
import sys

from flott.configuration import DEFAULTS, masked
from flott.rest.handler.handler import HandlerRequest, RestRoute
from flott.rest.handler.metric_fetcher import fetched_metrics
from flott.rest.handler.metrics import GET_PARAM, metric_collection
from flott.rest.messages.cluster import (
    ConfigurationInfoEntry,
    EnvironmentInfo,
    JVMInfo,
    ThreadDumpInfo,
    ThreadInfo,
)
from flott.rest.messages.common import Metric
from flott.runtime.entrypoint.thread_dump import ThreadStack, thread_stacks


def configuration_entries(req: HandlerRequest) -> list[ConfigurationInfoEntry]:
    """The effective configuration (defaults overlaid with what was set), secrets masked."""
    values = dict(DEFAULTS)
    values.update(req.config.to_dict())
    return [ConfigurationInfoEntry(key=k, value=v) for k, v in sorted(masked(values).items())]


async def jobmanager_config(req: HandlerRequest) -> list[ConfigurationInfoEntry]:
    return configuration_entries(req)


async def job_jobmanager_config(req: HandlerRequest) -> list[ConfigurationInfoEntry]:
    await (await req.gateway()).request_job_status(req.job_id())
    return configuration_entries(req)


async def jobmanager_metrics(req: HandlerRequest) -> list[Metric]:
    o = await (await req.gateway()).request_cluster_overview()
    available: dict[str, float | str] = {
        "numRegisteredTaskManagers": o.taskmanagers,
        "numRunningJobs": o.jobs_running,
        "taskSlotsAvailable": o.slots_available,
        "taskSlotsTotal": o.slots_total,
    }
    # The leading JobManager's own figures (Status.JVM.* ...), as its registry reports them.
    available.update((await fetched_metrics(req)).jobmanager)
    return metric_collection(req, available)


def environment() -> EnvironmentInfo:
    return EnvironmentInfo(
        jvm=JVMInfo(
            version=f"{platform.python_implementation()} {platform.python_version()}",
            arch=platform.machine(),
            options=[f"executable={sys.executable}", f"pid={os.getpid()}"],
        ),
        classpath=list(sys.path),
    )


async def jobmanager_environment(req: HandlerRequest) -> EnvironmentInfo:
    return environment()


async def job_jobmanager_environment(req: HandlerRequest) -> EnvironmentInfo:
    await (await req.gateway()).request_job_status(req.job_id())
    return environment()


def thread_dump_info(stacks: list[ThreadStack]) -> ThreadDumpInfo:
    return ThreadDumpInfo(
        thread_infos=[ThreadInfo(thread_name=t.name, stringified_thread_info=t.text) for t in stacks]
    )


async def thread_dump(req: HandlerRequest) -> ThreadDumpInfo:
    return thread_dump_info(thread_stacks())


ROUTES = [
    RestRoute(
        "GET",
        "/jobmanager/config",
        jobmanager_config,
        summary="The cluster configuration (secrets masked).",
        response_type=list[ConfigurationInfoEntry],
        operation_id="getClusterConfigurationInfo",
    ),
    RestRoute(
        "GET",
        "/jobmanager/metrics",
        jobmanager_metrics,
        summary="JobManager metrics (cluster counts; Status.Process.* from the process table).",
        response_type=list[Metric],
        operation_id="getJobManagerMetrics",
        query=(GET_PARAM,),
    ),
    RestRoute(
        "GET",
        "/jobmanager/environment",
        jobmanager_environment,
        summary="The JobManager's Python runtime and sys.path.",
        response_type=EnvironmentInfo,
        operation_id="getJobManagerEnvironment",
    ),
    RestRoute(
        "GET",
        "/jobmanager/thread-dump",
        thread_dump,
        summary="Stacks of the JobManager's Python threads.",
        response_type=ThreadDumpInfo,
        operation_id="getJobManagerThreadDump",
    ),
    RestRoute(
        "GET",
        "/jobs/{jobid}/jobmanager/config",
        job_jobmanager_config,
        summary="The configuration of the JobManager running the job.",
        response_type=list[ConfigurationInfoEntry],
        operation_id="getJobManagerJobConfiguration",
    ),
    RestRoute(
        "GET",
        "/jobs/{jobid}/jobmanager/environment",
        job_jobmanager_environment,
        summary="The environment of the JobManager running the job.",
        response_type=EnvironmentInfo,
        operation_id="getJobManagerJobEnvironment",
    ),
]
