"""Identical GET requests handled in the same event-loop iteration share one rendered answer.

Flink computes ``/overview`` and ``/jobs/overview`` afresh for every request
(ClusterOverviewHandler and JobsOverviewHandler ask the Dispatcher each time;
only the per-job views share an ExecutionGraph, through the ExecutionGraphCache
that keeps it for ``web.refresh-interval``). flott keeps that freshness and
still avoids asking the Dispatcher, building the body and encoding it once per
request: under load, aiohttp reads many requests in one iteration of the event
loop and runs their handlers in the next, one after the other, and those that
ask for the same URL of a route marked ``shared`` get the bytes the first of
them rendered.

Why no client sees an older answer than per-request rendering could give it:
the memo is emptied by a callback that the first rendering of an iteration
schedules with ``call_soon``, so it runs before any handler step scheduled
after that rendering. A handler step that runs before it was scheduled before
the rendering, i.e. its request had already been read from its socket (aiohttp
wakes a connection's handler through the loop after reading the request, never
inline). So every answer reflects the cluster at a moment between the
request's arrival and its answer, which is all a per-request rendering
promises; in particular a client that changed something (cancelled a job) and
then asks again sees the change. A rendering that had to wait for something
(its first step did not finish within the iteration) is not shared at all.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable


class SharedAnswers:
    """Rendered bodies by request key, valid until the end of the current event-loop iteration."""

    __slots__ = ("_answers", "_clear_pending", "_generation", "hits", "renders")

    def __init__(self) -> None:
        self._answers: dict[Hashable, bytes] = {}
        self._clear_pending = False
        self._generation = 0
        self.hits = 0
        self.renders = 0

    def get(self, key: Hashable) -> bytes | None:
        body = self._answers.get(key)
        if body is not None:
            self.hits += 1
        return body

    async def render(self, key: Hashable, render: Callable[[], Awaitable[bytes]]) -> bytes:
        """Render the body for ``key`` and share it for the rest of this iteration."""
        if not self._clear_pending:
            self._clear_pending = True
            asyncio.get_running_loop().call_soon(self._clear)
        generation = self._generation
        body = await render()
        self.renders += 1
        if generation == self._generation:  # still the iteration the rendering started in
            self._answers[key] = body
        return body

    def _clear(self) -> None:
        self._answers.clear()
        self._generation += 1
        self._clear_pending = False
