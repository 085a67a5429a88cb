"""RPC between flott's components: typed gateways over msgpack-framed TCP.

One :class:`RpcService` per process listens on one port and hosts any number of
endpoints (Dispatcher, ResourceManager, JobMasters, TaskExecutor), each under an
endpoint id. A caller gets a *gateway*: a proxy built from a Protocol class
whose async methods name the remote methods; arguments and results are msgspec
Structs or plain values, converted back to the annotated types on arrival.

Why not pickle: the JobManager must never unpickle anything that could carry
user code, and typed msgpack keeps the wire format explicit.

Every call has a deadline (``asyncio.timeout``): a peer that does not answer
raises :class:`RpcTimeoutError`; one that cannot be reached raises
:class:`RpcConnectionError`. Leader-bound endpoints are *fenced*: the caller
passes the fencing token it believes is current, and the endpoint rejects calls
carrying another token with :class:`FencingTokenError`, so a deposed leader's
calls fail. Errors from the flott error tree cross the wire by class name and
are raised again on the caller's side.

With ``security.ssl.internal.enabled`` the service listens and calls over
mutually authenticated TLS (:mod:`flott.ssl_context`): a peer without a
certificate from the cluster's CA never gets past the handshake, so it can
neither call an endpoint nor receive a reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import struct
import typing
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import msgspec

from flott.errors import (
    FencingTokenError,
    FlottError,
    RpcConnectionError,
    RpcError,
    RpcTimeoutError,
    UnknownRpcMethodError,
    WireError,
    error_from_wire,
    error_to_wire,
)

if typing.TYPE_CHECKING:
    from flott.ssl_context import InternalSsl

log = logging.getLogger(__name__)

_HEADER = struct.Struct("!I")
MAX_FRAME = 512 * 1024 * 1024

G = TypeVar("G")


class _Request(msgspec.Struct, array_like=True):
    id: int
    endpoint: str
    method: str
    args: list[Any]
    token: str | None = None


class _Response(msgspec.Struct, array_like=True):
    id: int
    ok: bool
    value: Any = None


def parse_address(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise RpcConnectionError(f"not an RPC address (host:port): {address!r}")
    return host, int(port)


class RpcEndpoint:
    """Base of every component reachable over RPC.

    Public coroutine methods named in the component's gateway Protocol are
    callable remotely. ``fencing_token`` is None for unfenced endpoints; a
    fenced endpoint sets it when it becomes leader.
    """

    endpoint_id: str = ""
    fenced: bool = False
    fencing_token: str | None = None


_ENCODER = msgspec.msgpack.Encoder()
_REQ_DECODER = msgspec.msgpack.Decoder(_Request)
_RESP_DECODER = msgspec.msgpack.Decoder(_Response)


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn)
    except Exception:  # pragma: no cover - defensive: unresolved forward refs
        return {}


class _MethodSpec:
    """Decoding plan for one server-side method, built once."""

    def __init__(self, fn: Callable[..., Awaitable[Any]]) -> None:
        self.fn = fn
        hints = _hints(fn)
        params = [p for p in inspect.signature(fn).parameters.values() if p.name != "self"]
        self.arg_types = [hints.get(p.name, Any) for p in params]
        self.n_required = sum(1 for p in params if p.default is inspect.Parameter.empty)

    def convert_args(self, args: list[Any]) -> list[Any]:
        if len(args) < self.n_required or len(args) > len(self.arg_types):
            raise RpcError(f"{self.fn.__name__} takes {len(self.arg_types)} arguments, got {len(args)}")
        out = []
        for value, tp in zip(args, self.arg_types, strict=False):
            out.append(value if tp is Any else msgspec.convert(value, tp, strict=False))
        return out


class _Connection:
    """One multiplexed client connection to a remote RpcService."""

    def __init__(self, address: str, tls: InternalSsl | None = None) -> None:
        self.address = address
        self._tls = tls
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._pending: dict[int, asyncio.Future[_Response]] = {}
        self._next_id = 0
        self._lock = asyncio.Lock()
        self._read_task: asyncio.Task[None] | None = None

    async def _ensure(self, timeout: float) -> asyncio.StreamWriter:
        if self._writer is not None and not self._writer.is_closing():
            return self._writer
        async with self._lock:
            if self._writer is not None and not self._writer.is_closing():
                return self._writer
            host, port = parse_address(self.address)
            try:
                async with asyncio.timeout(timeout):
                    if self._tls is None:
                        reader, writer = await asyncio.open_connection(host, port)
                    else:
                        reader, writer = await asyncio.open_connection(
                            host,
                            port,
                            ssl=self._tls.client,
                            ssl_handshake_timeout=self._tls.handshake_timeout_s,
                        )
            except (OSError, TimeoutError) as e:
                raise RpcConnectionError(f"cannot connect to {self.address}: {e}") from None
            self._reader, self._writer = reader, writer
            self._read_task = asyncio.get_running_loop().create_task(self._read_loop(reader))
            return writer

    async def _read_loop(self, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                header = await reader.readexactly(_HEADER.size)
                (n,) = _HEADER.unpack(header)
                resp = _RESP_DECODER.decode(await reader.readexactly(n))
                fut = self._pending.pop(resp.id, None)
                if fut is not None and not fut.done():
                    fut.set_result(resp)
        except (asyncio.IncompleteReadError, OSError, msgspec.DecodeError):
            pass
        finally:
            self._fail_pending(RpcConnectionError(f"connection to {self.address} lost"))
            if self._writer is not None:
                self._writer.close()
            self._writer = None

    def _fail_pending(self, err: Exception) -> None:
        pending, self._pending = self._pending, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(err)

    async def call(self, req_args: tuple[str, str, list[Any], str | None], timeout: float) -> Any:
        endpoint, method, args, token = req_args
        try:
            async with asyncio.timeout(timeout):
                writer = await self._ensure(timeout)
                self._next_id += 1
                rid = self._next_id
                fut: asyncio.Future[_Response] = asyncio.get_running_loop().create_future()
                self._pending[rid] = fut
                payload = _ENCODER.encode(_Request(rid, endpoint, method, args, token))
                writer.write(_HEADER.pack(len(payload)) + payload)
                try:
                    resp = await fut
                finally:
                    self._pending.pop(rid, None)
        except TimeoutError:
            raise RpcTimeoutError(
                f"{endpoint}.{method} at {self.address} did not answer within {timeout:.1f}s"
            ) from None
        return resp

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(Exception):
                await self._writer.wait_closed()
        if self._read_task is not None:
            self._read_task.cancel()
            with contextlib.suppress(BaseException):
                await self._read_task


class RpcService:
    """The process's RPC server and client (Flink: RpcService)."""

    def __init__(
        self,
        bind_host: str = "127.0.0.1",
        port: int = 0,
        advertised_host: str | None = None,
        default_timeout: float = 10.0,
        tls: InternalSsl | None = None,
    ) -> None:
        """``tls`` (:func:`flott.ssl_context.internal_ssl`): serve and call over mutually
        authenticated TLS (``security.ssl.internal.*``); None is plain TCP."""
        self.bind_host = bind_host
        self.tls = tls
        self.port = port
        self.advertised_host = advertised_host or bind_host
        self.default_timeout = default_timeout
        self._endpoints: dict[str, RpcEndpoint] = {}
        self._specs: dict[tuple[str, str], _MethodSpec] = {}
        self._server: asyncio.Server | None = None
        self._connections: dict[str, _Connection] = {}
        self._handler_tasks: set[asyncio.Task[None]] = set()
        self._server_writers: set[asyncio.StreamWriter] = set()

    @property
    def address(self) -> str:
        return f"{self.advertised_host}:{self.port}"

    async def start(self) -> str:
        tls = self.tls
        if tls is None:
            self._server = await asyncio.start_server(self._serve, self.bind_host, self.port, limit=2**20)
        else:
            self._server = await asyncio.start_server(
                self._serve,
                self.bind_host,
                self.port,
                limit=2**20,
                ssl=tls.server,
                ssl_handshake_timeout=tls.handshake_timeout_s,
            )
        self.port = self._server.sockets[0].getsockname()[1]
        return self.address

    def register(self, endpoint: RpcEndpoint) -> None:
        if not endpoint.endpoint_id:
            raise RpcError("endpoint has no id")
        self._endpoints[endpoint.endpoint_id] = endpoint

    def unregister(self, endpoint_id: str) -> None:
        self._endpoints.pop(endpoint_id, None)
        for key in [k for k in self._specs if k[0] == endpoint_id]:
            del self._specs[key]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for w in list(self._server_writers):
            w.close()
        for t in list(self._handler_tasks):
            t.cancel()
        for conn in list(self._connections.values()):
            await conn.close()
        self._connections.clear()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 1.0)

    def close_connection(self, address: str) -> None:
        """Forget the client connection to ``address`` (peer known dead)."""
        conn = self._connections.pop(address, None)
        if conn is not None:
            asyncio.get_running_loop().create_task(conn.close())

    # -- server side -------------------------------------------------------------------------

    def _spec(self, endpoint: RpcEndpoint, method: str) -> _MethodSpec:
        key = (endpoint.endpoint_id, method)
        spec = self._specs.get(key)
        if spec is None:
            fn = getattr(endpoint, method, None)
            if method.startswith("_") or fn is None or not inspect.iscoroutinefunction(fn):
                raise UnknownRpcMethodError(f"{endpoint.endpoint_id} has no RPC method {method!r}")
            spec = self._specs[key] = _MethodSpec(fn)
        return spec

    async def dispatch(
        self, endpoint_id: str, method: str, args: list[Any], token: str | None, convert: bool
    ) -> Any:
        endpoint = self._endpoints.get(endpoint_id)
        if endpoint is None:
            raise RpcConnectionError(f"no endpoint {endpoint_id!r} at {self.address}")
        if endpoint.fenced and token != endpoint.fencing_token:
            raise FencingTokenError(
                f"{endpoint_id}: call {method} carries fencing token {token!r}, "
                f"the endpoint's is {endpoint.fencing_token!r}"
            )
        spec = self._spec(endpoint, method)
        call_args = spec.convert_args(args) if convert else args
        return await spec.fn(*call_args)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._server_writers.add(writer)
        try:
            while True:
                header = await reader.readexactly(_HEADER.size)
                (n,) = _HEADER.unpack(header)
                if n > MAX_FRAME:
                    break
                req = _REQ_DECODER.decode(await reader.readexactly(n))
                task = asyncio.get_running_loop().create_task(self._handle(req, writer))
                self._handler_tasks.add(task)
                task.add_done_callback(self._handler_tasks.discard)
        except (asyncio.IncompleteReadError, OSError, msgspec.DecodeError):
            pass
        finally:
            self._server_writers.discard(writer)
            writer.close()

    async def _handle(self, req: _Request, writer: asyncio.StreamWriter) -> None:
        try:
            value = await self.dispatch(req.endpoint, req.method, req.args, req.token, convert=True)
            resp = _Response(req.id, True, value)
            payload = _ENCODER.encode(resp)
        except asyncio.CancelledError:
            raise
        except BaseException as e:  # errors travel back to the caller, whatever they are
            if not isinstance(e, FlottError):
                log.exception("unexpected error in %s.%s", req.endpoint, req.method)
            payload = _ENCODER.encode(_Response(req.id, False, error_to_wire(e)))
        if not writer.is_closing():
            writer.write(_HEADER.pack(len(payload)) + payload)

    # -- client side -------------------------------------------------------------------------

    def connect(
        self,
        address: str,
        endpoint_id: str,
        gateway: type[G],
        fencing_token: str | None = None,
        timeout: float | None = None,
    ) -> G:
        """A gateway proxy for ``endpoint_id`` at ``address`` (no I/O until the first call)."""
        return typing.cast(
            G,
            _GatewayProxy(
                self, address, endpoint_id, gateway, fencing_token, timeout or self.default_timeout
            ),
        )

    async def invoke(
        self,
        address: str,
        endpoint_id: str,
        method: str,
        args: list[Any],
        token: str | None,
        timeout: float,
        return_type: Any,
    ) -> Any:
        if address == self.address and self._server is not None:
            # Same process: no socket, but the same fencing, errors and deadline. The
            # call's first step runs inline; only a call that has to wait (it awaits
            # something not yet done) gets the deadline, so the common call that
            # completes at once costs no timer.
            try:
                coro = self.dispatch(endpoint_id, method, args, token, convert=False)
                try:
                    first = coro.send(None)
                except StopIteration as done:
                    return done.value
                async with asyncio.timeout(timeout):
                    return await _Resumed(coro, first)
            except TimeoutError:
                raise RpcTimeoutError(
                    f"{endpoint_id}.{method} did not answer within {timeout:.1f}s"
                ) from None
            except FlottError:
                raise
            except Exception as e:
                log.exception("unexpected error in %s.%s", endpoint_id, method)
                raise error_from_wire(error_to_wire(e)) from e
        conn = self._connections.get(address)
        if conn is None:
            conn = self._connections[address] = _Connection(address, self.tls)
        resp = await conn.call((endpoint_id, method, [msgspec.to_builtins(a) for a in args], token), timeout)
        if not resp.ok:
            raise error_from_wire(msgspec.convert(resp.value, WireError))
        if return_type is None or return_type is type(None) or return_type is Any:
            return resp.value
        return msgspec.convert(resp.value, return_type, strict=False)


class _Resumed:
    """Awaiting this continues ``coro`` after its first step, which yielded ``first``.

    It does what ``await coro`` would have done from that point on: values the
    coroutine yields go to the running task, and what the task sends or throws
    (a future's result, a cancellation) goes back into the coroutine.
    """

    __slots__ = ("_coro", "_first")

    def __init__(self, coro: typing.Coroutine[Any, Any, Any], first: Any) -> None:
        self._coro = coro
        self._first = first

    def __await__(self) -> typing.Generator[Any, Any, Any]:
        coro, value = self._coro, self._first
        self._first = None
        while True:
            try:
                sent = yield value
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as e:  # cancellation (the deadline) or any other throw: into the call
                try:
                    value = coro.throw(e)
                except StopIteration as done:
                    return done.value
            else:
                try:
                    value = coro.send(sent)
                except StopIteration as done:
                    return done.value


_RETURN_TYPES: dict[tuple[type, str], Any] = {}


def _return_type(gateway: type, name: str) -> Any:
    """The annotated return type of a gateway method (resolved once per gateway and method)."""
    key = (gateway, name)
    if key not in _RETURN_TYPES:
        proto_fn = getattr(gateway, name, None)
        if proto_fn is None or name.startswith("_"):
            raise AttributeError(f"{gateway.__name__} has no method {name!r}")
        _RETURN_TYPES[key] = _hints(proto_fn).get("return", Any)
    return _RETURN_TYPES[key]


class _GatewayProxy:
    def __init__(
        self,
        service: RpcService,
        address: str,
        endpoint_id: str,
        gateway: type,
        token: str | None,
        timeout: float,
    ) -> None:
        self._service = service
        self.address = address
        self.endpoint_id = endpoint_id
        self._gateway = gateway
        self.fencing_token = token
        self._timeout = timeout

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        return_type = _return_type(self._gateway, name)
        service, address, endpoint_id = self._service, self.address, self.endpoint_id
        default_timeout = self._timeout

        async def call(*args: Any, timeout: float | None = None) -> Any:
            return await service.invoke(
                address,
                endpoint_id,
                name,
                list(args),
                self.fencing_token,
                timeout or default_timeout,
                return_type,
            )

        call.__name__ = name
        # Cache on the instance: __getattr__ runs once per method, not once per call.
        setattr(self, name, call)
        return call

    def __repr__(self) -> str:
        return f"<{self._gateway.__name__} {self.endpoint_id}@{self.address}>"
