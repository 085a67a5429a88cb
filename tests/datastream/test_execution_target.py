"""The environment finds its executor by ``execution.target`` (Flink's PipelineExecutorServiceLoader).

No job runs here: the tests check which executor ``env.execute()`` would hand its JobGraph to.
"""

from __future__ import annotations

import pytest

from flott.api.execution import get_pipeline_executor, use_executor
from flott.client.pipeline_executor import EmbeddedExecutor
from flott.client.rest_cluster_client import RestExecutor
from flott.datastream import StreamExecutionEnvironment
from flott.errors import ConfigurationError


def test_the_default_target_is_the_embedded_cluster() -> None:
    assert isinstance(get_pipeline_executor({}), EmbeddedExecutor)
    assert isinstance(get_pipeline_executor({"execution.target": "local"}), EmbeddedExecutor)


def test_remote_target_submits_over_rest_to_the_configured_address() -> None:
    executor = get_pipeline_executor({"execution.target": "remote", "rest.address": "h", "rest.port": "1"})
    assert isinstance(executor, RestExecutor)
    assert executor.config.get("rest.address") == "h"


def test_an_unknown_target_is_refused_not_run_elsewhere() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.from_collection([1, 2]).print()
    env.configure({"execution.target": "yarn-per-job"})
    with pytest.raises(ConfigurationError, match="yarn-per-job"):
        env.execute("refused")


def test_a_launchers_executor_wins_over_the_target() -> None:
    class Capture:
        def execute(self, job_graph):  # type: ignore[no-untyped-def]
            raise AssertionError("not called")

    capture = Capture()
    with use_executor(capture):
        assert get_pipeline_executor({"execution.target": "yarn-per-job"}) is capture
