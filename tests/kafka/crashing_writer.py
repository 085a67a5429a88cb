"""A process that writes records through a KafkaSink writer in EXACTLY_ONCE mode, pre-commits them
(a checkpoint barrier), prints the committable and then dies by SIGKILL, as a TaskExecutor killed
between checkpoint completion and the commit; with ``commit`` it commits before dying.

Usage: python -m tests.kafka.crashing_writer BOOTSTRAP TOPIC PREFIX N precommit|commit
"""

from __future__ import annotations

import os
import pickle
import signal
import sys

from flott.common.serialization import SimpleStringSchema
from flott.datastream.connectors import DeliveryGuarantee
from flott.datastream.connectors.kafka import KafkaRecordSerializationSchema, KafkaSink


def main() -> None:
    bootstrap, topic, prefix, n, mode = sys.argv[1:]
    sink = (
        KafkaSink.builder()
        .set_bootstrap_servers(bootstrap)
        .set_record_serializer(
            KafkaRecordSerializationSchema.builder()
            .set_topic(topic)
            .set_value_serialization_schema(SimpleStringSchema())
            .build()
        )
        .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE)
        .set_transactional_id_prefix(prefix)
        .build()
    )
    writer = sink.create_writer(0, 1, None)
    writer.set_transactional(True)
    writer.write_batch([f"r{i}" for i in range(int(n))])
    committables = writer.prepare_commit(1)
    if mode == "commit":
        sink.commit(committables)
    sys.stdout.write(pickle.dumps(committables).hex() + "\n")
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    main()
