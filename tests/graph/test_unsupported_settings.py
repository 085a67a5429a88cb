"""Settings flott cannot honour are refused when the job is planned, never silently ignored."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from flott.common import Duration, Types
from flott.common.watermark_strategy import WatermarkStrategy
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.checkpoint_config import ExternalizedCheckpointRetention
from flott.datastream.checkpointing_mode import CheckpointingMode
from flott.datastream.state_backend import EmbeddedRocksDBStateBackend, PredefinedOptions
from flott.errors import ConfigurationError, NotYetSupportedError


def job(configure: Callable[[StreamExecutionEnvironment], object]) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    configure(env)
    env.from_collection([1, 2], type_info=Types.INT()).map(lambda x: x + 1).print()
    return env


REFUSED: dict[str, tuple[Callable[[StreamExecutionEnvironment], object], str]] = {
    "unaligned with an aligned checkpoint timeout": (
        lambda e: e.enable_checkpointing(100)
        .get_checkpoint_config()
        .enable_unaligned_checkpoints()
        .set_aligned_checkpoint_timeout(Duration.of_seconds(1)),
        "switching to unaligned after a timeout is not supported",
    ),
    "unaligned with concurrent checkpoints": (
        lambda e: e.enable_checkpointing(100)
        .get_checkpoint_config()
        .set_force_unaligned_checkpoints(True)
        .set_max_concurrent_checkpoints(2),
        "one checkpoint at a time",
    ),
    "incremental (heap backend)": (
        lambda e: e.configure({"execution.checkpointing.incremental": "true"}),
        "incremental checkpoints need the RocksDB state backend",
    ),
    "incremental (older key, heap backend)": (
        lambda e: e.configure({"state.backend.incremental": "true"}),
        "incremental checkpoints need the RocksDB state backend",
    ),
    "changelog": (lambda e: e.enable_changelog_state_backend(True), "changelog state backend"),
    "predefined options": (
        lambda e: e.set_state_backend(_rocksdb_with(PredefinedOptions.FLASH_SSD_OPTIMIZED)),
        "predefined options are not supported",
    ),
    "latency tracking": (lambda e: e.get_config().set_latency_tracking_interval(500), "latency tracking"),
    "snapshot compression": (
        lambda e: e.get_config().set_use_snapshot_compression(True),
        "snapshot compression",
    ),
    "delete on cancellation": (
        lambda e: e.get_checkpoint_config().set_externalized_checkpoint_retention(
            ExternalizedCheckpointRetention.DELETE_ON_CANCELLATION
        ),
        "RETAIN_ON_CANCELLATION",
    ),
    "task cancellation timeout": (
        lambda e: e.get_config().set_task_cancellation_timeout(5),
        "task cancellation timeout",
    ),
}


def _rocksdb_with(options: PredefinedOptions) -> EmbeddedRocksDBStateBackend:
    backend = EmbeddedRocksDBStateBackend()
    backend.set_predefined_options(options)
    return backend


def test_unaligned_checkpoints_are_accepted() -> None:
    for configure in (
        lambda e: e.enable_checkpointing(100).get_checkpoint_config().enable_unaligned_checkpoints(),
        lambda e: e.enable_checkpointing(100).get_checkpoint_config().set_force_unaligned_checkpoints(True),
    ):
        job(configure).get_job_graph()


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_an_ignored_setting_refuses_the_job_at_plan_time(case: str) -> None:
    configure, message = REFUSED[case]
    env = job(configure)
    with pytest.raises(NotYetSupportedError, match=message):
        env.get_job_graph()
    with pytest.raises(NotYetSupportedError, match=message):
        env.execute("never runs")  # refused before any cluster starts


def test_supported_settings_and_defaults_still_plan() -> None:
    env = job(
        lambda e: (
            e.enable_checkpointing(100, CheckpointingMode.AT_LEAST_ONCE),
            e.set_state_backend(EmbeddedRocksDBStateBackend()),
            e.get_checkpoint_config().set_externalized_checkpoint_retention(
                ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION
            ),
            e.enable_changelog_state_backend(False),
        )
    )
    assert env.get_job_graph().config["execution.checkpointing.mode"] == "AT_LEAST_ONCE"


def test_an_unknown_checkpointing_mode_is_a_configuration_error() -> None:
    env = job(lambda e: e.configure({"execution.checkpointing.mode": "MOSTLY_ONCE"}))
    with pytest.raises(ConfigurationError, match="EXACTLY_ONCE or AT_LEAST_ONCE"):
        env.get_job_graph()


def test_watermark_alignment_is_refused_where_it_is_asked_for() -> None:
    with pytest.raises(NotYetSupportedError, match="watermark alignment"):
        WatermarkStrategy.for_monotonous_timestamps().with_watermark_alignment(
            "group", Duration.of_seconds(1)
        )


def test_processing_time_characteristic_switches_periodic_watermarks_off() -> None:
    """The PyFlink 1.x setting does what Flink 1.12+ made of it instead of being stored unread."""
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_stream_time_characteristic("ProcessingTime")
    assert env.get_config().get_auto_watermark_interval() == 0
    assert env.configuration["pipeline.auto-watermark-interval"] == "0 ms"
    env.set_stream_time_characteristic("EventTime")
    assert env.get_config().get_auto_watermark_interval() == 200


@pytest.mark.parametrize(
    "configure",
    [
        lambda e: e.set_state_backend(EmbeddedRocksDBStateBackend(enable_incremental_checkpointing=True)),
        lambda e: e.configure({"state.backend.type": "rocksdb", "state.backend.incremental": "true"}),
    ],
    ids=["backend", "older key"],
)
def test_incremental_checkpoints_of_the_rocksdb_backend_plan(
    configure: Callable[[StreamExecutionEnvironment], object],
) -> None:
    config = job(configure).get_job_graph().config
    assert config["state.backend.type"] == "rocksdb"
