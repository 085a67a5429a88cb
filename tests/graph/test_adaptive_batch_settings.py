"""Flink's adaptive batch parallelism settings at plan time: in BATCH mode the auto-parallelism
settings are honoured (their values must work), the adaptive batch scheduler's other settings
(speculative execution) are refused; a STREAMING job is not concerned by any of them. Which
vertices count as configured is decided here too (``JobVertex.parallelism_configured``)."""

from __future__ import annotations

import warnings

import pytest

from flott.common import Configuration
from flott.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from flott.errors import ConfigurationError, NotYetSupportedError
from flott.graph import build_job_graph
from flott.runtime.jobgraph import JobGraph


def _plan(mode: RuntimeExecutionMode, key: str | None = None, value: str = "") -> JobGraph:
    config = Configuration()
    if key is not None:
        config.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_runtime_mode(mode)
    env.set_parallelism(2)
    env.from_collection(["a b"]).flat_map(str.split).key_by(lambda w: w).reduce(lambda a, b: a).print()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build_job_graph(env, "adaptive")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("execution.batch.adaptive.auto-parallelism.enabled", "true"),
        ("execution.batch.adaptive.auto-parallelism.enabled", "false"),
        ("execution.batch.adaptive.auto-parallelism.min-parallelism", "1"),
        ("execution.batch.adaptive.auto-parallelism.max-parallelism", "8"),
        ("execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task", "16mb"),
        ("execution.batch.adaptive.auto-parallelism.default-source-parallelism", "4"),
        ("jobmanager.adaptive-batch-scheduler.max-parallelism", "8"),
        ("execution.batch-shuffle-mode", "ALL_EXCHANGES_BLOCKING"),
        ("execution.batch-shuffle-mode", "ALL_EXCHANGES_PIPELINED"),
    ],
)
def test_batch_jobs_accept_the_auto_parallelism_settings(key: str, value: str) -> None:
    _plan(RuntimeExecutionMode.BATCH, key, value)


@pytest.mark.parametrize(
    ("key", "value", "match"),
    [
        ("execution.batch.adaptive.auto-parallelism.min-parallelism", "0", "positive integer"),
        ("execution.batch.adaptive.auto-parallelism.max-parallelism", "x", "positive integer"),
        ("execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task", "lots", "memory size"),
        ("execution.batch.adaptive.auto-parallelism.enabled", "maybe", "true or false"),
        ("execution.batch.adaptive.auto-parallelism.default-source-parallelism", "-1", "positive integer"),
    ],
)
def test_values_that_cannot_work_are_refused(key: str, value: str, match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        _plan(RuntimeExecutionMode.BATCH, key, value)


def test_a_min_above_the_max_is_refused() -> None:
    # parallelism.default (2, set by env.set_parallelism) is the max the min is checked against
    with pytest.raises(ConfigurationError, match="must not be smaller than"):
        _plan(RuntimeExecutionMode.BATCH, "execution.batch.adaptive.auto-parallelism.min-parallelism", "3")


def test_hybrid_shuffles_are_refused() -> None:
    with pytest.raises(NotYetSupportedError, match="hybrid shuffles are not supported"):
        _plan(RuntimeExecutionMode.BATCH, "execution.batch-shuffle-mode", "ALL_EXCHANGES_HYBRID_FULL")


def test_speculative_execution_is_refused() -> None:
    key = "jobmanager.adaptive-batch-scheduler.speculative.enabled"
    with pytest.raises(NotYetSupportedError, match=f"'{key}: true'.*not supported"):
        _plan(RuntimeExecutionMode.BATCH, key, "true")


def test_streaming_jobs_are_not_concerned() -> None:
    _plan(RuntimeExecutionMode.STREAMING, "execution.batch.adaptive.auto-parallelism.min-parallelism", "0")


def test_env_parallelism_does_not_configure_operators_set_parallelism_does() -> None:
    config = Configuration()
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.set_parallelism(2)
    words = env.from_collection(["a b"]).flat_map(str.split)
    words.key_by(lambda w: w).reduce(lambda a, b: a).set_parallelism(2).print()
    words.map(lambda w: w).disable_chaining().print()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = build_job_graph(env, "configured")
    configured = {v.name: v.parallelism_configured for v in graph.vertices}
    assert configured == {
        "Source: Collection Source": True,  # from_collection is non-parallel: parallelism 1, configured
        "FlatMap": False,
        "Reduce -> Sink: Print to Std. Out": True,  # one chained operator set it: the vertex is configured
        "Map": False,
        "Sink: Print to Std. Out": False,
    }
