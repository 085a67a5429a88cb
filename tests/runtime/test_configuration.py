"""Flink-style configuration: YAML file < -D overrides; typed getters whose errors name the key."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from flott.configuration import Configuration
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
