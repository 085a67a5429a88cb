"""``high-availability.type: zookeeper``: thin kazoo shells around the pure parts.

Layout under ``<path.root>/<cluster-id>`` (Flink 1.14's per-component form):

* ``leader/<component>/latch/<uuid>__lock__<seq>``: kazoo Lock recipe, lowest leads
* ``leader/latch/...``: the one latch of a JobManager *process* (Flink 1.15+: one
  election per process, see :meth:`ZooKeeperHaServices.get_process_leader_election_service`)
* ``leader/<component>/connection_info``: ephemeral, owned by the leader's session,
  JSON ``{"address": ..., "session_id": ...}``; written only after confirmation and
  in one transaction with a check that the writer's latch node still exists
* ``jobgraphs/<jobId>``: JSON pointer ``{"path": <storageDir>/submittedJobGraph<rnd>}``,
  with ``locks/<zk session id>`` ephemeral children of the processes using it; a
  leader writes it in one transaction with a check of its latch node
* ``jobs/<jobId>/checkpoint_id_counter``: kazoo shared Counter
* ``jobs/<jobId>/checkpoints/<id, 19 digits>``: JSON pointer ``{"path", "type"}`` to a
  completed checkpoint's directory (the data stays where the tasks wrote it), written
  by the leader (latch-checked transaction) before any task is told the checkpoint
  completed

One KazooClient (one ZooKeeper session) per services instance, like one Curator
client per Flink process. Every kazoo callback hops onto the asyncio loop with
``loop.call_soon_threadsafe``; blocking kazoo calls run in worker threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import (
    BadVersionError,
    CancelledError,
    KazooException,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    RolledBackError,
)
from kazoo.protocol.states import EventType, WatchedEvent
from kazoo.recipe.counter import Counter
from kazoo.recipe.lock import Lock
from kazoo.recipe.watchers import DataWatch
from kazoo.retry import KazooRetry

from flott.errors import LeadershipLostError
from flott.runtime.highavailability import leadership as lm
from flott.runtime.highavailability.services import (
    CheckpointIDCounter,
    CompletedCheckpointPointer,
    CompletedCheckpointStore,
    HighAvailabilityError,
    HighAvailabilityServices,
    JobGraphStore,
    JobResultStore,
    LeaderContender,
    LeaderElectionService,
    LeaderRetrievalListener,
    LeaderRetrievalService,
)
from flott.runtime.highavailability.storage import FileSystemJobResultStore, StateStorage

log = logging.getLogger(__name__)


def leader_check_failed(results: list[Any]) -> bool:
    """Did the leading ``check(latch node)`` of a committed transaction fail? (When a later
    operation fails, ZooKeeper reports the earlier ones as ``RolledBackError``.)"""
    return bool(results) and isinstance(results[0], Exception) and not isinstance(
        results[0], RolledBackError
    )


def encode_leader_info(address: str, session_id: str) -> bytes:
    return json.dumps({"address": address, "session_id": session_id}).encode()


def decode_leader_info(data: bytes | None) -> tuple[str | None, str | None]:
    if not data:
        return None, None
    try:
        info = json.loads(data)
        return str(info["address"]), str(info["session_id"])
    except (ValueError, KeyError, TypeError):
        return None, None


class ZooKeeperLeaderElectionService(LeaderElectionService):
    """One election. ``publish`` (component id -> address) makes it the election of a whole
    process: one latch (``latch_path``), and on confirmation every named component's
    ``connection_info`` is written with its own address in one transaction."""

    def __init__(
        self,
        services: ZooKeeperHaServices,
        component_id: str,
        latch_path: str | None = None,
        publish: Mapping[str, str] | None = None,
    ) -> None:
        self._services = services
        self._client = services.client
        base = f"{services.root}/leader/{component_id}"
        self.latch_path = latch_path or f"{base}/latch"
        self.info_path = f"{base}/connection_info"
        self._publish = dict(publish) if publish is not None else None
        self.fsm = lm.LeadershipStateMachine()
        self._contender: LeaderContender | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._mutex = threading.Lock()
        self._relinquish = threading.Event()
        self._stopping = False
        self._lock: Lock | None = None
        self._latch_node: str | None = None  # full path of the node that holds the latch
        self._token: object | None = None
        self._tasks: set[asyncio.Future[Any]] = set()

    # -------------------------------------------------------------- API

    def start(self, contender: LeaderContender) -> None:
        self._loop = asyncio.get_running_loop()
        self._contender = contender
        self._services._add_state_listener(self._on_state)
        self._thread = threading.Thread(
            target=self._latch_loop, name=f"ha-latch-{self.latch_path}", daemon=True
        )
        self._thread.start()

    def confirm_leadership(self, session_id: str, address: str) -> None:
        self._handle(lm.Confirmed(session_id, address))

    def has_leadership(self, session_id: str) -> bool:
        return self.fsm.has_leadership(session_id)

    @property
    def leader_node(self) -> str | None:
        """The latch node this contender holds (writes guarded by leadership check it in
        the same transaction), or None when not leading."""
        return self._latch_node

    def _targets(self, session_id: str, address: str) -> list[tuple[str, bytes]]:
        if self._publish is None:
            return [(self.info_path, encode_leader_info(address, session_id))]
        root = f"{self._services.root}/leader"
        return [
            (f"{root}/{component}/connection_info", encode_leader_info(addr, session_id))
            for component, addr in self._publish.items()
        ]

    async def stop(self) -> None:
        if self._loop is None:
            return
        self._services._remove_state_listener(self._on_state)
        self._handle(lm.Stop())
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join, 10.0)

    # -------------------------------------------------------------- loop side

    def _post(self, event: lm.Event) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._handle, event)

    def _on_state(self, state: str) -> None:  # kazoo thread
        if state == KazooState.SUSPENDED:
            self._post(lm.Suspended())
        elif state == KazooState.LOST:
            self._post(lm.Lost())
        else:
            self._post(lm.Reconnected())

    def _on_granted(self, token: object) -> None:
        if token is self._token:
            self._handle(lm.Granted())

    def _handle(self, event: lm.Event) -> None:
        assert self._loop is not None
        for action in self.fsm.handle(event):
            self._execute(action)

    def _execute(self, action: lm.Action) -> None:
        assert self._loop is not None and self._contender is not None
        if isinstance(action, lm.GrantLeadership):
            self._contender.grant_leadership(action.session_id)
        elif isinstance(action, lm.RevokeLeadership):
            self._contender.revoke_leadership()
        elif isinstance(action, lm.Publish):
            self._background(self._publish_sync, action.session_id, action.address, self._latch_node)
        elif isinstance(action, lm.Unpublish):
            self._background(self._unpublish_sync, action.session_id)
        elif isinstance(action, lm.ArmSuspendTimer):
            bound = self._services.suspend_bound
            self._loop.call_later(bound, self._handle, lm.SuspendTimeout(action.epoch))
        elif isinstance(action, lm.Rejoin):
            with self._mutex:
                self._token = None
                self._relinquish.set()
        elif isinstance(action, lm.Leave):
            with self._mutex:
                self._stopping = True
                self._token = None
                self._relinquish.set()
                if self._lock is not None:
                    self._lock.cancel()

    def _background(self, fn: Callable[..., None], *args: Any) -> None:
        assert self._loop is not None
        fut = self._loop.run_in_executor(None, fn, *args)
        self._tasks.add(fut)

        def done(f: asyncio.Future[Any]) -> None:
            self._tasks.discard(f)
            if not f.cancelled() and f.exception() is not None:
                log.warning("leader information update of %s failed: %r", self.info_path, f.exception())

        fut.add_done_callback(done)

    # -------------------------------------------------------------- kazoo side

    def _latch_loop(self) -> None:
        while True:
            with self._mutex:
                if self._stopping:
                    return
                lock = self._lock = Lock(self._client, self.latch_path)
                # kazoo's default backs off to 60 s between retries; a contender that was
                # cut off must be back in the election soon after the connection returns
                lock._retry = KazooRetry(max_tries=None, delay=0.1, max_delay=1.0, sleep_func=time.sleep)
            try:
                acquired = lock.acquire()
            except CancelledError:
                acquired = False
            except KazooException as e:
                if not self._services.running:
                    return
                log.warning("latch %s: %r; retrying", self.latch_path, e)
                self._relinquish.wait(0.5)
                continue
            if acquired:
                node = f"{self.latch_path}/{lock.node}"
                token = object()
                with self._mutex:
                    if not self._relinquish.is_set() and not self._stopping:
                        self._latch_node = node
                        self._token = token
                        if self._loop is not None:
                            self._loop.call_soon_threadsafe(self._on_granted, token)
                with contextlib.suppress(KazooException):
                    if self._client.exists(node, watch=self._latch_node_watch(token)) is None:
                        # gone before the watch was set (deleted, or the session expired)
                        if token is self._token:
                            self._post(lm.Revoked())
                self._relinquish.wait()
                self._delete_latch_node(node)
            with self._mutex:
                self._relinquish.clear()
                self._latch_node = None

    def _latch_node_watch(self, token: object) -> Callable[[WatchedEvent], None]:
        def watch(event: WatchedEvent) -> None:
            if event.type == EventType.DELETED and token is self._token:
                self._post(lm.Revoked())

        return watch

    def _delete_latch_node(self, node: str) -> None:
        """Give the latch up; retry while the session may still hold the node."""
        while True:
            try:
                self._client.delete(node)
                return
            except NoNodeError:
                return
            except KazooException:
                if self._client.state == KazooState.LOST or not self._services.running:
                    return  # the session (and with it the node) is gone
                threading.Event().wait(0.2)

    def _publish_sync(self, session_id: str, address: str, latch_node: str | None) -> None:
        if latch_node is None:
            return
        client = self._client
        targets = self._targets(session_id, address)
        for path, _ in targets:
            client.ensure_path(path.rsplit("/", 1)[0])
        for _ in range(5):
            if self.fsm.session_id != session_id:
                return  # superseded (a hint only: the transaction's latch check is the guard)
            my_session = client.client_id[0] if client.client_id else None
            current: list[tuple[bytes | None, Any]] = []
            for path, _ in targets:
                try:
                    current.append(client.get(path))
                except NoNodeError:
                    current.append((None, None))
            if all(
                stat is not None and stat.ephemeralOwner == my_session and data == want
                for (data, stat), (_, want) in zip(current, targets, strict=True)
            ):
                return
            tx = client.transaction()
            tx.check(latch_node, 0)
            for (path, data), (_, stat) in zip(targets, current, strict=True):
                if stat is not None:
                    tx.delete(path, stat.version)
                tx.create(path, data, ephemeral=True)
            results = tx.commit()
            if not any(isinstance(r, Exception) for r in results):
                return
            if leader_check_failed(results):
                return  # our latch node is gone: no longer leader, never publish
        raise HighAvailabilityError(f"could not publish leader information at {targets[0][0]}")

    def _unpublish_sync(self, session_id: str) -> None:
        client = self._client
        for path, _ in self._targets(session_id, ""):
            try:
                data, stat = client.get(path)
            except NoNodeError:
                continue
            _, sid = decode_leader_info(data)
            if sid == session_id and client.client_id and stat.ephemeralOwner == client.client_id[0]:
                with contextlib.suppress(NoNodeError):
                    client.delete(path, stat.version)


class ZooKeeperLeaderRetrievalService(LeaderRetrievalService):
    def __init__(self, services: ZooKeeperHaServices, component_id: str) -> None:
        self._services = services
        self._client = services.client
        self.info_path = f"{services.root}/leader/{component_id}/connection_info"
        self._listener: LeaderRetrievalListener | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._last: tuple[str | None, str | None] | None = None
        self._stopped = False

    def start(self, listener: LeaderRetrievalListener) -> None:
        self._loop = asyncio.get_running_loop()
        self._listener = listener
        self._services._add_state_listener(self._on_state)
        DataWatch(self._client, self.info_path, self._on_data)

    async def stop(self) -> None:
        self._stopped = True
        self._services._remove_state_listener(self._on_state)

    def _post(self, info: tuple[str | None, str | None], force: bool) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._notify, info, force)

    def _on_data(self, data: bytes | None, stat: Any, event: Any = None) -> bool | None:  # kazoo thread
        if self._stopped:
            return False
        self._post(decode_leader_info(data), False)
        return None

    def _on_state(self, state: str) -> None:  # kazoo thread
        if state == KazooState.SUSPENDED:
            if not self._services.tolerate_suspended_connections:
                self._post((None, None), False)
        elif state == KazooState.LOST:
            self._post((None, None), False)
        else:
            # reconnected: tell the listener again even if nothing changed (F4)
            def reread() -> None:
                try:
                    data, _ = self._client.get(self.info_path)
                except NoNodeError:
                    data = None
                except KazooException:
                    return
                self._post(decode_leader_info(data), True)

            self._client.handler.spawn(reread)

    def _notify(self, info: tuple[str | None, str | None], force: bool) -> None:
        if self._stopped or self._listener is None:
            return
        if info == self._last and not force:
            return
        self._last = info
        self._listener.notify_leader_address(*info)


class ZooKeeperJobGraphStore(JobGraphStore):
    def __init__(self, services: ZooKeeperHaServices) -> None:
        self._client = services.client
        self._storage = services.storage
        self.path = f"{services.root}/jobgraphs"

    def _lock_path(self, job_id: str) -> str:
        return f"{self.path}/{job_id}/locks/{self._client.client_id[0]:x}"

    def _lock(self, job_id: str) -> None:
        with contextlib.suppress(NodeExistsError):
            self._client.create(self._lock_path(job_id), b"", ephemeral=True, makepath=True)

    def _put(self, job_id: str, payload: bytes, leader_node: str | None = None) -> None:
        node = f"{self.path}/{job_id}"
        blob = self._storage.store("submittedJobGraph", payload)
        pointer = json.dumps({"path": blob}).encode()
        self._client.ensure_path(self.path)
        for _ in range(5):
            try:
                old, stat = self._client.get(node)
            except NoNodeError:
                old, stat = None, None
            tx = self._client.transaction()
            if leader_node is not None:
                tx.check(leader_node, 0)
            if stat is None:
                tx.create(node, pointer)
            else:
                tx.set_data(node, pointer, version=stat.version)
            results = tx.commit()
            if not any(isinstance(r, Exception) for r in results):
                old_path = json.loads(old).get("path") if old else None
                if old_path and old_path != blob:
                    self._storage.discard(old_path)
                self._lock(job_id)
                return
            if leader_node is not None and leader_check_failed(results):
                self._storage.discard(blob)
                raise LeadershipLostError(
                    f"job {job_id} was not stored: this JobManager is no longer the leader; retry"
                )
        self._storage.discard(blob)
        raise HighAvailabilityError(f"could not store job graph {job_id} (concurrent modification)")

    def _recover(self, job_id: str) -> bytes | None:
        try:
            data, _ = self._client.get(f"{self.path}/{job_id}")
        except NoNodeError:
            return None
        payload = self._storage.retrieve(json.loads(data)["path"])
        self._lock(job_id)
        return payload

    def _ids(self) -> list[str]:
        try:
            return sorted(self._client.get_children(self.path))
        except NoNodeError:
            return []

    def _release(self, job_id: str) -> None:
        with contextlib.suppress(NoNodeError):
            self._client.delete(self._lock_path(job_id))

    def _remove(self, job_id: str) -> None:
        node = f"{self.path}/{job_id}"
        self._release(job_id)
        try:
            data, _ = self._client.get(node)
        except NoNodeError:
            return
        try:
            others = self._client.get_children(f"{node}/locks")
        except NoNodeError:
            others = []
        if others:
            raise HighAvailabilityError(f"job graph {job_id} is still locked by {others}; retry later")
        try:
            self._client.delete(node, recursive=True)
        except NotEmptyError as e:  # a lock appeared meanwhile
            raise HighAvailabilityError(f"job graph {job_id} was locked concurrently") from e
        blob = json.loads(data).get("path") if data else None
        if blob:
            self._storage.discard(blob)

    async def put_job_graph(self, job_id: str, payload: bytes, *, leader_node: str | None = None) -> None:
        await asyncio.to_thread(self._put, job_id, payload, leader_node)

    async def recover_job_graph(self, job_id: str) -> bytes | None:
        return await asyncio.to_thread(self._recover, job_id)

    async def get_job_ids(self) -> list[str]:
        return await asyncio.to_thread(self._ids)

    async def remove_job_graph(self, job_id: str) -> None:
        await asyncio.to_thread(self._remove, job_id)

    async def release_job_graph(self, job_id: str) -> None:
        await asyncio.to_thread(self._release, job_id)


class ZooKeeperCheckpointIDCounter(CheckpointIDCounter):
    def __init__(self, services: ZooKeeperHaServices, job_id: str) -> None:
        self._client = services.client
        self.path = f"{services.root}/jobs/{job_id}/checkpoint_id_counter"
        self._counter = Counter(self._client, self.path, default=1)
        # kazoo's Counter keeps pre_value on the instance: one increment at a time per
        # instance (other processes are handled by the Counter's versioned writes)
        self._mutex = threading.Lock()

    def _get_and_increment(self) -> int:
        with self._mutex:
            counter = self._counter
            counter += 1
            return int(counter.pre_value)

    async def get_and_increment(self) -> int:
        return await asyncio.to_thread(self._get_and_increment)

    async def get(self) -> int:
        return int(await asyncio.to_thread(lambda: self._counter.value))

    async def set_count(self, value: int) -> None:
        def set_sync() -> None:
            self._counter.value  # noqa: B018  (creates the node with the default)
            self._client.set(self.path, repr(int(value)).encode("ascii"))

        await asyncio.to_thread(set_sync)

    def _advance_to(self, value: int) -> None:
        with self._mutex:
            self._counter.value  # noqa: B018  (creates the node with the default)
            while True:
                data, stat = self._client.get(self.path)
                current = int(data.decode("ascii")) if data else 1
                if current >= value:
                    return
                try:
                    self._client.set(self.path, repr(int(value)).encode("ascii"), version=stat.version)
                    return
                except BadVersionError:
                    continue

    async def advance_to(self, value: int) -> None:
        await asyncio.to_thread(self._advance_to, value)

    async def shutdown(self, globally_terminal: bool) -> None:
        if globally_terminal:

            def delete() -> None:
                with contextlib.suppress(NoNodeError):
                    self._client.delete(self.path)

            await asyncio.to_thread(delete)


class ZooKeeperCompletedCheckpointStore(CompletedCheckpointStore):
    """Pointers to a job's completed checkpoints (the data stays in the checkpoint directory)."""

    def __init__(self, services: ZooKeeperHaServices, job_id: str, max_retained: int = 3) -> None:
        self._client = services.client
        self.job_path = f"{services.root}/jobs/{job_id}"
        self.path = f"{self.job_path}/checkpoints"
        self.max_retained = max_retained

    def _add(self, pointer: CompletedCheckpointPointer, leader_node: str | None) -> None:
        self._client.ensure_path(self.path)
        node = f"{self.path}/{pointer.checkpoint_id:019d}"
        data = json.dumps({"path": pointer.external_path, "type": pointer.checkpoint_type}).encode()
        tx = self._client.transaction()
        if leader_node is not None:
            tx.check(leader_node, 0)
        tx.create(node, data)
        results = tx.commit()
        if leader_node is not None and leader_check_failed(results):
            raise LeadershipLostError(
                f"checkpoint {pointer.checkpoint_id} not recorded: this JobManager is no longer the leader"
            )
        if isinstance(results[-1], NodeExistsError):
            self._client.set(node, data)
        elif isinstance(results[-1], Exception):
            raise HighAvailabilityError(
                f"could not record checkpoint {pointer.checkpoint_id}: {results[-1]!r}"
            )
        children = sorted(self._client.get_children(self.path))
        for old in children[: max(0, len(children) - self.max_retained)]:
            with contextlib.suppress(NoNodeError):
                self._client.delete(f"{self.path}/{old}")

    def _get_all(self) -> list[CompletedCheckpointPointer]:
        try:
            children = self._client.get_children(self.path)
        except NoNodeError:
            return []
        out = []
        for name in children:
            try:
                data, _ = self._client.get(f"{self.path}/{name}")
                info = json.loads(data)
                out.append(
                    CompletedCheckpointPointer(int(name), str(info["path"]), str(info.get("type", "")))
                )
            except (NoNodeError, ValueError, KeyError, TypeError):
                continue
        return sorted(out, key=lambda p: p.checkpoint_id)

    def _remove_all(self) -> None:
        with contextlib.suppress(NoNodeError):
            self._client.delete(self.job_path, recursive=True)

    async def add_checkpoint(
        self, pointer: CompletedCheckpointPointer, *, leader_node: str | None = None
    ) -> None:
        await asyncio.to_thread(self._add, pointer, leader_node)

    async def get_all_checkpoints(self) -> list[CompletedCheckpointPointer]:
        return await asyncio.to_thread(self._get_all)

    async def shutdown(self, globally_terminal: bool) -> None:
        if globally_terminal:
            await asyncio.to_thread(self._remove_all)


class ZooKeeperHaServices(HighAvailabilityServices):
    """Create with the parameters, then ``await start()`` on the loop the services serve."""

    def __init__(
        self,
        quorum: str,
        cluster_id: str = "/default",
        storage_dir: str = "file:///tmp/flott-ha",
        root: str = "/flott",
        session_timeout: float = 60.0,
        connection_timeout: float = 15.0,
        suspend_bound: float | None = None,
        tolerate_suspended_connections: bool = False,
        job_result_store: JobResultStore | None = None,
    ) -> None:
        self.quorum = quorum
        self.root = "/" + "/".join(p for p in (root + "/" + cluster_id).split("/") if p)
        self.session_timeout = session_timeout
        self.connection_timeout = connection_timeout
        # A suspended connection revokes leadership after this bound. Kazoo pings after a
        # third of the session timeout T of silence and declares the connection SUSPENDED
        # when that ping is unanswered another third later, i.e. up to ~2T/3 after the
        # last contact; the server may expire the session (and elect another leader) at T.
        # T/4 keeps the revocation before that point, so a cut-off leader never overlaps.
        self.suspend_bound = session_timeout / 4 if suspend_bound is None else suspend_bound
        self.tolerate_suspended_connections = tolerate_suspended_connections
        self.client = KazooClient(
            hosts=quorum,
            timeout=session_timeout,
            connection_retry={"max_tries": -1, "delay": 0.1, "max_delay": 1.0},
            command_retry={"max_tries": -1, "delay": 0.1, "max_delay": 1.0},
        )
        cluster = cluster_id.strip("/") or "default"
        self.storage = StateStorage(f"{storage_dir.rstrip('/')}/{cluster}")
        self._job_result_store = job_result_store or FileSystemJobResultStore(
            f"{storage_dir.rstrip('/')}/job-result-store/{cluster}"
        )
        self._state_listeners: list[Callable[[str], None]] = []
        self._listeners_lock = threading.Lock()
        self._counters: dict[str, ZooKeeperCheckpointIDCounter] = {}
        self.client.add_listener(self._on_state)
        self.running = False

    async def start(self) -> ZooKeeperHaServices:
        await asyncio.to_thread(self.client.start, self.connection_timeout)
        self.running = True
        await asyncio.to_thread(self.client.ensure_path, self.root)
        return self

    def _on_state(self, state: str) -> None:  # kazoo connection thread: never block here
        with self._listeners_lock:
            listeners = list(self._state_listeners)
        for listener in listeners:
            listener(state)

    def _add_state_listener(self, fn: Callable[[str], None]) -> None:
        with self._listeners_lock:
            self._state_listeners.append(fn)

    def _remove_state_listener(self, fn: Callable[[str], None]) -> None:
        with self._listeners_lock, contextlib.suppress(ValueError):
            self._state_listeners.remove(fn)

    def get_leader_election_service(self, component_id: str) -> LeaderElectionService:
        return ZooKeeperLeaderElectionService(self, component_id)

    def get_process_leader_election_service(
        self, addresses: Mapping[str, str]
    ) -> ZooKeeperLeaderElectionService:
        """The one election of a JobManager process (latch ``leader/latch``): on confirmation
        every component in ``addresses`` is published with its own address."""
        return ZooKeeperLeaderElectionService(
            self, "process", latch_path=f"{self.root}/leader/latch", publish=addresses
        )

    def get_leader_retrieval_service(
        self, component_id: str, default_address: str | None = None
    ) -> LeaderRetrievalService:
        return ZooKeeperLeaderRetrievalService(self, component_id)

    def get_job_graph_store(self) -> JobGraphStore:
        return ZooKeeperJobGraphStore(self)

    def get_job_result_store(self) -> JobResultStore:
        return self._job_result_store

    def get_completed_checkpoint_store(self, job_id: str) -> CompletedCheckpointStore:
        return ZooKeeperCompletedCheckpointStore(self, job_id)

    def get_checkpoint_id_counter(self, job_id: str) -> CheckpointIDCounter:
        if job_id not in self._counters:
            self._counters[job_id] = ZooKeeperCheckpointIDCounter(self, job_id)
        return self._counters[job_id]

    async def close(self) -> None:
        self.running = False

        def stop() -> None:
            self.client.stop()
            self.client.close()

        await asyncio.to_thread(stop)

    async def close_and_cleanup_all_data(self) -> None:
        def cleanup() -> None:
            with contextlib.suppress(NoNodeError):
                self.client.delete(self.root, recursive=True)

        await asyncio.to_thread(cleanup)
        await self.close()
