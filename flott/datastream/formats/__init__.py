"""Formats (``pyflink.datastream.formats``): how records become bytes and back, for connectors
such as Kafka. ``json`` and ``csv`` hold the row (de)serialization schemas PyFlink pairs with
``KafkaSource`` / ``KafkaSink``."""
