"""Flink-style configuration: YAML file < -D overrides; typed getters whose errors name the key."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from flott.configuration import Configuration, parse_duration_ms
from flott.errors import ConfigurationError


def test_yaml_file_flattened_and_dynamic_overrides(tmp_path: Path) -> None:
    conf = tmp_path / "config.yaml"
    conf.write_text(
        "rest:\n  port: 9091\n  address: 127.0.0.1\nheartbeat.timeout: 20 s\nparallelism.default: 3\n"
    )
    config = Configuration.load(conf, Configuration.parse_dynamic(["rest.port=9092"]))
    assert config.get_int("rest.port") == 9092
    assert config.get("rest.address") == "127.0.0.1"
    assert config.get_seconds("heartbeat.timeout") == 20.0
    assert config.get_int("parallelism.default") == 3
    assert config.get_seconds("heartbeat.interval") == 10.0, "Flink's default, a bare number is milliseconds"


@pytest.mark.parametrize(
    ("values", "call", "message"),
    [
        ({"rest.port": "eighty"}, lambda c: c.get_int("rest.port"), "rest.port: expected an integer"),
        ({"heartbeat.timeout": "soon"}, lambda c: c.get_seconds("heartbeat.timeout"), "heartbeat.timeout"),
        ({"x": "maybe"}, lambda c: c.get_bool("x"), "expected true or false"),
    ],
)
def test_bad_values_name_the_key(values: dict[str, str], call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigurationError, match=message):
        call(Configuration(values))


@pytest.mark.parametrize(
    ("text", "ms"),
    [("250", 250), ("250 ms", 250), ("5 s", 5_000), ("1 min", 60_000), ("10MIN", 600_000),
     ("1h", 3_600_000), ("2 hours", 7_200_000), ("1 d", 86_400_000), ("1500 us", 1), ("-1", -1)],
)  # fmt: skip
def test_every_duration_key_reads_flinks_units(text: str, ms: int) -> None:
    """One parser for every duration-typed key, with Flink's units: `execution.checkpointing.interval:
    1h` was refused because the checkpoint and watermark keys' parser stopped at minutes."""
    assert parse_duration_ms("execution.checkpointing.interval", text) == ms
    if ms >= 0:
        assert Configuration({"k": text}).get_seconds("k") == pytest.approx(ms / 1000, abs=1e-3)


@pytest.mark.parametrize("text", ["1.5 s", "soon", "5 parsecs", ""])
def test_a_duration_that_is_not_one_is_refused_naming_the_key(text: str) -> None:
    with pytest.raises(ConfigurationError, match=r"execution\.checkpointing\.interval"):
        parse_duration_ms("execution.checkpointing.interval", text)


def test_bad_files_and_dynamic_options(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("rest: [unclosed\n")
    with pytest.raises(ConfigurationError, match="not valid YAML"):
        Configuration.load(bad)
    with pytest.raises(ConfigurationError, match="cannot read config file"):
        Configuration.load(tmp_path / "missing.yaml")
    with pytest.raises(ConfigurationError, match="key=value"):
        Configuration.parse_dynamic(["no-equals-sign"])


def test_cli_reports_config_errors_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "config.yaml"
    bad.write_text("- just\n- a list\n")
    proc = subprocess.run(
        [sys.executable, "-m", "flott.cli.main", "jobmanager", "start", "--configDir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "must hold a YAML mapping" in proc.stderr and "Traceback" not in proc.stderr
