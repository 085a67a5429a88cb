"""Flink's adaptive batch parallelism settings: flott does not decide parallelism from data volume
(see the corpus program batch_word_count), so in BATCH mode it refuses them instead of ignoring them."""

from __future__ import annotations

import warnings

import pytest

from flott.common import Configuration
from flott.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from flott.errors import NotYetSupportedError
from flott.graph import build_job_graph


def _plan(mode: RuntimeExecutionMode, key: str, value: str) -> None:
    config = Configuration()
    config.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_runtime_mode(mode)
    env.set_parallelism(2)
    env.from_collection(["a b"]).flat_map(str.split).key_by(lambda w: w).reduce(lambda a, b: a).print()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        build_job_graph(env, "adaptive")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("execution.batch.adaptive.auto-parallelism.enabled", "true"),
        ("execution.batch.adaptive.auto-parallelism.min-parallelism", "1"),
        ("execution.batch.adaptive.auto-parallelism.max-parallelism", "8"),
        ("execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task", "16mb"),
        ("execution.batch.adaptive.auto-parallelism.default-source-parallelism", "4"),
        ("jobmanager.adaptive-batch-scheduler.max-parallelism", "8"),
    ],
)
def test_batch_jobs_refuse_what_flott_would_ignore(key: str, value: str) -> None:
    with pytest.raises(NotYetSupportedError, match=f"'{key}: {value}'.*adaptive batch scheduler"):
        _plan(RuntimeExecutionMode.BATCH, key, value)


def test_disabling_auto_parallelism_is_what_flott_does() -> None:
    _plan(RuntimeExecutionMode.BATCH, "execution.batch.adaptive.auto-parallelism.enabled", "false")


def test_streaming_jobs_are_not_concerned() -> None:
    _plan(RuntimeExecutionMode.STREAMING, "execution.batch.adaptive.auto-parallelism.max-parallelism", "8")
