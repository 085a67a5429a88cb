"""A ZooKeeper-HA session cluster with REST and internal TLS: the leader publishes its ``https``
REST address, and a RestClusterClient given no address finds it in ZooKeeper and submits over
HTTPS; the TaskExecutor registers and runs the job over mutually authenticated TLS."""

from __future__ import annotations

from pathlib import Path

from flott.client.rest_cluster_client import RestClusterClient
from flott.configuration import Configuration
from flott.runtime.highavailability.rest_leader_lookup import lookup_rest_leader
from tests.highavailability.conftest import storage_dir, zk_root, zookeeper  # noqa: F401 (fixtures)
from tests.highavailability.zookeeper_server import ZooKeeperServer
from tests.rest.jobs import bounded_job
from tests.security.conftest import stop_session_cluster
from tests.security.tls.certificates import Pki, internal_tls_config
from tests.security.tls.conftest import start_https_session_cluster


async def test_client_finds_the_https_leader_in_zookeeper(
    pki: Pki, tmp_path: Path, zookeeper: ZooKeeperServer, zk_root: str, storage_dir: str  # noqa: F811
) -> None:
    ha = {
        "high-availability.type": "zookeeper",
        "high-availability.zookeeper.quorum": zookeeper.hosts,
        "high-availability.zookeeper.path.root": zk_root,
        "high-availability.cluster-id": "/tls",
        "high-availability.storageDir": storage_dir,
    }
    overrides = {**ha, **internal_tls_config(pki)}
    cluster = start_https_session_cluster(tmp_path, pki, task_managers=1, overrides=overrides)
    try:
        client_config = Configuration(
            {
                **ha,
                "security.ssl.rest.enabled": "true",
                "security.ssl.rest.truststore": str(pki.ca),
                "rest.retry.max-attempts": "1",
            }
        )
        leader = lookup_rest_leader(client_config)
        assert leader == f"https://127.0.0.1:{cluster.port}"
        async with RestClusterClient(client_config) as client:  # no address: ZooKeeper's leader
            assert client.base_url == leader
            job_id = await client.submit_job(bounded_job("ha-over-tls", n=20))
            result = await client.wait_for_job_result(job_id, timeout_s=120)
            assert result.status == "FINISHED"
    finally:
        assert not stop_session_cluster(cluster)
