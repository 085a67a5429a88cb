"""Every route the endpoint serves, in an order aiohttp can match (literal segments before parameters)."""

from __future__ import annotations

from flott.rest.handler import log_url_handlers, rescale_handlers
from flott.rest.handler.application import application_handlers
from flott.rest.handler.cluster import cluster_handlers, jobmanager_handlers, log_handlers
from flott.rest.handler.handler import RestRoute
from flott.rest.handler.jar import jar_handlers
from flott.rest.handler.job import (
    coordination_handlers,
    flame_graph_handler,
    job_handlers,
    job_logs_handler,
    job_metrics_handlers,
    job_submit_handler,
    job_vertex_handlers,
    savepoint_handlers,
)
from flott.rest.handler.taskmanager import taskmanager_handlers


def _match_order(route: RestRoute) -> list[int]:
    """aiohttp tries routes in registration order: ``/jobs/overview`` must come before ``/jobs/{jobid}``."""
    return [1 if seg.startswith("{") else 0 for seg in route.path.strip("/").split("/")]


def all_routes() -> list[RestRoute]:
    routes = [
        *cluster_handlers.ROUTES,
        *jobmanager_handlers.ROUTES,
        *log_handlers.ROUTES,
        *job_submit_handler.ROUTES,
        *job_handlers.ROUTES,
        *job_logs_handler.ROUTES,
        *coordination_handlers.ROUTES,
        *job_vertex_handlers.ROUTES,
        *job_metrics_handlers.ROUTES,
        *flame_graph_handler.ROUTES,
        *savepoint_handlers.ROUTES,
        *taskmanager_handlers.ROUTES,
        *jar_handlers.ROUTES,
        *application_handlers.ROUTES,
        *rescale_handlers.ROUTES,
        *log_url_handlers.ROUTES,
    ]
    return sorted(routes, key=lambda r: (_match_order(r), r.path))
