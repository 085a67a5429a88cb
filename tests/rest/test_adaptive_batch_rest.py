"""A BATCH job under the adaptive batch scheduler, over REST (a real cluster, two TaskExecutors):
as in Flink, ``/jobs/:id`` and ``/jobs/:id/plan`` show parallelism -1 for a vertex whose
parallelism is not decided yet (its producers still run), then the decided value."""

from __future__ import annotations

import asyncio
import time
import warnings
from typing import Any

from flott.common import Types, WatermarkStrategy
from flott.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from flott.datastream.connectors.datagen import DataGeneratorSource, RateLimiterStrategy
from flott.graph import MissingUidWarning
from flott.runtime.jobgraph import JobGraph
from tests.rest.conftest import RestCluster
from tests.rest.jobs import _discard


def _slow_batch_job() -> JobGraph:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.set_parallelism(2)
    source = DataGeneratorSource(lambda i: i, 600, RateLimiterStrategy.per_second(300), Types.LONG())
    (
        env.from_source(source, WatermarkStrategy.no_watermarks(), "generator")
        .key_by(lambda x: x % 8)
        .reduce(lambda a, b: a + b)
        .add_sink(_discard())
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingUidWarning)
        return env.get_job_graph("adaptive over rest")


async def test_undecided_vertices_show_parallelism_minus_one(rest_cluster: RestCluster) -> None:
    rc = rest_cluster
    async with rc.client() as client:
        job_id = await client.submit_job(_slow_batch_job())

    async def get(path: str) -> Any:
        status, body = await rc.call("GET", path)
        assert status == 200, body
        return body

    deadline = time.monotonic() + 30
    while (job := await get(f"/jobs/{job_id}"))["vertices"][0]["status"] != "RUNNING":
        assert time.monotonic() < deadline, "the sources did not start"
        await asyncio.sleep(0.05)
    assert [v["parallelism"] for v in job["vertices"]] == [2, -1]
    plan = (await get(f"/jobs/{job_id}/plan"))["plan"]
    assert [n["parallelism"] for n in plan["nodes"]] == [2, -1]
    while (job := await get(f"/jobs/{job_id}"))["state"] != "FINISHED":
        assert time.monotonic() < deadline + 30, "the job did not finish"
        await asyncio.sleep(0.1)
    assert [v["parallelism"] for v in job["vertices"]] == [2, 1]  # a few KiB: one subtask
    plan = (await get(f"/jobs/{job_id}/plan"))["plan"]
    assert [n["parallelism"] for n in plan["nodes"]] == [2, 1]
