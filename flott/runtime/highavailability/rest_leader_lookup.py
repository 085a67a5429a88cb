"""Where the leading JobManager's REST endpoint is, read from ZooKeeper (clients' leader retrieval).

A client (``flott run``, ``flott list``, RestClusterClient) given a cluster configured with
``high-availability.type: zookeeper`` asks ZooKeeper for the REST leader's URL once when it
starts and again whenever the JobManager it talks to stops answering, so it follows a failover
without being told the new address. One short-lived ZooKeeper session per lookup: clients are
short-lived too, and a lookup happens only on start and on failure.
"""

from __future__ import annotations

import logging

from flott.configuration import Configuration
from flott.runtime.highavailability.services import REST_SERVER

log = logging.getLogger(__name__)


def ha_enabled(config: Configuration) -> bool:
    return config.get("high-availability.type", "none").strip().lower() == "zookeeper"


def lookup_rest_leader(config: Configuration, timeout_s: float = 5.0) -> str | None:
    """The published REST address of the current leader, or None (no leader, ZooKeeper down)."""
    from kazoo.client import KazooClient  # here: clients without HA never import kazoo
    from kazoo.exceptions import KazooException, NoNodeError

    from flott.runtime.highavailability.zookeeper import decode_leader_info

    cluster = config.get("high-availability.cluster-id", "/default")
    root_path = config.get("high-availability.zookeeper.path.root", "/flott")
    root = "/" + "/".join(p for p in (root_path + "/" + cluster).split("/") if p)
    client = KazooClient(hosts=config.get("high-availability.zookeeper.quorum", "127.0.0.1:2181"))
    try:
        client.start(timeout=timeout_s)
        data, _ = client.get(f"{root}/leader/{REST_SERVER}/connection_info")
        address, _session = decode_leader_info(data)
        return address
    except NoNodeError:
        return None
    except (KazooException, OSError) as e:  # kazoo's start() raises a plain timeout error too
        log.warning("cannot look up the REST leader in ZooKeeper: %s", e)
        return None
    finally:
        try:
            client.stop()
            client.close()
        except KazooException as e:
            log.debug("closing the lookup's ZooKeeper session: %s", e)
