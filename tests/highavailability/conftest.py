"""Fixtures: one private ZooKeeper per test session, a unique root path per test."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.highavailability.zookeeper_server import ZooKeeperServer, find_classpath


@pytest.fixture(scope="session")
def zookeeper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZooKeeperServer]:
    classpath = find_classpath()
    if classpath is None:
        pytest.skip(
            "ZooKeeper is not installed (need java and the zookeeper jars in /usr/share/java; "
            "`apt-get install zookeeper`, which scripts/test does)"
        )
    server = ZooKeeperServer(tmp_path_factory.mktemp("zookeeper"), classpath)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def zk_root() -> str:
    """A fresh root path so tests sharing the server never see each other's nodes."""
    return f"/flott-test-{uuid.uuid4().hex}"


@pytest.fixture
def storage_dir(tmp_path: Path) -> str:
    return f"file://{tmp_path / 'ha-storage'}"
