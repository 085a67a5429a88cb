"""The kafka / upsert-kafka table connectors' options: what Flink refuses is refused with its
message, and what Flink has and flott does not is refused as not yet supported, when the table is
declared (no broker is needed: nothing runs)."""

from __future__ import annotations

import pytest

from flott.errors import NotYetSupportedError, TableValidationError
from flott.table import EnvironmentSettings, TableEnvironment


def test_options_flink_has_and_flott_does_not_are_refused_when_declared() -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    base = "'topic' = 't', 'properties.bootstrap.servers' = '127.0.0.1:9'"

    def create(columns: str, options: str) -> None:
        env.execute_sql(f"CREATE TABLE x ({columns}) WITH ({base}, {options})")

    with pytest.raises(NotYetSupportedError, match=r"json\.ignore-parse-errors"):
        create("a INT", "'connector' = 'kafka', 'format' = 'json', 'json.ignore-parse-errors' = 'true'")
    with pytest.raises(NotYetSupportedError, match=r"avro"):
        create("a INT", "'connector' = 'kafka', 'format' = 'avro'")
    with pytest.raises(NotYetSupportedError, match=r"sink\.partitioner"):
        create("a INT", "'connector' = 'kafka', 'format' = 'json', 'sink.partitioner' = 'fixed'")
    with pytest.raises(NotYetSupportedError, match=r"scan\.topic-partition-discovery\.interval"):
        create(
            "a INT",
            "'connector' = 'kafka', 'format' = 'json', 'scan.topic-partition-discovery.interval' = '1s'",
        )
    with pytest.raises(NotYetSupportedError, match=r"headers"):
        create("a INT, h STRING METADATA FROM 'headers'", "'connector' = 'kafka', 'format' = 'json'")
    with pytest.raises(TableValidationError, match=r"Unsupported options found for 'kafka'"):
        create("a INT", "'connector' = 'kafka', 'format' = 'json', 'no-such-option' = '1'")
    with pytest.raises(TableValidationError, match=r"require to define a PRIMARY KEY"):
        create("a INT", "'connector' = 'upsert-kafka', 'key.format' = 'json', 'value.format' = 'json'")
    with pytest.raises(TableValidationError, match=r"doesn't support defining PRIMARY KEY"):
        create("a INT, PRIMARY KEY (a) NOT ENFORCED", "'connector' = 'kafka', 'format' = 'json'")
    with pytest.raises(TableValidationError, match=r"NOT ENFORCED"):
        create(
            "a INT, PRIMARY KEY (a)",
            "'connector' = 'upsert-kafka', 'key.format' = 'json', 'value.format' = 'json'",
        )
    with pytest.raises(TableValidationError, match=r"sink\.transactional-id-prefix must be specified"):
        create(
            "a INT", "'connector' = 'kafka', 'format' = 'json', 'sink.delivery-guarantee' = 'exactly-once'"
        )
    with pytest.raises(TableValidationError, match=r"'key\.fields'"):
        create("a INT", "'connector' = 'kafka', 'format' = 'json', 'key.format' = 'json'")
    with pytest.raises(TableValidationError, match=r"Invalid value for option 'scan\.startup\.mode'"):
        create("a INT", "'connector' = 'kafka', 'format' = 'json', 'scan.startup.mode' = 'beginning'")
    with pytest.raises(TableValidationError, match=r"only supports single physical column"):
        create("a INT, b INT", "'connector' = 'kafka', 'format' = 'raw'")
