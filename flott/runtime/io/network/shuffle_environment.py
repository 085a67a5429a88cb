"""The data-exchange service of one TaskExecutor (Flink: NettyShuffleEnvironment).

Owns the data server (accepting partition requests from consumers elsewhere),
the registry of this process's result partitions, the shared client
connections to other TaskExecutors, and the input gates handed to tasks.

Threading: ``start``/``close`` run on the TaskExecutor's event loop;
``create_result_partition``, ``create_input_gate`` and the ``release_*``
methods may be called from any thread (task threads, RPC handlers). All socket
I/O happens on the loop; task threads only touch locks.

With ``security.ssl.internal.enabled`` the data server and the connections to
producers use mutually authenticated TLS (the TaskExecutor hands in the
contexts of :mod:`flott.ssl_context`); the frames on top are the same.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Coroutine, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from flott.errors import DataExchangeError
from flott.runtime.io.network.blocking_partition import BlockingResultPartition
from flott.runtime.io.network.config import InputChannelSpec, NetworkConfig, parse_address
from flott.runtime.io.network.input_gate import (
    InputChannel,
    LocalInputChannel,
    RemoteInputChannel,
    SingleInputGate,
)
from flott.runtime.io.network.partition import ResultPartition
from flott.runtime.io.network.transport import PartitionRequestClient, PartitionRequestServerConnection

if TYPE_CHECKING:
    from flott.ssl_context import InternalSsl

_MAX_REMEMBERED_GONE = 4096
"""How many finished partition ids are remembered to answer late requests at once (not after a timeout)."""


@dataclass
class NetworkMetrics:
    """Counters of remote traffic. Written on the event loop only, read from anywhere."""

    buffers_sent: int = 0
    """Frames carrying buffers, events or end markers sent to remote consumers."""
    bytes_sent: int = 0
    buffers_received: int = 0
    """Buffer and event frames received from remote producers."""
    bytes_received: int = 0
    connections_opened: int = 0
    """Client connections opened to producer TaskExecutors."""


class ShuffleEnvironment:
    """Result partitions, input gates and the TCP data plane of one TaskExecutor."""

    def __init__(
        self,
        config: NetworkConfig | None = None,
        *,
        loop: asyncio.AbstractEventLoop | None = None,
        tls: InternalSsl | None = None,
    ) -> None:
        """``tls``: data connections over mutually authenticated TLS (``security.ssl.internal.*``),
        both the server's and the ones opened to producers; None is plain TCP."""
        self.config = config if config is not None else NetworkConfig()
        self._tls = tls
        self._loop = loop
        self._address: str | None = None
        self._server: asyncio.Server | None = None
        self._closed = False
        self.metrics = NetworkMetrics()
        self._registry_lock = threading.Lock()
        self._partitions: dict[str, ResultPartition] = {}
        self._gone: OrderedDict[str, str] = OrderedDict()
        self._gates: set[SingleInputGate] = set()
        # event-loop-only state
        self._waiters: dict[str, list[asyncio.Future[None]]] = {}
        self._clients: dict[str, asyncio.Task[PartitionRequestClient]] = {}
        self._live_clients: set[PartitionRequestClient] = set()
        self._server_connections: set[PartitionRequestServerConnection] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._receiver_ids = itertools.count(1)

    # ------------------------------------------------------------------ lifecycle (event loop)

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            raise DataExchangeError("shuffle environment not started")
        return self._loop

    @property
    def address(self) -> str:
        """``host:port`` other TaskExecutors connect to for data."""
        if self._address is None:
            raise DataExchangeError("shuffle environment not started")
        return self._address

    async def start(self) -> str:
        """Open the data server; returns the data address to advertise."""
        if self._address is not None:
            return self._address
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        cfg = self.config
        try:
            tls = self._tls
            self._server = await self._loop.create_server(
                lambda: PartitionRequestServerConnection(self),
                cfg.bind_host,
                cfg.port,
                reuse_address=True,
                ssl=tls.server if tls is not None else None,
                ssl_handshake_timeout=tls.handshake_timeout_s if tls is not None else None,
            )
        except OSError as e:
            raise DataExchangeError(
                f"cannot listen for data connections on {cfg.bind_host}:{cfg.port}: {e}"
            ) from e
        port = self._server.sockets[0].getsockname()[1]
        host = cfg.advertised_host
        self._address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        return self._address

    async def close(self) -> None:
        """Stop serving, release every partition, close every gate and connection."""
        if self._closed:
            return
        self._closed = True
        if self._server is not None:
            self._server.close()
        with self._registry_lock:
            partitions = list(self._partitions.values())
            gates = list(self._gates)
        for partition in partitions:
            partition.release()
        for gate in gates:
            gate.close()
        for conn in list(self._server_connections):
            conn.close()
        for client in list(self._live_clients):
            client.close()
        for task in list(self._tasks) + list(self._clients.values()):
            task.cancel()
        for waiters in self._waiters.values():
            for fut in waiters:
                if not fut.done():
                    fut.cancel()
        pending = list(self._tasks) + list(self._clients.values())
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
        # let transports run their connection_lost callbacks before the loop may stop
        await asyncio.sleep(0)

    @property
    def is_closed(self) -> bool:
        return self._closed

    # ------------------------------------------------------------------ producer side (any thread)

    def create_result_partition(
        self, partition_id: str, num_subpartitions: int, blocking: bool = False
    ) -> ResultPartition:
        """Register a partition that consumers (local or remote) may request right away.

        ``blocking``: it keeps the producer's whole output for consumers deployed after the
        producer finished (:mod:`flott.runtime.io.network.blocking_partition`)."""
        if self._closed:
            raise DataExchangeError("shuffle environment is closed")
        partition: ResultPartition
        if blocking:
            cfg = self.config
            partition = BlockingResultPartition(
                partition_id,
                num_subpartitions,
                cfg.blocking_partition_memory_bytes,
                cfg.spill_dir or os.path.join(tempfile.gettempdir(), "flott-blocking"),
                on_done=self._on_partition_done,
            )
        else:
            partition = ResultPartition(
                partition_id,
                num_subpartitions,
                self.config.buffers_per_channel,
                on_done=self._on_partition_done,
            )
        with self._registry_lock:
            if partition_id in self._partitions:
                raise DataExchangeError(f"result partition {partition_id} is already registered")
            self._gone.pop(partition_id, None)
            self._partitions[partition_id] = partition
        loop = self._loop
        if loop is not None:
            try:
                loop.call_soon_threadsafe(self._wake_waiters, partition_id)
            except RuntimeError:
                pass
        return partition

    def get_result_partition(self, partition_id: str) -> ResultPartition | None:
        with self._registry_lock:
            return self._partitions.get(partition_id)

    @property
    def partition_ids(self) -> list[str]:
        with self._registry_lock:
            return list(self._partitions)

    def release_partition(self, partition_id: str) -> bool:
        """Release one partition (cancel / failover); False if it is not (or no longer) here."""
        partition = self.get_result_partition(partition_id)
        if partition is None:
            return False
        partition.release()
        return True

    def release_partitions(self, ids_or_prefix: str | Iterable[str]) -> int:
        """Release partitions by id, or (given one string) every partition whose id starts with it.

        The JobMaster builds partition ids starting with the job id, so passing a
        job id releases all of that job's partitions on this TaskExecutor.
        """
        with self._registry_lock:
            if isinstance(ids_or_prefix, str):
                victims = [p for pid, p in self._partitions.items() if pid.startswith(ids_or_prefix)]
            else:
                victims = [p for pid in ids_or_prefix if (p := self._partitions.get(pid)) is not None]
        for partition in victims:
            partition.release()
        return len(victims)

    def _on_partition_done(self, partition: ResultPartition, reason: str) -> None:
        """Fully consumed or released: forget it, remembering why for late requests."""
        with self._registry_lock:
            if self._partitions.get(partition.partition_id) is partition:
                del self._partitions[partition.partition_id]
            self._gone[partition.partition_id] = reason
            while len(self._gone) > _MAX_REMEMBERED_GONE:
                self._gone.popitem(last=False)

    # ------------------------------------------------------------------ consumer side (any thread)

    def create_input_gate(self, channels: Sequence[InputChannelSpec]) -> SingleInputGate:
        """Build a gate over ``channels`` (index = position); partitions are requested right away.

        Channels whose producer is this environment are local; the others
        share one connection per producer TaskExecutor. Connecting and waiting
        for not-yet-registered partitions happen asynchronously on the loop;
        failures surface from the gate's ``poll``.
        """
        if self._closed:
            raise DataExchangeError("shuffle environment is closed")
        loop = self.loop
        own = self.address
        gate = SingleInputGate(channels, on_close=self._forget_gate)
        built: list[InputChannel] = []
        remote: list[RemoteInputChannel] = []
        pending_local: list[LocalInputChannel] = []
        for index, spec in enumerate(channels):
            local_partition = self.get_result_partition(spec.partition_id)
            if spec.producer_address == own or local_partition is not None:
                local = LocalInputChannel(gate, index, spec)
                built.append(local)
                if local_partition is not None:
                    try:
                        local.attach(local_partition.subpartition(spec.subpartition_index))
                    except DataExchangeError as e:
                        local.fail(str(e))
                else:
                    pending_local.append(local)
            else:
                channel = RemoteInputChannel(
                    gate, index, spec, next(self._receiver_ids), self.config.buffers_per_channel, loop
                )
                built.append(channel)
                remote.append(channel)
        gate._set_channels(built)
        with self._registry_lock:
            self._gates.add(gate)
        if remote or pending_local:
            loop.call_soon_threadsafe(self._start_requests, remote, pending_local)
        return gate

    def _forget_gate(self, gate: SingleInputGate) -> None:
        with self._registry_lock:
            self._gates.discard(gate)

    @property
    def num_gates(self) -> int:
        with self._registry_lock:
            return len(self._gates)

    # ------------------------------------------------------------------ event loop internals

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        if self._closed:
            coro.close()
            return
        task = self.loop.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _start_requests(
        self, remote: list[RemoteInputChannel], pending_local: list[LocalInputChannel]
    ) -> None:
        for local in pending_local:
            self._spawn(self._attach_local_when_registered(local))
        for channel in remote:
            self._spawn(self._request_remote(channel))

    async def _attach_local_when_registered(self, channel: LocalInputChannel) -> None:
        spec = channel.spec
        try:
            partition = await self._await_partition(spec.partition_id)
            channel.attach(partition.subpartition(spec.subpartition_index))
        except DataExchangeError as e:
            channel.fail(str(e))

    async def _request_remote(self, channel: RemoteInputChannel) -> None:
        address = channel.spec.producer_address
        while not channel.released:
            try:
                client = await self._client_for(address)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                channel.on_error(f"cannot connect to producer {address} ({channel.describe()}): {e}")
                return
            if client.closed:  # closed while idle between connect and this request: reconnect
                continue
            if not channel.released:
                client.request(channel)
            return

    async def _client_for(self, address: str) -> PartitionRequestClient:
        task = self._clients.get(address)
        if task is None:
            task = self.loop.create_task(self._connect(address))
            self._clients[address] = task
            task.add_done_callback(lambda t: self._drop_failed_connect(address, t))
        return await asyncio.shield(task)

    def _drop_failed_connect(self, address: str, task: asyncio.Task[PartitionRequestClient]) -> None:
        if (task.cancelled() or task.exception() is not None) and self._clients.get(address) is task:
            del self._clients[address]

    async def _connect(self, address: str) -> PartitionRequestClient:
        host, port = parse_address(address)
        tls = self._tls
        try:
            _, client = await asyncio.wait_for(
                self.loop.create_connection(
                    lambda: PartitionRequestClient(self, address),
                    host,
                    port,
                    ssl=tls.client if tls is not None else None,
                    ssl_handshake_timeout=tls.handshake_timeout_s if tls is not None else None,
                ),
                self.config.connect_timeout_s,
            )
        except TimeoutError as e:
            raise DataExchangeError(f"timed out after {self.config.connect_timeout_s}s") from e
        self._live_clients.add(client)
        self.metrics.connections_opened += 1
        return client

    def _forget_client(self, client: PartitionRequestClient) -> None:
        self._live_clients.discard(client)
        task = self._clients.get(client.address)
        if task is not None and task.done() and not task.cancelled() and task.exception() is None:
            if task.result() is client:
                del self._clients[client.address]

    async def _await_partition(self, partition_id: str) -> ResultPartition:
        """The registered partition, waiting up to ``request_timeout_s`` for its producer to create it."""
        loop = self.loop
        timeout = self.config.request_timeout_s
        deadline = loop.time() + timeout
        while True:
            with self._registry_lock:
                partition = self._partitions.get(partition_id)
                gone = self._gone.get(partition_id)
            if partition is not None:
                return partition
            if gone is not None:
                raise DataExchangeError(
                    f"result partition {partition_id} at {self._address} was already {gone}"
                )
            remaining = deadline - loop.time()
            if remaining <= 0 or self._closed:
                raise DataExchangeError(
                    f"result partition {partition_id} was not registered at producer {self._address} "
                    f"within {timeout}s"
                )
            fut: asyncio.Future[None] = loop.create_future()
            waiters = self._waiters.setdefault(partition_id, [])
            waiters.append(fut)
            try:
                await asyncio.wait_for(fut, remaining)
            except TimeoutError:
                pass
            finally:
                if fut in waiters:
                    waiters.remove(fut)
                if not waiters and self._waiters.get(partition_id) is waiters:
                    del self._waiters[partition_id]

    def _wake_waiters(self, partition_id: str) -> None:
        for fut in self._waiters.pop(partition_id, []):
            if not fut.done():
                fut.set_result(None)

    # ------------------------------------------------------------------ metrics

    def snapshot_metrics(self) -> dict[str, Any]:
        """Counters plus per-partition queue lengths (for metric reporters and backpressure sampling)."""
        with self._registry_lock:
            partitions = list(self._partitions.values())
            num_gates = len(self._gates)
        out: dict[str, Any] = asdict(self.metrics)
        out["num_partitions"] = len(partitions)
        out["num_gates"] = num_gates
        out["num_connections"] = len(self._live_clients) + len(self._server_connections)
        out["queued_buffers"] = {p.partition_id: p.num_queued_buffers for p in partitions}
        out["back_pressured"] = {p.partition_id: p.is_back_pressured for p in partitions}
        return out
