"""CompletedOperationCache: Flink's trigger/poll bookkeeping, driven directly on an event loop."""

from __future__ import annotations

import asyncio

import pytest

from flott.errors import JobExecutionError, OperationCacheClosedError, OperationNotFoundError
from flott.runtime.dispatcher.completed_operation_cache import CompletedOperationCache


async def test_in_progress_then_completed_with_value() -> None:
    cache: CompletedOperationCache[str] = CompletedOperationCache()
    gate = asyncio.Event()

    async def operation() -> str:
        await gate.wait()
        return "file:/savepoints/savepoint-1"

    trigger = cache.trigger("job", None, operation)
    assert len(trigger) == 32
    assert not cache.get("job", trigger).done
    gate.set()
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    result = cache.get("job", trigger)
    assert result.done and result.value == "file:/savepoints/savepoint-1" and result.failure is None


async def test_failed_operation_is_completed_with_its_failure() -> None:
    cache: CompletedOperationCache[None] = CompletedOperationCache()

    async def operation() -> None:
        raise JobExecutionError("savepoint failed")

    trigger = cache.trigger("", None, operation)
    await asyncio.sleep(0.01)
    result = cache.get("", trigger)
    assert result.done and isinstance(result.failure, JobExecutionError)


async def test_same_trigger_id_runs_once_and_unknown_keys_are_404() -> None:
    cache: CompletedOperationCache[int] = CompletedOperationCache()
    runs = []

    async def operation() -> int:
        runs.append(1)
        return len(runs)

    assert cache.trigger("job", "ab" * 16, operation) == "ab" * 16
    assert cache.trigger("job", "ab" * 16, operation) == "ab" * 16
    await asyncio.sleep(0.01)
    assert runs == [1] and cache.get("job", "ab" * 16).value == 1
    with pytest.raises(OperationNotFoundError):
        cache.get("other-job", "ab" * 16)


async def test_results_expire_after_the_store_duration_and_closing_refuses_new_ones() -> None:
    now = [0.0]
    cache: CompletedOperationCache[int] = CompletedOperationCache(store_duration_s=300, clock=lambda: now[0])

    async def operation() -> int:
        return 1

    trigger = cache.trigger("", None, operation)
    await asyncio.sleep(0.01)
    now[0] = 299
    assert cache.get("", trigger).done
    now[0] = 301
    with pytest.raises(OperationNotFoundError):
        cache.get("", trigger)
    await cache.close()
    with pytest.raises(OperationCacheClosedError):
        cache.trigger("", None, operation)


async def test_a_failure_nobody_polls_leaves_no_traceback_in_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A client that triggers a savepoint and never polls must not leave "Task exception was never
    retrieved" in the log: the failure was answered (it is kept for polling), not lost."""
    import gc

    cache: CompletedOperationCache[None] = CompletedOperationCache()

    async def operation() -> None:
        raise JobExecutionError("savepoint failed")

    cache.trigger("", None, operation)
    await asyncio.sleep(0.01)
    del cache
    gc.collect()
    assert "never retrieved" not in caplog.text
