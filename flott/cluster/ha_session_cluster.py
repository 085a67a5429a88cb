"""A session-cluster JobManager process with ZooKeeper high availability (``high-availability.type:
zookeeper``); Flink's StandaloneSessionClusterEntrypoint with its HA services.

Every JobManager process starts its RPC service, BlobServer and REST endpoint at once, then
joins *one* leader election for the whole process (Flink since 1.15: one latch per process).
A standby serves REST too: each request goes to the leading Dispatcher, found by leader
retrieval, through its fenced gateway, so a client pointed at any JobManager works (503,
which clients retry, while no leader is known).

On a grant (a new leader session id) the process becomes leader in this order:

1. a ResourceManager, fenced with the session id (TaskExecutors use that id, read from
   ZooKeeper, as its token; its JobMasters' tokens are derived from it too, so TaskExecutors
   reject calls of a deposed leader's JobMasters);
2. a Dispatcher, fenced with the session id, with the HA hooks of
   :mod:`flott.runtime.highavailability.job_persistence`: finished jobs back in its archive,
   stored jobs without a job result started again from their latest checkpoint;
3. only then the leadership is confirmed, which publishes the addresses of the Dispatcher,
   the ResourceManager and the REST endpoint under ``leader/<component>/connection_info``.

On a revoke (the latch node is gone, the ZooKeeper session expired, or the connection was
suspended longer than a quarter of the session timeout) leader work stops at once, before
anything is awaited: the Dispatcher, the ResourceManager and every JobMaster stop serving
RPCs and the JobMasters stop scheduling and checkpointing. Jobs are not ended: the next
leader recovers them, and the TaskExecutors cancel their tasks when they see the new leader
or lose the JobMaster's heartbeats. Then the process joins the election again.

Stopping the process (SIGTERM) suspends its jobs the same way, leaving them to the next leader.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, cast

from flott.configuration import Configuration
from flott.errors import ConfigurationError, FencingTokenError
from flott.rest.errors import NoLeaderError
from flott.rest.webmonitor.rest_server_endpoint import RestServerEndpoint
from flott.runtime.blob.blob_server import BlobServer
from flott.runtime.dispatcher.dispatcher import Dispatcher
from flott.runtime.entrypoint.jobmanager_process import jobmanager_rpc_service, set_on_termination_signals
from flott.runtime.gateways.dispatcher_gateway import DISPATCHER_ENDPOINT, DispatcherGateway
from flott.runtime.gateways.resource_manager_gateway import RESOURCE_MANAGER_ENDPOINT, ResourceManagerGateway
from flott.runtime.highavailability import (
    DISPATCHER,
    RESOURCE_MANAGER,
    REST_SERVER,
    LeaderRetrievalService,
    create_ha_services,
)
from flott.runtime.highavailability.job_persistence import DispatcherHaServices
from flott.runtime.highavailability.zookeeper import ZooKeeperHaServices, ZooKeeperLeaderElectionService
from flott.runtime.jobgraph import new_id
from flott.runtime.jobmaster.job_master import JobMaster
from flott.runtime.resourcemanager.local_process_driver import LocalProcessDriver
from flott.runtime.resourcemanager.resource_manager import ResourceManager

log = logging.getLogger(__name__)

_CLEANUP_TIMEOUT_S = 10.0


class LeaderGateway:
    """The leading Dispatcher's gateway as REST handlers use it: a call that reaches a
    Dispatcher which is no longer the leader (stale fencing token) is a 503, which clients
    retry, not a 409."""

    def __init__(self, inner: DispatcherGateway) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        fn = getattr(self._inner, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return await fn(*args, **kwargs)
            except FencingTokenError:
                raise NoLeaderError(
                    "The Dispatcher this request reached lost its leadership; retry."
                ) from None

        call.__name__ = name
        setattr(self, name, call)
        return call


class _LeaderTerm:
    """What this process runs while it holds one leader session."""

    def __init__(self, owner: HaSessionClusterEntrypoint, session_id: str, leader_node: str | None) -> None:
        self.owner = owner
        self.session_id = session_id
        self.leader_node = leader_node
        self.resource_manager: ResourceManager | None = None
        self.dispatcher: Dispatcher | None = None
        self.hooks: DispatcherHaServices | None = None
        self.suspended: list[JobMaster] = []
        self.task: asyncio.Task[Any] | None = None
        self.stopped = False

    async def start(self) -> None:
        o, sid = self.owner, self.session_id
        rm = ResourceManager(o.rpc, o.config)
        rm.fenced, rm.fencing_token, rm.resource_manager_id = True, sid, sid
        self.resource_manager = rm
        if o._driver is not None:
            rm.count_task_executors_of(o._driver)
        await rm.start()
        rm_gateway = o.rpc.connect(
            o.rpc.address, RESOURCE_MANAGER_ENDPOINT, ResourceManagerGateway, fencing_token=sid
        )
        hooks = self.hooks = DispatcherHaServices(
            o.ha, o.config, sid, self.leader_node, lambda: o.has_leadership(sid), o.blob_server
        )
        dispatcher = Dispatcher(
            o.rpc, o.config, rm_gateway, on_shutdown=o.request_shutdown, blob_server=o.blob_server, ha=hooks
        )
        dispatcher.fenced, dispatcher.fencing_token = True, sid
        self.dispatcher = dispatcher
        await dispatcher.start()
        recovered = await hooks.recover(dispatcher)
        if recovered:
            log.info("recovered %d job(s): %s", len(recovered), ", ".join(recovered))

    def stop_now(self, reason: str) -> None:
        """Synchronous: nothing of this term acts as leader once it returns."""
        self.stopped = True
        if self.task is not None and not self.task.done() and self.task is not asyncio.current_task():
            self.task.cancel()
        if self.dispatcher is not None:
            self.suspended = self.dispatcher.suspend(reason)
        if self.resource_manager is not None:
            self.owner.rpc.unregister(RESOURCE_MANAGER_ENDPOINT)

    async def close(self) -> None:
        for jm in self.suspended:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(jm.stop(), _CLEANUP_TIMEOUT_S)
        if self.hooks is not None:
            # our locks on the stored jobs go, so the next leader can clean them up when they end
            for jm in self.suspended:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(
                        self.hooks.job_graphs.release_job_graph(jm.job_graph.job_id), _CLEANUP_TIMEOUT_S
                    )
        if self.resource_manager is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(
                    self.resource_manager.stop(shutdown_task_executors=False), _CLEANUP_TIMEOUT_S
                )


class _DispatcherListener:
    def __init__(self, owner: HaSessionClusterEntrypoint) -> None:
        self._owner = owner

    def notify_leader_address(self, address: str | None, session_id: str | None) -> None:
        self._owner.dispatcher_leader = (address, session_id) if address and session_id else None

    def handle_error(self, error: BaseException) -> None:
        log.error("Dispatcher leader retrieval failed: %r", error)


class HaSessionClusterEntrypoint:
    """See the module docstring. ``start()``, ``run_until_shutdown()``, ``stop()``."""

    def __init__(self, config: Configuration, local_task_managers: int = 0) -> None:
        self.config = config
        self.local_task_managers = local_task_managers
        self.rpc = jobmanager_rpc_service(config)
        self.blob_server = BlobServer(config)
        self.rest: Any = None
        self._ha: ZooKeeperHaServices | None = None
        self.election: ZooKeeperLeaderElectionService | None = None
        self._retrieval: LeaderRetrievalService | None = None
        self.dispatcher_leader: tuple[str, str] | None = None
        self._gateway: tuple[tuple[str, str], LeaderGateway] | None = None
        self.term: _LeaderTerm | None = None
        self._term_lock = asyncio.Lock()
        self._driver: LocalProcessDriver | None = None
        self._shutdown = asyncio.Event()
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def ha(self) -> ZooKeeperHaServices:
        assert self._ha is not None
        return self._ha

    async def start(self) -> None:
        ha = await create_ha_services(self.config)
        if not isinstance(ha, ZooKeeperHaServices):
            await ha.close()
            raise ConfigurationError(
                "the HA session cluster needs high-availability.type: zookeeper"
            )
        self._ha = ha
        await self.rpc.start()
        await self.blob_server.start()
        rest = self.rest = RestServerEndpoint(self.config, self._dispatcher_gateway)
        await rest.start()
        rest_url = rest.rest_base_url  # https:// when security.ssl.rest.enabled
        self._retrieval = ha.get_leader_retrieval_service(DISPATCHER)
        self._retrieval.start(_DispatcherListener(self))
        self.election = ha.get_process_leader_election_service(
            {DISPATCHER: self.rpc.address, RESOURCE_MANAGER: self.rpc.address, REST_SERVER: rest_url}
        )
        if self.local_task_managers > 0:
            # before the election: every leader term's ResourceManager counts these as the
            # cluster's own (registered or still starting) when it judges a job's slots
            self._driver = LocalProcessDriver(self.config, self.rpc.address, self._on_task_manager_exit)
            for _ in range(self.local_task_managers):
                self._driver.start_task_executor(new_id())
        self.election.start(self)
        log.info(
            "JobManager (HA, ZooKeeper %s, cluster %s) RPC at %s, REST at %s, BlobServer at %s; "
            "waiting for leadership",
            ha.quorum, ha.root, self.rpc.address, rest_url, self.blob_server.address,
        )

    async def _on_task_manager_exit(self, resource_id: str, code: int) -> None:
        log.warning("local TaskExecutor %s exited with code %d", resource_id, code)

    # -- REST: the leader's Dispatcher ---------------------------------------------------------

    def _dispatcher_gateway(self) -> DispatcherGateway | None:
        leader = self.dispatcher_leader
        if leader is None:
            return None
        if self._gateway is None or self._gateway[0] != leader:
            address, session_id = leader
            inner = self.rpc.connect(
                address, DISPATCHER_ENDPOINT, DispatcherGateway, fencing_token=session_id
            )
            self._gateway = (leader, LeaderGateway(inner))
        return cast(DispatcherGateway, self._gateway[1])

    # -- leadership (LeaderContender; called on the loop) --------------------------------------

    def has_leadership(self, session_id: str) -> bool:
        return self.election is not None and self.election.has_leadership(session_id)

    def grant_leadership(self, session_id: str) -> None:
        log.info("granted leadership (session %s)", session_id)
        self._spawn(self._lead(session_id))

    def revoke_leadership(self) -> None:
        term, self.term = self.term, None
        if term is None:
            return
        log.warning("leadership of session %s revoked: leader work stopped", term.session_id)
        term.stop_now("leadership lost")
        self._spawn(self._close(term))

    def handle_error(self, error: BaseException) -> None:
        log.error("leader election failed: %r; shutting down", error)
        self._shutdown.set()

    async def _lead(self, session_id: str) -> None:
        async with self._term_lock:  # the previous term is cleaned up first
            election = self.election
            if election is None or not election.has_leadership(session_id) or self._shutdown.is_set():
                return
            term = _LeaderTerm(self, session_id, election.leader_node)
            term.task = asyncio.current_task()
            self.term = term
            try:
                await term.start()
            except asyncio.CancelledError:
                if not term.stopped:
                    raise
                return  # revoked while starting
            except Exception as e:
                log.exception("could not take up the leadership: %r; shutting down", e)
                if self.term is term:
                    self.term = None
                    term.stop_now("leader start failed")
                    await term.close()
                self._shutdown.set()
                return
            if self.term is term and election.has_leadership(session_id):
                election.confirm_leadership(session_id, self.rpc.address)
                log.info("leading (session %s): addresses published", session_id)

    async def _close(self, term: _LeaderTerm) -> None:
        async with self._term_lock:
            await term.close()

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- lifecycle -----------------------------------------------------------------------------

    async def request_shutdown(self) -> None:
        self._shutdown.set()

    async def run_until_shutdown(self) -> None:
        set_on_termination_signals(self._shutdown, self.config)
        await self._shutdown.wait()

    async def stop(self) -> None:
        self._shutdown.set()
        if self.election is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.election.stop(), _CLEANUP_TIMEOUT_S)  # revokes: jobs suspended
        term, self.term = self.term, None
        if term is not None:
            term.stop_now("JobManager stopping")
            await term.close()
        async with self._term_lock:
            pass
        if self._retrieval is not None:
            await self._retrieval.stop()
        if self.rest is not None:
            with contextlib.suppress(Exception):
                await self.rest.stop()
        if self._driver is not None:
            with contextlib.suppress(Exception):
                await self._driver.stop_all()
        with contextlib.suppress(Exception):
            await self.blob_server.close()
        for task in list(self._tasks):
            task.cancel()
        await self.rpc.stop()
        if self._ha is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._ha.close(), _CLEANUP_TIMEOUT_S)


async def run_ha_session_cluster(config: Configuration, local_task_managers: int = 0) -> None:
    entrypoint = HaSessionClusterEntrypoint(config, local_task_managers)
    try:
        await entrypoint.start()
        await entrypoint.run_until_shutdown()
    finally:
        await entrypoint.stop()
