"""What every JobManager process does the same way, whichever entrypoint runs it.

The session, HA session and application entrypoints differ in who leads and which
Dispatcher they run; they share how the process's RPC service is set up from
Flink's keys, how SIGTERM/SIGINT end it, and the order its components stop in.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from flott.configuration import Configuration
from flott.runtime.entrypoint.termination import SHUTDOWN_TIMEOUT_KEY, install_termination_handlers
from flott.runtime.rpc.service import RpcService
from flott.ssl_context import internal_ssl


def jobmanager_rpc_service(config: Configuration) -> RpcService:
    """The JobManager's RPC service: ``jobmanager.bind-host``/``.rpc.port``/``.rpc.address``."""
    return RpcService(
        bind_host=config.get("jobmanager.bind-host"),
        port=config.get_int("jobmanager.rpc.port"),
        advertised_host=config.get("jobmanager.rpc.address"),
        default_timeout=config.get_seconds("pekko.ask.timeout"),
        tls=internal_ssl(config),
    )


def set_on_termination_signals(event: asyncio.Event, config: Configuration | None = None) -> None:
    """SIGTERM and SIGINT set ``event`` (the process then shuts down in order); the process exits
    anyway once ``cluster.services.shutdown-timeout`` has passed (:mod:`.termination`)."""
    timeout = (config or Configuration()).get_seconds(SHUTDOWN_TIMEOUT_KEY)
    install_termination_handlers(event, timeout)


async def stop_components(
    rpc: RpcService, rest: Any, dispatcher: Any, blob_server: Any, resource_manager: Any
) -> None:
    """Front to back: REST first (no new requests), the RPC service last; one failing stop
    does not keep the others from running."""
    if rest is not None:
        with contextlib.suppress(Exception):
            await rest.stop()
    if dispatcher is not None:
        with contextlib.suppress(Exception):
            await dispatcher.stop()
    if blob_server is not None:
        with contextlib.suppress(Exception):
            await blob_server.close()
    if resource_manager is not None:
        with contextlib.suppress(Exception):
            await resource_manager.stop()
    await rpc.stop()
