"""``GET /jobs/:jobid/vertices/:vertexid/flamegraph`` (Flink's JobVertexFlameGraphHandler).

As in Flink: off unless ``rest.flamegraph.enabled`` (then ``endTimestamp``
-2); the first request for a vertex (and subtask, and type) starts sampling
in the background and answers -3 ("waiting"); later requests get the last
graph until it is older than ``rest.flamegraph.refresh-interval``, when the
next request starts a new sampling and still gets the old graph; a vertex
with no running subtask answers -1 ("terminated"). Sampling:
``rest.flamegraph.num-samples`` stacks, ``rest.flamegraph.delay-between-samples``
apart, at most ``rest.flamegraph.stack-depth`` frames, taken by each
TaskExecutor running the vertex (:mod:`flott.runtime.metrics.flame_graph`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

import msgspec

from flott.errors import RestRequestError
from flott.rest.handler.handler import INT32_MAX, HandlerRequest, QueryParam, RestRoute
from flott.rest.handler.job.job_metrics_handlers import vertex_of
from flott.rest.messages.base import ResponseBody
from flott.runtime.metrics.flame_graph import StackSample, flame_graph_tree

log = logging.getLogger(__name__)

TERMINATED, DISABLED, WAITING = -1, -2, -3
_TYPES = ("FULL", "ON_CPU", "OFF_CPU")


class VertexFlameGraph(ResponseBody, frozen=True, kw_only=True, omit_defaults=True):
    end_timestamp: int = msgspec.field(name="endTimestamp")
    data: dict[str, Any] | None = None


@dataclass
class _Entry:
    samples: list[StackSample] | None = None
    end_ms: int = 0
    sampled_at: float = 0.0
    running: asyncio.Task[None] | None = None


async def _sample(req: HandlerRequest, entry: _Entry, job_id: str, vertex_id: str,
                  placement: dict[str, list[int]]) -> None:
    cfg = req.config
    num = cfg.get_int("rest.flamegraph.num-samples")
    delay_ms = int(cfg.get_seconds("rest.flamegraph.delay-between-samples") * 1000)
    depth = cfg.get_int("rest.flamegraph.stack-depth")
    gateway = await req.gateway()
    try:
        parts = await asyncio.gather(*(
            gateway.request_task_manager_thread_samples(rid, job_id, vertex_id, indices, num, delay_ms, depth)
            for rid, indices in placement.items()
        ), return_exceptions=True)
        samples = [s for p in parts if isinstance(p, list) for s in p]
        entry.samples, entry.end_ms, entry.sampled_at = samples, int(time.time() * 1000), time.monotonic()
    except Exception as e:
        log.warning("flame graph sampling of vertex %s failed: %s", vertex_id, e)
    finally:
        entry.running = None


async def flame_graph(req: HandlerRequest) -> VertexFlameGraph:
    graph, vertex = await vertex_of(req)
    kind = (req.query("type") or "FULL").upper()
    if kind not in _TYPES:
        raise RestRequestError(f"Bad request, could not parse parameters: type must be one of {_TYPES}.")
    # parameters are checked before anything is answered, also while flame graphs are off
    index = req.query_int("subtaskindex", 0, INT32_MAX)
    if not req.config.get_bool("rest.flamegraph.enabled"):
        return VertexFlameGraph(end_timestamp=DISABLED)
    placement: dict[str, list[int]] = {}
    for ex in vertex.subtasks:
        if ex.state == "RUNNING" and ex.resource_id and (index is None or ex.subtask_index == index):
            placement.setdefault(ex.resource_id, []).append(ex.subtask_index)
    if not placement:
        return VertexFlameGraph(end_timestamp=TERMINATED)
    cache: dict[tuple[str, str, int | None], _Entry] = req.context.extras.setdefault("flame_graphs", {})
    entry = cache.setdefault((graph.job_id, vertex.id, index), _Entry())
    stale = time.monotonic() - entry.sampled_at > req.config.get_seconds("rest.flamegraph.refresh-interval")
    if (entry.samples is None or stale) and entry.running is None:
        entry.running = asyncio.get_running_loop().create_task(
            _sample(req, entry, graph.job_id, vertex.id, placement)
        )
    if entry.samples is None:
        return VertexFlameGraph(end_timestamp=WAITING)
    return VertexFlameGraph(end_timestamp=entry.end_ms, data=flame_graph_tree(entry.samples, kind))


ROUTES = [
    RestRoute(
        "GET",
        "/jobs/{jobid}/vertices/{vertexid}/flamegraph",
        flame_graph,
        summary="Flame graph of a vertex's task threads (sampled on request; see rest.flamegraph.*).",
        response_type=VertexFlameGraph,
        operation_id="getJobVertexFlameGraph",
        query=(
            QueryParam("type", "FULL, ON_CPU or OFF_CPU (default FULL).",
                       {"type": "string", "enum": list(_TYPES)}),
            QueryParam("subtaskindex", "Only this subtask.", {"type": "integer"}),
        ),
    ),
]
