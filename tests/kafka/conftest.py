"""Fixtures of the Kafka connector tests: one broker per test session (Tansu, or $FLOTT_KAFKA_BOOTSTRAP).

Tests share the broker and isolate themselves by topic (every topic name is fresh) and by
transactional id prefix / group id.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import embedded  # noqa: F401  (the embedded cluster fixture)
from tests.kafka.broker import BOOTSTRAP_ENV, Broker, tansu_broker

pytest.importorskip("confluent_kafka", reason="the Kafka tests need confluent-kafka (the test extra)")


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    bootstrap = os.environ.get(BOOTSTRAP_ENV)
    if bootstrap:
        yield Broker(bootstrap, is_tansu=False)
        return
    with tansu_broker(tmp_path_factory.mktemp("tansu")) as broker:
        yield broker
