"""The network half of the exchange: asyncio protocols on the TaskExecutor's event loop.

Producer side (Flink: PartitionRequestServerHandler + CreditBasedSequenceNumberingViewReader):
:class:`PartitionRequestServerConnection` accepts partition requests and
creates one :class:`RemoteSubpartitionReader` per requested subpartition. A
reader sends buffers only while it holds credit; every buffer it takes out of
the subpartition frees a slot for the blocked producer.

Consumer side (Flink: PartitionRequestClient + CreditBasedPartitionRequestClientHandler):
:class:`PartitionRequestClient` is one TCP connection to one producer
TaskExecutor, shared by all remote channels of this process that read from
it; it routes frames to channels by receiver id and closes itself when its
last channel ended.

Everything here runs on the event loop only; the task threads meet it through
the subpartition lock (producer) and the channel lock (consumer).
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from flott.errors import DataExchangeError
from flott.runtime.io.network import protocol
from flott.runtime.io.network.api import EndOfPartition
from flott.runtime.io.network.input_gate import RemoteInputChannel
from flott.runtime.io.network.partition import PriorityEvent, ResultSubpartition

if TYPE_CHECKING:
    from flott.runtime.io.network.shuffle_environment import ShuffleEnvironment


class SerializedBuffer:
    """A batch already turned into a complete BUFFER frame on the producer thread."""

    __slots__ = ("frame",)

    def __init__(self, frame: bytes) -> None:
        self.frame = frame


def _enable_keepalive(transport: asyncio.BaseTransport) -> None:
    """Detect a peer host that vanished without FIN (power loss, partition) within about a minute.

    Idle data channels (a source waiting for input) would otherwise never
    notice; the JobMaster's heartbeats catch it too, but later.
    """
    sock = transport.get_extra_info("socket")
    if sock is None:
        return
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        if hasattr(socket, "TCP_KEEPIDLE"):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 30)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, 10)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT, 3)
    except OSError:
        pass


def _peer_name(transport: asyncio.BaseTransport) -> str:
    peer = transport.get_extra_info("peername")
    if isinstance(peer, tuple) and len(peer) >= 2:
        return f"{peer[0]}:{peer[1]}"
    return "unknown peer"


class RemoteSubpartitionReader:
    """Producer side of one remote channel: drains a subpartition into the socket, within credit."""

    __slots__ = (
        "_conn",
        "_credit",
        "_done",
        "_loop",
        "_sub",
        "partition_id",
        "receiver_id",
        "subpartition_index",
    )

    is_remote = True

    def __init__(
        self,
        conn: PartitionRequestServerConnection,
        receiver_id: int,
        partition_id: str,
        subpartition_index: int,
        initial_credit: int,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self._conn = conn
        self.receiver_id = receiver_id
        self.partition_id = partition_id
        self.subpartition_index = subpartition_index
        self._credit = initial_credit
        self._loop = loop
        self._sub: ResultSubpartition | None = None
        self._done = False

    def describe(self) -> str:
        return f"partition {self.partition_id} subpartition {self.subpartition_index}"

    @property
    def is_done(self) -> bool:
        return self._done

    # ------------------------------------------------------------------ SubpartitionReader (any thread)

    def serialize(self, records: list, encode: Callable[[list], bytes]) -> object:
        return SerializedBuffer(protocol.encode_buffer(self.receiver_id, records, encode))

    def from_payload(self, payload: bytes) -> object:
        header = protocol.HEADER.pack(len(payload), protocol.BUFFER, self.receiver_id)
        return SerializedBuffer(header + payload)

    def notify_data_available(self) -> None:
        try:
            self._loop.call_soon_threadsafe(self.drain)
        except RuntimeError:  # loop closed: the environment is gone, nobody will read
            pass

    def notify_released(self) -> None:
        self.notify_data_available()

    # ------------------------------------------------------------------ event loop

    def attach(self, sub: ResultSubpartition) -> None:
        """Become the subpartition's reader; answers the consumer with an error if refused."""
        if self._done:
            return
        self._sub = sub
        try:
            sub.attach_reader(self)
        except DataExchangeError as e:
            self._sub = None
            self._fail_request(str(e))

    def add_credit(self, credit: int) -> None:
        self._credit += credit
        self.drain()

    def drain(self) -> None:
        """Send as many queued buffers as credit allows (one lock acquisition for all of them)."""
        sub = self._sub
        if sub is None or self._done:
            return
        taken, error = sub.take_many(self._credit)
        if error is not None:
            self._fail_request(error)
            return
        if not taken:
            return
        receiver_id = self.receiver_id
        frames: list[bytes] = []
        priority = 0
        for item in taken:
            kind = type(item)
            if kind is SerializedBuffer:
                frames.append(cast(SerializedBuffer, item).frame)
                continue
            try:
                if kind is PriorityEvent:
                    priority += 1  # needs no credit (see partition.py)
                    event = cast(PriorityEvent, item).event
                    frames.append(protocol.encode_priority_event(receiver_id, event))
                elif kind is list:
                    frames.append(protocol.encode_buffer(receiver_id, cast(list, item)))
                elif kind is EndOfPartition:
                    frames.append(protocol.encode_end_of_partition(receiver_id))
                else:
                    frames.append(protocol.encode_event(receiver_id, item))
            except Exception as e:  # unpicklable record/event queued before the reader attached
                message = f"cannot serialise a buffer of {self.describe()}: {e!r}"
                sub.consumer_gone(message)
                self._fail_request(message)
                return
        self._credit -= len(taken) - priority
        sub.num_bytes_sent += sum(map(len, frames))
        self._conn.write_frames(frames)

    def _fail_request(self, message: str) -> None:
        self._done = True
        self._conn.forget(self.receiver_id, self)
        self._conn.send_error(self.receiver_id, message)

    def on_eop_ack(self) -> None:
        self._done = True
        sub = self._sub
        if sub is not None:
            sub.mark_consumed()

    def on_consumer_gone(self, message: str) -> None:
        """CANCEL_REQUEST or connection loss: the producer's emit fails unless already consumed."""
        self._done = True
        sub = self._sub
        if sub is not None:
            sub.consumer_gone(message)


class PartitionRequestServerConnection(asyncio.Protocol):
    """One accepted connection from a consumer TaskExecutor."""

    def __init__(self, env: ShuffleEnvironment) -> None:
        self._env = env
        self._decoder = protocol.FrameDecoder(env.config.max_frame_bytes)
        self._transport: asyncio.Transport | None = None
        self._readers: dict[int, RemoteSubpartitionReader] = {}
        self.peer = "unknown peer"
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)
        self.peer = _peer_name(transport)
        _enable_keepalive(transport)
        self._env._server_connections.add(self)

    def data_received(self, data: bytes) -> None:
        try:
            for msg_type, receiver_id, payload in self._decoder.feed(data):
                if msg_type == protocol.ADD_CREDIT:
                    reader = self._readers.get(receiver_id)
                    if reader is not None:
                        reader.add_credit(protocol.decode_add_credit(payload))
                elif msg_type == protocol.PARTITION_REQUEST:
                    self._on_partition_request(receiver_id, payload)
                elif msg_type == protocol.EOP_ACK:
                    reader = self._readers.pop(receiver_id, None)
                    if reader is not None:
                        reader.on_eop_ack()
                elif msg_type == protocol.CANCEL_REQUEST:
                    reader = self._readers.pop(receiver_id, None)
                    if reader is not None:
                        reader.on_consumer_gone(
                            f"consumer {self.peer} of {reader.describe()} cancelled its request"
                        )
                else:
                    raise DataExchangeError(f"unexpected message type {msg_type} from consumer {self.peer}")
        except DataExchangeError as e:
            self.abort(str(e))

    def _on_partition_request(self, receiver_id: int, payload: memoryview) -> None:
        partition_id, subpartition_index, credit = protocol.decode_partition_request(payload)
        if receiver_id in self._readers:
            raise DataExchangeError(f"consumer {self.peer} reused receiver id {receiver_id}")
        env = self._env
        reader = RemoteSubpartitionReader(
            self, receiver_id, partition_id, subpartition_index, credit, env.loop
        )
        self._readers[receiver_id] = reader
        env._spawn(self._serve(reader))

    async def _serve(self, reader: RemoteSubpartitionReader) -> None:
        try:
            partition = await self._env._await_partition(reader.partition_id)
            sub = partition.subpartition(reader.subpartition_index)
        except DataExchangeError as e:
            if not reader.is_done:
                reader._fail_request(str(e))
            return
        reader.attach(sub)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        readers = list(self._readers.values())
        self._readers.clear()
        why = f": {exc}" if exc else ""
        for reader in readers:
            reader.on_consumer_gone(f"lost connection to consumer {self.peer} of {reader.describe()}{why}")
        self._env._server_connections.discard(self)

    # ------------------------------------------------------------------ used by readers

    def write_frames(self, frames: list[bytes]) -> None:
        transport = self._transport
        if transport is None or transport.is_closing():
            return
        if len(frames) == 1:
            transport.write(frames[0])
        else:
            transport.writelines(frames)
        metrics = self._env.metrics
        metrics.buffers_sent += len(frames)
        metrics.bytes_sent += sum(map(len, frames))

    def send_error(self, receiver_id: int, message: str) -> None:
        transport = self._transport
        if transport is not None and not transport.is_closing():
            transport.write(protocol.encode_error(receiver_id, message))

    def forget(self, receiver_id: int, reader: RemoteSubpartitionReader) -> None:
        if self._readers.get(receiver_id) is reader:
            del self._readers[receiver_id]

    def abort(self, message: str) -> None:
        """Protocol violation: tell the peer why and drop the connection."""
        transport = self._transport
        if transport is not None and not transport.is_closing():
            transport.write(protocol.encode_error(protocol.CONNECTION_RECEIVER_ID, message))
            transport.close()

    def close(self) -> None:
        if self._transport is not None:
            self._transport.abort()


class PartitionRequestClient(asyncio.Protocol):
    """Consumer side: one connection to one producer TaskExecutor, shared by many channels."""

    def __init__(self, env: ShuffleEnvironment, address: str) -> None:
        self._env = env
        self.address = address
        self._decoder = protocol.FrameDecoder(env.config.max_frame_bytes)
        self._transport: asyncio.Transport | None = None
        self._channels: dict[int, RemoteInputChannel] = {}
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)
        _enable_keepalive(transport)

    def request(self, channel: RemoteInputChannel) -> None:
        """Send the partition request of ``channel`` (which is now routed on this connection)."""
        self._channels[channel.receiver_id] = channel
        channel.set_client(self)
        spec = channel.spec
        self._send(
            protocol.encode_partition_request(
                channel.receiver_id, spec.partition_id, spec.subpartition_index, channel.initial_credit
            )
        )

    def _send(self, frame: bytes) -> None:
        transport = self._transport
        if transport is not None and not transport.is_closing():
            transport.write(frame)

    def send_credit(self, receiver_id: int, credit: int) -> None:
        if receiver_id in self._channels:
            self._send(protocol.encode_add_credit(receiver_id, credit))

    def cancel(self, channel: RemoteInputChannel) -> None:
        if self._channels.pop(channel.receiver_id, None) is None:
            return
        self._send(protocol.encode_cancel_request(channel.receiver_id))
        self._close_if_idle()

    def data_received(self, data: bytes) -> None:
        channels = self._channels
        metrics = self._env.metrics
        metrics.bytes_received += len(data)
        try:
            for msg_type, receiver_id, payload in self._decoder.feed(data):
                channel = channels.get(receiver_id)
                if msg_type == protocol.BUFFER or msg_type == protocol.EVENT:
                    metrics.buffers_received += 1
                    if channel is not None:
                        channel.on_frame(msg_type, payload)
                elif msg_type == protocol.PRIORITY_EVENT:
                    if channel is not None:
                        channel.on_priority_frame(payload)
                elif msg_type == protocol.END_OF_PARTITION:
                    if channel is not None:
                        channel.on_end_of_partition()
                        del channels[receiver_id]
                        self._send(protocol.encode_eop_ack(receiver_id))
                elif msg_type == protocol.ERROR:
                    message = protocol.decode_error(payload)
                    if receiver_id == protocol.CONNECTION_RECEIVER_ID:
                        raise DataExchangeError(f"producer {self.address} closed the connection: {message}")
                    if channel is not None:
                        del channels[receiver_id]
                        channel.on_error(message)
                else:
                    raise DataExchangeError(
                        f"unexpected message type {msg_type} from producer {self.address}"
                    )
        except DataExchangeError as e:
            self._fail_all(str(e))
            if self._transport is not None:
                self._transport.abort()
            return
        self._close_if_idle()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._env._forget_client(self)
        why = f": {exc}" if exc else ""
        channels = list(self._channels.values())
        self._channels.clear()
        for channel in channels:
            channel.on_error(f"lost connection to producer {self.address} ({channel.describe()}){why}")

    def _fail_all(self, message: str) -> None:
        channels = list(self._channels.values())
        self._channels.clear()
        for channel in channels:
            channel.on_error(f"{message} ({channel.describe()})")

    def _close_if_idle(self) -> None:
        """Close once no channel uses the connection (after EOP_ACKs are flushed)."""
        if self._channels or self.closed:
            return
        self.closed = True
        self._env._forget_client(self)
        if self._transport is not None:
            self._transport.close()

    def close(self) -> None:
        if self._transport is not None:
            self._transport.abort()
