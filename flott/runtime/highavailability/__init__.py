"""High-availability services: leader election/retrieval, JobGraphStore, JobResultStore,
checkpoint ID counter; ``none`` (embedded) and ``zookeeper`` (kazoo) implementations."""

from __future__ import annotations

from flott.configuration import Configuration
from flott.runtime.highavailability.embedded import EmbeddedHaServices
from flott.runtime.highavailability.services import (
    DEFAULT_LEADER_SESSION_ID,
    DISPATCHER,
    RESOURCE_MANAGER,
    REST_SERVER,
    CheckpointIDCounter,
    HighAvailabilityError,
    HighAvailabilityServices,
    JobGraphStore,
    JobResultStore,
    LeaderContender,
    LeaderElectionService,
    LeaderRetrievalListener,
    LeaderRetrievalService,
    job_component_id,
)
from flott.runtime.highavailability.storage import FileSystemJobResultStore

__all__ = [
    "DEFAULT_LEADER_SESSION_ID",
    "DISPATCHER",
    "RESOURCE_MANAGER",
    "REST_SERVER",
    "CheckpointIDCounter",
    "EmbeddedHaServices",
    "FileSystemJobResultStore",
    "HighAvailabilityError",
    "HighAvailabilityServices",
    "JobGraphStore",
    "JobResultStore",
    "LeaderContender",
    "LeaderElectionService",
    "LeaderRetrievalListener",
    "LeaderRetrievalService",
    "create_ha_services",
    "job_component_id",
]


async def create_ha_services(config: Configuration) -> HighAvailabilityServices:
    """Build (and start) the services ``high-availability.type`` asks for."""
    kind = config.get("high-availability.type", "none").lower()
    jrs_path = config.get("job-result-store.storage-path", "")
    delete_on_commit = config.get_bool("job-result-store.delete-on-commit", True)
    if kind in ("none", "embedded", "standalone"):
        jrs = FileSystemJobResultStore(jrs_path, delete_on_commit) if jrs_path else None
        return EmbeddedHaServices(job_result_store=jrs)
    if kind == "zookeeper":
        from flott.runtime.highavailability.zookeeper import ZooKeeperHaServices

        storage_dir = config.get("high-availability.storageDir", "")
        if not storage_dir:
            raise HighAvailabilityError("high-availability.type zookeeper needs high-availability.storageDir")
        cluster_id = config.get("high-availability.cluster-id", "/default")
        services = ZooKeeperHaServices(
            quorum=config.get("high-availability.zookeeper.quorum", "127.0.0.1:2181"),
            cluster_id=cluster_id,
            storage_dir=storage_dir,
            root=config.get("high-availability.zookeeper.path.root", "/flott"),
            session_timeout=config.get_seconds("high-availability.zookeeper.client.session-timeout", "60000"),
            connection_timeout=config.get_seconds(
                "high-availability.zookeeper.client.connection-timeout", "15000"
            ),
            tolerate_suspended_connections=config.get_bool(
                "high-availability.zookeeper.client.tolerate-suspended-connections", False
            ),
            job_result_store=(FileSystemJobResultStore(jrs_path, delete_on_commit) if jrs_path else None),
        )
        return await services.start()
    raise HighAvailabilityError(f"unknown high-availability.type {kind!r} (none | zookeeper)")
