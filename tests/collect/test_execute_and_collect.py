"""``execute_and_collect`` on real clusters: embedded (a MiniCluster per job) and a session cluster."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import pytest

from flott.client.pipeline_executor import EmbeddedExecutor, use_executor
from flott.client.rest_cluster_client import RestExecutor
from flott.common import Row, Types, WatermarkStrategy
from flott.datastream import StreamExecutionEnvironment
from flott.datastream.connectors.datagen import DataGeneratorSource, RateLimiterStrategy
from flott.datastream.data_stream import CloseableIterator
from flott.graph import MissingUidWarning
from tests.e2e.conftest import embedded as embedded
from tests.rest.conftest import RestCluster


def unbounded_stream(env: StreamExecutionEnvironment, rate: float = 1000.0) -> Any:
    source = DataGeneratorSource(lambda i: i, None, RateLimiterStrategy.per_second(rate), Types.LONG())
    return env.from_source(source, WatermarkStrategy.no_watermarks(), "gen")


def test_bounded_job_full_result_in_order(embedded: EmbeddedExecutor) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    ds = env.from_collection([(i, f"v{i}") for i in range(500)]).map(lambda t: (t[0] * 2, t[1]))
    results = ds.execute_and_collect()
    assert isinstance(results, CloseableIterator)
    with results:
        got = list(results)
    assert sorted(got) == [(i * 2, f"v{i}") for i in range(500)]
    assert env.transformations == [], "the collected job took the recorded transformations"


def test_parallelism_one_keeps_order_and_rows_keep_field_access(embedded: EmbeddedExecutor) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    rows = env.from_collection(
        [Row(id=i, name=f"n{i}") for i in range(20)],
        type_info=Types.ROW_NAMED(["id", "name"], [Types.INT(), Types.STRING()]),
    )
    got = rows.execute_and_collect("rows", limit=30)
    assert isinstance(got, list) and [r.id for r in got] == list(range(20))
    assert got[3].name == "n3"


def test_the_collect_sink_asks_no_uid_of_the_user(embedded: EmbeddedExecutor) -> None:
    """The user cannot set a uid on the sink execute_and_collect adds, so no warning may name it."""
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MissingUidWarning)
        got = env.from_collection([1, 2, 3]).map(lambda x: x + 1).execute_and_collect(limit=5)
    assert got == [2, 3, 4]


def test_limit_returns_a_list_and_cancels_an_unbounded_job(embedded: EmbeddedExecutor) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingUidWarning)
        got = unbounded_stream(env).map(lambda x: x * 10).execute_and_collect(limit=7)
    assert got == [0, 10, 20, 30, 40, 50, 60]


def test_closing_the_iterator_early_cancels_the_job(embedded: EmbeddedExecutor) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingUidWarning)
        it = unbounded_stream(env).execute_and_collect("to-cancel")
    first = [next(it) for _ in range(3)]
    job_client = it._iterator.job_client  # type: ignore[attr-defined]
    it.close()
    assert first == [0, 1, 2]
    assert job_client.get_job_status().result().name == "CANCELED"
    with pytest.raises(StopIteration):
        next(it)


def test_limit_must_be_positive(embedded: EmbeddedExecutor) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    with pytest.raises(ValueError, match="Limit must be greater than 0"):
        env.from_collection([1]).execute_and_collect(limit=0)


def test_a_failing_job_raises_after_the_results_before_the_failure(embedded: EmbeddedExecutor) -> None:
    from flott.errors import JobExecutionError

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    got: list[int] = []
    with pytest.raises(JobExecutionError, match="ZeroDivisionError"):
        with env.from_collection([3, 2, 1, 0]).map(lambda x: 6 // x).execute_and_collect() as it:
            got.extend(it)
    assert all(v in (2, 3, 6) for v in got)


async def test_session_cluster_collects_over_rest(rest_cluster: RestCluster) -> None:
    def run() -> tuple[list[int], list[int]]:
        with use_executor(RestExecutor(rest_cluster.config, rest_cluster.address)):
            env = StreamExecutionEnvironment.get_execution_environment()
            env.set_parallelism(2)
            full = env.from_collection(list(range(3000))).map(lambda x: x + 1).execute_and_collect()
            with full:
                all_results = sorted(full)
            env2 = StreamExecutionEnvironment.get_execution_environment()
            env2.set_parallelism(1)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MissingUidWarning)
                limited = unbounded_stream(env2).execute_and_collect("limited", limit=5)
        return all_results, limited

    all_results, limited = await asyncio.to_thread(run)
    assert all_results == list(range(1, 3001))
    assert limited == [0, 1, 2, 3, 4]
    jobs = {j.job_name: j.status for j in await rest_cluster.client().list_jobs()}
    assert jobs == {"DataStream Collect": "FINISHED", "limited": "CANCELED"}


async def test_slow_consumer_backpressures_the_job_not_the_jobmanager(rest_cluster: RestCluster) -> None:
    """With a 1 KiB sink buffer the sink blocks: the source cannot run ahead of what the client took."""
    config = rest_cluster.config.with_overrides({"collect-sink.batch-size.max": "1kb"})

    def run() -> tuple[list[int], int, int]:
        import time

        with use_executor(RestExecutor(config, rest_cluster.address)):
            env = StreamExecutionEnvironment.get_execution_environment()
            env.configure(config)
            env.set_parallelism(1)
            env.disable_operator_chaining()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MissingUidWarning)
                it = unbounded_stream(env, rate=100000.0).execute_and_collect("slow")
            taken = [next(it) for _ in range(10)]
            job_id = str(it._iterator.job_client.get_job_id())  # type: ignore[attr-defined]

            def produced() -> int:
                graph = asyncio.run_coroutine_threadsafe(
                    rest_cluster.cluster.dispatcher_gateway().request_execution_graph(job_id), loop
                ).result(30)
                source = next(v for v in graph.vertices if v.name.startswith("Source"))
                return sum(ex.records_out for ex in source.subtasks)

            time.sleep(2.0)  # the consumer stalls: buffers between source and sink fill up
            first = produced()
            time.sleep(2.0)
            growth = produced() - first
            it.close()
            return taken, first, growth

    loop = asyncio.get_running_loop()
    taken, first, growth = await asyncio.to_thread(run)
    assert taken == list(range(10)) and first >= 10
    assert growth < 1000, f"the stalled consumer holds the source back ({growth} records out in 2 s)"
