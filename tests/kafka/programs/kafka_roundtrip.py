"""A PyFlink Kafka program (run on PyFlink with ``pyflink`` imports, on flott with them switched):
a bounded KafkaSource -> map -> print, and the records written by a KafkaSink.

Usage: python kafka_roundtrip.py BOOTSTRAP INPUT_TOPIC OUTPUT_TOPIC [JAR ...]
"""

import sys

from pyflink.common import Types
from pyflink.common.serialization import SimpleStringSchema
from pyflink.common.watermark_strategy import WatermarkStrategy
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.connectors import DeliveryGuarantee
from pyflink.datastream.connectors.kafka import (
    KafkaOffsetsInitializer,
    KafkaRecordSerializationSchema,
    KafkaSink,
    KafkaSource,
)

bootstrap, topic, out, *jars = sys.argv[1:]
env = StreamExecutionEnvironment.get_execution_environment()
if jars:
    env.add_jars(*jars)
env.set_parallelism(2)
source = (
    KafkaSource.builder()
    .set_bootstrap_servers(bootstrap)
    .set_topics(topic)
    .set_value_only_deserializer(SimpleStringSchema())
    .set_starting_offsets(KafkaOffsetsInitializer.earliest())
    .set_bounded(KafkaOffsetsInitializer.latest())
    .build()
)
lines = env.from_source(source, WatermarkStrategy.no_watermarks(), "kafka")
lines.map(lambda s: s.upper(), output_type=Types.STRING()).print()
sink = (
    KafkaSink.builder()
    .set_bootstrap_servers(bootstrap)
    .set_record_serializer(
        KafkaRecordSerializationSchema.builder()
        .set_topic(out)
        .set_value_serialization_schema(SimpleStringSchema())
        .build()
    )
    .set_delivery_guarantee(DeliveryGuarantee.AT_LEAST_ONCE)
    .build()
)
lines.map(lambda s: s + "!", output_type=Types.STRING()).sink_to(sink)
env.execute("kafka roundtrip")
