"""PyFlink's Kafka connector (``pyflink.datastream.connectors.kafka``) on librdkafka (confluent-kafka).

The builders, initializers and schemas have PyFlink's names and signatures; the work is done by
:mod:`.kafka_source` (the reader: partitions assigned by flott, offsets in checkpoints) and
:mod:`.kafka_sink` (the writer: flushes or Kafka transactions per checkpoint). What PyFlink's
Java connector does that flott's does not is refused when the source or sink is built, never
accepted and ignored:

* ``register.consumer.metrics``: librdkafka's statistics are not flott metrics;
* Java client properties: those librdkafka does not know (``key.deserializer`` ...) it refuses, the
  ones it accepts and ignores (``max.poll.records``) flott refuses itself; every other property is
  handed to librdkafka, which refuses unknown names at build time;
* the legacy ``FlinkKafkaConsumer`` / ``FlinkKafkaProducer`` (deprecated in Flink; use
  ``KafkaSource`` / ``KafkaSink``).

``partition.discovery.interval.ms`` is Flink's: new partitions of the subscribed topics and new
topics matching the pattern are read from their earliest offset, every 5 minutes by default for
unbounded sources, never for bounded ones (Flink's builder turns it off for them); see
:mod:`.kafka_source`.

Differences in defaults that follow from the client: the source reads with
``isolation.level=read_uncommitted`` unless told otherwise, as Kafka's Java consumer (librdkafka's
own default is read_committed).

Beyond PyFlink: ``KafkaSourceBuilder.set_deserializer`` takes a
:class:`KafkaRecordDeserializationSchema`; ``KafkaRecordDeserializationSchema.with_metadata``
gives each record as a :class:`KafkaRecord` with key, partition, offset, timestamp and headers.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import Enum
from typing import Any, NamedTuple

from flott.common.serialization import (
    ByteArraySchema,
    DeserializationSchema,
    SerializationSchema,
    SimpleStringSchema,
)
from flott.common.typeinfo import Types
from flott.datastream.connectors.base import Boundedness, DeliveryGuarantee
from flott.errors import ConfigurationError, NotYetSupportedError

__all__ = [
    "FlinkKafkaConsumer",
    "FlinkKafkaProducer",
    "KafkaOffsetResetStrategy",
    "KafkaOffsetsInitializer",
    "KafkaRecord",
    "KafkaRecordDeserializationSchema",
    "KafkaRecordSerializationSchema",
    "KafkaRecordSerializationSchemaBuilder",
    "KafkaSink",
    "KafkaSinkBuilder",
    "KafkaSource",
    "KafkaSourceBuilder",
    "KafkaTopicPartition",
    "KafkaTopicSelector",
    "Semantic",
]


def _require_client() -> Any:
    try:
        import confluent_kafka
    except ImportError:
        raise ConfigurationError(
            "flott's Kafka connector needs confluent-kafka: pip install 'flott[kafka]'"
        ) from None
    return confluent_kafka


# --------------------------------------------------------------------------- partitions, offsets


class KafkaTopicPartition:
    """A topic and one of its partitions (Kafka's ``TopicPartition``)."""

    def __init__(self, topic: str, partition: int) -> None:
        self._topic = topic
        self._partition = int(partition)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, KafkaTopicPartition):
            return False
        return self._topic == other._topic and self._partition == other._partition

    def __hash__(self) -> int:
        return 31 * (31 + self._partition) + hash(self._topic)

    def __repr__(self) -> str:
        return f"{self._topic}-{self._partition}"


class KafkaOffsetResetStrategy(Enum):
    """Where to start when there is no (valid) offset (Kafka's ``OffsetResetStrategy``)."""

    LATEST = 0
    EARLIEST = 1
    NONE = 2


class KafkaOffsetsInitializer:
    """Starting or stopping offsets of each partition, resolved on the TaskExecutor when the reader starts.

    ``kind`` is one of ``earliest``, ``latest``, ``committed``, ``timestamp``, ``offsets``."""

    def __init__(
        self,
        kind: str,
        reset: KafkaOffsetResetStrategy = KafkaOffsetResetStrategy.NONE,
        timestamp: int | None = None,
        offsets: dict[tuple[str, int], int] | None = None,
    ) -> None:
        self._kind = kind
        self._reset = reset
        self._timestamp = timestamp
        self._offsets = dict(offsets or {})

    @staticmethod
    def committed_offsets(
        offset_reset_strategy: KafkaOffsetResetStrategy = KafkaOffsetResetStrategy.NONE,
    ) -> KafkaOffsetsInitializer:
        """The consumer group's committed offsets; ``offset_reset_strategy`` where there are none
        (NONE: the job fails naming the partition)."""
        return KafkaOffsetsInitializer("committed", offset_reset_strategy)

    @staticmethod
    def timestamp(timestamp: int) -> KafkaOffsetsInitializer:
        """The first record whose timestamp is >= ``timestamp`` (ms); the end where there is none."""
        return KafkaOffsetsInitializer("timestamp", KafkaOffsetResetStrategy.LATEST, timestamp=int(timestamp))

    @staticmethod
    def earliest() -> KafkaOffsetsInitializer:
        return KafkaOffsetsInitializer("earliest", KafkaOffsetResetStrategy.EARLIEST)

    @staticmethod
    def latest() -> KafkaOffsetsInitializer:
        return KafkaOffsetsInitializer("latest", KafkaOffsetResetStrategy.LATEST)

    @staticmethod
    def offsets(
        offsets: dict[KafkaTopicPartition, int],
        offset_reset_strategy: KafkaOffsetResetStrategy = KafkaOffsetResetStrategy.EARLIEST,
    ) -> KafkaOffsetsInitializer:
        """The given offset per partition; partitions not given start at the group's committed
        offset or per ``offset_reset_strategy``, which also applies to an offset out of range."""
        return KafkaOffsetsInitializer(
            "offsets",
            offset_reset_strategy,
            offsets={(tp._topic, tp._partition): int(o) for tp, o in offsets.items()},
        )

    def __repr__(self) -> str:
        return f"KafkaOffsetsInitializer({self._kind})"


# --------------------------------------------------------------------------- source


class KafkaRecord(NamedTuple):
    """A consumed record with its metadata (what ``KafkaRecordDeserializationSchema.with_metadata`` emits)."""

    topic: str
    partition: int
    offset: int
    timestamp: int | None
    key: Any
    value: Any
    headers: list[tuple[str, bytes]]


class KafkaRecordDeserializationSchema(DeserializationSchema):
    """How a consumed Kafka record becomes a stream record.

    ``value_only(schema)`` is what ``set_value_only_deserializer`` builds (PyFlink's name, from
    ``pyflink.datastream.connectors.dynamic_kafka``); ``with_metadata`` is flott's addition."""

    def __init__(
        self,
        value_schema: DeserializationSchema,
        key_schema: DeserializationSchema | None = None,
        metadata: bool = False,
    ) -> None:
        super().__init__()
        self._value_schema = value_schema
        self._key_schema = key_schema
        self._metadata = metadata

    @staticmethod
    def value_only(deserialization_schema: DeserializationSchema) -> KafkaRecordDeserializationSchema:
        return KafkaRecordDeserializationSchema(deserialization_schema)

    @staticmethod
    def with_metadata(
        value_schema: DeserializationSchema, key_schema: DeserializationSchema | None = None
    ) -> KafkaRecordDeserializationSchema:
        """Records as :class:`KafkaRecord` (key raw bytes unless ``key_schema`` is given)."""
        return KafkaRecordDeserializationSchema(value_schema, key_schema, metadata=True)

    def get_produced_type(self) -> Any:
        if self._metadata:
            return None  # a Python object (KafkaRecord)
        if isinstance(self._value_schema, SimpleStringSchema):
            return Types.STRING()
        if isinstance(self._value_schema, ByteArraySchema):
            return Types.PRIMITIVE_ARRAY(Types.BYTE())
        getter = getattr(self._value_schema, "get_produced_type", None)
        return getter() if callable(getter) else None


# Flink's KafkaSourceOptions: read by the source, not handed to librdkafka.
_CLIENT_ID_PREFIX = "client.id.prefix"
_DISCOVERY = "partition.discovery.interval.ms"
_DEFAULT_DISCOVERY_MS = 300_000  # Flink's KafkaSourceOptions: 5 minutes
_COMMIT_ON_CHECKPOINT = "commit.offsets.on.checkpoint"
_CONSUMER_METRICS = "register.consumer.metrics"
# Set by the source itself (as Flink overrides them).
_SOURCE_OWNED = ("enable.auto.commit", "enable.partition.eof", "key.deserializer", "value.deserializer")


class KafkaSource:
    """Reads Kafka partitions, split per partition, positions in checkpoints (build with :meth:`builder`).

    Records carry their Kafka timestamps: under a WatermarkStrategy that makes watermarks they are
    the event timestamps (as in Flink), or what a timestamp assigner receives as the record's."""

    supplies_record_timestamps = True

    def __init__(self, settings: dict[str, Any]) -> None:
        self._settings = settings

    @staticmethod
    def builder() -> KafkaSourceBuilder:
        return KafkaSourceBuilder()

    def get_boundedness(self) -> Boundedness:
        return Boundedness.BOUNDED if self._settings["bounded"] else Boundedness.CONTINUOUS_UNBOUNDED

    def get_produced_type(self) -> Any:
        return self._settings["deserializer"].get_produced_type()

    def create_reader(self, subtask_index: int, parallelism: int) -> Any:
        from flott.datastream.connectors.kafka_source import KafkaSourceReader

        return KafkaSourceReader.create(self._settings, subtask_index, parallelism)

    def restore_reader(self, subtask_index: int, parallelism: int, splits: list[Any]) -> Any:
        from flott.datastream.connectors.kafka_source import KafkaSourceReader

        return KafkaSourceReader.restore(self._settings, subtask_index, splits, parallelism)

    def __repr__(self) -> str:
        return f"KafkaSource({self._settings['subscription']!r})"


class KafkaSourceBuilder:
    """PyFlink's ``KafkaSourceBuilder``: bootstrap servers, what to read, a deserializer are required."""

    def __init__(self) -> None:
        self._bootstrap: str | None = None
        self._group_id: str | None = None
        self._subscription: tuple[str, Any] | None = None
        self._starting = KafkaOffsetsInitializer.earliest()
        self._stopping: KafkaOffsetsInitializer | None = None
        self._bounded = False
        self._deserializer: KafkaRecordDeserializationSchema | None = None
        self._client_id_prefix: str | None = None
        self._props: dict[str, str] = {}

    def build(self) -> KafkaSource:
        if not self._bootstrap:
            raise ConfigurationError("KafkaSource: bootstrap servers are not set (set_bootstrap_servers)")
        if self._subscription is None:
            raise ConfigurationError(
                "KafkaSource: no topics, topic pattern or partitions to read "
                "(set_topics / set_topic_pattern / set_partitions)"
            )
        if self._deserializer is None:
            raise ConfigurationError(
                "KafkaSource: no deserializer (set_value_only_deserializer / set_deserializer)"
            )
        props = dict(self._props)
        discovery = props.pop(_DISCOVERY, None)
        try:
            discovery_ms = _DEFAULT_DISCOVERY_MS if discovery is None else int(discovery)
        except ValueError:
            raise ConfigurationError(f"KafkaSource: {_DISCOVERY}={discovery!r} is not a number") from None
        if self._bounded:
            discovery_ms = -1  # Flink's builder overrides it for bounded sources
        if props.pop(_CONSUMER_METRICS, "false").lower() == "true":
            raise NotYetSupportedError(
                f"KafkaSource: {_CONSUMER_METRICS}=true: the consumer's metrics are not flott metrics"
            )
        for key in _SOURCE_OWNED:
            if key in props:
                raise ConfigurationError(f"KafkaSource: property {key!r} is set by the source itself")
        prefix = props.pop(_CLIENT_ID_PREFIX, None) or self._client_id_prefix
        group_id = props.pop("group.id", None) or self._group_id
        commit = props.pop(_COMMIT_ON_CHECKPOINT, "true").lower() == "true"
        if self._starting._kind == "committed" and not group_id:
            raise ConfigurationError("KafkaSource: committed offsets need a group id (set_group_id)")
        config: dict[str, Any] = {
            "bootstrap.servers": self._bootstrap,
            "isolation.level": "read_uncommitted",  # Kafka's Java consumer's default
            "queued.max.messages.kbytes": 8192,  # bounded prefetch: backpressure pauses fetching
        }
        config.update(props)
        _check_client_config("KafkaSource", config, consumer=True)
        return KafkaSource(
            {
                "config": config,
                "group_id": group_id,
                "commit_offsets": commit and bool(group_id),
                "client_id_prefix": prefix,
                "subscription": self._subscription,
                "starting": self._starting,
                "stopping": self._stopping,
                "bounded": self._bounded,
                "deserializer": self._deserializer,
                "discovery_ms": discovery_ms,
            }
        )

    def set_bootstrap_servers(self, bootstrap_servers: str) -> KafkaSourceBuilder:
        self._bootstrap = bootstrap_servers
        return self

    def set_group_id(self, group_id: str) -> KafkaSourceBuilder:
        self._group_id = group_id
        return self

    def set_topics(self, *topics: str) -> KafkaSourceBuilder:
        self._subscription = ("topics", tuple(topics))
        return self

    def set_topic_pattern(self, topic_pattern: str) -> KafkaSourceBuilder:
        try:
            re.compile(topic_pattern)
        except re.error as e:
            raise ConfigurationError(f"KafkaSource: invalid topic pattern {topic_pattern!r}: {e}") from None
        self._subscription = ("pattern", topic_pattern)
        return self

    def set_partitions(self, partitions: set[KafkaTopicPartition]) -> KafkaSourceBuilder:
        self._subscription = ("partitions", tuple(sorted((tp._topic, tp._partition) for tp in partitions)))
        return self

    def set_starting_offsets(
        self, starting_offsets_initializer: KafkaOffsetsInitializer
    ) -> KafkaSourceBuilder:
        self._starting = starting_offsets_initializer
        return self

    def set_unbounded(self, stopping_offsets_initializer: KafkaOffsetsInitializer) -> KafkaSourceBuilder:
        self._stopping, self._bounded = self._check_stopping(stopping_offsets_initializer), False
        return self

    def set_bounded(self, stopping_offsets_initializer: KafkaOffsetsInitializer) -> KafkaSourceBuilder:
        self._stopping, self._bounded = self._check_stopping(stopping_offsets_initializer), True
        return self

    @staticmethod
    def _check_stopping(initializer: KafkaOffsetsInitializer) -> KafkaOffsetsInitializer:
        if initializer._kind == "earliest":
            raise ConfigurationError(
                "KafkaSource: earliest() cannot be a stopping offset (nothing would be read)"
            )
        return initializer

    def set_value_only_deserializer(
        self, deserialization_schema: DeserializationSchema
    ) -> KafkaSourceBuilder:
        self._deserializer = KafkaRecordDeserializationSchema.value_only(deserialization_schema)
        return self

    def set_deserializer(self, deserializer: KafkaRecordDeserializationSchema) -> KafkaSourceBuilder:
        """The whole record's deserializer (Java's ``setDeserializer``; not in PyFlink's builder)."""
        if not isinstance(deserializer, KafkaRecordDeserializationSchema):
            raise TypeError("set_deserializer takes a KafkaRecordDeserializationSchema")
        self._deserializer = deserializer
        return self

    def set_client_id_prefix(self, prefix: str) -> KafkaSourceBuilder:
        self._client_id_prefix = prefix
        return self

    def set_property(self, key: str, value: str) -> KafkaSourceBuilder:
        self._props[key] = str(value)
        return self

    def set_properties(self, props: dict) -> KafkaSourceBuilder:
        for key, value in props.items():
            self.set_property(key, value)
        return self


_IGNORED_BY_LIBRDKAFKA = {
    "max.poll.records": "the source fetches in batches of its own size",
}
"""Java consumer properties librdkafka accepts without doing anything with them: refused here, as
it would not refuse them itself."""


def _check_client_config(what: str, config: dict[str, Any], consumer: bool) -> None:
    """librdkafka refuses unknown or invalid properties when a client is made: do it now, at build
    time, so a Java-only property fails the program rather than the TaskExecutor."""
    for key, why in _IGNORED_BY_LIBRDKAFKA.items():
        if consumer and key in config:
            raise ConfigurationError(
                f"{what}: {key} is a property of Kafka's Java consumer that librdkafka (flott's client) "
                f"accepts and ignores; {why}. Remove it."
            )
    ck = _require_client()
    probe = dict(config)
    if consumer:
        probe.setdefault("group.id", "flott-config-check")
    try:
        client = ck.Consumer(probe) if consumer else ck.Producer(probe)
    except ck.KafkaException as e:
        raise ConfigurationError(f"{what}: {e.args[0].str() if e.args else e}") from None
    except (TypeError, ValueError) as e:
        raise ConfigurationError(f"{what}: {e}") from None
    if consumer:
        client.close()


# --------------------------------------------------------------------------- sink


class KafkaTopicSelector:
    """Selects the topic of each record (subclass and implement :meth:`apply`)."""

    def apply(self, data: Any) -> str:
        raise NotImplementedError


class KafkaRecordSerializationSchema(SerializationSchema):
    """How a stream record becomes a Kafka record: topic, key, value (build with :meth:`builder`)."""

    def __init__(
        self,
        topic: str | None,
        topic_selector: KafkaTopicSelector | None,
        key_schema: SerializationSchema | None,
        value_schema: SerializationSchema,
        partitioner: Callable[[Any, bytes | None, bytes, str, list[int]], int] | None = None,
    ) -> None:
        super().__init__()
        self._topic = topic
        self._topic_selector = topic_selector
        self._key_schema = key_schema
        self._value_schema = value_schema
        self._partitioner = partitioner

    @staticmethod
    def builder() -> KafkaRecordSerializationSchemaBuilder:
        return KafkaRecordSerializationSchemaBuilder()


class KafkaRecordSerializationSchemaBuilder:
    """Exactly one of a topic and a topic selector, and a value serialization schema, are required."""

    def __init__(self) -> None:
        self._topic: str | None = None
        self._topic_selector: KafkaTopicSelector | None = None
        self._key: SerializationSchema | None = None
        self._value: SerializationSchema | None = None
        self._partitioner: Any = None

    def build(self) -> KafkaRecordSerializationSchema:
        if self._value is None:
            raise ConfigurationError("KafkaRecordSerializationSchema: no value serialization schema")
        if self._topic is None and self._topic_selector is None:
            raise ConfigurationError("KafkaRecordSerializationSchema: no topic or topic selector")
        return KafkaRecordSerializationSchema(
            self._topic, self._topic_selector, self._key, self._value, self._partitioner
        )

    def set_topic(self, topic: str) -> KafkaRecordSerializationSchemaBuilder:
        if self._topic_selector is not None:
            raise ConfigurationError("KafkaRecordSerializationSchema: a topic selector is already set")
        self._topic = topic
        return self

    def set_topic_selector(
        self, topic_selector: Callable[[Any], str] | KafkaTopicSelector
    ) -> KafkaRecordSerializationSchemaBuilder:
        if not isinstance(topic_selector, KafkaTopicSelector) and not callable(topic_selector):
            raise TypeError("topic_selector must be KafkaTopicSelector or a callable")
        if self._topic is not None:
            raise ConfigurationError("KafkaRecordSerializationSchema: a fixed topic is already set")
        if not isinstance(topic_selector, KafkaTopicSelector):
            topic_selector = _FunctionTopicSelector(topic_selector)
        self._topic_selector = topic_selector
        return self

    def set_key_serialization_schema(
        self, key_serialization_schema: SerializationSchema
    ) -> KafkaRecordSerializationSchemaBuilder:
        self._key = key_serialization_schema
        return self

    def set_value_serialization_schema(
        self, value_serialization_schema: SerializationSchema
    ) -> KafkaRecordSerializationSchemaBuilder:
        self._value = value_serialization_schema
        return self

    def set_partitioner(
        self, partitioner: Callable[[Any, bytes | None, bytes, str, list[int]], int]
    ) -> KafkaRecordSerializationSchemaBuilder:
        """``partitioner(record, key, value, topic, partitions) -> partition`` (Java's
        ``FlinkKafkaPartitioner.partition``; not in PyFlink's builder). Without one, Kafka's
        producer partitions (by key hash, or sticky for records without a key)."""
        if not callable(partitioner):
            raise TypeError("partitioner must be callable")
        self._partitioner = partitioner
        return self


class _FunctionTopicSelector(KafkaTopicSelector):
    def __init__(self, f: Callable[[Any], str]) -> None:
        self._f = f

    def apply(self, data: Any) -> str:
        return self._f(data)


# Flink's KafkaSink takes the transaction timeout from here; librdkafka knows the same name.
_SINK_OWNED = ("transactional.id", "enable.idempotence", "key.serializer", "value.serializer")
MAXIMUM_PREFIX_BYTES = 64000


class KafkaSink:
    """Writes to Kafka with a :class:`DeliveryGuarantee` (build with :meth:`builder`)."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self._settings = settings
        self._writer: Any = None

    @staticmethod
    def builder() -> KafkaSinkBuilder:
        return KafkaSinkBuilder()

    def get_transformer(self) -> None:
        return None

    def create_writer(self, subtask_index: int, parallelism: int, input_type: object | None) -> Any:
        from flott.datastream.connectors.kafka_sink import KafkaWriter

        self._writer = KafkaWriter(self._settings, subtask_index, parallelism)
        return self._writer

    def commit(self, committables: list[Any]) -> None:
        """Commit the transactions of completed checkpoints (see :mod:`.kafka_sink` for recovery)."""
        from flott.datastream.connectors.kafka_sink import commit_transactions

        commit_transactions(self._settings, self._writer, committables)

    def __repr__(self) -> str:
        return f"KafkaSink({self._settings['guarantee'].name})"


class KafkaSinkBuilder:
    """PyFlink's ``KafkaSinkBuilder``: bootstrap servers and a record serializer are required."""

    def __init__(self) -> None:
        self._bootstrap: str | None = None
        self._guarantee = DeliveryGuarantee.NONE
        self._prefix = "kafka-sink"
        self._serializer: KafkaRecordSerializationSchema | None = None
        self._props: dict[str, str] = {}

    def build(self) -> KafkaSink:
        if not self._bootstrap:
            raise ConfigurationError("KafkaSink: bootstrap servers are not set (set_bootstrap_servers)")
        if self._serializer is None:
            raise ConfigurationError("KafkaSink: no record serializer (set_record_serializer)")
        for key in _SINK_OWNED:
            if key in self._props:
                raise ConfigurationError(f"KafkaSink: property {key!r} is set by the sink itself")
        config: dict[str, Any] = {"bootstrap.servers": self._bootstrap, "linger.ms": 5}
        if self._guarantee is DeliveryGuarantee.EXACTLY_ONCE:
            # Flink's KafkaSink default: an hour, so recovery has time to commit a pre-committed
            # transaction before the broker aborts it (brokers cap it at transaction.max.timeout.ms).
            config["transaction.timeout.ms"] = 3_600_000
        config.update(self._props)
        _check_client_config("KafkaSink", config, consumer=False)
        return KafkaSink(
            {
                "config": config,
                "guarantee": self._guarantee,
                "prefix": self._prefix,
                "serializer": self._serializer,
            }
        )

    def set_bootstrap_servers(self, bootstrap_servers: str) -> KafkaSinkBuilder:
        self._bootstrap = bootstrap_servers
        return self

    def set_delivery_guarantee(self, delivery_guarantee: DeliveryGuarantee) -> KafkaSinkBuilder:
        if not isinstance(delivery_guarantee, DeliveryGuarantee):
            raise TypeError("set_delivery_guarantee takes a DeliveryGuarantee")
        self._guarantee = delivery_guarantee
        return self

    def set_transactional_id_prefix(self, transactional_id_prefix: str) -> KafkaSinkBuilder:
        if len(transactional_id_prefix.encode()) > MAXIMUM_PREFIX_BYTES:
            raise ConfigurationError(
                f"KafkaSink: the transactional id prefix exceeds {MAXIMUM_PREFIX_BYTES} bytes"
            )
        self._prefix = transactional_id_prefix
        return self

    def set_record_serializer(self, record_serializer: KafkaRecordSerializationSchema) -> KafkaSinkBuilder:
        if not isinstance(record_serializer, KafkaRecordSerializationSchema):
            raise TypeError("set_record_serializer takes a KafkaRecordSerializationSchema")
        self._serializer = record_serializer
        return self

    def set_property(self, key: str, value: str) -> KafkaSinkBuilder:
        self._props[key] = str(value)
        return self


# --------------------------------------------------------------------------- legacy


class Semantic(Enum):
    """The legacy FlinkKafkaProducer's guarantees (refused with it). The values are PyFlink's:
    one-element tuples but for NONE (its source has trailing commas)."""

    EXACTLY_ONCE = (0,)
    AT_LEAST_ONCE = (1,)
    NONE = 2


class FlinkKafkaConsumer:
    """Refused: deprecated in Flink and removed from its Kafka connector; use :class:`KafkaSource`."""

    def __init__(self, topics: Any, deserialization_schema: Any, properties: dict) -> None:
        raise NotYetSupportedError(
            "FlinkKafkaConsumer is not supported by flott (deprecated in Flink): use KafkaSource.builder()"
        )


class FlinkKafkaProducer:
    """Refused: deprecated in Flink and removed from its Kafka connector; use :class:`KafkaSink`."""

    def __init__(
        self,
        topic: str,
        serialization_schema: Any,
        producer_config: dict,
        kafka_producer_pool_size: int = 5,
        semantic: Semantic = Semantic.AT_LEAST_ONCE,
    ) -> None:
        raise NotYetSupportedError(
            "FlinkKafkaProducer is not supported by flott (deprecated in Flink): use KafkaSink.builder()"
        )
