"""``/config``, ``/overview``, ``DELETE /cluster`` and ``/datasets`` (Flink: DashboardConfigHandler,
ClusterOverviewHandler, ShutdownHandler, ClusterDataSet*Handlers)."""

from __future__ import annotations

import time

from flott.rest.handler.handler import HandlerRequest, RestRoute
from flott.rest.messages.base import EmptyResponseBody
from flott.rest.messages.cluster import (
    ClusterDataSetListResponseBody,
    ClusterOverviewWithVersion,
    DashboardConfiguration,
    Features,
)
from flott.rest.messages.common import (
    AsynchronousOperationInfo,
    AsynchronousOperationResult,
    QueueStatus,
    TriggerResponse,
)
from flott.rest.serialized_throwable import to_serialized_throwable
from flott.rest.version import FLINK_REVISION, FLOTT_VERSION
from flott.runtime.dispatcher.completed_operation_cache import CompletedOperationCache

DATASET_DELETE_CACHE = "dataset-delete-operations"


async def dashboard_config(req: HandlerRequest) -> DashboardConfiguration:
    offset_s = -(time.altzone if time.daylight and time.localtime().tm_isdst else time.timezone)
    return DashboardConfiguration(
        refresh_interval=req.config.get_int("web.refresh-interval", 3000),
        timezone_name=time.tzname[0],
        timezone_offset=offset_s * 1000,
        flink_version=FLOTT_VERSION,
        flink_revision=FLINK_REVISION,
        features=Features(
            web_submit=req.config.get_bool("web.submit.enable", True),  # /jars: Python programs
            web_cancel=req.config.get_bool("web.cancel.enable", True),
            web_rescale=False,
            web_history=False,
        ),
    )


async def cluster_overview(req: HandlerRequest) -> ClusterOverviewWithVersion:
    o = await (await req.gateway()).request_cluster_overview()
    return ClusterOverviewWithVersion(
        taskmanagers=o.taskmanagers,
        slots_total=o.slots_total,
        slots_available=o.slots_available,
        jobs_running=o.jobs_running,
        jobs_finished=o.jobs_finished,
        jobs_cancelled=o.jobs_cancelled,
        jobs_failed=o.jobs_failed,
        flink_version=FLOTT_VERSION,
        flink_commit=FLINK_REVISION,
    )


async def shutdown_cluster(req: HandlerRequest) -> EmptyResponseBody:
    await (await req.gateway()).shutdown_cluster()
    return EmptyResponseBody()


async def list_datasets(req: HandlerRequest) -> ClusterDataSetListResponseBody:
    """flott keeps no intermediate results between jobs (Flink's cluster partitions): always empty."""
    await req.gateway()
    return ClusterDataSetListResponseBody(data_sets=[])


def _dataset_cache(req: HandlerRequest) -> CompletedOperationCache[None]:
    cache = req.context.extras.get(DATASET_DELETE_CACHE)
    assert isinstance(cache, CompletedOperationCache), "the endpoint creates the cache at start"
    return cache


async def delete_dataset(req: HandlerRequest) -> TriggerResponse:
    """Deleting a cluster dataset: flott has none, so the operation completes at once without a failure
    (as Flink's ResourceManager does for an unknown dataset id)."""
    req.hex_id("datasetid")
    await req.gateway()

    async def release() -> None:
        return None

    return TriggerResponse(request_id=_dataset_cache(req).trigger("", None, release))


async def dataset_delete_status(req: HandlerRequest) -> AsynchronousOperationResult:
    result = _dataset_cache(req).get("", req.trigger_id())
    if not result.done:
        return AsynchronousOperationResult(status=QueueStatus(id="IN_PROGRESS"), operation=None)
    failure = to_serialized_throwable(result.failure) if result.failure is not None else None
    return AsynchronousOperationResult(
        status=QueueStatus(id="COMPLETED"), operation=AsynchronousOperationInfo(failure_cause=failure)
    )


ROUTES = [
    RestRoute(
        "GET",
        "/config",
        dashboard_config,
        summary="Configuration of the web UI; also the version check.",
        response_type=DashboardConfiguration,
        operation_id="getDashboardConfiguration",
    ),
    RestRoute(
        "GET",
        "/overview",
        cluster_overview,
        summary="An overview over the cluster.",
        response_type=ClusterOverviewWithVersion,
        operation_id="getClusterOverview",
        shared=True,
    ),
    RestRoute(
        "DELETE",
        "/cluster",
        shutdown_cluster,
        summary="Shuts the cluster down.",
        response_type=EmptyResponseBody,
        operation_id="shutdownCluster",
    ),
    RestRoute(
        "GET",
        "/datasets",
        list_datasets,
        summary="Cluster datasets (none in flott).",
        response_type=ClusterDataSetListResponseBody,
        operation_id="getClusterDataSetList",
    ),
    RestRoute(
        "DELETE",
        "/datasets/{datasetid}",
        delete_dataset,
        status=202,
        summary="Triggers the deletion of a cluster dataset (async operation).",
        response_type=TriggerResponse,
        operation_id="deleteClusterDataSet",
    ),
    RestRoute(
        "GET",
        "/datasets/delete/{triggerid}",
        dataset_delete_status,
        summary="Status of a dataset deletion.",
        response_type=AsynchronousOperationResult,
        operation_id="getClusterDataSetDeleteStatus",
    ),
]
