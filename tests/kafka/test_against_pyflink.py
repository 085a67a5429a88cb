"""The same Kafka program on real PyFlink 2.3 (with Flink's Kafka connector) and on flott, same broker.

Opt-in: ``FLOTT_FLINK_KAFKA_JARS`` names the connector's jars (comma-separated paths), e.g.
``flink-connector-kafka.jar`` and ``kafka-clients.jar`` from the ``shigawire-apache-flink-libraries``
wheel on PyPI (Flink's Kafka connector 4.0 for Flink 2.0, which PyFlink 2.3 loads; the connector's
own Maven artifacts are not reachable from here). PyFlink is bench/.venv-peers. Both runs read a
topic of a fixed name (partition owners depend on it), so the printed lines, subtask prefixes
included, must be the same multiset, and both write the same records.
"""

from __future__ import annotations

import collections
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.kafka.broker import Broker

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = Path(__file__).parent / "programs" / "kafka_roundtrip.py"
PEERS_PY = ROOT / "bench" / ".venv-peers" / "bin" / "python"
if not PEERS_PY.exists():
    PEERS_PY = Path("/work/main/bench/.venv-peers/bin/python")
JARS = [j for j in os.environ.get("FLOTT_FLINK_KAFKA_JARS", "").split(",") if j]

pytestmark = pytest.mark.skipif(
    not JARS or not PEERS_PY.exists(), reason="needs FLOTT_FLINK_KAFKA_JARS and PyFlink (bench/.venv-peers)"
)


def run(python: Path | str, program: Path, args: list[str], env: dict[str, str]) -> list[str]:
    proc = subprocess.run(
        [str(python), str(program), *args], capture_output=True, text=True, timeout=300, env=env, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [line for line in proc.stdout.splitlines() if line.strip()]


def test_a_kafka_program_prints_and_writes_what_pyflink_does(kafka_broker: Broker, tmp_path: Path) -> None:
    name = "orders-roundtrip"
    if name not in kafka_broker.admin().list_topics(timeout=10).topics:
        kafka_broker.create_topic(partitions=3, name=name)
        for p in range(3):
            kafka_broker.produce(name, [f"p{p}-{i}".encode() for i in range(5)], partition=p)
    outputs = []
    pyflink_out = kafka_broker.create_topic()
    peers_bin = str(PEERS_PY.parent)
    pyflink_env = {**os.environ, "PATH": f"{peers_bin}:{os.environ['PATH']}", "PYTHONPATH": ""}
    jars = [Path(j).resolve().as_uri() for j in JARS]
    outputs.append(run(PEERS_PY, PROGRAM, [kafka_broker.bootstrap, name, pyflink_out, *jars], pyflink_env))
    flott_out = kafka_broker.create_topic()
    flott_program = tmp_path / "kafka_roundtrip.py"
    flott_program.write_text(PROGRAM.read_text().replace("from pyflink", "from flott"))
    flott_env = {**os.environ, "PYTHONPATH": str(ROOT)}
    outputs.append(run(sys.executable, flott_program, [kafka_broker.bootstrap, name, flott_out], flott_env))
    assert collections.Counter(outputs[1]) == collections.Counter(outputs[0])
    assert len(outputs[0]) == 15
    written = [
        sorted(m.value() for m in kafka_broker.read(t, expect=15, idle_s=1.0))
        for t in (pyflink_out, flott_out)
    ]
    assert written[0] == written[1] == sorted(f"p{p}-{i}!".encode() for p in range(3) for i in range(5))
