"""Identical GETs in one event-loop iteration share one rendering, never older than the request."""

from __future__ import annotations

import asyncio

from flott.rest.handler.shared_answers import SharedAnswers
from tests.rest.conftest import RestCluster
from tests.rest.jobs import unbounded_job


async def test_an_answer_is_shared_until_the_iteration_ends() -> None:
    shared = SharedAnswers()
    renders = 0

    async def render() -> bytes:
        nonlocal renders
        renders += 1
        return b'{"n":%d}' % renders

    assert shared.get("/overview") is None
    assert await shared.render("/overview", render) == b'{"n":1}'
    assert shared.get("/overview") == b'{"n":1}'  # the same iteration: shared
    assert shared.get("/jobs") is None  # another key
    await asyncio.sleep(0)  # the next iteration
    assert shared.get("/overview") is None
    assert await shared.render("/overview", render) == b'{"n":2}'
    assert (shared.renders, shared.hits) == (2, 1)


async def test_a_rendering_that_waited_is_not_shared() -> None:
    shared = SharedAnswers()

    async def slow() -> bytes:
        await asyncio.sleep(0)
        return b"{}"

    assert await shared.render("/overview", slow) == b"{}"
    assert shared.get("/overview") is None


async def test_shared_answers_are_never_older_than_the_request(rest_cluster: RestCluster) -> None:
    """While identical requests keep arriving, a client still sees its own submission and cancellation."""
    rc = rest_cluster
    running = True

    async def poll() -> None:
        while running:
            status, _ = await rc.call("GET", "/v1/jobs/overview")
            assert status == 200

    async def states() -> dict[str, str]:
        _, body = await rc.call("GET", "/v1/jobs/overview")
        return {j["jid"]: j["state"] for j in body["jobs"]}

    pollers = [asyncio.create_task(poll()) for _ in range(8)]
    try:
        client = rc.client()
        for _ in range(3):
            job_id = await client.submit_job(unbounded_job("shared", parallelism=1, rate=10))
            assert job_id in await states()
            await client.cancel_job(job_id)
            assert (await states())[job_id] in ("CANCELLING", "CANCELED")
    finally:
        running = False
        await asyncio.gather(*pollers)
    assert rc.endpoint.shared_answers.hits > 0, "concurrent identical requests shared no rendering"
