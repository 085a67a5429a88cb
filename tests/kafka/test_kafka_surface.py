"""flott's Kafka connector and formats against PyFlink 2.3's, from a recorded snapshot (no PyFlink needed).

The snapshot (pyflink-2.3-kafka-surface.json, beside this file) is written by running this module
with the PyFlink venv's Python: ``bench/.venv-peers/bin/python tests/kafka/test_kafka_surface.py``.
It uses tests/surface's describe/compare; every difference is fixed or listed below with its reason.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
SNAPSHOT = HERE / "pyflink-2.3-kafka-surface.json"
MODULES = [
    "pyflink.datastream.connectors.kafka",
    "pyflink.datastream.formats.json",
    "pyflink.datastream.formats.csv",
    "pyflink.datastream.formats.avro",
]

_JAVA = "returns the wrapped Java function (JavaFunctionWrapper); flott has no JVM"
_LEGACY = "the legacy FlinkKafkaConsumer/FlinkKafkaProducer are refused when constructed"
_FILE_FORMAT = (
    "a file format (FileSource/FileSink bulk formats), not a (de)serialization schema; not in flott"
)
EXCEPTIONS = {
    "pyflink.datastream.connectors.kafka.KafkaSink.get_java_function missing-method": _JAVA,
    "pyflink.datastream.connectors.kafka.KafkaSource.get_java_function missing-method": _JAVA,
    "pyflink.datastream.connectors.kafka.FlinkKafkaConsumer.get_java_function missing-method": _JAVA,
    "pyflink.datastream.connectors.kafka.FlinkKafkaProducer.get_java_function missing-method": _JAVA,
    "pyflink.datastream.formats.avro.AvroBulkWriters missing-class": _FILE_FORMAT,
    "pyflink.datastream.formats.avro.AvroInputFormat missing-class": _FILE_FORMAT,
    "pyflink.datastream.formats.avro.AvroSchema missing-class": "used by the Avro file formats only",
    "pyflink.datastream.formats.avro.GenericRecordAvroTypeInfo missing-class": "Java GenericRecord type info",
    "pyflink.datastream.formats.csv.CsvBulkWriters missing-class": _FILE_FORMAT,
    "pyflink.datastream.formats.csv.CsvReaderFormat missing-class": _FILE_FORMAT,
    "pyflink.datastream.formats.csv.CsvSchema missing-class": "used by the CSV file formats only",
    "pyflink.datastream.formats.csv.CsvSchemaBuilder missing-class": "used by the CSV file formats only",
}
for _method in (
    "disable_filter_restored_partitions_with_subscribed_topics",
    "get_produced_type",
    "set_commit_offsets_on_checkpoints",
    "set_start_from_earliest",
    "set_start_from_group_offsets",
    "set_start_from_latest",
    "set_start_from_timestamp",
):
    EXCEPTIONS[f"pyflink.datastream.connectors.kafka.FlinkKafkaConsumer.{_method} missing-method"] = _LEGACY
for _method in (
    "ignore_failures_after_transaction_timeout",
    "set_flush_on_checkpoint",
    "set_log_failures_only",
    "set_write_timestamp_to_kafka",
):
    EXCEPTIONS[f"pyflink.datastream.connectors.kafka.FlinkKafkaProducer.{_method} missing-method"] = _LEGACY


def test_the_kafka_connector_and_formats_have_pyflinks_names_and_signatures() -> None:
    from tests.surface.api_surface import compare

    differences = {d.key: str(d) for d in compare(json.loads(SNAPSHOT.read_text())["modules"])}
    unlisted = [text for key, text in sorted(differences.items()) if key not in EXCEPTIONS]
    assert not unlisted, "differences from PyFlink (fix or list them):\n" + "\n".join(unlisted)
    stale = sorted(key for key in EXCEPTIONS if key not in differences)
    assert not stale, "listed differences that no longer exist:\n" + "\n".join(stale)


if __name__ == "__main__":  # run with the PyFlink venv's Python to rewrite the snapshot
    sys.path.insert(0, str(HERE.parents[1]))
    from tests.surface.api_surface import describe

    snapshot = {"generated_by": "tests/kafka/test_kafka_surface.py", "modules": describe(MODULES)}
    SNAPSHOT.write_text(json.dumps(snapshot, indent=1, sort_keys=True) + "\n")
