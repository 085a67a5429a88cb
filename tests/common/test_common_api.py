"""The rest of flott.common: configuration, time values, strategies, ids and results."""

from __future__ import annotations

import pickle
from datetime import timedelta

import pytest

import flott.common as common
from flott.common import (
    ConfigOptions,
    Configuration,
    Duration,
    Encoder,
    ExecutionConfig,
    Instant,
    JobExecutionResult,
    JobID,
    JobStatus,
    RestartStrategies,
    SimpleStringSchema,
    Time,
    TimestampAssigner,
    WatermarkStrategy,
)


def test_configuration_typed_accessors_store_strings():
    c = Configuration()
    c.set_integer("a", 3).set_boolean("b", True).set_float("f", 1.1).set_string("s", "x")
    c.set_bytearray("bytes", bytearray(b"\x00\x01"))
    assert c.get_integer("a", 0) == 3
    assert c.get_boolean("b", False) is True
    assert c.get_float("f", 0.0) == pytest.approx(1.1)
    assert c.get_string("s", "") == "x"
    assert c.get_bytearray("bytes", bytearray()) == bytearray(b"\x00\x01")
    assert c.to_dict()["b"] == "true" and c.to_dict()["f"] == "1.1"
    assert c.get_integer("missing", 7) == 7
    assert c.contains_key("a") and c.remove_config("a") and not c.contains_key("a")
    assert c.key_set() == {"b", "f", "s", "bytes"}
    d = Configuration(c)
    d.set_string("s", "y")
    assert c.get_string("s", "") == "x"
    other = Configuration().add_all(c, prefix="p.")
    assert other.get_string("p.s", "") == "x"
    assert Configuration.from_dict({"k": "v"}).to_dict() == {"k": "v"}
    assert Configuration.parse_list_value("[a, b]") == ["a", "b"]
    assert Configuration.parse_list_value("a;b") == ["a", "b"]
    assert pickle.loads(pickle.dumps(c)) == c


def test_config_options():
    opt = ConfigOptions.key("parallelism.default").int_type().default_value(1)
    c = Configuration()
    assert c.get(opt) == 1
    c.set(opt, 4)
    assert c.get(opt) == 4 and c.get_string("parallelism.default", "") == "4"
    flag = ConfigOptions.key("x.enabled").boolean_type().no_default_value()
    assert c.get(flag) is None
    c.set_string("x.enabled", "TRUE")
    assert c.get(flag) is True
    assert pickle.loads(pickle.dumps(opt)).key() == "parallelism.default"


def test_duration_time_instant():
    assert Duration.of_seconds(2).to_millis() == 2000
    assert Duration.of_minutes(1) == Duration.of_millis(60_000)
    assert Duration.of_nanos(1_500_000).to_millis() == 1
    assert str(Duration.of_millis(90_500)) == "PT1M30.5S"
    assert Time.seconds(3).to_milliseconds() == 3000 and str(Time.minutes(1)) == "60000 ms"
    assert Time.days(1) == Time.hours(24)
    assert Instant.of_epoch_milli(1500) == Instant(1, 500_000_000)
    assert Instant(1, 500_000_000).to_epoch_milli() == 1500
    assert Instant.of_epoch_milli(-1).to_epoch_milli() == -1


class _Assigner(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


def test_watermark_strategy_is_plain_data():
    base = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(5))
    assert base.kind == WatermarkStrategy.BOUNDED_OUT_OF_ORDERNESS
    assert base.max_out_of_orderness_ms == 5000 and base.idleness_ms is None
    s = base.with_idleness(Duration.of_seconds(1)).with_timestamp_assigner(_Assigner())
    assert s.idleness_ms == 1000 and s.timestamp_assigner.extract_timestamp(("a", 7), -1) == 7
    assert base.idleness_ms is None  # with_* returns a new strategy
    assert WatermarkStrategy.for_monotonous_timestamps().kind == WatermarkStrategy.MONOTONOUS
    assert not WatermarkStrategy.no_watermarks().generates_watermarks()
    assert pickle.loads(pickle.dumps(s)).idleness_ms == 1000


def test_job_status():
    assert [s.name for s in JobStatus][:2] == ["INITIALIZING", "CREATED"]
    terminal = {s for s in JobStatus if s.is_terminal_state()}
    globally = {s for s in JobStatus if s.is_globally_terminal_state()}
    assert globally == {JobStatus.FINISHED, JobStatus.CANCELED, JobStatus.FAILED}
    assert terminal == globally | {JobStatus.SUSPENDED}


def test_job_id_and_result():
    jid = JobID()
    text = str(jid)
    assert len(text) == 32 and int(text, 16) >= 0
    assert JobID.from_hex_string(text) == jid and JobID(text) == jid
    assert pickle.loads(pickle.dumps(jid)) == jid
    with pytest.raises(ValueError):
        JobID.from_hex_string("xyz")
    r = JobExecutionResult(jid, 1234, {"count": 5})
    assert r.get_job_id() == jid and r.get_net_runtime() == 1234
    assert r.get_accumulator_result("count") == 5 and r.get_all_accumulator_results() == {"count": 5}
    assert f"Job with JobID {jid} has finished." in str(r)


def test_execution_config_and_restart_strategies():
    ec = ExecutionConfig()
    assert ec.get_parallelism() == -1 and ec.get_auto_watermark_interval() == 200
    ec.set_parallelism(4).enable_object_reuse().set_global_job_parameters({"k": 1})
    assert ec.get_parallelism() == 4 and ec.is_object_reuse_enabled()
    assert ec.get_global_job_parameters() == {"k": "1"}
    assert ec.to_dict()["parallelism.default"] == "4"
    fixed = RestartStrategies.fixed_delay_restart(3, 10_000)
    assert fixed.get_restart_attempts() == 3
    assert fixed.get_delay_between_attempts_interval() == timedelta(seconds=10)
    assert fixed.to_config_dict()["restart-strategy.type"] == "fixed-delay"
    assert fixed == RestartStrategies.fixed_delay_restart(3, 10_000)
    rate = RestartStrategies.failure_rate_restart(2, 60_000, 1_000)
    assert rate.get_max_failure_rate() == 2 and "failure-rate" in rate.to_config_dict().values()
    assert RestartStrategies.no_restart().get_description() == "Restart deactivated."
    assert RestartStrategies.fall_back_restart().to_config_dict() == {}


def test_serialization_schemas():
    s = SimpleStringSchema()
    assert s.deserialize(s.serialize("héllo")) == "héllo"
    assert Encoder.simple_string_encoder().encode("x") == b"x\n"
    assert Encoder.simple_string_encoder("ISO-8859-1").encode("é") == b"\xe9\n"
    with pytest.raises(ValueError):
        Encoder.simple_string_encoder("no-such-charset")


def test_package_exports_and_lazy_names():
    for name in common.__all__:
        if name not in ("JobClient", "CompletableFuture"):
            assert getattr(common, name) is not None
    with pytest.raises(AttributeError):
        _ = common.NoSuchThing
